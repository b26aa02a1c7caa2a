/* leaksnap hook: which GOT slots the in-app build changes, and to what.
 *
 * In every loaded module but the C library, the loader and the hook itself:
 *  - a watched module (its path matches the regular expression): the
 *    eleven allocation functions, and the C++ operator new and delete
 *    family, whatever the relocation (jump slot, GLOB_DAT, absolute);
 *  - the C++ runtime (the module that defines operator new), watched or
 *    not: malloc, memalign, posix_memalign and aligned_alloc, pointed at
 *    variants that track only a call a watched library's operator new made
 *    (below);
 *  - every other module: free, realloc, reallocarray and operator delete,
 *    pointed at variants that forget a block of ours (a watched module's
 *    block freed elsewhere must not stay a leak) and record nothing new;
 *  - every module: dlopen, android_dlopen_ext, dlclose and exit.
 *
 * operator new.  The preload hook's stack for `new` starts inside the C++
 * runtime's operator new, at its call to malloc.  So a watched library's
 * new slot goes to a trampoline that notes its caller's stack pointer in a
 * thread-local word and jumps (a sibling call: no frame of ours stays on
 * the stack) to the real operator new; the runtime's malloc slot then
 * tracks the call when that word is set and its own stack pointer lies just
 * below it, and clears it.  The stack recorded is the preload hook's, bit
 * for bit.  A delete slot forgets the block, then calls the real delete. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "dynsym.h"
#include "got.h"
#include "inapp.h"
#include "procbuf.h"

#ifdef HOOK_INAPP

/* The names ------------------------------------------------------------------ */

#if UINTPTR_MAX == 0xffffffffu
#define SZ "j" /* size_t is unsigned int in the 32-bit ABIs */
#else
#define SZ "m"
#endif

enum {
	N_MALLOC, N_FREE, N_CALLOC, N_REALLOC, N_REALLOCARRAY, N_MEMALIGN, N_POSIX_MEMALIGN,
	N_ALIGNED_ALLOC, N_VALLOC, N_PVALLOC, N_MALLOC_USABLE_SIZE,
	N_DLOPEN, N_ANDROID_DLOPEN_EXT, N_DLCLOSE, N_EXIT,
	N_NEW0, /* 8 operator new, then 12 operator delete */
	N_DELETE0 = N_NEW0 + 8,
	N_COUNT = N_DELETE0 + 12,
};

