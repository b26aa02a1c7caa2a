/* leaksnap hook: the interposed allocation functions, start-up and fork.
 *
 * Every entry point calls the allocator underneath (found with
 * dlsym(RTLD_NEXT)) and records or forgets the block in the tables of
 * table.c.  Allocation entry points capture the stack themselves (the
 * registers must be those of the entry point: see unwind.h), so each is
 * built with a frame pointer and the capture is never inlined elsewhere. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "table_internal.h"
#include "reach.h"
#include "sample.h"
#include "leakhook.h"
#include "unloaded.h"


struct hook_real hook_real;
struct hook_config hook_cfg;
atomic_bool hook_active;
atomic_int hook_capture_on = 1;
atomic_bool hook_zygote_child;
atomic_ulong hook_invalid_frees;
HOOK_TLS int hook_busy;

/* Resolution of the real functions: 0 = not started, 1 = running,
 * 2 = done.  While the resolving thread is inside dlsym, its allocations
 * come from a static pool (dlsym may call calloc). */
static atomic_int resolve_state;
static HOOK_TLS int resolving;

/* Per-thread stack bounds, found once per thread. */
static HOOK_TLS uintptr_t stack_lo, stack_hi;
static HOOK_TLS int stack_known;

/* Static pool ---------------------------------------------------------------- */

#define POOL_SIZE (256 * 1024)
static _Alignas(64) uint8_t pool[POOL_SIZE];
static atomic_size_t pool_used;

static inline bool in_pool(const void *p)
{
	return (const uint8_t *)p >= pool && (const uint8_t *)p < pool + POOL_SIZE;
}

/* Blocks carry their size in the 16 bytes before them; never reused. */
static void *pool_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	if (size > POOL_SIZE || (align & (align - 1)))
		return NULL;
	size_t old = atomic_load(&pool_used), start, end;
	do {
		start = (old + 16 + align - 1) & ~(align - 1);
		end = start + size;
		if (end > POOL_SIZE)
			return NULL;
	} while (!atomic_compare_exchange_weak(&pool_used, &old, end));
	memcpy(pool + start - sizeof(size_t), &size, sizeof(size));
	return pool + start;
}

