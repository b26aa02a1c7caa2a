/* leaksnap hook, CFI unwinder: the rule cache (one packed rule per PC,
 * lock-free) and the re-check of "no module" rules.
 * The other files are listed in unwind_cfi.h.  Runs inside malloc: nothing
 * here allocates, locks or prints. */
#include "unwind_cfi.h"

#if CFI_SUPPORTED

#if defined(__BIONIC__)
/* bionic has no lock-free module lookup: dl_iterate_phdr takes the
 * loader's lock.  Instead "no module" rules carry the epoch they were
 * computed in; the first walk that meets one compares, once, the loader's
 * load and unload counters (dlpi_adds + dlpi_subs, Android R and later)
 * with the value seen last, and on a change starts a new epoch, making
 * every older "no module" rule stale.  JIT-heavy programs pay one short
 * dl_iterate_phdr per walk that meets such a frame, not a lookup per
 * frame.  (Before Android R there are no counters: the answer stays.) */
_Atomic uint32_t nomod_epoch;
static _Atomic uint64_t nomod_stamp;

static int stamp_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *stamp = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs))
		*stamp = (uint64_t)info->dlpi_adds + (uint64_t)info->dlpi_subs;
	return 1; /* every module's record carries the same counters */
}
#endif

/* Whether the "no module" answer for @pc, computed in @epoch, may be
 * wrong now.  glibc: _dl_find_object() is lock-free and async-signal-safe
 * (a binary search over the loaded objects, 5-10 ns): ask it again.  That
 * is per frame, but JIT frames that the trace cache reuses pay only this
 * too, no rule lookup and no step. */
__attribute__((noinline)) bool
nomod_stale(uintptr_t pc, uint32_t epoch, struct wstate *ws)
{
#if defined(__BIONIC__)
	uint64_t now = 0;

	(void)pc;
	if (epoch != (atomic_load_explicit(&nomod_epoch, memory_order_acquire) &
		      RULE_EPOCH_MASK))
		return true;
	if (ws->stamp_checked)
		return false;
	ws->stamp_checked = true;
	dl_iterate_phdr(stamp_visit, &now);
	if (now == atomic_load_explicit(&nomod_stamp, memory_order_acquire))
		return false;
	/* The epoch first: a walk that sees the new stamp sees it too. */
	atomic_fetch_add_explicit(&nomod_epoch, 1, memory_order_acq_rel);
	atomic_store_explicit(&nomod_stamp, now, memory_order_release);
	return true;
#else
	struct dl_find_object dlfo;

	(void)epoch;
	(void)ws;
	return _dl_find_object((void *)pc, &dlfo) == 0;
#endif
}

_Atomic uintptr_t cache_state;

_Atomic uint64_t *cache_map(void)
{
	uintptr_t v = atomic_load_explicit(&cache_state, memory_order_acquire);
	uintptr_t expected = 0;
	int saved_errno;
	void *p;

	if (v > 1)
		return (_Atomic uint64_t *)v;
	if (v == 1)
		return NULL;
	saved_errno = errno; /* malloc must not clobber errno on success */
	p = mmap(NULL, CACHE_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v = p == MAP_FAILED ? 1 : (uintptr_t)p;
	if (!atomic_compare_exchange_strong_explicit(&cache_state, &expected, v,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		if (v != 1) /* another thread mapped one first */
			munmap(p, CACHE_BYTES);
		v = expected;
	}
	errno = saved_errno;
	return v > 1 ? (_Atomic uint64_t *)v : NULL;
}
/* The slow path: compute, then fill @slot (if any). */
__attribute__((noinline)) struct rule
rule_miss(uintptr_t pc, _Atomic uint64_t *slot, uint64_t tag)
{
	struct rule r = rule_compute(pc);

	if (slot != NULL) {
		atomic_store_explicit(&slot[1], tag | r.w1,
				      memory_order_relaxed);
		atomic_store_explicit(&slot[0], tag | r.w0,
				      memory_order_relaxed);
	}
	return r;
}

#endif /* CFI_SUPPORTED */
