/* leaksnap hook: dlsym and dlvsym.
 *
 * A program that looks an allocation function up by name -- Python's
 * ctypes.CDLL("libc.so.6").malloc, a plugin loader's dlsym(handle,
 * "free") -- gets the C library's own, and its blocks would never reach
 * the hook.  So the hook interposes dlsym and dlvsym: a lookup that would
 * give the allocator the hook wraps (the function its own wrappers call)
 * gives the hook's wrapper instead.  Everything else is the loader's answer,
 * exactly:
 *
 * - The loader's dlsym tells RTLD_NEXT and RTLD_DEFAULT lookups apart by
 *   the code that called it (its return address).  So the wrapper hands
 *   every lookup it does not answer itself to the real function by a
 *   sibling call (a jump): the loader sees the program's return address,
 *   not the hook's.
 * - The hook's own lookups of the allocator underneath (hook.c's
 *   dlsym(RTLD_NEXT, ...)) come from inside the hook: they get the real
 *   answer.  So does an RTLD_NEXT lookup of an allocation function from a
 *   module that defines that function itself: another interposer (a second
 *   malloc hook after this one) asking for the next one in the chain, which
 *   must not be sent back to the hook.
 * - An allocator that is not the one the hook wraps (a dlopen'ed jemalloc
 *   looked up through its handle) is returned as it is.
 *
 * The real dlsym and dlvsym are found without calling dlsym: in the dynamic
 * symbol tables of the modules loaded after the hook (glibc >= 2.34:
 * libc.so.6; before, libdl.so.2; bionic: libdl.so), read through
 * dl_iterate_phdr, their default versions. */
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dynsym.h"
#include "hook_internal.h"

/* (the in-app build interposes nothing: no dlsym of its own either) */
#ifndef HOOK_INAPP


typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static dlsym_fn real_dlsym;
static dlvsym_fn real_dlvsym;
static atomic_int dl_state; /* 0: not looked for yet, 1: being looked for, 2: found */
static uintptr_t self_lo, self_hi; /* the hook's own mapped range */

/* The functions whose lookups give the hook's: name, the hook's wrapper,
 * and the allocator underneath (what dlsym(RTLD_NEXT) gives the hook),
 * found on first use. */
static struct wrapped {
	const char *name;
	void *ours;
	_Atomic(void *) next;
	atomic_bool next_known;
} wrapped[] = {
#define WRAPPED(fn) {#fn, (void *)fn, NULL, false}
	WRAPPED(malloc), WRAPPED(free), WRAPPED(calloc), WRAPPED(realloc), WRAPPED(reallocarray),
	WRAPPED(memalign), WRAPPED(posix_memalign), WRAPPED(aligned_alloc), WRAPPED(valloc),
	WRAPPED(pvalloc), WRAPPED(malloc_usable_size),
#undef WRAPPED
};
#define WRAPPED_COUNT (sizeof(wrapped) / sizeof(wrapped[0]))

/* Finding the real functions ------------------------------------------------- */

struct find_real {
	bool after_self;
	void *dlsym, *dlvsym;             /* in the first module after the hook */
	void *any_dlsym, *any_dlvsym;     /* or in any other */
};

static int find_real_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_real *f = arg;
	(void)size;
	if (in_module(info, (uintptr_t)find_real_cb, 1)) {
		f->after_self = true;
		for (unsigned i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			if (ph->p_type != PT_LOAD)
				continue;
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
			if (!self_lo || lo < self_lo)
				self_lo = lo;
			if (hi > self_hi)
				self_hi = hi;
		}
		return 0;
	}
	struct dynsyms d;
	if (!dynsyms_of(info, &d))
		return 0;
	void *s = dynsym_find(&d, "dlsym"), *v = dynsym_find(&d, "dlvsym");
	if (f->after_self && s && !f->dlsym) {
		f->dlsym = s;
		f->dlvsym = v;
	}
	if (s && !f->any_dlsym) {
		f->any_dlsym = s;
		f->any_dlvsym = v;
	}
	return 0;
}

