/* leaksnap adb symbols: the device's files of the modules in dumps' maps,
 * pulled into a tree in the AOSP symbols layout (DIR + the device path),
 * unless a --symbols tree (or DIR itself) already holds them with the
 * dump's build ID; each pulled ELF file's build ID checked against the
 * dump's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>
#include <leaksnap/symbolizer.h>

#include "adb.h"
#include "kit_publish.h"
#include "kit_format.h"

struct want {
	char *path;         /* as the maps name it */
	uint8_t id[64];     /* the dump's build ID for it */
	size_t id_len;
};

/* A device path that may become a file under DIR: absolute, no "." or
 * ".." component, no empty component, nothing but printable ASCII and
 * well-formed UTF-8 without C1 controls (what the hook keeps in metadata,
 * format.h), no backslash. */
static bool safe_path(const char *p)
{
	size_t len = strlen(p);
	if (p[0] != '/' || len > 1024)
		return false;
	const unsigned char *u = (const unsigned char *)p;
	for (size_t i = 0; i < len;) {
		unsigned keep = kit_meta_keep(u, len, i);
		if (!keep || p[i] == '\\')
			return false;
		i += keep;
	}
	for (const char *s = p + 1;;) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!e)
			return true;
		s = e + 1;
	}
}

/* Whether @mod has code mapped: only such files give symbols (fonts,
 * .art, .vdex, jars and data files are mapped too, and are not pulled). */
static bool executable(const struct leaksnap_maps *m, const struct leaksnap_maps_module *mod)
{
	for (size_t k = 0; k < mod->mapping_count; k++)
		if (leaksnap_maps_mapping(m, mod->first_mapping + k)->perms[2] == 'x')
			return true;
	return false;
}

static bool is_apk(const char *p)
{
	size_t n = strlen(p);
	return n > 4 && strcmp(p + n - 4, ".apk") == 0;
}

static void hex(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len && i < 64; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * (len < 64 ? len : 64)] = '\0';
}

/* The modules of every dump, each once. */
static int collect(const struct adb_symbols_opts *o, struct want **out, size_t *count,
		   unsigned *pointer_size)
{
	size_t cap = 0;
	*out = NULL;
	*count = 0;
	*pointer_size = 0;
	for (size_t d = 0; d < o->dump_count; d++) {
		struct leaksnap_snapshot *s;
		struct leaksnap_maps *m;
		if (adb_out()->open_dump(o->dumps[d], &s, &m))
			return -1;
		/* one pointer size for all the dumps, or 0 (any class) */
		unsigned ps = leaksnap_snapshot_pointer_size_known(s);
		*pointer_size = d == 0 || *pointer_size == ps ? ps : 0;
		if (!m) {
			leaksnap_snapshot_close(s);
			return adb_fail_at(o->dumps[d], "the snapshot carries no maps");
		}
		for (size_t i = 0; i < leaksnap_maps_module_count(m); i++) {
			const struct leaksnap_maps_module *mod = leaksnap_maps_module(m, i);
			const char *p = mod->path;
			if (!leaksnap_maps_path_is_file(p) || !executable(m, mod))
				continue;
			if (!safe_path(p)) {
				adb_warn(o->dumps[d],
					 "module '%s' is not a plain device path: not pulled", p);
				continue;
			}
			bool dup = false;
			for (size_t k = 0; k < *count && !dup; k++)
				dup = strcmp((*out)[k].path, p) == 0;
			if (dup)
				continue;
			if (*count == cap) {
				cap = cap ? cap * 2 : 32;
				struct want *w = realloc(*out, cap * sizeof(*w));
				if (!w) {
					leaksnap_maps_free(m);
					leaksnap_snapshot_close(s);
					return adb_fail("out of memory");
				}
				*out = w;
			}
			struct want *w = &(*out)[*count];
			w->path = strdup(p);
			w->id_len = is_apk(p) ? 0
					      : leaksnap_snapshot_build_id(s, p, w->id,
									   sizeof(w->id));
			if (!w->path) {
				leaksnap_maps_free(m);
				leaksnap_snapshot_close(s);
				return adb_fail("out of memory");
			}
			(*count)++;
		}
		leaksnap_maps_free(m);
		leaksnap_snapshot_close(s);
	}
	return 0;
}

