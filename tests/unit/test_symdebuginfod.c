/* Unit tests for the symbolizer's files from elsewhere: a stripped copy of
 * this test program (built with -g) says it has no symbols; with
 * opts.debuginfod its debug file -- and, for a module not here, its file --
 * comes from a debuginfod "server" (libdebuginfod's file:// URLs: DIR/
 * buildid/ID/debuginfo), into DEBUGINFOD_CACHE_PATH; without it nothing is
 * asked even though DEBUGINFOD_URLS names the server (libdwfl's own
 * fallback would).  Without it, what was fetched before is taken from the
 * client's cache (found where libdebuginfod keeps it, checked by build
 * ID).  A build-id mismatch names the file passed over; the resolver says
 * a stripped module once, when a frame of it is unknown.  The one scan of
 * ELF section names, sym_elf_section(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <leaksnap/resolve.h>
#include <leaksnap/symbolizer.h>

#include "../../symbolizer/sym_internal.h"

static char self[4096];
static char dir[64];             /* the scratch directory */
static char stripped[4200];      /* DIR/stripped: this program, stripped */
static char cache[4200];         /* DIR/cache */
static char hex[130];            /* this program's build ID */
static uint8_t id[64];
static size_t idlen;

__attribute__((noinline)) int dbgdtest_probe(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* The offset in this program's file of the code at @addr (maps' rel_pc). */
static uint64_t rel_pc_of(uintptr_t addr)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	assert_non_null(fp);
	char line[8192];
	uint64_t rel = UINT64_MAX;
	while (fgets(line, sizeof(line), fp)) {
		uint64_t lo, hi, off;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &lo, &hi, &off) == 3 &&
		    addr >= lo && addr < hi)
			rel = addr - lo + off;
	}
	fclose(fp);
	assert_true(rel != UINT64_MAX);
	return rel;
}

static int run(const char *cmd)
{
	return system(cmd);
}