static size_t pool_size(const void *p)
{
	size_t n;
	memcpy(&n, (const uint8_t *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* Helpers ---------------------------------------------------------------------- */

/* Neither keeps errno changed: the hook's work inside malloc and free
 * must leave the program's errno as the allocator left it. */
void *hook_map(size_t size)
{
	int saved = errno;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = saved;
	return p == MAP_FAILED ? NULL : p;
}

void hook_unmap(void *p, size_t size)
{
	int saved = errno;
	if (p)
		munmap(p, size);
	errno = saved;
}

void hook_report(atomic_bool *once, const char *fmt, ...)
{
	if (once && atomic_exchange(once, true))
		return;
	char msg[PATH_MAX + 256];
	size_t n = sizeof("leaksnap: ") - 1;
	memcpy(msg, "leaksnap: ", n);
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	n += (size_t)k < sizeof(msg) - n - 1 ? (size_t)k : sizeof(msg) - n - 2;
	msg[n++] = '\n';
	int saved = errno;
	for (size_t off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, msg + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved;
}

/* Resolving the allocator underneath --------------------------------------- */

/* The preload build takes the next definition after its own; the in-app
 * build defines none of these and takes the program's. */
#ifdef HOOK_INAPP
#define RESOLVE(name) (*(void **)&hook_real.name = hook_resolve(#name))

void *hook_resolve(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	/* An executable that takes a function's address defines it as its
	 * own PLT entry (an undefined symbol with a value): that entry jumps
	 * through the executable's GOT slot, which may be ours.  The
	 * definition the loader bound that slot to comes after it.  (Android
	 * executables are position-independent: no such entries.) */
#ifdef __GLIBC__
	Dl_info info;
	void *ent = NULL;
	if (p && dladdr1(p, &info, &ent, RTLD_DL_SYMENT) && ent &&
	    ((const ElfW(Sym) *)ent)->st_shndx == SHN_UNDEF)
		p = dlsym(RTLD_NEXT, name);
#endif
	return p;
}
#else
#define RESOLVE(name) (*(void **)&hook_real.name = dlsym(RTLD_NEXT, #name))
#endif

static void resolve_all(void)
{
	resolving = 1;
	RESOLVE(malloc);
	RESOLVE(free);
	RESOLVE(calloc);
	RESOLVE(realloc);
	RESOLVE(memalign);
	RESOLVE(posix_memalign);
	RESOLVE(aligned_alloc);
	RESOLVE(valloc);
	RESOLVE(pvalloc);
	RESOLVE(malloc_usable_size);
	RESOLVE(dlclose);
	RESOLVE(pthread_getattr_np);
	resolving = 0;
	if (!hook_real.malloc || !hook_real.free || !hook_real.calloc || !hook_real.realloc ||
	    !hook_real.memalign) {
		static const char msg[] = "leaksnap: cannot find the allocator under the hook\n";
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		abort();
	}
}

/* Returns true when the caller must serve itself from the pool. */
static bool __attribute__((noinline, cold)) resolve_slow(void)
{
	if (resolving)
		return true;
	int expected = 0;
	if (atomic_compare_exchange_strong(&resolve_state, &expected, 1)) {
		resolve_all();
		atomic_store_explicit(&resolve_state, 2, memory_order_release);
		return false;
	}
	while (atomic_load_explicit(&resolve_state, memory_order_acquire) != 2)
		sched_yield();
	return false;
}

/* True when the real functions are usable; false = use the pool. */
static inline bool real_ready(void)
{
	if (HOOK_LIKELY(atomic_load_explicit(&resolve_state, memory_order_acquire) == 2))
		return true;
	return !resolve_slow();
}

/* Capture and record ------------------------------------------------------------ */

/* Inside pthread_getattr_np() on this thread: glibc holds the thread's
 * lock there while it allocates (fopen of the maps for the main thread,
 * the CPU set for any), so asking it again here would wait on that lock
 * for ever (Rust's runtime asks it first thing on every thread). */
static HOOK_TLS int in_getattr;

#ifdef HOOK_INAPP
/* (the in-app build interposes nothing: glibc's lock cannot be held by a
 * thread inside it) */
#define pthread_getattr_np hook_real.pthread_getattr_np
#else
EXPORT int pthread_getattr_np(pthread_t thread, pthread_attr_t *attr)
{
	if (HOOK_UNLIKELY(!real_ready()) || !hook_real.pthread_getattr_np)
		return ENOSYS;
	in_getattr++;
	int rc = hook_real.pthread_getattr_np(thread, attr);
	in_getattr--;
	return rc;
}
#endif

static void find_stack(uintptr_t sp)
{
	/* (not now: this allocation is unwound as one on another stack, and
	 * the next one asks) */
	if (HOOK_UNLIKELY(in_getattr))
		return;
	int saved = errno;
	stack_known = 1;
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) != 0) {
		errno = saved;
		return;
	}
	void *addr;
	size_t size;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
	(void)sp;
	errno = saved;
}

/* (inlined into both of track's buffers' frames: a call here costs 10 of
 * the hook's ~100 instructions an allocation) */
static inline __attribute__((always_inline)) unsigned capture(const struct unwind_regs *regs,
							     uintptr_t *pcs, uint64_t **stack_slot,
							     uint64_t *run, bool *have_run)
{
	*stack_slot = NULL;
	*have_run = false;
	if (HOOK_UNLIKELY(!stack_known))
		find_stack(regs->sp);
	struct unwind_stack stk;
	if (HOOK_LIKELY(regs->sp >= stack_lo && regs->sp < stack_hi)) {
		stk.lo = regs->sp;
		stk.hi = stack_hi;
	} else {
		/* Another stack (sigaltstack, a coroutine): only the entry
		 * point's own frame record is known to be readable. */
		stk.lo = regs->fp;
		stk.hi = regs->fp + 2 * sizeof(uintptr_t);
	}
	int max = (int)hook_cfg.frames, n;
	switch (hook_cfg.unwind) {
	case HOOK_UNWIND_FP:
		n = unwind_fp_hashed(regs, &stk, pcs, max, run);
		*have_run = true;
		break;
	case HOOK_UNWIND_INSTRUMENT:
		n = unwind_instr(regs, pcs, max);
		break;
	case HOOK_UNWIND_DWARF:
		n = unwind_cfi_supported() ? unwind_cfi(regs, &stk, pcs, max, false)
					   : unwind_gcc(unwind_regs_ra(regs), pcs, max);
		*stack_slot = unwind_cfi_supported() ? unwind_cfi_stack_slot() : NULL;
		break;
	default:
		if (unwind_cfi_supported()) {
			n = unwind_cfi(regs, &stk, pcs, max, true);
			*stack_slot = unwind_cfi_stack_slot();
		}
		else if (UNWIND_FP_RECORDS)
			n = unwind_fp(regs, &stk, pcs, max);
		else
			n = unwind_gcc(unwind_regs_ra(regs), pcs, max);
		break;
	}
	return n > 0 ? (unsigned)n : 0;
}

static inline bool want_track(void)
{
	return HOOK_LIKELY(atomic_load_explicit(&hook_active, memory_order_relaxed)) &&
	       HOOK_LIKELY(atomic_load_explicit(&hook_capture_on, memory_order_relaxed)) &&
	       HOOK_LIKELY(!hook_busy);
}

/* (errno: nothing on this path changes it; the rare calls that could --
 * mmap, pthread_getattr_np, pthread_create -- save and restore it.) */
static inline __attribute__((always_inline)) void track_into(void *p, size_t size,
							   const struct unwind_regs *regs,
							   uintptr_t *pcs)
{
	hook_busy++;
	if (HOOK_UNLIKELY(atomic_load_explicit(&dump_thread_missing, memory_order_relaxed))) {
		int saved = errno;
		dump_ensure_thread();
		errno = saved;
	}
	table_prefetch(p);
	struct sample_filter *filter = sample_filter_add(p);
	uint64_t *stack_slot, run;
	bool have_run;
	unsigned n = capture(regs, pcs, &stack_slot, &run, &have_run);
	table_insert(p, size, atomic_load_explicit(&hook_zygote_child, memory_order_relaxed),
		     pcs, n, stack_slot, have_run ? &run : NULL);
	sample_filter_added(p, filter);
	hook_busy--;
}

static void __attribute__((noinline)) track_big(void *p, size_t size,
						const struct unwind_regs *regs)
{
	uintptr_t pcs[HOOK_MAX_FRAMES];
	track_into(p, size, regs, pcs);
}

/* The frames' buffer is on the program's stack, which may be small (a
 * thread of PTHREAD_STACK_MIN, 16 KiB): room for the usual depths there,
 * the longest LEAKSNAP_FRAMES allows in a frame of its own. */
#define TRACK_FRAMES 64
static void __attribute__((noinline)) track(void *p, size_t size, const struct unwind_regs *regs)
{
	if (!sample_take(size))
		return;
	if (HOOK_UNLIKELY(hook_cfg.frames > TRACK_FRAMES)) {
		track_big(p, size, regs);
		return;
	}
	uintptr_t pcs[TRACK_FRAMES];
	track_into(p, size, regs, pcs);
}

/* Capture the entry point's registers and record @p (expanded in each
 * exported allocation function, never in a helper).  In sampled mode an
 * allocation no sample point falls in ends at sample_skip(). */
#define TRACK(p, size)                                                  \
	do {                                                            \
		if (!(p) || sample_skip(size)) {                        \
		} else if (want_track()) {                              \
			struct unwind_regs regs_;                       \
			UNWIND_REGS_HERE(&regs_);                       \
			track((p), (size), &regs_);                     \
		} else if (atomic_load_explicit(&hook_active,           \
						memory_order_relaxed)) { \
			if (!hook_cfg.sample)                           \
				sample_full();                          \
			table_note_untracked(p);                        \
		}                                                       \
	} while (0)

/* Forget @p before the allocator sees it.  Returns false for a double
 * free, which must not reach the allocator. */
static inline bool untrack(void *p, struct table_key *key, enum table_remove_result *res)
{
	*res = TABLE_UNTRACKED;
	if (!atomic_load_explicit(&hook_active, memory_order_relaxed))
		return true;
	struct sample_filter *filter = sample_filter_now();
	if (filter) {
		/* sampled mode: most blocks were never sampled, and the
		 * filter says so without a lock; a freed-address match is no
		 * double free here (the address may have come back unsampled):
		 * double frees are not counted (the dump has no invalid_frees) */
		if (HOOK_LIKELY(!sample_filter_may_have(filter, p)))
			return true;
		*res = table_remove(p, key);
		sample_filter_count(p, *res == TABLE_REMOVED);
		if (*res == TABLE_REMOVED)
			sample_filter_del(filter, p);
		else
			*res = TABLE_UNTRACKED;
		return true;
	}
	*res = table_remove(p, key);
#ifdef HOOK_INAPP
	/* The in-app build cannot see every allocation (those of the
	 * libraries not watched, those before the start): a pointer it does
	 * not know always goes on to the allocator, uncounted. */
	return true;
#endif
	if (HOOK_UNLIKELY(*res == TABLE_DOUBLE_FREE)) {
		atomic_fetch_add(&hook_invalid_frees, 1);
		return false;
	}
	return true;
}


/* Entry points ----------------------------------------------------------------
 *
 * Each one's body is inlined into the function the program calls: the
 * exported symbol (libleakhook.so) or the hidden function a GOT slot is
 * pointed at (libleakhook-inapp.so, which counts itself in first: see
 * INAPP_ENTER in hook_internal.h). */

static inline __attribute__((always_inline)) void *malloc_body(size_t size)
{
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(size, 16);
	void *p = hook_real.malloc(size);
	TRACK(p, size);
	return p;
}

static inline __attribute__((always_inline)) void free_body(void *p)
{
	if (!p || HOOK_UNLIKELY(in_pool(p)))
		return;
	if (HOOK_UNLIKELY(!real_ready()))
		return; /* cannot happen: nothing was allocated through us yet */
	enum table_remove_result res;
	if (untrack(p, NULL, &res))
		hook_real.free(p);
}

static inline __attribute__((always_inline)) void *calloc_body(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(total, 16); /* the pool is never reused: zeroed */
	void *p = hook_real.calloc(n, size);
	TRACK(p, total);
	return p;
}

/* realloc and reallocarray; inlined so that TRACK sees the entry point's
 * own registers. */
static inline __attribute__((always_inline)) void *realloc_tracked(void *old, size_t size)
{
	if (HOOK_UNLIKELY(!real_ready()) || HOOK_UNLIKELY(old && in_pool(old))) {
		void *p = real_ready() ? hook_real.malloc(size) : pool_alloc(size, 16);
		if (p && !in_pool(p) && atomic_load_explicit(&hook_active, memory_order_relaxed))
			table_note_untracked(p);
		if (p && old) {
			size_t keep = pool_size(old);
			memcpy(p, old, keep < size ? keep : size);
		}
		return p;
	}
	if (!old) {
		void *p = hook_real.malloc(size);
		TRACK(p, size);
		return p;
	}
	struct table_key key;
	enum table_remove_result res;
	if (!untrack(old, &key, &res)) {
		/* realloc of a freed block: its contents are gone; give the
		 * caller a new block rather than corrupt the heap. */
		void *p = hook_real.malloc(size);
		TRACK(p, size);
		return p;
	}
	void *p = hook_real.realloc(old, size);
	if (p) {
		TRACK(p, size);
	} else if (size != 0 && res == TABLE_REMOVED) {
		/* Failed: the old block is still live, with its old stack. */
		int saved = errno;
		struct sample_filter *filter = sample_filter_add(old);
		table_restore(old, &key);
		sample_filter_added(old, filter);
		errno = saved;
	}
	return p;
}

#define realloc_body realloc_tracked

static inline __attribute__((always_inline)) void *reallocarray_body(void *old, size_t n,
								    size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_tracked(old, total);
}

static inline __attribute__((always_inline)) void *memalign_body(size_t align, size_t size)
{
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(size, align);
	void *p = hook_real.memalign(align, size);
	TRACK(p, size);
	return p;
}

static inline __attribute__((always_inline)) int posix_memalign_body(void **out, size_t align,
								    size_t size)
{
	if (HOOK_UNLIKELY(!real_ready())) {
		if (align < sizeof(void *) || (align & (align - 1)))
			return EINVAL;
		void *p = pool_alloc(size, align);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	int rc;
	if (hook_real.posix_memalign) {
		rc = hook_real.posix_memalign(out, align, size);
	} else {
		if (align < sizeof(void *) || (align & (align - 1)))
			return EINVAL;
		void *p = hook_real.memalign(align, size);
		if (!p)
			return ENOMEM;
		*out = p;
		rc = 0;
	}
	if (rc == 0)
		TRACK(*out, size);
	return rc;
}

static inline __attribute__((always_inline)) void *aligned_alloc_body(size_t align, size_t size)
{
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(size, align);
	void *p = hook_real.aligned_alloc ? hook_real.aligned_alloc(align, size)
					  : hook_real.memalign(align, size);
	TRACK(p, size);
	return p;
}

static inline __attribute__((always_inline)) void *valloc_body(size_t size)
{
	size_t page = (size_t)getpagesize();
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(size, page);
	void *p = hook_real.valloc ? hook_real.valloc(size) : hook_real.memalign(page, size);
	TRACK(p, size);
	return p;
}

static inline __attribute__((always_inline)) void *pvalloc_body(size_t size)
{
	size_t page = (size_t)getpagesize(), rounded;
	if (__builtin_add_overflow(size, page - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(page - 1);
	if (HOOK_UNLIKELY(!real_ready()))
		return pool_alloc(rounded, page);
	void *p = hook_real.pvalloc ? hook_real.pvalloc(size) : hook_real.memalign(page, rounded);
	TRACK(p, size);
	return p;
}

static inline __attribute__((always_inline)) size_t malloc_usable_size_body(void *p)
{
	if (!p)
		return 0;
	if (in_pool(p))
		return pool_size(p);
	if (HOOK_UNLIKELY(!real_ready()) || !hook_real.malloc_usable_size)
		return 0;
	return hook_real.malloc_usable_size(p);
}

static inline __attribute__((always_inline)) int dlclose_body(void *handle)
{
	if (HOOK_UNLIKELY(!real_ready()) || !hook_real.dlclose)
		return -1;
	/* dlclose is no cancellation point: the reads of the maps around it
	 * must not make it one */
	int cancel;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	struct unload_probe pr;
	unloaded_before(&pr);
	int rc = hook_real.dlclose(handle);
	/* Cached unwind rules may describe the unloaded code. */
	unwind_cfi_flush();
	int saved = errno;
	unloaded_after(&pr);
	pthread_setcancelstate(cancel, NULL);
	errno = saved;
	return rc;
}

/* Each entry point: libleakhook.so's exported NAME, or libleakhook-inapp.so's
 * hidden hook_NAME (counted in, and straight to the allocator once stopped).
 * ENTRY(ret, name, params, args): its definition, calling name_body(args). */
#ifndef HOOK_INAPP
#define ENTRY(ret, name, params, args)                                  \
	EXPORT ret name params                                          \
	{                                                               \
		return name##_body args;                                \
	}
#define ENTRY_VOID(name, params, args)                                  \
	EXPORT void name params                                         \
	{                                                               \
		name##_body args;                                       \
	}
#else
#define ENTRY(ret, name, params, args)                                  \
	HIDDEN ret hook_##name params                                   \
	{                                                               \
		INAPP_ENTER();                                          \
		if (HOOK_UNLIKELY(!INAPP_LIVE()))                       \
			return hook_real.name args;                     \
		return name##_body args;                                \
	}
#define ENTRY_VOID(name, params, args)                                  \
	HIDDEN void hook_##name params                                  \
	{                                                               \
		INAPP_ENTER();                                          \
		if (HOOK_UNLIKELY(!INAPP_LIVE()))                       \
			hook_real.name args;                            \
		else                                                    \
			name##_body args;                               \
	}
/* The C++ runtime's own allocation slots: tracked only when a watched
 * library's operator new called it (inapp_cxx_claim). */
#define ENTRY_CXX(ret, name, params, args)                              \
	HIDDEN ret hook_cxx_##name params                               \
	{                                                               \
		INAPP_ENTER();                                          \
		if (!INAPP_LIVE() || !inapp_cxx_claim(caller_sp()))     \
			return hook_real.name args;                     \
		return name##_body args;                                \
	}
#endif

ENTRY(void *, malloc, (size_t size), (size))
ENTRY_VOID(free, (void *p), (p))
ENTRY(void *, calloc, (size_t n, size_t size), (n, size))
ENTRY(void *, realloc, (void *old, size_t size), (old, size))
ENTRY(void *, memalign, (size_t align, size_t size), (align, size))
ENTRY(int, posix_memalign, (void **out, size_t align, size_t size), (out, align, size))
ENTRY(void *, aligned_alloc, (size_t align, size_t size), (align, size))
ENTRY(void *, valloc, (size_t size), (size))
ENTRY(void *, pvalloc, (size_t size), (size))
ENTRY(size_t, malloc_usable_size, (void *p), (p))
#ifndef HOOK_INAPP
ENTRY(int, dlclose, (void *handle), (handle))
#else
/* Counted in for the unloading only: the scan after it takes the in-app
 * lock, which leaksnap_stop() holds while it waits for every count to
 * drain (and a destructor the unloading runs may call leaksnap_stop()). */
HIDDEN int hook_dlclose(void *handle)
{
	int rc;
	{
		INAPP_ENTER();
		rc = HOOK_UNLIKELY(!INAPP_LIVE()) ? hook_real.dlclose(handle) : dlclose_body(handle);
	}
	int saved = errno;
	inapp_after_dlclose();
	errno = saved;
	return rc;
}
#endif
#ifndef HOOK_INAPP
ENTRY(void *, reallocarray, (void *old, size_t n, size_t size), (old, n, size))
#else
/* (glibc's reallocarray is not always there to fall back on) */
HIDDEN void *hook_reallocarray(void *old, size_t n, size_t size)
{
	INAPP_ENTER();
	if (HOOK_UNLIKELY(!INAPP_LIVE())) {
		size_t total;
		if (__builtin_mul_overflow(n, size, &total)) {
			errno = ENOMEM;
			return NULL;
		}
		return hook_real.realloc(old, total);
	}
	return reallocarray_body(old, n, size);
}
/* The realloc slots of the modules not watched: a block a watched module
 * allocated and another grows is forgotten (never a phantom leak), and the
 * new one is not recorded (it is not the watched module's). */
HIDDEN void *hook_realloc_forget(void *old, size_t size)
{
	{
		INAPP_ENTER();
		if (old && INAPP_LIVE())
			hook_forget(old);
	}
	return hook_real.realloc(old, size);
}

/* @p is about to be freed where the hook does not call the allocator
 * itself (operator delete, realloc of the modules not watched): out of the
 * table and, sampling, out of the filter, which says first whether to look
 * (as for a free). */
HIDDEN void hook_forget(void *p)
{
	enum table_remove_result res;
	(void)untrack(p, NULL, &res);
}

HIDDEN void *hook_reallocarray_forget(void *old, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return hook_realloc_forget(old, total);
}

ENTRY_CXX(void *, malloc, (size_t size), (size))
ENTRY_CXX(void *, memalign, (size_t align, size_t size), (align, size))
ENTRY_CXX(int, posix_memalign, (void **out, size_t align, size_t size), (out, align, size))
ENTRY_CXX(void *, aligned_alloc, (size_t align, size_t size), (align, size))
#endif

/* bionic API ------------------------------------------------------------------ */

EXPORT void get_malloc_leak_info(uint8_t **info, size_t *overall_size, size_t *info_size,
				 size_t *total_memory, size_t *backtrace_size)
{
	if (!info || !overall_size || !info_size || !total_memory || !backtrace_size)
		return;
	*info = NULL;
	*overall_size = 0;
	*info_size = sizeof(uintptr_t) * (2 + hook_cfg.frames);
	*total_memory = 0;
	*backtrace_size = hook_cfg.frames;
	if (!atomic_load(&hook_active) || table_busy_here())
		return;
	hook_busy++;
	struct table_snapshot snap;
	if (table_snapshot(&snap) == 0) {
		if (snap.records_size) {
			/* From the allocator underneath, so that both
			 * free_malloc_leak_info() and free() release it. */
			uint8_t *buf = hook_real.malloc(snap.records_size);
			if (buf) {
				table_note_untracked(buf);
				memcpy(buf, snap.records, snap.records_size);
				*info = buf;
				*overall_size = snap.records_size;
				*total_memory = (size_t)snap.total_memory;
			}
		}
		table_snapshot_free(&snap);
	}
	hook_busy--;
}

EXPORT void free_malloc_leak_info(uint8_t *info)
{
	free(info);
}

EXPORT int leaksnap_dump(const char *path)
{
	if (!atomic_load(&hook_active)) {
		errno = ENOSYS;
		return -1;
	}
	REACH_ENTER();
	int rc = dump_write(path, HOOK_TRIGGER_API);
	reach_entry_sp = 0;
	return rc;
}

/* exit() ------------------------------------------------------------------------ */

/* Where the program entered exit(), and on which thread: the exit dump
 * takes that thread's stack from there up (docs/reachability.md, "the exit
 * dump").  The frames below it are finished: exit's own path (its
 * handlers, the destructors, the dump) runs over their slots without
 * writing them all, and what the program left there must not be a root. */
static atomic_uintptr_t exit_entry_sp;
static atomic_int exit_entry_tid;

uintptr_t hook_exit_entry_sp(void)
{
	return atomic_load(&exit_entry_tid) == (int)syscall(SYS_gettid) ? atomic_load(&exit_entry_sp)
									 : 0;
}

typedef void (*exit_fn)(int);
static _Atomic(exit_fn) real_exit;


#ifdef HOOK_INAPP
HIDDEN void hook_exit(int status)
#else
EXPORT void exit(int status)
#endif
{
	uintptr_t sp = caller_sp();
	int tid = (int)syscall(SYS_gettid);
	/* the first call on a thread (one from an atexit handler is deeper,
	 * and a forked child's thread has a tid of its own) */
	if (atomic_load(&exit_entry_tid) != tid) {
		atomic_store(&exit_entry_sp, sp);
		atomic_store(&exit_entry_tid, tid);
	}
	exit_fn real = atomic_load(&real_exit);
	if (!real) {
#ifdef HOOK_INAPP
		real = (exit_fn)hook_resolve("exit");
#else
		real = (exit_fn)dlsym(RTLD_NEXT, "exit");
#endif
		atomic_store(&real_exit, real);
	}
	if (real)
		real(status);
	_exit(status); /* (not reached; also keeps the call above a call) */
}

/* Start-up, fork, exit -------------------------------------------------------- */

/* The main thread may end by pthread_exit() or be cancelled, and leave the
 * process to the other threads: once they have ended too, the dump thread
 * must end, or the process would never exit.  A thread-specific value of
 * the main thread's tells: its destructor runs on either way out (not on a
 * return from main(), which is exit()). */
static pthread_key_t main_key;
static bool main_key_ok;

static void main_leaving(void *v)
{
	(void)v;
	dump_main_thread_gone();
}

static void main_key_set(void)
{
	if (main_key_ok && syscall(SYS_gettid) == getpid())
		pthread_setspecific(main_key, (void *)1);
}

static void fork_prepare(void)
{
	control_fork_prepare();
	unloaded_fork_prepare();
	table_lock_all();
}

static void fork_parent(void)
{
	table_unlock_all();
	unloaded_fork_parent();
	control_fork_parent();
}

static void fork_child(void)
{
	table_fork_child();
	table_unlock_all();
	sample_fork_child();
	unloaded_fork_child();
	atomic_store(&hook_zygote_child, true);
	dump_after_fork_child();
	control_after_fork_child();
	main_key_set(); /* the forking thread is the child's main thread */
	dump_child_start();
}

/* Zero the stack below the caller's frame: the start-up runs before main()
 * and deeper than main's frames will be, and what it leaves there (values
 * of its own, of the C library's) would lie in main's uninitialized slots,
 * false roots for reachability. */
static void __attribute__((noinline)) scrub_below(void)
{
	volatile char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

/* The table's fork handlers and the main thread's key, once.  In the
 * in-app build its own handlers are registered after these: its prepare
 * runs first, so that fork takes the in-app lock before the table locks,
 * in the order leaksnap_stop() takes them. */
static void register_atfork(void)
{
	main_key_ok = pthread_key_create(&main_key, main_leaving) == 0;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
#ifdef HOOK_INAPP
	inapp_register_atfork();
#endif
}

void hook_register_atfork(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_atfork);
}

int hook_collect_begin(void)
{
	if (table_init(hook_cfg.frames) != 0 || sample_begin() != 0)
		return -1;
	unwind_fp_exclude_self();
	atomic_store(&hook_capture_on, !hook_cfg.start_disabled);
	hook_register_atfork();
	main_key_set();
	atomic_store(&hook_active, true);
	dump_start();
	control_start();
	return 0;
}

void hook_collect_end(void)
{
	atomic_store(&hook_active, false);
	control_stop();
	dump_stop();
	table_reset();
	atomic_store(&hook_invalid_frees, 0);
}

static void __attribute__((constructor)) hook_start(void)
{
	if (!real_ready())
		return;
#ifdef HOOK_INAPP
	inapp_load();
	scrub_below();
#else
	if (getauxval(AT_SECURE))
		return; /* setuid/setgid: stay out of the way */
	if (!hook_only_wanted())
		return; /* LEAKSNAP_ONLY: inert, only passed on to children */
	hook_busy++;
	hook_read_config();
	if (hook_collect_begin() != 0) {
		hook_report(NULL, "cannot map the allocation tables; not tracking");
		hook_busy--;
		return;
	}
	hook_busy--;
	scrub_below();
#endif
}

#ifndef HOOK_INAPP
/* (the in-app API, so that code looking it up works under either build) */
EXPORT int leaksnap_start(const struct leaksnap_options *opts)
{
	(void)opts;
	errno = ENOSYS;
	return -1;
}

EXPORT int leaksnap_stop(void)
{
	errno = ENOSYS;
	return -1;
}
#endif

static void __attribute__((destructor)) hook_stop(void)
{
	if (!atomic_load(&hook_active))
		return;
	hook_busy++;
	REACH_ENTER();
	/* Entered from exit() on this thread, or by a return from main():
	 * the stack from exit's entry up (below it, exit's path runs over
	 * finished frames). */
	uintptr_t entered = hook_exit_entry_sp();
	if (!entered)
		entered = reach_main_exit_sp(); /* (a return from main) */
	if (entered > reach_entry_sp)
		reach_entry_sp = entered;
	dump_at_exit();
	control_at_exit();
	reach_entry_sp = 0;
	hook_busy--;
}
