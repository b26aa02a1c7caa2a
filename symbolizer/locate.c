/* leaksnap symbolizer: finding a module's file.
 *
 * Candidates are tried in the order symbolizer.h gives; a candidate is
 * used only when its build ID is the dump's (or one of them has none) and,
 * once the process's pointer size is known, its ELF class is the
 * process's.
 * Each symbol directory is indexed by file name once, on the first module
 * its other two places do not hold.  Separate debug files of the file
 * found (.gnu_debuglink, /usr/lib/debug/.build-id) are libdwfl's to find.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym_internal.h"

#define DIR_WALK_MAX_DEPTH 64
#define DIR_WALK_MAX_FILES 4000000

struct name_entry {
	const char *base;   /* points into path */
	char *path;
};

struct sym_dir_index {
	bool built;
	struct name_entry *names; /* sorted by base, then path */
	size_t count, cap;
};

/* A module's file offsets [offset, offset + size) are at vaddr in its
 * file (LEAKSNAP_SYM_LAYOUT_MAPS). */
struct sym_seg {
	uint64_t offset, size, vaddr;
	bool exec;
};

struct sym_module_entry {
	struct leaksnap_sym_module m;     /* first: entries are found from it */
	struct leaksnap_sym_file *layout; /* whose program headers convert offsets, or NULL */
	struct sym_seg *segs;    /* or these, from the maps */
	size_t nsegs;
	bool maps_tried;         /* leaksnap_sym_module_set_mappings was called */
	char *path, *file_path_own, *error_own, *error_file_own, *rejected_own;
	uint8_t *build_id;
	size_t build_id_len;
	bool id_differs;         /* a candidate had another build ID */
	unsigned class_bits;     /* a candidate had the other class: its bits */
	struct sym_module_entry *next;
};

const char *leaksnap_sym_layout_name(enum leaksnap_sym_layout layout)
{
	switch (layout) {
	case LEAKSNAP_SYM_LAYOUT_NONE: return NULL;
	case LEAKSNAP_SYM_LAYOUT_FILE: return "file";
	case LEAKSNAP_SYM_LAYOUT_HOST: return "host";
	case LEAKSNAP_SYM_LAYOUT_MAPS: return "maps";
	}
	return NULL;
}

const char *leaksnap_sym_build_id_status_name(enum leaksnap_sym_build_id_status status)
{
	switch (status) {
	case LEAKSNAP_SYM_BUILD_ID_MATCH: return "match";
	case LEAKSNAP_SYM_BUILD_ID_UNVERIFIED: return "unverified";
	case LEAKSNAP_SYM_BUILD_ID_MISMATCH: return "mismatch";
	case LEAKSNAP_SYM_BUILD_ID_MISSING: return "missing";
	}
	return "unknown";
}

static int cmp_name(const void *a, const void *b)
{
	const struct name_entry *x = a, *y = b;
	int c = strcmp(x->base, y->base);
	return c ? c : strcmp(x->path, y->path);
}

static int index_add(struct sym_dir_index *ix, const char *path)
{
	if (ix->count == ix->cap) {
		size_t n = ix->cap ? ix->cap * 2 : 256;
		struct name_entry *p = realloc(ix->names, n * sizeof(*p));
		if (!p)
			return -1;
		ix->names = p;
		ix->cap = n;
	}
	char *copy = strdup(path);
	if (!copy)
		return -1;
	const char *slash = strrchr(copy, '/');
	ix->names[ix->count++] = (struct name_entry){slash ? slash + 1 : copy, copy};
	return 0;
}

/* Regular files under @dir (symbolic links to files count; directories
 * reached through links are not entered, so no cycle is possible). */
