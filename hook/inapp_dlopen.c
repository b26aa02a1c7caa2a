/* leaksnap hook: dlopen on behalf of the code that called it (the in-app
 * build's dlopen slot, glibc).
 *
 * glibc's dlopen takes its caller from its return address: the caller's
 * namespace, and for a bare file name the caller's DT_RPATH/DT_RUNPATH
 * ($ORIGIN of the caller) in the search.  Called from the hook's slot it
 * would take the hook for the caller.  So when it matters -- a bare name
 * and a caller with a search path of its own or in another namespace, or
 * $ORIGIN in the name -- the search is done here the way the loader would
 * have done it for the caller: an object already loaded under that name
 * first (RTLD_NOLOAD), then each directory of the caller's search path
 * (dlinfo RTLD_DI_SERINFO of the caller's link map), then the loader's own
 * (the cache and the system directories).  Everything else is the real
 * dlopen's, unchanged. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"

#if defined(HOOK_INAPP) && !defined(__BIONIC__)

typedef void *(*dlopen_fn)(const char *, int);
void *inapp_dlopen_glibc(dlopen_fn real, const char *file, int flags, const void *caller);

static bool has_search_path(const struct link_map *lm)
{
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return true;
	return false;
}

/* Open @file in namespace @lmid (LM_ID_BASE: as dlopen). */
static void *open_in(dlopen_fn real, Lmid_t lmid, const char *file, int flags)
{
	if (lmid == LM_ID_BASE)
		return real(file, flags);
	return dlmopen(lmid, file, flags);
}

/* @file with "$ORIGIN" (or "${ORIGIN}") replaced by the caller's directory,
 * into @out; false if it does not fit. */
static bool expand_origin(const char *file, const char *origin_of, char *out, size_t size)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(origin_of, '/');
	size_t dl = slash ? (size_t)(slash - origin_of) : 0;
	if (dl >= sizeof(dir))
		return false;
	memcpy(dir, origin_of, dl);
	dir[dl] = '\0';
	size_t n = 0;
	for (const char *p = file; *p;) {
		size_t skip = !strncmp(p, "$ORIGIN", 7) ? 7 : !strncmp(p, "${ORIGIN}", 9) ? 9 : 0;
		const char *add = skip ? dir : p;
		size_t len = skip ? dl : 1;
		if (n + len >= size)
			return false;
		memcpy(out + n, add, len);
		n += len;
		p += skip ? skip : 1;
	}
	out[n] = '\0';
	return true;
}

void *inapp_dlopen_glibc(dlopen_fn real, const char *file, int flags, const void *caller)
{
	if (!real)
		return NULL;
	Dl_info dli;
	struct link_map *lm = NULL;
	if (!file || !caller || !dladdr1(caller, &dli, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return real(file, flags);
	Lmid_t lmid = LM_ID_BASE;
	if (dlinfo(lm, RTLD_DI_LMID, &lmid) != 0)
		lmid = LM_ID_BASE;
	if (strstr(file, "$ORIGIN") || strstr(file, "${ORIGIN}")) {
		char path[PATH_MAX];
		const char *origin_of = lm->l_name && *lm->l_name ? lm->l_name : NULL;
		char exe[PATH_MAX];
		if (!origin_of) {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
			origin_of = exe;
		}
		if (expand_origin(file, origin_of, path, sizeof(path)))
			return open_in(real, lmid, path, flags);
		return open_in(real, lmid, file, flags);
	}
	if (strchr(file, '/') || (lmid == LM_ID_BASE && !has_search_path(lm)))
		return open_in(real, lmid, file, flags);
	/* Loaded already under that name? */
	void *h = open_in(real, lmid, file, flags | RTLD_NOLOAD);
	if (h)
		return h;
	Dl_serinfo size_info;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size_info) == 0 && size_info.dls_size) {
		Dl_serinfo *si = malloc(size_info.dls_size);
		if (si && (memcpy(si, &size_info, sizeof(size_info)), dlinfo(lm, RTLD_DI_SERINFO, si) == 0)) {
			for (unsigned i = 0; i < si->dls_cnt && !h; i++) {
				char path[PATH_MAX];
				const char *dir = si->dls_serpath[i].dls_name;
				int n = snprintf(path, sizeof(path), "%s%s%s", dir,
						 *dir && dir[strlen(dir) - 1] == '/' ? "" : "/", file);
				if (n > 0 && (size_t)n < sizeof(path) && access(path, F_OK) == 0)
					h = open_in(real, lmid, path, flags);
			}
		}
		free(si);
		if (h)
			return h;
	}
	return open_in(real, lmid, file, flags);
}

#endif
