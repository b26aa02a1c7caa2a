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
int unwind_fp_hashed(const struct unwind_regs *regs, const struct unwind_stack *stk,
		     uintptr_t *pcs, int max, uint64_t *hash)
{
	uintptr_t ra = unwind_regs_ra(regs) & ~(uintptr_t)1;

	(void)stk;
	*hash = UNWIND_HASH_SEED;
	if (max <= 0 || ra < 4096)
		return 0;
	pcs[0] = ra;
	*hash = unwind_hash_step(*hash, ra);
	return 1;
}
#else
NO_SANITIZE
int unwind_fp_hashed(const struct unwind_regs *regs, const struct unwind_stack *stk,
		     uintptr_t *pcs, int max, uint64_t *hash)
{
	uintptr_t lo = stk->lo, hi = stk->hi;
	uintptr_t fp = regs->fp;
	uint64_t h = UNWIND_HASH_SEED;

	*hash = h;
	if (max <= 0 || hi <= lo || hi - lo < 2 * WORD)
		return 0;
	/* Each record must lie whole inside the stack, aligned, each next one
	 * strictly above the last: the walk ends within (hi - lo) / 16 steps
	 * even without @max. */
	if (fp < lo || fp > hi - 2 * WORD || fp % WORD)
		return 0;
	const uintptr_t top = hi - 2 * WORD;
	uintptr_t *out = pcs, *end = pcs + max;
	for (;;) {
		const uintptr_t *rec = (const uintptr_t *)fp;
		uintptr_t next = rec[0];
		uintptr_t ra = unwind_strip_pac_inline(rec[1]);

		if (ra < 4096)
			break;
		*out++ = ra;
		h = unwind_hash_step(h, ra);
		if (out == end || next <= fp || next > top || next % WORD)
			break;
		fp = next;
	}
	*hash = h;
	return (int)(out - pcs);
}
#endif

int unwind_fp(const struct unwind_regs *regs, const struct unwind_stack *stk,
	      uintptr_t *pcs, int max)
{
	uint64_t hash;
	return unwind_fp_hashed(regs, stk, pcs, max, &hash);
}
