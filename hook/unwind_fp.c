/* Frame-pointer stack walk and arm64 return-address stripping.
 *
 * Runs inside malloc: no allocation, no locks, no libc calls.  Every stack
 * read is a whole, aligned word inside [stk->lo, stk->hi). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _dl_find_object */
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
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

void unwind_fp_exclude(uintptr_t lo, uintptr_t hi)
{
	(void)lo;
	(void)hi;
}

void unwind_fp_exclude_self(void)
{
}
#else
/* Which return addresses a frame record may hold ---------------------------
 *
 * Code built without frame pointers keeps anything in the frame-pointer
 * register: a frame "record" it seems to point at is then stack words of
 * some other kind, or a record left there by a call that has returned,
 * whose return address may even be the hook's own.  A return address is
 * taken only when it lies in an executable segment of a loaded module that
 * is not the hook; the first one that does not ends the walk.  Segments
 * found are kept in a small table that is only ever appended to (lock-free
 * to read; a writer that finds it busy just does not add), so that a warm
 * walk pays a compare or two a frame. */

#if defined(__BIONIC__) || defined(DLFO_EH_SEGMENT_TYPE)
#define FP_CHECK_MODULES 1
#else
/* (glibc before 2.35 has no lock-free lookup of the module of an address:
 * only the stack and the hook's own range are checked there) */
#define FP_CHECK_MODULES 0
#endif

#define XR_SLOTS 64
static struct {
	_Atomic uintptr_t lo, hi;
} xr[XR_SLOTS];
static atomic_uint xr_count;   /* entries published (release) */
static atomic_flag xr_writing; /* one writer at a time */
static _Atomic uintptr_t self_lo, self_hi; /* the hook's module, or 0 */

static void xr_add(uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo || atomic_flag_test_and_set_explicit(&xr_writing, memory_order_acquire))
		return;
	unsigned n = atomic_load_explicit(&xr_count, memory_order_relaxed);
	bool known = false;
	for (unsigned i = 0; i < n && !known; i++)
		known = atomic_load_explicit(&xr[i].lo, memory_order_relaxed) == lo &&
			atomic_load_explicit(&xr[i].hi, memory_order_relaxed) == hi;
	if (!known && n < XR_SLOTS) {
		atomic_store_explicit(&xr[n].lo, lo, memory_order_relaxed);
		atomic_store_explicit(&xr[n].hi, hi, memory_order_relaxed);
		atomic_store_explicit(&xr_count, n + 1, memory_order_release);
	}
	atomic_flag_clear_explicit(&xr_writing, memory_order_release);
}

/* The executable PT_LOAD segments of the module whose program headers
 * are @ph[0..@phnum) and load bias @bias: each added to the table, and
 * whether @pc is in one ([*@lo, *@hi) = that one). */
static bool xr_learn(uintptr_t pc, uintptr_t bias, const ElfW(Phdr) *ph, unsigned phnum,
		     uintptr_t *lo, uintptr_t *hi)
{
	bool hit = false;
	for (unsigned i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		uintptr_t a = bias + ph[i].p_vaddr, b = a + ph[i].p_memsz;
		xr_add(a, b);
		if (pc >= a && pc < b) {
			hit = true;
			*lo = a;
			*hi = b;
		}
	}
	return hit;
}

#if FP_CHECK_MODULES && defined(__BIONIC__)
struct xr_search {
	uintptr_t pc, lo, hi;
	int hit; /* 1: in an executable segment, -1: in a module, not there */
};

static int xr_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct xr_search *s = arg;
	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && s->pc >= a && s->pc - a < ph->p_memsz) {
			s->hit = xr_learn(s->pc, info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
					  &s->lo, &s->hi) ? 1 : -1;
			return 1;
		}
	}
	return 0;
}
#endif