static int setup(void **state)
{
	(void)state;
	if (run("objcopy --version >/dev/null 2>&1") != 0 ||
	    run("strip --version >/dev/null 2>&1") != 0)
		return 0; /* each test skips */
	snprintf(dir, sizeof(dir), "/tmp/test_symdebuginfod.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_symbolizer *s = leaksnap_symbolizer_new(NULL, &err);
	struct leaksnap_sym_file *f = s ? leaksnap_symbolizer_open(s, self, &err) : NULL;
	const uint8_t *fid = f ? leaksnap_sym_file_build_id(f, &idlen) : NULL;
	if (!fid || idlen > sizeof(id))
		return -1;
	memcpy(id, fid, idlen);
	leaksnap_symbolizer_free(s);
	for (size_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	char cmd[16384];
	snprintf(cmd, sizeof(cmd),
		 "set -e; d='%s'; mkdir -p \"$d/srv/buildid/%s\"; strip -o \"$d/stripped\" '%s'; "
		 "objcopy --only-keep-debug '%s' \"$d/srv/buildid/%s/debuginfo\"; "
		 "cp \"$d/stripped\" \"$d/srv/buildid/%s/executable\"",
		 dir, hex, self, self, hex, hex);
	if (run(cmd) != 0)
		return -1;
	char urls[4200];
	snprintf(urls, sizeof(urls), "file://%s/srv", dir);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "10", 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (dir[0]) {
		char cmd[200];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		run(cmd);
	}
	return 0;
}

static struct leaksnap_symbolizer *new_sym(bool debuginfod)
{
	if (!dir[0])
		skip();
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	run("rm -rf \"$DEBUGINFOD_CACHE_PATH\"");
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .debuginfod = debuginfod);
	struct leaksnap_symbolizer *s = leaksnap_symbolizer_new(&o, &err);
	assert_non_null(s);
	return s;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Off: the stripped file is used and says it has no symbols; nothing is
 * asked of the server DEBUGINFOD_URLS names. */
static void test_off(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(false);
	struct leaksnap_error err;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, stripped, id, idlen,
									 &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
	assert_string_equal(m->file_path, stripped);
	assert_true(m->no_symbols);
	assert_false(m->from_debuginfod);
	assert_null(m->debuginfod_error);
	assert_null(leaksnap_sym_file_debug_path(m->file));
	struct leaksnap_sym_result r;
	uint64_t rel = rel_pc_of((uintptr_t)dbgdtest_probe);
	assert_int_equal(leaksnap_sym_module_lookup(m, rel, false, &r, &err), 0);
	assert_true(r.frame_count == 0 || !r.frames[0].function ||
		    strcmp(r.frames[0].function, "dbgdtest_probe") != 0);
	assert_false(exists(cache));
	leaksnap_symbolizer_free(s);
}

/* On: the debug file by build ID, from the server into the cache. */
static void test_debuginfo(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(true);
	struct leaksnap_error err;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, stripped, id, idlen,
									 &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
	assert_string_equal(m->file_path, stripped);
	assert_false(m->no_symbols);
	assert_true(m->from_debuginfod);
	char want[8400];
	snprintf(want, sizeof(want), "%s/%s/debuginfo", cache, hex);
	assert_string_equal(leaksnap_sym_file_debug_path(m->file), want);
	assert_true(exists(want));
	struct leaksnap_sym_result r;
	uint64_t rel = rel_pc_of((uintptr_t)dbgdtest_probe);
	assert_int_equal(leaksnap_sym_module_lookup(m, rel, false, &r, &err), 0);
	assert_true(r.frame_count >= 1);
	assert_string_equal(r.frames[0].function, "dbgdtest_probe");
	assert_non_null(strstr(r.frames[0].file, "test_symdebuginfod.c"));
	leaksnap_symbolizer_free(s);
}

/* A module not on this host: its file from the server, then its debug
 * file; another build ID: not found, said why. */
static void test_executable(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(true);
	struct leaksnap_error err;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(
		s, "/nonexistent/bin/prog", id, idlen, &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
	char want[8400];
	snprintf(want, sizeof(want), "%s/%s/executable", cache, hex);
	assert_string_equal(m->file_path, want);
	assert_true(m->from_debuginfod);
	assert_false(m->no_symbols);
	assert_int_equal(m->layout, LEAKSNAP_SYM_LAYOUT_FILE);
	struct leaksnap_sym_result r;
	uint64_t rel = rel_pc_of((uintptr_t)dbgdtest_probe);
	assert_int_equal(leaksnap_sym_module_lookup(m, rel, false, &r, &err), 0);
	assert_true(r.frame_count >= 1);
	assert_string_equal(r.frames[0].function, "dbgdtest_probe");

	uint8_t other[64];
	memcpy(other, id, idlen);
	other[0] ^= 0xff;
	m = leaksnap_symbolizer_module(s, "/nonexistent/bin/other", other, idlen, &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MISSING);
	assert_null(m->file);
	assert_string_equal(m->debuginfod_error, "not found on the debuginfod servers");
	leaksnap_symbolizer_free(s);
}

/* A mismatch names the file passed over. */
static void test_rejected(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(false);
	struct leaksnap_error err;
	uint8_t other[64];
	memcpy(other, id, idlen);
	other[0] ^= 0xff;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, stripped, other, idlen,
									 &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MISMATCH);
	assert_null(m->file);
	assert_string_equal(m->rejected_path, stripped);
	m = leaksnap_symbolizer_module(s, "/nonexistent/x", other, idlen, &err);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MISSING);
	assert_null(m->rejected_path);
	leaksnap_symbolizer_free(s);
}

struct said {
	int count;
	const struct leaksnap_sym_module *module;
};

static void note_no_symbols(void *arg, const struct leaksnap_sym_module *m)
{
	struct said *s = arg;
	s->count++;
	s->module = m;
}

static void resolve_twice(bool debuginfod, struct said *said)
{
	if (!dir[0])
		skip();
	run("rm -rf \"$DEBUGINFOD_CACHE_PATH\"");
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_resolver_opts, o, .debuginfod = debuginfod,
		      .no_symbols = note_no_symbols, .no_symbols_arg = said);
	struct leaksnap_resolver *r = leaksnap_resolver_new(&o, &err);
	assert_non_null(r);
	uint64_t rels[2] = {rel_pc_of((uintptr_t)dbgdtest_probe),
			    rel_pc_of((uintptr_t)rel_pc_of)};
	for (int i = 0; i < 2; i++) {
		uint64_t rel = rels[i];
		const struct leaksnap_sym_module *m = leaksnap_resolve_module(
			r, stripped, id, idlen, NULL, 0, &rel, &err);
		assert_non_null(m);
		struct leaksnap_resolved res;
		assert_int_equal(leaksnap_resolve_frame(r, m, rel, &res, &err), 0);
		assert_int_equal(res.frame_count != 0, debuginfod);
	}
	leaksnap_resolver_free(r);
}

