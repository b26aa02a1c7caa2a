/* leaksnap attach: loading the in-app hook into a process and calling its
 * functions there.
 *
 * The loader's dlopen is found in the process's own files, whichever C
 * library it has: glibc 2.34 and later keep dlopen in libc.so.6; older
 * ones in libdl.so.2 (when the program links it) or, privately, as
 * __libc_dlopen_mode in libc.so.6; bionic's linker exports
 * __loader_dlopen, which takes the caller's address (the linker
 * namespace is chosen by it); musl's are in its loader, which is its C
 * library. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_internal.h"
#include "kit.h"

/* One way to reach the loader. */
struct loader {
	const char *module;   /* file name of the module that has them */
	const char *dlopen;
	const char *dlsym;
	const char *dlerror;  /* NULL: none */
	bool caller_arg;      /* bionic: a third argument, the caller's address */
};

static const struct loader loaders[] = {
	{"libc.so.6", "dlopen", "dlsym", "dlerror", false},
	{"libdl.so.2", "dlopen", "dlsym", "dlerror", false},
	{"libc.so.6", "__libc_dlopen_mode", "__libc_dlsym", NULL, false},
	{"linker64", "__loader_dlopen", "__loader_dlsym", "__loader_dlerror", true},
	{"linker", "__loader_dlopen", "__loader_dlsym", "__loader_dlerror", true},
	/* musl: the C library is the loader, mapped by its own name */
	{"ld-musl-x86_64.so.1", "dlopen", "dlsym", "dlerror", false},
	{"ld-musl-aarch64.so.1", "dlopen", "dlsym", "dlerror", false},
	{"ld-musl-armhf.so.1", "dlopen", "dlsym", "dlerror", false},
};

struct found_loader {
	const struct loader *l;
	uint64_t dlopen, dlsym, dlerror;
};

static int find_loader(const struct attach_proc *p, struct found_loader *f,
		       struct leaksnap_error *err)
{
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
		const struct loader *l = &loaders[i];
		memset(f, 0, sizeof(*f));
		int r = attach_module_symbol(p, l->module, l->dlopen, &f->dlopen, err);
		if (r < 0)
			return -1;
		if (r > 0 || attach_module_symbol(p, l->module, l->dlsym, &f->dlsym, err) != 0)
			continue;
		if (l->dlerror && attach_module_symbol(p, l->module, l->dlerror, &f->dlerror, err) < 0)
			return -1;
		f->l = l;
		return 0;
	}
	return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
			 "no dlopen found in the process (looked in libc.so.6, libdl.so.2, the "
			 "Android linker and musl's loader)");
}

size_t attach_options_image(const struct leaksnap_options *o, unsigned ptr_size, uint64_t base,
			    uint8_t *buf, size_t cap)
{
	/* offsets of size, libs, frames, unwind, out, interval, flags,
	 * control, sample; the size.  32-bit: the ARM EABI's, where a double
	 * and a uint64_t are 8-byte aligned */
	static const size_t lp64[10] = {0, 8, 16, 24, 32, 40, 48, 56, 64, 72};
	static const size_t ilp32[10] = {0, 4, 8, 12, 16, 24, 32, 36, 40, 48};
	const size_t *at = ptr_size == 8 ? lp64 : ptr_size == 4 ? ilp32 : NULL;
	if (at == NULL)
		return 0;
	const char *strs[4] = {o->libs, o->unwind, o->out, o->control};
	const size_t field[4] = {at[1], at[3], at[4], at[7]};
	size_t total = at[9];
	for (int i = 0; i < 4; i++)
		total += strs[i] ? strlen(strs[i]) + 1 : 0;
	if (total > cap)
		return total;
	memset(buf, 0, total);
	kit_store_le(buf + at[0], ptr_size, at[9]);
	kit_store_le(buf + at[2], 4, o->frames);
	kit_store_le(buf + at[6], 4, o->flags);
	memcpy(buf + at[5], &o->interval, sizeof(double));
	kit_store_le(buf + at[8], 8, o->sample);
	size_t pos = at[9];
	for (int i = 0; i < 4; i++) {
		if (strs[i] == NULL)
			continue;
		kit_store_le(buf + field[i], ptr_size, base + pos);
		size_t len = strlen(strs[i]) + 1;
		memcpy(buf + pos, strs[i], len);
		pos += len;
	}
	return total;
}

static int push_string(struct attach_session *s, const char *str, uint64_t *at,
		       struct leaksnap_error *err)
{
	*at = attach_session_push(s, str, strlen(str) + 1, err);
	return *at ? 0 : -1;
}