static const char *const names[N_COUNT] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
	"dlopen", "android_dlopen_ext", "dlclose", "exit",
	"_Znw" SZ, "_Zna" SZ, "_Znw" SZ "RKSt9nothrow_t", "_Zna" SZ "RKSt9nothrow_t",
	"_Znw" SZ "St11align_val_t", "_Zna" SZ "St11align_val_t",
	"_Znw" SZ "St11align_val_tRKSt9nothrow_t", "_Zna" SZ "St11align_val_tRKSt9nothrow_t",
	"_ZdlPv", "_ZdaPv", "_ZdlPv" SZ, "_ZdaPv" SZ, "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
	"_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPv" SZ "St11align_val_t",
	"_ZdaPv" SZ "St11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
	"_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The real operator new and delete functions, as the loader binds them
 * (dlsym(RTLD_DEFAULT)), looked up at each scan until found; a C++ runtime
 * that dlsym cannot see (loaded by a library dlopen()ed RTLD_LOCAL, as
 * Android loads an app's libc++_shared.so) is found in the loaded
 * modules' symbol tables (find_cxx). */
static _Atomic(void *) cxx_real[N_COUNT - N_NEW0];

/* operator new and delete ------------------------------------------------------ */

/* Every variant takes at most three integer-class arguments (size or
 * pointer, alignment, size, a nothrow_t reference), passed in registers on
 * every ABI the hook is built for: one shape serves them all. */
typedef void *(*new_fn)(uintptr_t, uintptr_t, uintptr_t);
typedef void (*delete_fn)(void *, uintptr_t, uintptr_t);

/* Where a watched library's operator new was called from (its caller's
 * stack pointer), 0 = none. */
static HOOK_TLS uintptr_t cxx_sp;
/* How far below that the runtime's call to malloc may be: operator new[]
 * calls operator new, the nothrow ones the throwing ones, each a small
 * frame. */
#define CXX_WINDOW 2048

bool inapp_cxx_claim(uintptr_t sp)
{
	uintptr_t at = cxx_sp;
	if (!at)
		return false;
	cxx_sp = 0;
	return sp < at && at - sp <= CXX_WINDOW;
}

#define NEW_TRAMPOLINE(i)                                                              \
	static void *new_##i(uintptr_t a, uintptr_t b, uintptr_t c)                    \
	{                                                                              \
		cxx_sp = caller_sp();                                                  \
		return ((new_fn)atomic_load_explicit(&cxx_real[i], memory_order_relaxed))( \
			a, b, c);                                                      \
	}
NEW_TRAMPOLINE(0) NEW_TRAMPOLINE(1) NEW_TRAMPOLINE(2) NEW_TRAMPOLINE(3)
NEW_TRAMPOLINE(4) NEW_TRAMPOLINE(5) NEW_TRAMPOLINE(6) NEW_TRAMPOLINE(7)

#define DELETE_WRAPPER(i)                                                              \
	static void delete_##i(void *p, uintptr_t b, uintptr_t c)                      \
	{                                                                              \
		if (p) {                                                               \
			INAPP_ENTER();                                                 \
			if (INAPP_LIVE())                                              \
				hook_forget(p);                                        \
		}                                                                      \
		((delete_fn)atomic_load_explicit(&cxx_real[8 + i], memory_order_relaxed))( \
			p, b, c);                                                      \
	}
DELETE_WRAPPER(0) DELETE_WRAPPER(1) DELETE_WRAPPER(2) DELETE_WRAPPER(3)
DELETE_WRAPPER(4) DELETE_WRAPPER(5) DELETE_WRAPPER(6) DELETE_WRAPPER(7)
DELETE_WRAPPER(8) DELETE_WRAPPER(9) DELETE_WRAPPER(10) DELETE_WRAPPER(11)

static void *const cxx_ours[N_COUNT - N_NEW0] = {
	(void *)new_0, (void *)new_1, (void *)new_2, (void *)new_3,
	(void *)new_4, (void *)new_5, (void *)new_6, (void *)new_7,
	(void *)delete_0, (void *)delete_1, (void *)delete_2, (void *)delete_3,
	(void *)delete_4, (void *)delete_5, (void *)delete_6, (void *)delete_7,
	(void *)delete_8, (void *)delete_9, (void *)delete_10, (void *)delete_11,
};

/* dlopen ---------------------------------------------------------------------- */

typedef void *(*dlopen_fn)(const char *, int);
typedef void *(*dlopen_ext_fn)(const char *, int, const void *);
static _Atomic(dlopen_fn) real_dlopen;
static _Atomic(dlopen_ext_fn) real_dlopen_ext;

/* After a library was loaded: patch it (and whatever it brought). */
static void after_load(void)
{
	int saved = errno;
	inapp_resolve();
	inapp_lock();
	if (inapp.started)
		inapp_scan_locked();
	inapp_unlock();
	errno = saved;
}

void *inapp_dlopen_as(const char *file, int flags, const void *caller);
void *inapp_dlopen_ext_as(const char *file, int flags, const void *info, const void *caller);

static void *hook_dlopen(const char *file, int flags)
{
	void *h = inapp_dlopen_as(file, flags, __builtin_return_address(0));
	if (h)
		after_load();
	return h;
}

static void *hook_android_dlopen_ext(const char *file, int flags, const void *info)
{
	void *h = inapp_dlopen_ext_as(file, flags, info, __builtin_return_address(0));
	if (h)
		after_load();
	return h;
}

void inapp_after_dlclose(void)
{
	after_load(); /* (the scan forgets the modules gone) */
}

#ifdef __BIONIC__
/* bionic's loader takes the caller's address explicitly. */
extern void *__loader_dlopen(const char *file, int flags, const void *caller)
	__attribute__((weak));
extern void *__loader_android_dlopen_ext(const char *file, int flags, const void *info,
					 const void *caller) __attribute__((weak));

void *inapp_dlopen_as(const char *file, int flags, const void *caller)
{
	if (__loader_dlopen)
		return __loader_dlopen(file, flags, caller);
	return atomic_load(&real_dlopen)(file, flags);
}

void *inapp_dlopen_ext_as(const char *file, int flags, const void *info, const void *caller)
{
	if (__loader_android_dlopen_ext)
		return __loader_android_dlopen_ext(file, flags, info, caller);
	dlopen_ext_fn ext = atomic_load(&real_dlopen_ext);
	return ext ? ext(file, flags, info) : atomic_load(&real_dlopen)(file, flags);
}
#else
void *inapp_dlopen_glibc(dlopen_fn real, const char *file, int flags, const void *caller);

void *inapp_dlopen_as(const char *file, int flags, const void *caller)
{
	return inapp_dlopen_glibc(atomic_load(&real_dlopen), file, flags, caller);
}

void *inapp_dlopen_ext_as(const char *file, int flags, const void *info, const void *caller)
{
	(void)caller;
	dlopen_ext_fn ext = atomic_load(&real_dlopen_ext);
	return ext ? ext(file, flags, info) : NULL;
}
#endif

/* Modules --------------------------------------------------------------------- */

/* Grow the hook_map()'ed array *@arr of *@cap elements of @size bytes to
 * hold @want; false if no memory. */
static bool grow(void **arr, size_t *cap, size_t want, size_t size)
{
	if (want <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < want)
		n *= 2;
	void *p = hook_map(n * size);
	if (!p)
		return false;
	if (*arr) {
		memcpy(p, *arr, *cap * size);
		hook_unmap(*arr, *cap * size);
	}
	*arr = p;
	*cap = n;
	return true;
}

static bool contains(const struct dl_phdr_info *info, uintptr_t a)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
			return true;
	}
	return false;
}