static void __attribute__((noinline, cold)) dl_init(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&dl_state, &expected, 1)) {
		while (atomic_load_explicit(&dl_state, memory_order_acquire) != 2)
			sched_yield(); /* another thread is looking (nothing it does waits for us) */
		return;
	}
	struct find_real f = {false, NULL, NULL, NULL, NULL};
	dl_iterate_phdr(find_real_cb, &f);
	if (!f.dlsym) {
		f.dlsym = f.any_dlsym;
		f.dlvsym = f.any_dlvsym;
	}
	if (!f.dlsym) {
		static const char msg[] = "leaksnap: cannot find the real dlsym under the hook\n";
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
		abort();
	}
	*(void **)&real_dlsym = f.dlsym;
	*(void **)&real_dlvsym = f.dlvsym;
	atomic_store_explicit(&dl_state, 2, memory_order_release);
}

static inline void dl_ready(void)
{
	if (HOOK_UNLIKELY(atomic_load_explicit(&dl_state, memory_order_acquire) != 2))
		dl_init();
}

/* The lookups' answers -------------------------------------------------------- */

static struct wrapped *wrapped_named(const char *name)
{
	/* (most lookups are of other names: one comparison of the first
	 * letter rejects them) */
	switch (name[0]) {
	case 'a': case 'c': case 'f': case 'm': case 'p': case 'r': case 'v':
		break;
	default:
		return NULL;
	}
	for (size_t i = 0; i < WRAPPED_COUNT; i++)
		if (!strcmp(name, wrapped[i].name))
			return &wrapped[i];
	return NULL;
}

static void *next_of(struct wrapped *w)
{
	if (!atomic_load_explicit(&w->next_known, memory_order_acquire)) {
		/* called from here: RTLD_NEXT is the module after the hook */
		atomic_store_explicit(&w->next, real_dlsym(RTLD_NEXT, w->name), memory_order_relaxed);
		atomic_store_explicit(&w->next_known, true, memory_order_release);
	}
	return atomic_load_explicit(&w->next, memory_order_relaxed);
}

struct defines {
	uintptr_t addr;
	const char *name;
	bool yes;
};

static int defines_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct defines *q = arg;
	(void)size;
	if (!in_module(info, q->addr, 1))
		return 0;
	struct dynsyms d;
	q->yes = dynsyms_of(info, &d) && dynsym_find(&d, q->name) != NULL;
	return 1;
}

/* Whether the module holding @addr defines the function @name. */
static bool module_defines(const void *addr, const char *name)
{
	struct defines q = {(uintptr_t)addr, name, false};
	dl_iterate_phdr(defines_cb, &q);
	return q.yes;
}

/* The hook's wrapper that a lookup of @name (@version, or NULL) in @handle by
 * the code at @caller gives, or NULL: the loader's own answer. */
static void *__attribute__((noinline)) answer(void *handle, const char *name, const char *version,
					      const void *caller)
{
	struct wrapped *w = name ? wrapped_named(name) : NULL;
	if (!w)
		return NULL;
	if ((uintptr_t)caller >= self_lo && (uintptr_t)caller < self_hi)
		return NULL; /* the hook finding the allocator underneath */
	if (handle == RTLD_NEXT && module_defines(caller, name))
		return NULL; /* an interposer asking for the next one */
	void *real = version ? (real_dlvsym ? real_dlvsym(handle, name, version) : NULL)
			     : real_dlsym(handle, name);
	if (real && (real == w->ours || real == next_of(w)))
		return w->ours;
	return NULL;
}

EXPORT void *dlsym(void *handle, const char *name)
{
	dl_ready();
	void *mine = answer(handle, name, NULL, __builtin_return_address(0));
	if (mine)
		return mine;
	/* a sibling call: the loader sees our caller's return address */
	return real_dlsym(handle, name);
}

EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	dl_ready();
	void *mine = answer(handle, name, version, __builtin_return_address(0));
	if (mine)
		return mine;
	if (!real_dlvsym)
		return NULL;
	return real_dlvsym(handle, name, version);
}

#endif