static int index_walk(struct sym_dir_index *ix, char *path, size_t len, size_t cap, int depth)
{
	if (depth > DIR_WALK_MAX_DEPTH)
		return 0;
	DIR *d = opendir(path);
	if (!d)
		return 0; /* unreadable directories hold nothing we can use */
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		size_t nl = strlen(e->d_name);
		size_t sep = path[len - 1] != '/'; /* (the root, "/", has one) */
		if (len + sep + nl + 1 > cap)
			continue; /* longer than PATH_MAX: not a path open() takes */
		path[len] = '/';
		memcpy(path + len + sep, e->d_name, nl + 1);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = index_walk(ix, path, len + sep + nl, cap, depth + 1);
		else if ((S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && stat(path, &st) == 0 &&
						  S_ISREG(st.st_mode))) &&
			 ix->count < DIR_WALK_MAX_FILES)
			rc = index_add(ix, path);
	}
	closedir(d);
	if (path[len - 1] != '/')
		path[len] = '\0';
	return rc;
}

static int index_build(struct sym_dir_index *ix, const char *dir)
{
	ix->built = true;
	char path[4096];
	size_t len = strlen(dir);
	if (len >= sizeof(path))
		return 0;
	memcpy(path, dir, len + 1);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (index_walk(ix, path, len, sizeof(path), 0) != 0)
		return -1;
	if (ix->count > 1) /* an empty directory has no array: qsort(NULL) is undefined */
		qsort(ix->names, ix->count, sizeof(*ix->names), cmp_name);
	return 0;
}

/* The first index entry named @base, or NULL; the others follow it. */
static const struct name_entry *index_find(const struct sym_dir_index *ix, const char *base)
{
	size_t lo = 0, hi = ix->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ix->names[mid].base, base) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->count && strcmp(ix->names[lo].base, base) == 0 ? &ix->names[lo] : NULL;
}

void sym_locate_free(struct leaksnap_symbolizer *sym)
{
	for (size_t i = 0; i < sym->opts.symbol_dir_count && sym->dirs; i++) {
		for (size_t j = 0; j < sym->dirs[i].count; j++)
			free(sym->dirs[i].names[j].path);
		free(sym->dirs[i].names);
	}
	free(sym->dirs);
	for (struct sym_module_entry *e = sym->modules, *next; e; e = next) {
		next = e->next;
		free(e->path);
		free(e->file_path_own);
		free(e->error_own);
		free(e->error_file_own);
		free(e->rejected_own);
		free(e->build_id);
		free(e->segs);
		free(e);
	}
}

enum try_result { TRY_NONE, TRY_USED, TRY_MISMATCH, TRY_BROKEN, TRY_NOMEM };

/* Whether @path starts as an ELF file does.  A file of the module's name
 * that is no ELF file at all (a linker script called libc.so under a
 * sysroot, a text file) is no candidate: passed over, not an error. */
static bool elf_magic(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return true; /* let the open say why */
	unsigned char m[4];
	ssize_t n = read(fd, m, sizeof(m));
	close(fd);
	return n == (ssize_t)sizeof(m) && memcmp(m, "\177ELF", 4) == 0;
}

/* @candidate is passed over for @e: TRY_MISMATCH (or TRY_NOMEM). */
static enum try_result rejected(struct sym_module_entry *e, const char *candidate)
{
	if (!e->rejected_own && !(e->rejected_own = strdup(candidate)))
		return TRY_NOMEM;
	return TRY_MISMATCH;
}

/* Try @candidate for @e: open it (unless it does not exist) and compare
 * build IDs. */
