/* Frame-pointer stack walk and arm64 return-address stripping.
 *
 * Runs inside malloc: no allocation, no locks, no libc calls.  Every stack
 * read is a whole, aligned word inside [stk->lo, stk->hi). */
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"


/* Pointer authentication puts a signature in the bits above the virtual
 * address size of a user-space pointer (bits 48-54 and 56-63 with a 48-bit
 * VA, whether or not the top byte is ignored); bit 55 selects the
 * user/kernel half and is never part of it.  Masking only to 55 bits would
 * keep bits 48-54 of the signature, so user addresses (bit 55 clear) are
 * masked to 48 bits, which is exact for every Linux and Android arm64
 * configuration that maps code below 2^48 (all of them, unless a program
 * asks mmap for a 52-bit address and puts code there).  Plain arithmetic
 * rather than XPACLRI: no x30 juggling, and testable on any host.  Other
 * targets have no such bits. */
uintptr_t unwind_strip_pac(uintptr_t pc)
{
	return unwind_strip_pac_inline(pc);
}

#if !UNWIND_FP_RECORDS
/* No frame records to follow (unwind.h): the caller only, from the return
 * address the entry function was given, its Thumb bit cleared as
 * unwind_gcc() clears it. */
int unwind_fp(const struct unwind_regs *regs, const struct unwind_stack *stk,
	      uintptr_t *pcs, int max)
{
	uintptr_t ra = unwind_regs_ra(regs) & ~(uintptr_t)1;

	(void)stk;
	if (max <= 0 || ra < 4096)
		return 0;
	pcs[0] = ra;
	return 1;
}
#else
NO_SANITIZE
int unwind_fp(const struct unwind_regs *regs, const struct unwind_stack *stk,
	      uintptr_t *pcs, int max)
{
	uintptr_t lo = stk->lo, hi = stk->hi;
	uintptr_t fp = regs->fp;
	int n = 0;

	if (hi <= lo || hi - lo < 2 * WORD)
		return 0;
	/* Each step needs a whole record inside the stack and moves fp up by
	 * at least one record, so the loop ends within (hi - lo) / 16 steps
	 * even without @max. */
	while (n < max) {
		if (fp < lo || fp > hi - 2 * WORD || fp % WORD)
			break;

		const uintptr_t *rec = (const uintptr_t *)fp;
		uintptr_t next = rec[0];
		uintptr_t ra = unwind_strip_pac(rec[1]);

		if (ra < 4096)
			break;
		pcs[n++] = ra;
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}
#endif