/* The slow path of pc_plausible(): find the module of @pc. */
static __attribute__((noinline)) bool pc_lookup(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
#if !FP_CHECK_MODULES
	(void)pc;
	(void)lo;
	(void)hi;
	return true;
#elif defined(__BIONIC__)
	struct xr_search s = {.pc = pc};
	dl_iterate_phdr(xr_visit, &s); /* (bionic's loader lock is recursive) */
	*lo = s.lo;
	*hi = s.hi;
	return s.hit > 0;
#else
	struct dl_find_object dlfo;
	if (_dl_find_object((void *)pc, &dlfo) != 0 || !dlfo.dlfo_link_map)
		return false;
	/* Its program headers, from the ELF header at the start of its first
	 * segment (where the static linker puts both); where they are not
	 * there, the module's whole range is taken as its code. */
	uintptr_t start = (uintptr_t)dlfo.dlfo_map_start, end = (uintptr_t)dlfo.dlfo_map_end;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)start;
	if (end - start >= sizeof(*eh) && eh->e_ident[EI_MAG0] == ELFMAG0 &&
	    eh->e_ident[EI_MAG1] == ELFMAG1 && eh->e_ident[EI_MAG2] == ELFMAG2 &&
	    eh->e_ident[EI_MAG3] == ELFMAG3 && eh->e_phentsize == sizeof(ElfW(Phdr)) &&
	    eh->e_phoff < end - start &&
	    (end - start - eh->e_phoff) / sizeof(ElfW(Phdr)) >= eh->e_phnum)
		return xr_learn(pc, dlfo.dlfo_link_map->l_addr,
				(const ElfW(Phdr) *)(start + eh->e_phoff), eh->e_phnum, lo, hi);
	xr_add(start, end);
	*lo = start;
	*hi = end;
	return true;
#endif
}

/* Whether @pc may be a return address (see above).  [*@lo, *@hi) is the
 * last segment found, the first place looked. */
static inline bool pc_plausible(uintptr_t pc, const struct unwind_stack *stk, uintptr_t *lo,
				uintptr_t *hi)
{
	if (pc >= *lo && pc < *hi)
		return true;
	if (pc >= stk->lo && pc < stk->hi)
		return false;
	if (pc >= atomic_load_explicit(&self_lo, memory_order_relaxed) &&
	    pc < atomic_load_explicit(&self_hi, memory_order_relaxed))
		return false;
	unsigned n = atomic_load_explicit(&xr_count, memory_order_acquire);
	for (unsigned i = 0; i < n; i++) {
		uintptr_t a = atomic_load_explicit(&xr[i].lo, memory_order_relaxed);
		uintptr_t b = atomic_load_explicit(&xr[i].hi, memory_order_relaxed);
		if (pc >= a && pc < b) {
			*lo = a;
			*hi = b;
			return true;
		}
	}
	return pc_lookup(pc, lo, hi);
}

void unwind_fp_exclude(uintptr_t lo, uintptr_t hi)
{
	atomic_store_explicit(&self_lo, lo, memory_order_relaxed);
	atomic_store_explicit(&self_hi, hi, memory_order_relaxed);
}

static int self_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)(void *)unwind_fp_exclude_self, lo = UINTPTR_MAX, hi = 0;
	bool mine = false;
	(void)size;
	(void)arg;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		mine |= me >= a && me - a < ph->p_memsz;
		lo = a < lo ? a : lo;
		hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
	if (!mine)
		return 0;
	unwind_fp_exclude(lo, hi);
	return 1;
}

void unwind_fp_exclude_self(void)
{
	dl_iterate_phdr(self_visit, NULL);
}

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
	uintptr_t seg_lo = 0, seg_hi = 0;
	for (;;) {
		const uintptr_t *rec = (const uintptr_t *)fp;
		uintptr_t next = rec[0];
		uintptr_t ra = unwind_strip_pac_inline(rec[1]);

		/* (frame 0 is the entry function's own record: its return
		 * address is the call's, whatever code made it, JIT code too) */
		if (ra < 4096 || (out != pcs && !pc_plausible(ra, stk, &seg_lo, &seg_hi)))
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