static enum try_result try_file(struct leaksnap_symbolizer *sym, struct sym_module_entry *e,
				const char *candidate)
{
	struct stat st;
	if (stat(candidate, &st) != 0 || !S_ISREG(st.st_mode) || !elf_magic(candidate))
		return TRY_NONE;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(sym, candidate, &err);
	if (!f) {
		if (err.code == LEAKSNAP_ERR_NOMEM)
			return TRY_NOMEM;
		if (!e->error_own) {
			e->error_own = strdup(err.text[0] ? err.text
							  : leaksnap_code_string(err.code));
			e->error_file_own = strdup(candidate);
		}
		return TRY_BROKEN;
	}
	/* a file of the other class is no build of this process's module */
	if (sym->pointer_size &&
	    gelf_getclass(f->elf) != (sym->pointer_size == 8 ? ELFCLASS64 : ELFCLASS32)) {
		e->class_bits = sym->pointer_size == 8 ? 32 : 64;
		return rejected(e, candidate);
	}
	size_t len;
	const uint8_t *id = leaksnap_sym_file_build_id(f, &len);
	if (e->build_id_len && len) {
		if (len != e->build_id_len || memcmp(id, e->build_id, len) != 0) {
			e->id_differs = true;
			return rejected(e, candidate);
		}
		e->m.status = LEAKSNAP_SYM_BUILD_ID_MATCH;
	} else {
		e->m.status = LEAKSNAP_SYM_BUILD_ID_UNVERIFIED;
	}
	e->file_path_own = strdup(candidate);
	if (!e->file_path_own)
		return TRY_NOMEM;
	e->m.file = f;
	e->m.file_path = e->file_path_own;
	e->m.no_symbols = !sym_file_has_symbols(f);
	e->m.debuginfod_error = f->debuginfod_error;
	e->m.from_debuginfod = f->from_debuginfod;
	e->layout = f;
	e->m.layout = LEAKSNAP_SYM_LAYOUT_FILE;
	if (sym_file_has_layout(f))
		return TRY_USED;
	/* A separate debug file keeps the segments' addresses but not their
	 * file offsets: take those from the module's own file, if it is here
	 * and the same build; else from the maps (leaksnap_sym_module_set_mappings). */
	e->layout = NULL;
	e->m.layout = LEAKSNAP_SYM_LAYOUT_NONE;
	if (e->path[0] == '/' && strcmp(e->path, candidate) != 0 && stat(e->path, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
		leaksnap_error_clear(&err);
		struct leaksnap_sym_file *own = leaksnap_symbolizer_open(sym, e->path, &err);
		size_t olen;
		const uint8_t *oid = own ? leaksnap_sym_file_build_id(own, &olen) : NULL;
		if (own && sym_file_has_layout(own) && len && olen == len &&
		    memcmp(oid, id, len) == 0) {
			e->layout = own;
			e->m.layout = LEAKSNAP_SYM_LAYOUT_HOST;
		}
	}
	return TRY_USED;
}

/* The dump's build of @e from the debuginfod servers, or their client's
 * cache alone when none is to be asked: its file, else its debug file
 * (whose layout then comes from the maps). */
static enum try_result try_debuginfod(struct leaksnap_symbolizer *sym, struct sym_module_entry *e)
{
	const char *why = NULL;
	for (int executable = 1; executable >= 0; executable--) {
		char *path;
		const char *w;
		int fd = sym_debuginfod_fetch(sym, executable, e->build_id, e->build_id_len, &path,
					      &w);
		if (fd < 0) {
			why = why ? why : w;
			continue;
		}
		close(fd);
		enum try_result r = try_file(sym, e, path);
		free(path);
		if (r == TRY_USED)
			e->m.from_debuginfod = true;
		if (r == TRY_USED || r == TRY_NOMEM)
			return r;
	}
	e->m.debuginfod_error = why;
	return TRY_NONE;
}

static enum try_result locate(struct leaksnap_symbolizer *sym, struct sym_module_entry *e,
			      const char *extra, const char *extra_name)
{
	bool mismatch = false;
	char buf[4096];
	enum try_result r;
#define TRY(path)                                         \
	do {                                              \
		r = try_file(sym, e, (path));             \
		if (r == TRY_USED || r == TRY_NOMEM)      \
			return r;                         \
		mismatch |= r == TRY_MISMATCH;            \
	} while (0)
	const char *base = strrchr(e->path, '/');
	base = base ? base + 1 : e->path;
	for (size_t i = 0; i < sym->opts.symbol_dir_count; i++) {
		const char *dir = sym->opts.symbol_dirs[i];
		size_t dl = strlen(dir);
		bool dir_slash = dl && dir[dl - 1] == '/';
		const char *rel = e->path[0] == '/' && dir_slash ? e->path + 1 : e->path;
		if (snprintf(buf, sizeof(buf), "%s%s%s", dir, rel[0] == '/' || dir_slash ? "" : "/",
			     rel) < (int)sizeof(buf))
			TRY(buf);
		if (e->build_id_len >= 2) {
			int n = snprintf(buf, sizeof(buf), "%s%s.build-id/%02x/", dir,
					 dir_slash ? "" : "/", e->build_id[0]);
			for (size_t k = 1;
			     k < e->build_id_len && n > 0 && (size_t)n + 3 < sizeof(buf); k++)
				n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%02x",
					      e->build_id[k]);
			if (n > 0 && (size_t)n + 7 < sizeof(buf)) {
				memcpy(buf + n, ".debug", 7);
				TRY(buf);
			}
		}
		struct sym_dir_index *ix = &sym->dirs[i];
		if (!ix->built && index_build(ix, dir) != 0)
			return TRY_NOMEM;
		for (const struct name_entry *ne = index_find(ix, base);
		     ne && ne < ix->names + ix->count && strcmp(ne->base, base) == 0; ne++)
			TRY(ne->path);
	}
	if (!sym->opts.no_host_paths && e->path[0] == '/')
		TRY(e->path);
#undef TRY
	if (extra) {
		r = try_file(sym, e, extra);
		if (r == TRY_USED) {
			/* said by its name, not by the copy's /proc/self/fd path */
			free(e->file_path_own);
			e->file_path_own = strdup(extra_name ? extra_name : e->path);
			if (!e->file_path_own)
				return TRY_NOMEM;
			e->m.file_path = e->file_path_own;
		}
		if (r == TRY_USED || r == TRY_NOMEM)
			return r;
		mismatch |= r == TRY_MISMATCH;
	}
	if (e->build_id_len) { /* (without opts.debuginfod: the client's cache only) */
		r = try_debuginfod(sym, e);
		if (r == TRY_USED || r == TRY_NOMEM)
			return r;
	}
	return mismatch ? TRY_MISMATCH : TRY_NONE;
}