/* The modules never touched: the C library, the loader, the vDSO, us. */
static bool never(const struct dl_phdr_info *info)
{
	uintptr_t at_base = (uintptr_t)getauxval(AT_BASE);
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	return contains(info, (uintptr_t)&inapp_scan_locked) ||
	       contains(info, (uintptr_t)hook_real.malloc) ||
	       (at_base && (info->dlpi_addr == at_base || contains(info, at_base))) ||
	       (vdso && contains(info, vdso));
}

/* The module's path, as the maps show it, into inapp.paths. */
static uint32_t add_path(const struct dl_phdr_info *info)
{
	char tmp[PATH_MAX];
	const char *path = info->dlpi_name;
	if (!path || !*path) {
		ssize_t n = readlink("/proc/self/exe", tmp, sizeof(tmp) - 1);
		tmp[n > 0 ? n : 0] = '\0';
		path = tmp;
	} else if (path[0] != '/' && realpath(path, tmp)) {
		path = tmp;
	}
	uint32_t off = (uint32_t)inapp.paths->len;
	buf_add(inapp.paths, path, strlen(path) + 1);
	return inapp.paths->failed ? UINT32_MAX : off;
}

static const char *path_of(const struct inapp_mod *m)
{
	return m->path == UINT32_MAX ? "?" : inapp.paths->p + m->path;
}

struct scan {
	struct inapp_mod *mod;
	const struct dl_phdr_info *info;
	bool watched, runtime;
};

/* What slot @name of the module should hold, or NULL: leave it. */
static void *ours_for(const struct scan *sc, unsigned name)
{
	if (name < N_DLOPEN) {
		if (sc->watched) {
			static void *const alloc[] = {
				(void *)hook_malloc, (void *)hook_free, (void *)hook_calloc,
				(void *)hook_realloc, (void *)hook_reallocarray, (void *)hook_memalign,
				(void *)hook_posix_memalign, (void *)hook_aligned_alloc,
				(void *)hook_valloc, (void *)hook_pvalloc,
				(void *)hook_malloc_usable_size,
			};
			return alloc[name];
		}
		/* Every other module: what it frees or grows of ours is
		 * forgotten, or it would stay a leak (strdup's result freed by
		 * its caller, the C++ runtime's free under operator delete). */
		switch (name) {
		case N_FREE: return (void *)hook_free;
		case N_REALLOC: return (void *)hook_realloc_forget;
		case N_REALLOCARRAY: return (void *)hook_reallocarray_forget;
		default: break;
		}
		if (!sc->runtime)
			return NULL;
		switch (name) {
		case N_MALLOC: return (void *)hook_cxx_malloc;
		case N_MEMALIGN: return (void *)hook_cxx_memalign;
		case N_POSIX_MEMALIGN: return (void *)hook_cxx_posix_memalign;
		case N_ALIGNED_ALLOC: return (void *)hook_cxx_aligned_alloc;
		default: return NULL;
		}
	}
	switch (name) {
	case N_DLOPEN: return atomic_load(&real_dlopen) ? (void *)hook_dlopen : NULL;
	case N_ANDROID_DLOPEN_EXT: return (void *)hook_android_dlopen_ext;
	case N_DLCLOSE: return hook_real.dlclose ? (void *)hook_dlclose : NULL;
	case N_EXIT: return (void *)hook_exit;
	default: break;
	}
	if (!atomic_load(&cxx_real[name - N_NEW0]))
		return NULL;
	/* operator delete everywhere (as free), operator new where watched */
	if (!sc->watched && name < N_DELETE0)
		return NULL;
	return cxx_ours[name - N_NEW0];
}