/* dlopen(@lib) in @s: the handle, or 0 with @err (dlerror's text). */
static uint64_t remote_dlopen(struct attach_session *s, const struct attach_proc *p,
			      const struct found_loader *f, const char *lib,
			      struct leaksnap_error *err)
{
	uint64_t path;
	int64_t handle;
	if (push_string(s, lib, &path, err) != 0)
		return 0;
	uint64_t args[3] = {path, RTLD_NOW | RTLD_LOCAL, f->dlopen};
	if (attach_session_call(s, f->l->dlopen, f->dlopen, args, f->l->caller_arg ? 3 : 2, &handle,
				err) != 0)
		return 0;
	if (handle != 0)
		return (uint64_t)handle;
	char why[LEAKSNAP_ERROR_TEXT_MAX] = "";
	int64_t msg = 0;
	if (f->dlerror && attach_session_call(s, f->l->dlerror, f->dlerror, NULL, 0, &msg, err) != 0)
		return 0;
	if (msg == 0 || attach_session_read_string(s, (uint64_t)msg, why, sizeof(why)) != 0)
		snprintf(why, sizeof(why), "%s returned NULL", f->l->dlopen);
	kit_error(err, LEAKSNAP_ERR_USAGE, lib, "cannot be loaded in process %d: %s", p->pid, why);
	return 0;
}

static int remote_dlsym(struct attach_session *s, const struct found_loader *f, uint64_t handle,
			const char *name, uint64_t *addr, struct leaksnap_error *err)
{
	uint64_t str;
	int64_t r;
	if (push_string(s, name, &str, err) != 0)
		return -1;
	uint64_t args[3] = {handle, str, f->dlopen};
	if (attach_session_call(s, f->l->dlsym, f->dlsym, args, f->l->caller_arg ? 3 : 2, &r,
				err) != 0)
		return -1;
	*addr = (uint64_t)r;
	return 0;
}

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int attach_start(const struct attach_proc *p, const char *lib, const struct leaksnap_options *opts,
		 struct attach_result *res, struct leaksnap_error *err)
{
	struct found_loader f;
	struct leaksnap_options defaults = {.size = sizeof(defaults)};
	if (opts == NULL)
		opts = &defaults;
	if (find_loader(p, &f, err) != 0)
		return -1;
	struct attach_session *s = attach_session_begin(p, file_name(lib), err);
	if (s == NULL)
		return -1;
	int rc = -1;
	uint64_t handle = remote_dlopen(s, p, &f, lib, err), start = 0;
	if (handle == 0)
		goto out;
	if (remote_dlsym(s, &f, handle, "leaksnap_start", &start, err) != 0)
		goto out;
	if (start == 0) {
		kit_error(err, LEAKSNAP_ERR_USAGE, lib,
			  "has no leaksnap_start: not a build of the in-app hook (%s)",
			  LEAKSNAP_HOOK_INAPP_LIB);
		goto out;
	}
	size_t len = attach_options_image(opts, ARCH_PTR, 0, NULL, 0);
	uint8_t *img = malloc(len);
	if (img == NULL) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, p->subject, "out of memory");
		goto out;
	}
	uint64_t at = attach_session_next(s, len);
	attach_options_image(opts, ARCH_PTR, at, img, len);
	at = attach_session_push(s, img, len, err);
	free(img);
	if (at == 0)
		goto out;
	int64_t ret;
	if (attach_session_call(s, "leaksnap_start", start, &at, 1, &ret, err) != 0)
		goto out;
	res->ret = (int32_t)ret; /* an int */
	res->err_no = res->ret < 0 ? attach_session_errno(s) : 0;
	rc = 0;
out:
	if (attach_session_end(s, err) != 0)
		rc = -1;
	return rc;
}

int attach_call_hook(const struct attach_proc *p, const char *lib_name, const char *fn,
		     struct attach_result *res, struct leaksnap_error *err)
{
	uint64_t addr;
	int r = attach_module_symbol(p, lib_name, fn, &addr, err);
	if (r < 0)
		return -1;
	if (r > 0)
		return kit_error(err, LEAKSNAP_ERR_USAGE, p->subject, "%s in %s not found", fn,
				 lib_name);
	struct attach_session *s = attach_session_begin(p, lib_name, err);
	if (s == NULL)
		return -1;
	uint64_t arg = 0; /* leaksnap_dump(NULL); leaksnap_stop() takes none */
	int64_t ret;
	int rc = attach_session_call(s, fn, addr, &arg, 1, &ret, err);
	if (rc == 0) {
		res->ret = (int32_t)ret;
		res->err_no = res->ret < 0 ? attach_session_errno(s) : 0;
	}
	if (attach_session_end(s, err) != 0)
		rc = -1;
	return rc;
}
