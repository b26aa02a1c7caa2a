/* leaksnap symbolizer: files that are not on this host, by build ID.
 *
 * libdwfl asks for a file's separate debug file through a callback.  Its
 * standard one asks the debuginfod servers by itself whenever
 * DEBUGINFOD_URLS is set, whatever the caller wants, so this is ours: this
 * host first -- by build ID under libdwfl's debug directories, then by the
 * .gnu_debuglink name beside the file, in its .debug directory and under
 * /usr/lib/debug -- then, with opts.debuginfod only, the servers, through
 * elfutils' client library (libdebuginfod).  The client keeps what it
 * fetches in its own cache (DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client or ~/.cache/debuginfod_client) and
 * bounds each transfer (DEBUGINFOD_TIMEOUT): the symbolizer adds neither.
 * Without servers to ask (opts.debuginfod off, DEBUGINFOD_URLS empty) the
 * client would not even look at its cache: then the symbolizer looks there
 * itself, read only, taking a file only when its build ID is the one
 * wanted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <zlib.h>

#include "sym_internal.h"

/* The symbolizer's client, begun on first use; NULL when the servers are
 * not to be asked, or none is named. */
static debuginfod_client *client_of(struct leaksnap_symbolizer *sym)
{
	if (!sym->opts.debuginfod || sym->debuginfod_off)
		return NULL;
	if (!sym->debuginfod) {
		const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
		if (!urls || !urls[strspn(urls, " \t\n")] ||
		    !(sym->debuginfod = debuginfod_begin())) {
			sym->debuginfod_off = true;
			return NULL;
		}
	}
	return sym->debuginfod;
}

void sym_debuginfod_end(struct leaksnap_symbolizer *sym)
{
	if (sym->debuginfod)
		debuginfod_end(sym->debuginfod);
	sym->debuginfod = NULL;
}

/* What a failed query returned, as the user should read it. */
static const char *query_error(int rc)
{
	switch (-rc) {
	case ENOENT: return "not found on the debuginfod servers";
	case ENOSYS: return "no debuginfod server named";
	case ETIME:
	case ETIMEDOUT: return "the debuginfod servers did not answer in time (DEBUGINFOD_TIMEOUT)";
	case EFBIG: return "larger than DEBUGINFOD_MAXSIZE";
	default: return strerror(-rc);
	}
}

static int open_candidate(const char *path, const char *self, const void *id, int idlen,
			  GElf_Word crc);

/* The client's cache directory, found as libdebuginfod 0.188 finds it
 * (DEBUGINFOD_CACHE_PATH; else ~/.debuginfod_client_cache when it exists;
 * else $XDG_CACHE_HOME/debuginfod_client; else ~/.cache/debuginfod_client;
 * with no HOME, / for ~), but never made. */
static bool cache_dir(char *buf, size_t size)
{
	const char *env = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR);
	if (env && *env)
		return (size_t)snprintf(buf, size, "%s", env) < size;
	const char *home = getenv("HOME");
	if (!home)
		home = "/";
	struct stat st;
	if ((size_t)snprintf(buf, size, "%s/.debuginfod_client_cache", home) < size &&
	    stat(buf, &st) == 0)
		return true;
	const char *xdg = getenv("XDG_CACHE_HOME");
	int n = xdg && *xdg ? snprintf(buf, size, "%s/debuginfod_client", xdg)
			    : snprintf(buf, size, "%s/.cache/debuginfod_client", home);
	return n >= 0 && (size_t)n < size;
}

/* What the client fetched before, from its cache alone: CACHE/ID/
 * executable or CACHE/ID/debuginfo, when it is that build.  (libdebuginfod
 * looks at its cache only when it has servers to ask.)  A miss the client
 * remembers is an empty file without permissions: passed over, as is
 * anything whose build ID is not @id.  Nothing is made or removed. */
static int from_cache(bool executable, const uint8_t *id, size_t len, char **path)
{
	char dir[PATH_MAX], hex[2 * 64 + 1], file[PATH_MAX + sizeof(hex) + 16];
	if (len > 64 || !cache_dir(dir, sizeof(dir)))
		return -1;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if ((size_t)snprintf(file, sizeof(file), "%s/%s/%s", dir, hex,
			     executable ? "executable" : "debuginfo") >= sizeof(file))
		return -1;
	struct stat st;
	if (stat(file, &st) != 0 || (st.st_mode & 0777) == 0)
		return -1;
	int fd = open_candidate(file, NULL, id, (int)len, 0);
	if (fd >= 0 && !(*path = strdup(file))) {
		close(fd);
		return -1;
	}
	return fd;
}

int sym_debuginfod_fetch(struct leaksnap_symbolizer *sym, bool executable, const uint8_t *id,
			 size_t len, char **path, const char **why)
{
	*path = NULL;
	*why = NULL;
	if (!len)
		return -1;
	debuginfod_client *c = client_of(sym);
	if (!c)
		return from_cache(executable, id, len, path);
	int rc = executable ? debuginfod_find_executable(c, id, (int)len, path)
			    : debuginfod_find_debuginfo(c, id, (int)len, path);
	if (rc >= 0 && *path)
		return rc;
	if (rc >= 0)
		close(rc);
	free(*path);
	*path = NULL;
	*why = query_error(rc < 0 ? rc : -EIO);
	return -1;
}

/* Local search ------------------------------------------------------------------ */

/* The file at @path, when it is the debug file wanted: its build ID is
 * @id (when the module has one), else its CRC is @crc. */