/* Where the trees already have @w: the file, or NULL.  *@status says how
 * it was checked. */
static const char *have(struct leaksnap_symbolizer *sym, const char *const *dirs, size_t ndirs,
			const struct want *w, const char **status, char *buf, size_t size)
{
	if (is_apk(w->path)) {
		for (size_t i = 0; i < ndirs; i++) {
			struct stat st;
			if ((size_t)snprintf(buf, size, "%s%s", dirs[i], w->path) >= size)
				continue; /* (a path that long cannot be there) */
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
				*status = "an APK: no build ID";
				return buf;
			}
		}
		return NULL;
	}
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	const struct leaksnap_sym_module *m =
		leaksnap_symbolizer_module(sym, w->path, w->id_len ? w->id : NULL, w->id_len, &err);
	if (!m || !m->file || m->status == LEAKSNAP_SYM_BUILD_ID_MISMATCH)
		return NULL;
	*status = m->status == LEAKSNAP_SYM_BUILD_ID_MATCH ? "build ID match"
							   : "build ID unverified";
	return m->file_path;
}

/* Make the directories of DIR + @path (not following symlinks below DIR);
 * the directory's fd of the file's parent, or -1 (said). */
static int make_parents(const char *dir, const char *path)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return adb_fail_at(dir, "%s", strerror(errno));
	char part[1100];
	for (const char *s = path + 1;;) {
		const char *e = strchr(s, '/');
		if (!e)
			return fd;
		snprintf(part, sizeof(part), "%.*s", (int)(e - s), s);
		if (mkdirat(fd, part, 0755) != 0 && errno != EEXIST) {
			int err = errno;
			close(fd);
			return adb_fail_at(dir, "cannot make %.*s: %s", (int)(e - path), path,
					   strerror(err)),
			       -1;
		}
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = errno;
		close(fd);
		if (next < 0)
			return adb_fail_at(dir, "%.*s: %s", (int)(e - path), path, strerror(err));
		fd = next;
		s = e + 1;
	}
}

/* Pull @w into DIR + path; 0 when pulled and checked. */
static int pull_one(struct adb *a, const char *dir, const struct want *w)
{
	int dfd = make_parents(dir, w->path);
	if (dfd < 0)
		return -1;
	const char *name = strrchr(w->path, '/') + 1;
	char final[2200], tmp[2200];
	if ((size_t)snprintf(final, sizeof(final), "%s%s", dir, w->path) >= sizeof(final) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%.*s.leaksnap-adb.XXXXXX",
			     (int)(strlen(final) - strlen(name)), final) >= sizeof(tmp)) {
		close(dfd);
		return adb_fail("%s%s: path too long", dir, w->path);
	}
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(dfd);
		return adb_fail(
			"%s exists and is not the dump's build: not replaced (remove it, or "
			"use another --out)",
			final);
	}
	close(dfd);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return adb_fail_at(final, "cannot create a file: %s", strerror(errno));
	kit_temp_mode(fd);
	close(fd);
	const char *args[] = {"pull", w->path, tmp, NULL};
	struct adb_result r = {0};
	int rc = adb_run(a, args, -1, ADB_SMALL, 1800, false, &r);
	adb_result_free(&r);
	const char *how = "an APK: no build ID";
	if (!rc && !is_apk(w->path)) {
		/* a symbolizer of its own, freed below: it would keep the
		 * file open (and its disk space, once unlinked) until the end */
		struct leaksnap_error err;
		leaksnap_error_clear(&err);
		LEAKSNAP_OPTS(leaksnap_sym_options, plain, .no_host_paths = true);
		struct leaksnap_symbolizer *check = leaksnap_symbolizer_new(&plain, &err);
		struct leaksnap_sym_file *f = check ? leaksnap_symbolizer_open(check, tmp, &err)
						    : NULL;
		size_t len = 0;
		const uint8_t *id = f ? leaksnap_sym_file_build_id(f, &len) : NULL;
		char want_hex[130], got_hex[130];
		hex(w->id, w->id_len, want_hex);
		hex(id, id ? len : 0, got_hex);
		if (!f && w->id_len)
			rc = adb_fail("%s: the device's file is not an ELF file the dump's build "
				      "ID can be "
				      "checked in: %s",
				      w->path, err.text);
		else if (w->id_len && (len != w->id_len || memcmp(id, w->id, len) != 0))
			rc = adb_fail(
				"%s: the device's file has build ID %s, the dump's is %s: not kept",
				w->path, len ? got_hex : "(none)", want_hex);
		how = !w->id_len ? "build ID unverified: the dump has none" : "build ID match";
		leaksnap_symbolizer_free(check);
	}
	int pub = rc ? 0 : kit_publish_noreplace(tmp, final);
	if (pub < 0)
		rc = adb_fail_at(final, "%s", strerror(-pub));
	if (pub <= 0)
		unlink(tmp);
	if (!rc)
		adb_result_line("pulled %s -> %s (%s)", w->path, final, how);
	return rc;
}

