/* leaksnap hook: the interposed allocation functions (start-up, fork and
 * exit are life.c's).
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
/* (stack_hi 0: not asked yet; 1 with stack_lo 0: not known) */
static HOOK_TLS uintptr_t stack_lo, stack_hi;

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

void hook_pool_range(uintptr_t r[2])
{
	r[0] = (uintptr_t)pool;
	r[1] = (uintptr_t)pool + POOL_SIZE;
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
	RESOLVE(pthread_create);
	RESOLVE(thrd_create);
	RESOLVE(pthread_sigmask);
	RESOLVE(sigprocmask);
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

bool hook_real_ready(void)
{
	return real_ready();
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
	stack_lo = 0;
	stack_hi = 1;
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
	if (HOOK_UNLIKELY(!stack_hi))
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
	volatile uintptr_t inflight[2] = {0, 0};
	/* (a realloc from a signal handler inside this one puts ours back) */
	volatile uintptr_t *outer = table_inflight;
	table_inflight = inflight;
	if (!untrack(old, &key, &res)) {
		table_inflight = outer;
		/* realloc of a freed block: its contents are gone; give the
		 * caller a new block rather than corrupt the heap. */
		void *p = hook_real.malloc(size);
		TRACK(p, size);
		return p;
	}
	/* The allocator frees a block it moves before it returns, and its free
	 * lists take the first words (a mapping of its own may go whole):
	 * kept here, in this frame, which a stop takes with the stack, until
	 * the new block is known. */
	volatile uintptr_t head[4] = {0, 0, 0, 0};
	uintptr_t had = res == TABLE_REMOVED ? key.size & ~(uintptr_t)HOOK_ZYGOTE_FLAG : 0;
	if (res == TABLE_REMOVED && HOOK_UNLIKELY(hook_cfg.reachability))
		for (size_t i = 0; i < 4 && (i + 1) * sizeof(uintptr_t) <= had; i++)
			head[i] = ((const uintptr_t *)old)[i];
	void *p = hook_real.realloc(old, size);
	if (p) {
		if (res == TABLE_REMOVED) { /* (what it has of the old bytes) */
			uintptr_t end = (uintptr_t)p + (had < size ? had : size);
			if (p == old) {
				inflight[1] = end; /* (one store: never empty) */
			} else {
				inflight[1] = 0; /* (never the old start with the new end) */
				inflight[0] = (uintptr_t)p;
				inflight[1] = end;
			}
		}
		TRACK(p, size);
	} else if (size != 0 && res == TABLE_REMOVED) {
		/* Failed: the old block is still live, with its old stack. */
		int saved = errno;
		struct sample_filter *filter = sample_filter_add(old);
		table_restore(old, &key);
		sample_filter_added(old, filter);
		errno = saved;
	}
	table_inflight = outer;
	(void)head[0]; /* (kept to here) */
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
	/* (a dump signal that came while the lines of the unloaded were
	 * being kept, in a process without its dump thread) */
	if (HOOK_UNLIKELY(atomic_load_explicit(&dump_thread_missing, memory_order_relaxed)))
		dump_thread_late();
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