/* The resolver says a stripped module once, and not when debuginfod gave
 * its symbols. */
static void test_resolver_says_once(void **state)
{
	(void)state;
	struct said said = {0, NULL};
	resolve_twice(false, &said);
	assert_int_equal(said.count, 1);
	said.count = 0;
	resolve_twice(true, &said);
	assert_int_equal(said.count, 0);
}

/* A symbolizer that asks no server: DEBUGINFOD_URLS unset too, the cache
 * left as it is. */
static struct leaksnap_symbolizer *offline_sym(void)
{
	if (!dir[0])
		skip();
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .debuginfod = false);
	struct leaksnap_symbolizer *s = leaksnap_symbolizer_new(&o, &err);
	assert_non_null(s);
	return s;
}

/* The stripped program's debug file, as @s finds it: its path, or NULL
 * (no symbols then). */
static const char *debug_found(struct leaksnap_symbolizer *s)
{
	struct leaksnap_error err;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, stripped, id, idlen,
									 &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
	const char *debug = leaksnap_sym_file_debug_path(m->file);
	assert_int_equal(m->no_symbols, debug == NULL);
	assert_int_equal(m->from_debuginfod, debug != NULL);
	assert_null(m->debuginfod_error);
	if (debug) {
		struct leaksnap_sym_result r;
		uint64_t rel = rel_pc_of((uintptr_t)dbgdtest_probe);
		assert_int_equal(leaksnap_sym_module_lookup(m, rel, false, &r, &err), 0);
		assert_true(r.frame_count >= 1);
		assert_string_equal(r.frames[0].function, "dbgdtest_probe");
	}
	return debug;
}

/* Fetched once, then no server asked (--offline, --no-debuginfod, no
 * DEBUGINFOD_URLS): the debug file, and the file of a module not on this
 * host, come from the client's cache. */
static void test_cache_offline(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(true);
	struct leaksnap_error err;
	assert_non_null(leaksnap_symbolizer_module(s, "/nonexistent/bin/prog", id, idlen, &err));
	assert_non_null(debug_found(s));
	leaksnap_symbolizer_free(s);
	char urls[4200];
	snprintf(urls, sizeof(urls), "%s", getenv("DEBUGINFOD_URLS"));
	for (int unset = 0; unset < 2; unset++) {
		if (unset)
			unsetenv("DEBUGINFOD_URLS");
		s = offline_sym();
		char want[8400];
		snprintf(want, sizeof(want), "%s/%s/debuginfo", cache, hex);
		assert_string_equal(debug_found(s), want);
		const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(
			s, "/nonexistent/bin/prog", id, idlen, &err);
		assert_non_null(m);
		assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
		snprintf(want, sizeof(want), "%s/%s/executable", cache, hex);
		assert_string_equal(m->file_path, want);
		assert_true(m->from_debuginfod);
		assert_false(m->no_symbols);
		assert_null(m->debuginfod_error);
		leaksnap_symbolizer_free(s);
	}
	setenv("DEBUGINFOD_URLS", urls, 1);
}