static int patch_slot(void *ctx, const struct got_slot *slot)
{
	struct scan *sc = ctx;
	void *ours = ours_for(sc, slot->name);
	if (!ours)
		return 0;
	uintptr_t cur = atomic_load((_Atomic uintptr_t *)slot->addr);
	if (cur == (uintptr_t)ours || !cur)
		return 0; /* (a weak reference to what is not there: left so) */
	if (!grow((void **)&inapp.recs, &inapp.recs_cap, inapp.nrecs + 1, sizeof(*inapp.recs)))
		return 0;
	/* (the loader may bind a lazy slot meanwhile: try again with that) */
	for (int tries = 0; tries < 4; tries++) {
		uintptr_t found = 0;
		int rc = got_swap(sc->info, slot->addr, cur, (uintptr_t)ours, &found);
		if (rc == 1) {
			inapp.recs[inapp.nrecs++] =
				(struct inapp_rec){slot->addr, cur, (uintptr_t)ours, slot->name};
			sc->mod->nrecs++;
			return 0;
		}
		if (rc < 0)
			return 0;
		cur = found;
	}
	return 0;
}

/* The end of the module's highest segment, from its base. */
static uintptr_t module_span(const struct dl_phdr_info *info)
{
	uintptr_t end = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > end)
			end = ph->p_vaddr + ph->p_memsz;
	}
	return end;
}

static bool same_module(const struct inapp_mod *m, const struct dl_phdr_info *info)
{
	return m->base == info->dlpi_addr && m->phdr == info->dlpi_phdr &&
	       m->name_ptr == info->dlpi_name && m->span == module_span(info);
}

/* The word at @a lies in a writable segment of the module (a slot's place;
 * a record of another library loaded where this one was may point
 * elsewhere). */
static bool writable_at(const struct dl_phdr_info *info, uintptr_t a)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && a >= lo &&
		    ph->p_memsz >= sizeof(uintptr_t) && a - lo <= ph->p_memsz - sizeof(uintptr_t))
			return true;
	}
	return false;
}

/* What the loader binds slot @name to (the function a lost patch leaves
 * there), or 0 when not known. */
static uintptr_t loader_value(unsigned name)
{
	static void *const *const alloc[] = {
		(void *const *)&hook_real.malloc, (void *const *)&hook_real.free,
		(void *const *)&hook_real.calloc, (void *const *)&hook_real.realloc,
		NULL, (void *const *)&hook_real.memalign, (void *const *)&hook_real.posix_memalign,
		(void *const *)&hook_real.aligned_alloc, (void *const *)&hook_real.valloc,
		(void *const *)&hook_real.pvalloc, (void *const *)&hook_real.malloc_usable_size,
	};
	if (name < N_DLOPEN)
		return alloc[name] ? (uintptr_t)*alloc[name] : 0;
	switch (name) {
	case N_DLOPEN: return (uintptr_t)atomic_load(&real_dlopen);
	case N_ANDROID_DLOPEN_EXT: return (uintptr_t)atomic_load(&real_dlopen_ext);
	case N_DLCLOSE: return (uintptr_t)hook_real.dlclose;
	case N_EXIT: return 0;
	default: return (uintptr_t)atomic_load(&cxx_real[name - N_NEW0]);
	}
}

/* A module seen before: a lazy slot (it held the module's own PLT code when
 * it was patched) that now holds what the loader binds (a lazy binding that
 * finished after the patch wrote over it) is patched again; any other
 * change is someone else's and left so. */