/* The module @path, located once: @extra (may be NULL) is tried last, and
 * called @extra_name (NULL: @path) when used; with @missing no candidate
 * is tried at all. */
static const struct leaksnap_sym_module *module_get(struct leaksnap_symbolizer *sym,
						    const char *path, const uint8_t *build_id,
						    size_t build_id_len, const char *extra,
						    const char *extra_name, bool missing,
						    struct leaksnap_error *err)
{
	for (struct sym_module_entry *e = sym->modules; e; e = e->next)
		if (strcmp(e->path, path) == 0 && e->build_id_len == build_id_len &&
		    (!build_id_len || memcmp(e->build_id, build_id, build_id_len) == 0))
			return &e->m;
	if (!sym->dirs && sym->opts.symbol_dir_count) {
		sym->dirs = calloc(sym->opts.symbol_dir_count, sizeof(*sym->dirs));
		if (!sym->dirs)
			goto nomem;
	}
	struct sym_module_entry *e = calloc(1, sizeof(*e));
	if (!e)
		goto nomem;
	e->path = strdup(path);
	e->build_id = build_id_len ? malloc(build_id_len) : NULL;
	if (!e->path || (build_id_len && !e->build_id)) {
		free(e->path);
		free(e->build_id);
		free(e);
		goto nomem;
	}
	if (build_id_len)
		memcpy(e->build_id, build_id, build_id_len);
	e->build_id_len = build_id_len;
	e->m.path = e->path;
	e->next = sym->modules;
	sym->modules = e;
	enum try_result r = missing ? TRY_NONE : locate(sym, e, extra, extra_name);
	if (r == TRY_NOMEM)
		goto nomem;
	if (r != TRY_USED)
		e->m.status = r == TRY_MISMATCH ? LEAKSNAP_SYM_BUILD_ID_MISMATCH
						: LEAKSNAP_SYM_BUILD_ID_MISSING;
	if (r == TRY_MISMATCH && !e->id_differs)
		e->m.wrong_class = e->class_bits;
	if (r == TRY_MISMATCH)
		e->m.rejected_path = e->rejected_own;
	e->m.error = e->error_own;
	e->m.error_file = e->error_file_own;
	return &e->m;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
	return NULL;
}

const struct leaksnap_sym_module *leaksnap_symbolizer_module(struct leaksnap_symbolizer *sym,
							     const char *path,
							     const uint8_t *build_id,
							     size_t build_id_len,
							     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return module_get(sym, path, build_id, build_id_len, NULL, NULL, false, err);
}