/* What is in the cache is used only when it is the build: another
 * build's file, or the empty file with no permissions by which the
 * client remembers a miss, is passed over; no cache: none is made. */
static void test_cache_checked(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = offline_sym();
	run("rm -rf \"$DEBUGINFOD_CACHE_PATH\"");
	assert_null(debug_found(s));
	assert_false(exists(cache));
	leaksnap_symbolizer_free(s);
	char cmd[16384];
	/* this program's own file, not stripped, but not the build asked for */
	uint8_t other[64];
	memcpy(other, id, idlen);
	other[0] ^= 0xff;
	char ohex[130];
	for (size_t i = 0; i < idlen; i++)
		snprintf(ohex + 2 * i, 3, "%02x", other[i]);
	snprintf(cmd, sizeof(cmd),
		 "set -e; c=\"$DEBUGINFOD_CACHE_PATH\"; mkdir -p \"$c/%s\" \"$c/%s\"; "
		 "cp '%s' \"$c/%s/debuginfo\"; cp '%s' \"$c/%s/executable\"; "
		 ": >\"$c/%s/debuginfo\"; chmod 0 \"$c/%s/debuginfo\"",
		 hex, ohex, self, ohex, self, ohex, hex, hex);
	assert_int_equal(run(cmd), 0);
	s = offline_sym();
	assert_null(debug_found(s));
	struct leaksnap_error err;
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(
		s, "/nonexistent/bin/other", other, idlen, &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MISSING);
	assert_null(m->file);
	assert_false(m->from_debuginfod);
	leaksnap_symbolizer_free(s);
	run("rm -rf \"$DEBUGINFOD_CACHE_PATH\"");
}

/* The cache is where the client keeps it: DEBUGINFOD_CACHE_PATH; else
 * ~/.debuginfod_client_cache when it exists; else
 * $XDG_CACHE_HOME/debuginfod_client; else ~/.cache/debuginfod_client. */
static void test_cache_where(void **state)
{
	(void)state;
	if (!dir[0])
		skip();
	char cmd[16384];
	snprintf(cmd, sizeof(cmd),
		 "set -e; d='%s'; for c in env home/.debuginfod_client_cache "
		 "xdg/debuginfod_client home/.cache/debuginfod_client; do "
		 "mkdir -p \"$d/$c/%s\"; cp \"$d/srv/buildid/%s/debuginfo\" \"$d/$c/%s/\"; done",
		 dir, hex, hex, hex);
	assert_int_equal(run(cmd), 0);
	char home[4200], xdg[4200], env[4200], want[8400];
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	snprintf(env, sizeof(env), "%s/env", dir);
	char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", home, 1);
	setenv("XDG_CACHE_HOME", xdg, 1);
	setenv("DEBUGINFOD_CACHE_PATH", env, 1);
	static const char *const order[] = {"env", "home/.debuginfod_client_cache",
					    "xdg/debuginfod_client",
					    "home/.cache/debuginfod_client"};
	for (int i = 0; i < 4; i++) {
		if (i == 1)
			setenv("DEBUGINFOD_CACHE_PATH", "", 1); /* (empty: unset) */
		if (i == 2) {
			snprintf(cmd, sizeof(cmd), "rm -rf '%s/home/.debuginfod_client_cache'", dir);
			assert_int_equal(run(cmd), 0);
		}
		if (i == 3)
			unsetenv("XDG_CACHE_HOME");
		struct leaksnap_symbolizer *s = offline_sym();
		snprintf(want, sizeof(want), "%s/%s/%s/debuginfo", dir, order[i], hex);
		assert_string_equal(debug_found(s), want);
		leaksnap_symbolizer_free(s);
	}
	/* an old cache in ~ is the cache even without the file */
	snprintf(cmd, sizeof(cmd), "mkdir '%s/home/.debuginfod_client_cache'", dir);
	assert_int_equal(run(cmd), 0);
	struct leaksnap_symbolizer *s = offline_sym();
	assert_null(debug_found(s));
	leaksnap_symbolizer_free(s);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	else
		unsetenv("HOME");
	free(saved_home);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
}