static int open_candidate(const char *path, const char *self, const void *id, int idlen,
			  GElf_Word crc)
{
	if (self && strcmp(path, self) == 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (ok && idlen <= 0 && !crc) {
		/* a dwz file named by its path, checked by libdwfl */
	} else if (ok && idlen > 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		const void *fid = NULL;
		ssize_t flen = elf ? dwelf_elf_gnu_build_id(elf, &fid) : -1;
		ok = flen == idlen && memcmp(fid, id, (size_t)idlen) == 0;
		elf_end(elf);
	} else if (ok) {
		uLong sum = crc32(0, Z_NULL, 0);
		unsigned char buf[1 << 16];
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			sum = crc32(sum, buf, (uInt)n);
		ok = n == 0 && (GElf_Word)sum == crc;
		lseek(fd, 0, SEEK_SET);
	}
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

/* @link (a .gnu_debuglink name) beside @file, in its .debug directory and
 * under /usr/lib/debug, as GDB and libdwfl look for it. */
static int find_by_link(const char *file, const char *link, const void *id, int idlen,
			GElf_Word crc, char **found)
{
	if (!link || !*link)
		return -1;
	if (link[0] == '/') {
		int fd = open_candidate(link, file, id, idlen, crc);
		if (fd >= 0 && !(*found = strdup(link))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	if (!file || !*file || strchr(link, '/'))
		return -1;
	char canon[PATH_MAX], here[PATH_MAX];
	if (!strchr(file, '/')) { /* in the working directory */
		if (snprintf(here, sizeof(here), "./%s", file) >= (int)sizeof(here))
			return -1;
		file = here;
	}
	const char *names[2] = {file, realpath(file, canon) ? canon : NULL};
	for (int k = 0; k < 2; k++) {
		if (!names[k] || (k && strcmp(names[k], file) == 0))
			continue;
		int dl = (int)(strrchr(names[k], '/') - names[k]);
		/* DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK */
		static const char *const before[] = {"", "", "/usr/lib/debug"};
		static const char *const after[] = {"/", "/.debug/", "/"};
		for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
			char path[PATH_MAX];
			if (i == 2 && names[k][0] != '/')
				continue;
			if (snprintf(path, sizeof(path), "%s%.*s%s%s", before[i], dl, names[k],
				     after[i], link) >= (int)sizeof(path))
				continue;
			int fd = open_candidate(path, file, id, idlen, crc);
			if (fd < 0)
				continue;
			if (!(*found = strdup(path))) {
				close(fd);
				return -1;
			}
			return fd;
		}
	}
	return -1;
}

/* The build ID a .gnu_debugaltlink section of @elf names (a dwz file's). */
static int altlink_id(Elf *elf, const void **id)
{
	static const char *const altlink[] = {".gnu_debugaltlink", NULL};
	Elf_Scn *scn;
	if (sym_elf_section(elf, altlink, 0, &scn) != 1)
		return -1;
	Elf_Data *d = elf_getdata(scn, NULL);
	const char *p = d ? d->d_buf : NULL;
	const char *nul = p ? memchr(p, '\0', d->d_size) : NULL;
	if (!nul || (size_t)(nul + 1 - p) >= d->d_size)
		return -1;
	*id = nul + 1;
	return (int)(d->d_size - (size_t)(nul + 1 - p));
}

static bool has_debug_info(Elf *elf)
{
	static const char *const info[] = {".debug_info", ".zdebug_info", NULL};
	return sym_elf_section(elf, info, SYM_SCN_DATA, NULL) == 1;
}

/* debuginfod for what libdwfl asks: the debug file of @f, or -- once the
 * DWARF is there -- the dwz file it links to. */
static int ask_servers(struct leaksnap_sym_file *f, char **found)
{
	const void *id = f->build_id;
	int len = (int)f->build_id_len;
	Elf *debug = NULL;
	int dfd = -1;
	if (f->debug_handed || has_debug_info(f->elf)) {
		/* the DWARF is there: libdwfl wants its dwz file */
		Elf *elf = f->debug_handed ? NULL : f->elf;
		if (f->debug_given) {
			dfd = open(f->debug_given, O_RDONLY | O_CLOEXEC);
			elf = debug = dfd >= 0 ? elf_begin(dfd, ELF_C_READ_MMAP, NULL) : NULL;
		}
		len = altlink_id(elf, &id);
	}
	int fd = -1;
	const char *why = NULL;
	if (len > 0) {
		uint8_t copy[64];
		size_t n = (size_t)len < sizeof(copy) ? (size_t)len : sizeof(copy);
		memcpy(copy, id, n); /* (the section goes with its file) */
		fd = sym_debuginfod_fetch(f->sym, false, copy, n, found, &why);
	}
	elf_end(debug);
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		f->from_debuginfod = true;
	else if (why && !f->debuginfod_error)
		f->debuginfod_error = why;
	return fd;
}

int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		       const char *file_name, const char *debuglink, GElf_Word crc,
		       char **debuginfo_file_name)
{
	struct leaksnap_sym_file *f = userdata ? *userdata : NULL;
	*debuginfo_file_name = NULL;
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					      crc, debuginfo_file_name);
	if (fd < 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = NULL;
		const void *id = NULL;
		GElf_Addr vaddr;
		int idlen = f && !f->debug_handed
				    ? dwfl_module_build_id(mod, (const unsigned char **)&id, &vaddr)
				    : 0;
		fd = find_by_link(file_name, debuglink, id, idlen, crc, debuginfo_file_name);
	}
	if (fd < 0 && f)
		fd = ask_servers(f, debuginfo_file_name);
	if (fd >= 0 && f && !f->debug_handed) {
		f->debug_handed = true;
		if (*debuginfo_file_name)
			f->debug_given = strdup(*debuginfo_file_name);
	}
	errno = 0;
	return fd;
}