int adb_symbols(struct adb *a, const char *serial, const struct adb_symbols_opts *o)
{
	struct stat st;
	if (stat(o->out_dir, &st) != 0 && errno == ENOENT && mkdir(o->out_dir, 0755) != 0)
		return adb_fail_at(o->out_dir, "%s", strerror(errno));
	if (stat(o->out_dir, &st) != 0)
		return adb_fail_at(o->out_dir, "%s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return adb_fail_at(o->out_dir, "not a directory");
	struct want *w;
	size_t n;
	unsigned pointer_size;
	int rc = collect(o, &w, &n, &pointer_size);
	const char **dirs = calloc(o->symbol_dir_count + 1, sizeof(*dirs));
	LEAKSNAP_OPTS(leaksnap_sym_options, so, .symbol_dirs = dirs,
		      .symbol_dir_count = o->symbol_dir_count + 1, .no_host_paths = true);
	struct leaksnap_error err;
	struct leaksnap_symbolizer *sym = NULL;
	if (!rc && dirs) {
		dirs[0] = o->out_dir;
		for (size_t i = 0; i < o->symbol_dir_count; i++)
			dirs[i + 1] = o->symbol_dirs[i];
		sym = leaksnap_symbolizer_new(&so, &err);
		if (sym)
			leaksnap_symbolizer_set_pointer_size(sym, pointer_size);
	}
	if (!rc && (!dirs || !sym))
		rc = adb_fail("out of memory");
	size_t pulled = 0, there = 0, failed = 0;
	bool connected = false;
	for (size_t i = 0; !rc && i < n; i++) {
		char buf[2200];
		const char *status = NULL;
		const char *file = have(sym, dirs, o->symbol_dir_count + 1, &w[i], &status, buf,
					sizeof(buf));
		if (file) {
			adb_result_line("have %s: %s (%s)", w[i].path, file, status);
			there++;
			continue;
		}
		if (!connected) {
			if (adb_connect(a, serial)) {
				rc = -1;
				break;
			}
			connected = true;
		}
		if (pull_one(a, o->out_dir, &w[i]) == 0)
			pulled++;
		else
			failed++;
	}
	if (!rc && failed)
		adb_result_line("%zu pulled, %zu already there, %zu failed", pulled, there, failed);
	else if (!rc)
		adb_result_line("%zu pulled, %zu already there", pulled, there);
	for (size_t i = 0; i < n; i++)
		free(w[i].path);
	free(w);
	leaksnap_symbolizer_free(sym);
	free(dirs);
	return rc || failed ? -1 : 0;
}