/* The one scan of section names (sym_elf_section): names, prefixes,
 * sections with contents; a file whose names cannot be read. */
static void test_elf_section(void **state)
{
	(void)state;
	if (!dir[0])
		skip();
	char debug[8400];
	snprintf(debug, sizeof(debug), "%s/srv/buildid/%s/debuginfo", dir, hex);
	const char *paths[3] = {self, stripped, debug};
	Elf *elf[3];
	int fd[3];
	elf_version(EV_CURRENT);
	for (int i = 0; i < 3; i++) {
		fd[i] = open(paths[i], O_RDONLY);
		assert_true(fd[i] >= 0);
		elf[i] = elf_begin(fd[i], ELF_C_READ, NULL);
		assert_non_null(elf[i]);
	}
	static const char *const info[] = {".debug_info", ".zdebug_info", NULL};
	static const char *const debug_any[] = {".zdebug_", ".debug_", NULL};
	static const char *const text[] = {".text", NULL};
	static const char *const debug_short[] = {".debug", NULL};
	Elf_Scn *scn = (Elf_Scn *)1;
	/* the program built with -g: DWARF; its stripped copy: none */
	assert_int_equal(sym_elf_section(elf[0], info, 0, &scn), 1);
	assert_non_null(scn);
	assert_int_equal(sym_elf_section(elf[0], debug_any, SYM_SCN_PREFIX, NULL), 1);
	assert_int_equal(sym_elf_section(elf[1], info, 0, &scn), 0);
	assert_null(scn);
	assert_int_equal(sym_elf_section(elf[1], debug_any, SYM_SCN_PREFIX, NULL), 0);
	/* whole names unless prefixes are asked for */
	assert_int_equal(sym_elf_section(elf[0], debug_short, 0, NULL), 0);
	assert_int_equal(sym_elf_section(elf[0], debug_short, SYM_SCN_PREFIX, NULL), 1);
	/* the section found is the one named */
	assert_int_equal(sym_elf_section(elf[1], text, SYM_SCN_DATA, &scn), 1);
	size_t shstrndx;
	GElf_Shdr sh;
	assert_int_equal(elf_getshdrstrndx(elf[1], &shstrndx), 0);
	assert_non_null(gelf_getshdr(scn, &sh));
	assert_string_equal(elf_strptr(elf[1], shstrndx, sh.sh_name), ".text");
	/* the debug file: DWARF, and a .text without contents */
	assert_int_equal(sym_elf_section(elf[2], info, SYM_SCN_DATA, NULL), 1);
	assert_int_equal(sym_elf_section(elf[2], text, 0, NULL), 1);
	assert_int_equal(sym_elf_section(elf[2], text, SYM_SCN_DATA, &scn), 0);
	assert_null(scn);
	/* no ELF file, no names */
	char junk[64] = "not an ELF file";
	Elf *none = elf_memory(junk, sizeof(junk));
	assert_int_equal(sym_elf_section(none, text, 0, &scn), -1);
	assert_null(scn);
	elf_end(none);
	assert_int_equal(sym_elf_section(NULL, text, 0, NULL), -1);
	for (int i = 0; i < 3; i++) {
		elf_end(elf[i]);
		close(fd[i]);
	}
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_debuginfo),
		cmocka_unit_test(test_executable),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_resolver_says_once),
		cmocka_unit_test(test_elf_section),
		cmocka_unit_test(test_cache_offline),
		cmocka_unit_test(test_cache_checked),
		cmocka_unit_test(test_cache_where),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