const struct leaksnap_sym_module *sym_module_locate(struct leaksnap_symbolizer *sym,
						    const char *path, const void *build_id,
						    size_t build_id_len, const char *extra,
						    const char *extra_name,
						    struct leaksnap_error *err)
{
	return module_get(sym, path, build_id, build_id_len, extra, extra_name, false, err);
}

const struct leaksnap_sym_module *sym_module_missing(struct leaksnap_symbolizer *sym,
						     const char *path,
						     enum leaksnap_sym_build_id_status status,
						     struct leaksnap_error *err)
{
	(void)status; /* (always "missing" today) */
	return module_get(sym, path, NULL, 0, NULL, NULL, true, err);
}

/* Where the file offset @rel_pc of @e's file is in its file. */
static bool module_vaddr(const struct sym_module_entry *e, uint64_t rel_pc, uint64_t *vaddr)
{
	if (e->m.layout == LEAKSNAP_SYM_LAYOUT_MAPS) {
		/* A file page may be mapped twice, read-only and executable
		 * (lld packs segments without page alignment): a frame's
		 * offset means the executable one, where code ran. */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < e->nsegs; i++)
				if ((pass || e->segs[i].exec) && rel_pc >= e->segs[i].offset &&
				    rel_pc - e->segs[i].offset < e->segs[i].size) {
					*vaddr = e->segs[i].vaddr + (rel_pc - e->segs[i].offset);
					return true;
				}
		return false;
	}
	return e->layout && leaksnap_sym_file_offset_to_vaddr(e->layout, rel_pc, vaddr);
}

