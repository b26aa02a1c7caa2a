/* leaksnap symbolizer: libraries mapped straight out of an APK.
 *
 * Android loads a library stored uncompressed and page-aligned in an APK by
 * mapping the APK itself: the maps name "…/base.apk" and the offset points
 * into the zip.  A frame's file offset is turned into (library, offset in
 * the library): the library is the ELF image that starts on the nearest
 * page at or below the offset (its headers give its size), libzip names
 * the stored entry holding exactly those bytes, and the library is then a
 * module of its own, "…/base.apk!/lib/arm64-v8a/libfoo.so", located like
 * any other by its build ID and its name -- or, failing that, read from the
 * APK itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <zip.h>

#include "sym_internal.h"

#define APK_PAGE 4096u
#define APK_SCAN_MAX (256u << 20) /* how far below an offset a library may start */

struct apk_lib {
	uint64_t start, size;
	const struct leaksnap_sym_module *module;
	int memfd;                /* the library's bytes, when read from the APK */
};

struct sym_apk {
	char *path;               /* as the maps name it */
	char *file;               /* the APK on this host, NULL: not found */
	const uint8_t *map;       /* the whole APK (a private mapping) */
	size_t map_size;
	zip_t *zip;
	struct apk_lib *libs;
	size_t count, cap;
	struct sym_apk *next;
};

bool sym_is_apk(const char *path)
{
	size_t n = strlen(path);
	return n > 4 && strcasecmp(path + n - 4, ".apk") == 0;
}

void sym_apk_free(struct leaksnap_symbolizer *sym)
{
	for (struct sym_apk *a = sym->apks, *next; a; a = next) {
		next = a->next;
		for (size_t i = 0; i < a->count; i++)
			if (a->libs[i].memfd >= 0)
				close(a->libs[i].memfd);
		free(a->libs);
		if (a->zip)
			zip_discard(a->zip);
		if (a->map)
			munmap((void *)(uintptr_t)a->map, a->map_size);
		free(a->path);
		free(a->file);
		free(a);
	}
}

/* The APK for @path: found with the module rules (a symbol directory +
 * path, a file of the same name in a symbol directory is not used: every
 * app's APK is called base.apk), then the host path. */
static struct sym_apk *apk_get(struct leaksnap_symbolizer *sym, const char *path)
{
	for (struct sym_apk *a = sym->apks; a; a = a->next)
		if (strcmp(a->path, path) == 0)
			return a;
	struct sym_apk *a = calloc(1, sizeof(*a));
	if (!a || !(a->path = strdup(path))) {
		free(a);
		return NULL;
	}
	a->next = sym->apks;
	sym->apks = a;
	char buf[4096];
	for (size_t i = 0; i <= sym->opts.symbol_dir_count; i++) {
		const char *cand = path;
		if (i < sym->opts.symbol_dir_count) {
			if (snprintf(buf, sizeof(buf), "%s%s%s", sym->opts.symbol_dirs[i],
				     path[0] == '/' ? "" : "/", path) >= (int)sizeof(buf))
				continue;
			cand = buf;
		} else if (sym->opts.no_host_paths || path[0] != '/') {
			break;
		}
		int fd = open(cand, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st;
		void *m = MAP_FAILED;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
			/* writable copy-on-write: libelf may convert headers in
			 * place in the images elf_memory() is given; the file is
			 * never changed */
			m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
				 0);
		close(fd);
		if (m == MAP_FAILED)
			continue;
		int ze;
		zip_t *z = zip_open(cand, ZIP_RDONLY, &ze);
		if (!z) {
			munmap(m, (size_t)st.st_size);
			continue;
		}
		a->file = strdup(cand);
		a->map = m;
		a->map_size = (size_t)st.st_size;
		a->zip = z;
		break;
	}
	return a;
}

/* The size of the ELF image at @p (@avail bytes there), from its headers,
 * or 0 when it is not one. */
static uint64_t elf_image_size(const uint8_t *p, size_t avail)
{
	Elf *e = elf_memory((char *)(uintptr_t)p, avail);
	if (!e)
		return 0;
	uint64_t end = 0;
	GElf_Ehdr eh;
	size_t n;
	if (elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
		end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
		if (elf_getphdrnum(e, &n) == 0)
			for (size_t i = 0; i < n; i++) {
				GElf_Phdr ph;
				if (gelf_getphdr(e, (int)i, &ph) && ph.p_offset + ph.p_filesz > end)
					end = ph.p_offset + ph.p_filesz;
			}
	}
	elf_end(e);
	return end <= avail ? end : 0;
}