static void repair(const struct dl_phdr_info *info, const struct inapp_mod *m)
{
	for (size_t k = m->first_rec; k < m->first_rec + m->nrecs; k++) {
		const struct inapp_rec *r = &inapp.recs[k];
		if (!writable_at(info, r->addr))
			continue;
		uintptr_t cur = atomic_load((_Atomic uintptr_t *)r->addr), real;
		if (cur != r->ours && cur != r->old && contains(info, r->old) &&
		    (real = loader_value(r->name)) && cur == real)
			got_swap(info, r->addr, cur, r->ours, NULL);
	}
}

/* Module @m matches @info by address, headers and name, but may be a new
 * load of the same library: unloaded by a dlclose() the hook did not see
 * (called through a function pointer, or through a slot read before it was
 * patched), then loaded again where it was, its link map in the same
 * memory.  Its slots then hold what the loader put there, not ours.  Only
 * asked when something was unloaded since the last scan (glibc counts the
 * unloads; elsewhere, always). */
static bool reloaded(const struct dl_phdr_info *info, size_t size, const struct inapp_mod *m)
{
#ifdef __GLIBC__
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs) &&
	    inapp.subs_known && info->dlpi_subs == inapp.subs)
		return false;
#else
	(void)size;
#endif
	if (m->nrecs == 0)
		return false; /* (nothing of ours in it either way) */
	for (size_t k = m->first_rec; k < m->first_rec + m->nrecs; k++) {
		const struct inapp_rec *r = &inapp.recs[k];
		if (!writable_at(info, r->addr))
			return true; /* (another library where it was) */
		uintptr_t cur = atomic_load((_Atomic uintptr_t *)r->addr), real;
		bool fresh = cur == r->old ||
			     (contains(info, r->old) && (real = loader_value(r->name)) && cur == real);
		if (!fresh)
			return false; /* ours, or someone else's: the same load */
	}
	return true;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)data;
#ifdef __GLIBC__
	/* (read under the loader's lock, with the list) */
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		inapp.scan_subs = info->dlpi_subs;
		inapp.scan_subs_known = true;
	}
#endif
	for (size_t i = 0; i < inapp.nmods; i++)
		if (same_module(&inapp.mods[i], info)) {
			if (got_loaded(info) == 0) {
				/* a new load another thread is relocating (the
				 * old one was unloaded unseen): patched by the
				 * scan after its dlopen, which must not take
				 * this scan's count of unloads for its own */
				inapp.scan_loading = true;
				break;
			}
			if (reloaded(info, size, &inapp.mods[i]))
				break; /* (the old one is swept, this one patched) */
			inapp.mods[i].seen = true;
			repair(info, &inapp.mods[i]);
			return 0;
		}
	if (never(info))
		return 0;
	/* Being loaded by another thread (glibc lists it before relocating
	 * it): patched by the scan after its dlopen returns. */
	if (got_loaded(info) == 0)
		return 0;
	if (!grow((void **)&inapp.mods, &inapp.mods_cap, inapp.nmods + 1, sizeof(*inapp.mods)))
		return 0;
	struct inapp_mod *m = &inapp.mods[inapp.nmods++];
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->phdr = info->dlpi_phdr;
	m->name_ptr = info->dlpi_name;
	m->span = module_span(info);
	m->seen = true;
	m->path = add_path(info);
	m->first_rec = inapp.nrecs;
	struct scan sc = {m, info, false, false};
	sc.watched = !inapp.have_re ||
		     (m->path != UINT32_MAX && regexec(&inapp.re, path_of(m), 0, NULL, 0) == 0);
	void *new_real = atomic_load(&cxx_real[0]);
	sc.runtime = new_real && contains(info, (uintptr_t)new_real);
	m->kind = sc.watched ? INAPP_MOD_WATCHED : INAPP_MOD_OTHER;
	const char *why = NULL;
	if (got_find(info, names, N_COUNT, patch_slot, &sc, &why) != 0) {
		m->kind = INAPP_MOD_SKIPPED;
		m->why = why ? why : "unreadable";
	}
	return 0;
}

/* Drop the modules not seen by the last scan (unloaded: their slots are
 * gone with them). */