/* The file's loadable segments (at most @cap of them). */
static size_t load_segments(const struct leaksnap_sym_file *f, GElf_Phdr *out, size_t cap)
{
	size_t n, k = 0;
	if (elf_getphdrnum(f->elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n && k < cap; i++)
		if (gelf_getphdr(f->elf, (int)i, &out[k]) && out[k].p_type == PT_LOAD)
			k++;
	return k;
}

/* With load bias @bias, every executable mapping lands in an executable
 * segment. */
static bool exec_mappings_fit(const GElf_Phdr *ph, size_t nph,
			      const struct leaksnap_sym_mapping *maps, size_t count, uint64_t bias)
{
	for (size_t i = 0; i < count; i++) {
		if (!maps[i].exec)
			continue;
		if (maps[i].start < bias)
			return false;
		uint64_t lo = maps[i].start - bias, hi = maps[i].end - bias;
		bool fits = false;
		for (size_t k = 0; k < nph && !fits; k++)
			fits = (ph[k].p_flags & PF_X) && lo < ph[k].p_vaddr + ph[k].p_memsz &&
			       (ph[k].p_vaddr & ~(uint64_t)0xfff) < hi;
		if (!fits)
			return false;
	}
	return true;
}

/* The load bias of a file laid out as @ph, mapped as @maps: from the
 * mapping at offset 0 and the first segment, checked against the
 * executable mappings; else from an executable mapping whose length is
 * an executable segment's, rounded out to 4, 16 or 64 KiB pages. */
static bool maps_bias(const GElf_Phdr *ph, size_t nph, const struct leaksnap_sym_mapping *maps,
		      size_t count, uint64_t *bias)
{
	if (!nph)
		return false;
	const GElf_Phdr *first = &ph[0];
	for (size_t k = 1; k < nph; k++)
		if (ph[k].p_vaddr < first->p_vaddr)
			first = &ph[k];
	for (size_t i = 0; i < count; i++) {
		if (maps[i].offset != 0)
			continue;
		uint64_t b = maps[i].start - (first->p_vaddr & ~(uint64_t)0xfff);
		if (maps[i].start >= (first->p_vaddr & ~(uint64_t)0xfff) &&
		    exec_mappings_fit(ph, nph, maps, count, b)) {
			*bias = b;
			return true;
		}
		break;
	}
	static const uint64_t pages[] = {0x1000, 0x4000, 0x10000};
	for (size_t i = 0; i < count; i++) {
		if (!maps[i].exec || maps[i].end <= maps[i].start)
			continue;
		for (size_t k = 0; k < nph; k++) {
			if (!(ph[k].p_flags & PF_X) || !ph[k].p_memsz)
				continue;
			for (size_t p = 0; p < sizeof(pages) / sizeof(pages[0]); p++) {
				uint64_t pg = pages[p];
				if (pg > 0x1000 && ph[k].p_align < pg)
					break;
				uint64_t lo = ph[k].p_vaddr & ~(pg - 1);
				uint64_t hi = (ph[k].p_vaddr + ph[k].p_memsz + pg - 1) & ~(pg - 1);
				if (maps[i].start % pg == 0 &&
				    maps[i].end - maps[i].start == hi - lo && maps[i].start >= lo) {
					*bias = maps[i].start - lo;
					return true;
				}
			}
		}
	}
	return false;
}

int leaksnap_sym_module_set_mappings(struct leaksnap_symbolizer *sym,
				     const struct leaksnap_sym_module *module,
				     const struct leaksnap_sym_mapping *mappings, size_t count,
				     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	/* the module is handed out read-only: this is its writable entry */
	struct sym_module_entry *e = sym->modules;
	while (e && &e->m != module)
		e = e->next;
	if (!e)
		return kit_error(err, LEAKSNAP_ERR_USAGE, module ? module->path : "",
				 "not a module of this symbolizer");
	if (!module->file || module->layout != LEAKSNAP_SYM_LAYOUT_NONE || e->maps_tried)
		return 0;
	e->maps_tried = true;
	GElf_Phdr ph[64];
	size_t nph = load_segments(module->file, ph, sizeof(ph) / sizeof(ph[0]));
	uint64_t bias;
	if (!maps_bias(ph, nph, mappings, count, &bias))
		return kit_error(err, LEAKSNAP_ERR_FORMAT, module->file_path,
				 "a debug-only file whose segments fit none of the mappings of %s "
				 "in the maps",
				 module->path);
	e->segs = malloc((count ? count : 1) * sizeof(*e->segs));
	if (!e->segs)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, module->path, "out of memory");
	for (size_t i = 0; i < count; i++)
		if (mappings[i].end > mappings[i].start && mappings[i].start >= bias)
			e->segs[e->nsegs++] = (struct sym_seg){mappings[i].offset,
							       mappings[i].end - mappings[i].start,
							       mappings[i].start - bias,
							       mappings[i].exec};
	e->m.layout = LEAKSNAP_SYM_LAYOUT_MAPS;
	return 0;
}

int leaksnap_sym_module_lookup(const struct leaksnap_sym_module *module, uint64_t rel_pc,
			       bool return_address, struct leaksnap_sym_result *out,
			       struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	out->frames = NULL;
	out->frame_count = 0;
	const struct sym_module_entry *e = (const struct sym_module_entry *)(const void *)module;
	uint64_t vaddr;
	if (!module->file || !module_vaddr(e, rel_pc, &vaddr))
		return 0;
	if (return_address)
		vaddr = leaksnap_sym_file_call_site(module->file, vaddr);
	return leaksnap_sym_file_lookup(module->file, vaddr, out, err);
}

void leaksnap_sym_module_prefetch(const struct leaksnap_sym_module *module, const uint64_t *rel_pcs,
				  size_t count, bool return_address)
{
	const struct sym_module_entry *e = (const struct sym_module_entry *)(const void *)module;
	if (!module->file || !count || module->file->sym->opts.jobs < 2)
		return;
	uint64_t buf[512];
	size_t n = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t vaddr;
		if (!module_vaddr(e, rel_pcs[i], &vaddr))
			continue;
		buf[n++] = return_address ? leaksnap_sym_file_call_site(module->file, vaddr)
					  : vaddr;
		if (n == sizeof(buf) / sizeof(buf[0])) {
			leaksnap_sym_file_prefetch(module->file, buf, n);
			n = 0;
		}
	}
	if (n)
		leaksnap_sym_file_prefetch(module->file, buf, n);
}