/* The stored entry holding the @size bytes at @start, or NULL. */
static const char *entry_at(struct sym_apk *a, uint64_t start, uint64_t size)
{
	zip_int64_t n = zip_get_num_entries(a->zip, 0);
	uint8_t head[4096];
	size_t want = size < sizeof(head) ? (size_t)size : sizeof(head);
	for (zip_int64_t i = 0; i < n; i++) {
		zip_stat_t st;
		if (zip_stat_index(a->zip, (zip_uint64_t)i, 0, &st) != 0 ||
		    !(st.valid & ZIP_STAT_COMP_METHOD) || !(st.valid & ZIP_STAT_SIZE) ||
		    st.comp_method != ZIP_CM_STORE || st.size < size ||
		    st.size > a->map_size - start)
			continue;
		zip_file_t *zf = zip_fopen_index(a->zip, (zip_uint64_t)i, 0);
		if (!zf)
			continue;
		zip_int64_t got = zip_fread(zf, head, want);
		zip_fclose(zf);
		if (got == (zip_int64_t)want && memcmp(head, a->map + start, want) == 0)
			return st.name;
	}
	return NULL;
}

/* A memfd holding the library's bytes, named by /proc/self/fd/N in @path. */
static int copy_out(const struct sym_apk *a, uint64_t start, uint64_t size, char *path,
		    size_t path_size)
{
	int fd = memfd_create("leaksnap-apk-lib", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (uint64_t done = 0; done < size;) {
		ssize_t w = pwrite(fd, a->map + start + done, (size_t)(size - done), (off_t)done);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (uint64_t)w;
	}
	snprintf(path, path_size, "/proc/self/fd/%d", fd);
	return fd;
}

const struct leaksnap_sym_module *leaksnap_symbolizer_module_at(
	struct leaksnap_symbolizer *sym, const char *path, const uint8_t *build_id,
	size_t build_id_len, uint64_t *rel_pc, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!sym_is_apk(path))
		return leaksnap_symbolizer_module(sym, path, build_id, build_id_len, err);
	struct sym_apk *a = apk_get(sym, path);
	if (!a)
		goto nomem;
	if (!a->map)
		return sym_module_missing(sym, path, LEAKSNAP_SYM_BUILD_ID_MISSING, err);
	for (size_t i = 0; i < a->count; i++)
		if (*rel_pc >= a->libs[i].start && *rel_pc - a->libs[i].start < a->libs[i].size) {
			*rel_pc -= a->libs[i].start;
			return a->libs[i].module;
		}
	/* the ELF image starting on the nearest page at or below the offset */
	uint64_t start = UINT64_MAX, size = 0;
	if (*rel_pc < a->map_size) {
		uint64_t p = *rel_pc & ~(uint64_t)(APK_PAGE - 1);
		for (uint64_t scanned = 0;; p -= APK_PAGE, scanned += APK_PAGE) {
			if (memcmp(a->map + p, "\177ELF", 4) == 0) {
				size = elf_image_size(a->map + p, a->map_size - p);
				if (size && *rel_pc - p < size)
					start = p;
				break; /* the nearest image below holds it, or nothing does */
			}
			if (p == 0 || scanned >= APK_SCAN_MAX)
				break;
		}
	}
	const char *entry = start != UINT64_MAX ? entry_at(a, start, size) : NULL;
	if (!entry)
		return sym_module_missing(sym, path, LEAKSNAP_SYM_BUILD_ID_MISSING, err);

	char name[4096], copy[64], host[4096];
	if (snprintf(name, sizeof(name), "%s!/%s", path, entry) >= (int)sizeof(name))
		return sym_module_missing(sym, path, LEAKSNAP_SYM_BUILD_ID_MISSING, err);
	/* read from the APK found here: said as that file's entry */
	bool named = a->file && snprintf(host, sizeof(host), "%s!/%s", a->file, entry) <
					     (int)sizeof(host);
	const void *id = NULL;
	ssize_t idlen = 0;
	Elf *e = elf_memory((char *)(uintptr_t)(a->map + start), (size_t)size);
	if (e) {
		idlen = dwelf_elf_gnu_build_id(e, &id);
		if (idlen < 0)
			idlen = 0;
	}
	int memfd = copy_out(a, start, size, copy, sizeof(copy));
	const struct leaksnap_sym_module *m = sym_module_locate(
		sym, name, idlen ? id : NULL, (size_t)idlen, memfd >= 0 ? copy : NULL,
		named ? host : NULL, err);
	if (e)
		elf_end(e);
	if (!m) {
		if (memfd >= 0)
			close(memfd);
		return NULL;
	}
	if (a->count == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct apk_lib *l = realloc(a->libs, cap * sizeof(*l));
		if (!l) {
			if (memfd >= 0)
				close(memfd);
			goto nomem;
		}
		a->libs = l;
		a->cap = cap;
	}
	a->libs[a->count++] = (struct apk_lib){start, size, m, memfd};
	*rel_pc -= start;
	return m;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
	return NULL;
}