static void sweep(void)
{
	size_t keep = 0, rec = 0;
	for (size_t i = 0; i < inapp.nmods; i++) {
		struct inapp_mod m = inapp.mods[i];
		if (!m.seen)
			continue;
		if (rec != m.first_rec)
			memmove(&inapp.recs[rec], &inapp.recs[m.first_rec],
				m.nrecs * sizeof(*inapp.recs));
		m.first_rec = rec;
		rec += m.nrecs;
		inapp.mods[keep++] = m;
	}
	inapp.nmods = keep;
	inapp.nrecs = rec;
}

void inapp_resolve(void)
{
	if (!atomic_load(&real_dlopen))
		atomic_store(&real_dlopen, (dlopen_fn)hook_resolve("dlopen"));
	if (!atomic_load(&real_dlopen_ext))
		atomic_store(&real_dlopen_ext, (dlopen_ext_fn)hook_resolve("android_dlopen_ext"));
	for (unsigned i = 0; i < N_COUNT - N_NEW0; i++)
		if (!atomic_load(&cxx_real[i]))
			atomic_store(&cxx_real[i], hook_resolve(names[N_NEW0 + i]));
}

/* The first module in load order that defines each operator still
 * unknown. */
static int find_cxx(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	struct dynsyms d;
	if (never(info) || !dynsyms_of(info, &d))
		return 0;
	for (unsigned i = 0; i < N_COUNT - N_NEW0; i++) {
		void *p;
		if (!atomic_load(&cxx_real[i]) && (p = dynsym_find(&d, names[N_NEW0 + i])))
			atomic_store(&cxx_real[i], p);
	}
	return 0;
}

void inapp_scan_locked(void)
{
	static struct buf paths;
	inapp.paths = &paths;
	bool missing = false;
	for (unsigned i = 0; i < N_COUNT - N_NEW0; i++)
		missing |= !atomic_load(&cxx_real[i]);
	if (missing)
		dl_iterate_phdr(find_cxx, NULL);
	for (size_t i = 0; i < inapp.nmods; i++)
		inapp.mods[i].seen = false;
	inapp.scan_subs_known = false;
	inapp.scan_loading = false;
	dl_iterate_phdr(scan_one, NULL);
	sweep();
	inapp.subs = inapp.scan_subs;
	inapp.subs_known = inapp.scan_subs_known && !inapp.scan_loading;
}

/* Stop ---------------------------------------------------------------------------- */

static int unpatch_one(struct dl_phdr_info *info, size_t size, void *data)
{
	int *left = data;
	for (size_t i = 0; i < inapp.nmods; i++) {
		struct inapp_mod *m = &inapp.mods[i];
		if (!same_module(m, info))
			continue;
		/* (a new load since the last scan, through a dlopen the hook
		 * did not see: none of its slots is ours) */
		if (got_loaded(info) == 0 || reloaded(info, size, m)) {
			m->nrecs = 0;
			break;
		}
		for (size_t k = m->first_rec; k < m->first_rec + m->nrecs; k++) {
			const struct inapp_rec *r = &inapp.recs[k];
			uintptr_t found;
			if (got_swap(info, r->addr, r->ours, r->old, &found) != 1)
				(*left)++;
		}
		m->nrecs = 0;
		break;
	}
	return 0;
}

int inapp_unpatch_locked(void)
{
	int left = 0;
	dl_iterate_phdr(unpatch_one, &left);
	return left;
}

void inapp_forget_locked(void)
{
	inapp.subs_known = false;
	inapp.nmods = 0;
	inapp.nrecs = 0;
	if (inapp.paths)
		inapp.paths->len = 0;
}

void inapp_meta_modules_locked(struct buf *meta)
{
	for (size_t i = 0; i < inapp.nmods; i++) {
		const struct inapp_mod *m = &inapp.mods[i];
		const char *p = path_of(m);
		if (m->kind == INAPP_MOD_WATCHED) {
			buf_add(meta, "inapp_watched=", 14);
			buf_add_clean(meta, p, strlen(p));
			buf_add(meta, "\n", 1);
		} else if (m->kind == INAPP_MOD_SKIPPED) {
			buf_add(meta, "inapp_skipped=", 14);
			buf_add_clean(meta, p, strlen(p));
			buf_printf(meta, ": %s\n", m->why);
		}
	}
	buf_printf(meta, "inapp_slots=%zu\n", inapp.nrecs);
}

#endif
