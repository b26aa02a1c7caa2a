/* Unit tests for mapsparse/maps.c: parsing, module grouping, lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/maps.h>

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static struct leaksnap_maps *parse_ok(const char *text)
{
	struct leaksnap_error err;
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, strlen(text), "test.maps", 1, 0,
							 &err);
	if (maps == NULL)
		fail_msg("unexpected parse failure: line %lu: %s", err.line, err.text);
	assert_int_equal(err.code, LEAKSNAP_OK);
	return maps;
}

struct want_mapping {
	uint64_t start, end, offset, inode;
	uint32_t major, minor;
	const char *perms;
	const char *path;
	bool deleted;
	size_t module;
	unsigned long line;
};

static void check_mapping(const struct leaksnap_maps_mapping *m, const struct want_mapping *w)
{
	assert_non_null(m);
	assert_int_equal(m->start, w->start);
	assert_int_equal(m->end, w->end);
	assert_int_equal(m->offset, w->offset);
	assert_int_equal(m->inode, w->inode);
	assert_int_equal(m->dev_major, w->major);
	assert_int_equal(m->dev_minor, w->minor);
	assert_string_equal(m->perms, w->perms);
	if (w->path == NULL)
		assert_null(m->path);
	else
		assert_string_equal(m->path, w->path);
	assert_int_equal(m->deleted, w->deleted);
	assert_int_equal(m->module, w->module);
	assert_int_equal(m->line, w->line);
}

struct want_module {
	const char *path;
	uint64_t start, end;
	size_t first, count;
};

static void check_module(const struct leaksnap_maps_module *mod, const struct want_module *w)
{
	assert_non_null(mod);
	assert_string_equal(mod->path, w->path);
	assert_int_equal(mod->start, w->start);
	assert_int_equal(mod->end, w->end);
	assert_int_equal(mod->first_mapping, w->first);
	assert_int_equal(mod->mapping_count, w->count);
}

/* Parse @text expecting failure at absolute line @line with message @msg. */
static void expect_error(const char *text, size_t len, unsigned long first_line,
			 unsigned long line, const char *msg)
{
	struct leaksnap_error err;
	memset(&err, 0x5a, sizeof(err)); /* must be cleared by leaksnap_maps_parse */
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, len, "dump.txt", first_line, 0,
							 &err);
	if (maps != NULL) {
		leaksnap_maps_free(maps);
		fail_msg("parse of %.40s unexpectedly succeeded", text);
	}
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.source, "dump.txt");
	assert_int_equal(err.line, line);
	assert_string_equal(err.text, msg);
}

/* ------------------------------------------------------------------------
 * A realistic x86-64 process
 * ------------------------------------------------------------------------ */

static const char x86_text[] =
	"55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1835010                    /usr/bin/cat\n"
	"55d0c6a02000-55d0c6a07000 r-xp 00002000 fd:01 1835010                    /usr/bin/cat\n"
	"55d0c6a07000-55d0c6a0a000 r--p 00007000 fd:01 1835010                    /usr/bin/cat\n"
	"55d0c6a0a000-55d0c6a0b000 r--p 00009000 fd:01 1835010                    /usr/bin/cat\n"
	"55d0c6a0b000-55d0c6a0c000 rw-p 0000a000 fd:01 1835010                    /usr/bin/cat\n"
	"55d0c6a0c000-55d0c6a0d000 rw-p 00000000 00:00 0 \n"
	"55d0c8259000-55d0c827a000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f5e1c000000-7f5e1c028000 r--p 00000000 fd:01 1835107                    "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f5e1c028000-7f5e1c1bd000 r-xp 00028000 fd:01 1835107                    "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f5e1c1bd000-7f5e1c215000 r--p 001bd000 fd:01 1835107                    "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f5e1c215000-7f5e1c219000 r--p 00214000 fd:01 1835107                    "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f5e1c219000-7f5e1c21b000 rw-p 00218000 fd:01 1835107                    "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f5e1c21b000-7f5e1c228000 rw-p 00000000 00:00 0\n"
	"7f5e1c300000-7f5e1c301000 r--p 00000000 fd:02 42                         /data/my dir/lib "
	"foo.so\n"
	"7f5e1c301000-7f5e1c302000 r-xp 00001000 fd:02 42                         /data/my dir/lib "
	"foo.so\n"
	"7f5e1c400000-7f5e1c500000 rw-p 00000000 00:00 0                          "
	"[anon:dalvik-main space]\n"
	"7f5e1c500000-7f5e1c600000 r-xs 00000000 00:01 2049                       memfd:jit-cache "
	"(deleted)\n"
	"7f5e1c600000-7f5e1c700000 rw-s 00000000 00:05 4100                       "
	"/dev/ashmem/dalvik-zygote space (deleted)\n"
	"7f5e1c700000-7f5e1c701000 rw-p 00000000 00:08 123                        socket:[123]\n"
	"7f5e1c701000-7f5e1c702000 rw-p 00000000 00:0e 10                         "
	"anon_inode:[perf_event]\n"
	"7ffc8a5e0000-7ffc8a601000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffc8a7d6000-7ffc8a7da000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffc8a7da000-7ffc8a7dc000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static const struct want_mapping x86_mappings[] = {
	{0x55d0c6a00000, 0x55d0c6a02000, 0x0, 1835010, 0xfd, 1, "r--p", "/usr/bin/cat", false, 0,
	 1},
	{0x55d0c6a02000, 0x55d0c6a07000, 0x2000, 1835010, 0xfd, 1, "r-xp", "/usr/bin/cat", false, 0,
	 2},
	{0x55d0c6a07000, 0x55d0c6a0a000, 0x7000, 1835010, 0xfd, 1, "r--p", "/usr/bin/cat", false, 0,
	 3},
	{0x55d0c6a0a000, 0x55d0c6a0b000, 0x9000, 1835010, 0xfd, 1, "r--p", "/usr/bin/cat", false, 0,
	 4},
	{0x55d0c6a0b000, 0x55d0c6a0c000, 0xa000, 1835010, 0xfd, 1, "rw-p", "/usr/bin/cat", false, 0,
	 5},
	{0x55d0c6a0c000, 0x55d0c6a0d000, 0x0, 0, 0, 0, "rw-p", NULL, false, LEAKSNAP_MAPS_NONE, 6},
	{0x55d0c8259000, 0x55d0c827a000, 0x0, 0, 0, 0, "rw-p", "[heap]", false, 1, 7},
	{0x7f5e1c000000, 0x7f5e1c028000, 0x0, 1835107, 0xfd, 1, "r--p", LIBC, false, 2, 8},
	{0x7f5e1c028000, 0x7f5e1c1bd000, 0x28000, 1835107, 0xfd, 1, "r-xp", LIBC, false, 2, 9},
	{0x7f5e1c1bd000, 0x7f5e1c215000, 0x1bd000, 1835107, 0xfd, 1, "r--p", LIBC, false, 2, 10},
	{0x7f5e1c215000, 0x7f5e1c219000, 0x214000, 1835107, 0xfd, 1, "r--p", LIBC, false, 2, 11},
	{0x7f5e1c219000, 0x7f5e1c21b000, 0x218000, 1835107, 0xfd, 1, "rw-p", LIBC, false, 2, 12},
	{0x7f5e1c21b000, 0x7f5e1c228000, 0x0, 0, 0, 0, "rw-p", NULL, false, LEAKSNAP_MAPS_NONE, 13},
	{0x7f5e1c300000, 0x7f5e1c301000, 0x0, 42, 0xfd, 2, "r--p", "/data/my dir/lib foo.so", false,
	 3, 14},
	{0x7f5e1c301000, 0x7f5e1c302000, 0x1000, 42, 0xfd, 2, "r-xp", "/data/my dir/lib foo.so",
	 false, 3, 15},
	{0x7f5e1c400000, 0x7f5e1c500000, 0x0, 0, 0, 0, "rw-p", "[anon:dalvik-main space]", false, 4,
	 16},
	{0x7f5e1c500000, 0x7f5e1c600000, 0x0, 2049, 0, 1, "r-xs", "memfd:jit-cache", true, 5, 17},
	{0x7f5e1c600000, 0x7f5e1c700000, 0x0, 4100, 0, 5, "rw-s", "/dev/ashmem/dalvik-zygote space",
	 true, 6, 18},
	{0x7f5e1c700000, 0x7f5e1c701000, 0x0, 123, 0, 8, "rw-p", "socket:[123]", false, 7, 19},
	{0x7f5e1c701000, 0x7f5e1c702000, 0x0, 10, 0, 0xe, "rw-p", "anon_inode:[perf_event]", false,
	 8, 20},
	{0x7ffc8a5e0000, 0x7ffc8a601000, 0x0, 0, 0, 0, "rw-p", "[stack]", false, 9, 21},
	{0x7ffc8a7d6000, 0x7ffc8a7da000, 0x0, 0, 0, 0, "r--p", "[vvar]", false, 10, 22},
	{0x7ffc8a7da000, 0x7ffc8a7dc000, 0x0, 0, 0, 0, "r-xp", "[vdso]", false, 11, 23},
	{0xffffffffff600000, 0xffffffffff601000, 0x0, 0, 0, 0, "--xp", "[vsyscall]", false, 12, 24},
};

static const struct want_module x86_modules[] = {
	{ "/usr/bin/cat", 0x55d0c6a00000, 0x55d0c6a0c000, 0, 5 },
	{ "[heap]", 0x55d0c8259000, 0x55d0c827a000, 6, 1 },
	{ LIBC, 0x7f5e1c000000, 0x7f5e1c21b000, 7, 5 },
	{ "/data/my dir/lib foo.so", 0x7f5e1c300000, 0x7f5e1c302000, 13, 2 },
	{ "[anon:dalvik-main space]", 0x7f5e1c400000, 0x7f5e1c500000, 15, 1 },
	{ "memfd:jit-cache", 0x7f5e1c500000, 0x7f5e1c600000, 16, 1 },
	{ "/dev/ashmem/dalvik-zygote space", 0x7f5e1c600000, 0x7f5e1c700000, 17, 1 },
	{ "socket:[123]", 0x7f5e1c700000, 0x7f5e1c701000, 18, 1 },
	{ "anon_inode:[perf_event]", 0x7f5e1c701000, 0x7f5e1c702000, 19, 1 },
	{ "[stack]", 0x7ffc8a5e0000, 0x7ffc8a601000, 20, 1 },
	{ "[vvar]", 0x7ffc8a7d6000, 0x7ffc8a7da000, 21, 1 },
	{ "[vdso]", 0x7ffc8a7da000, 0x7ffc8a7dc000, 22, 1 },
	{ "[vsyscall]", 0xffffffffff600000, 0xffffffffff601000, 23, 1 },
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void check_all(const struct leaksnap_maps *maps, const struct want_mapping *wm, size_t nm,
		      const struct want_module *wmod, size_t nmod)
{
	assert_int_equal(leaksnap_maps_mapping_count(maps), nm);
	for (size_t i = 0; i < nm; i++)
		check_mapping(leaksnap_maps_mapping(maps, i), &wm[i]);
	assert_int_equal(leaksnap_maps_module_count(maps), nmod);
	for (size_t i = 0; i < nmod; i++)
		check_module(leaksnap_maps_module(maps, i), &wmod[i]);
	assert_null(leaksnap_maps_mapping(maps, nm));
	assert_null(leaksnap_maps_module(maps, nmod));
}

static void test_x86_64_full(void **state)
{
	(void)state;
	struct leaksnap_maps *maps = parse_ok(x86_text);
	check_all(maps, x86_mappings, COUNT(x86_mappings), x86_modules, COUNT(x86_modules));

	/* Every module's mappings point back at it. */
	for (size_t i = 0; i < leaksnap_maps_module_count(maps); i++) {
		const struct leaksnap_maps_module *mod = leaksnap_maps_module(maps, i);
		for (size_t j = 0; j < mod->mapping_count; j++) {
			const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(
				maps, mod->first_mapping + j);
			assert_int_equal(m->module, i);
			assert_string_equal(m->path, mod->path);
		}
	}
	leaksnap_maps_free(maps);
}

static void test_x86_64_locate(void **state)
{
	(void)state;
	struct leaksnap_maps *maps = parse_ok(x86_text);
	struct leaksnap_maps_location loc;

	/* libc text: rel_pc = pc - start + offset */
	assert_true(leaksnap_maps_locate(maps, 0x7f5e1c029234, &loc));
	assert_ptr_equal(loc.mapping, leaksnap_maps_mapping(maps, 8));
	assert_ptr_equal(loc.module, leaksnap_maps_module(maps, 2));
	assert_int_equal(loc.rel_pc, 0x29234);
	assert_string_equal(loc.module->path, LIBC);

	/* First byte of the executable. */
	assert_true(leaksnap_maps_locate(maps, 0x55d0c6a00000, &loc));
	assert_ptr_equal(loc.mapping, leaksnap_maps_mapping(maps, 0));
	assert_ptr_equal(loc.module, leaksnap_maps_module(maps, 0));
	assert_int_equal(loc.rel_pc, 0);

	/* Last byte of its last mapping. */
	assert_true(leaksnap_maps_locate(maps, 0x55d0c6a0bfff, &loc));
	assert_ptr_equal(loc.mapping, leaksnap_maps_mapping(maps, 4));
	assert_int_equal(loc.rel_pc, 0xafff);

	/* Anonymous bss right after it: mapped, but no module. */
	assert_true(leaksnap_maps_locate(maps, 0x55d0c6a0c010, &loc));
	assert_ptr_equal(loc.mapping, leaksnap_maps_mapping(maps, 5));
	assert_null(loc.module);
	assert_int_equal(loc.rel_pc, 0x10);

	/* Gap between bss and [heap]. */
	assert_false(leaksnap_maps_locate(maps, 0x55d0c6a0d000, &loc));
	assert_null(loc.mapping);
	assert_null(loc.module);
	assert_int_equal(loc.rel_pc, 0);

	/* Path with spaces. */
	assert_true(leaksnap_maps_locate(maps, 0x7f5e1c301abc, &loc));
	assert_string_equal(loc.module->path, "/data/my dir/lib foo.so");
	assert_int_equal(loc.rel_pc, 0x1abc);

	/* Deleted memfd. */
	assert_true(leaksnap_maps_locate(maps, 0x7f5e1c500040, &loc));
	assert_string_equal(loc.module->path, "memfd:jit-cache");
	assert_true(loc.mapping->deleted);
	assert_int_equal(loc.rel_pc, 0x40);

	/* vdso and vsyscall. */
	assert_true(leaksnap_maps_locate(maps, 0x7ffc8a7da800, &loc));
	assert_string_equal(loc.module->path, "[vdso]");
	assert_int_equal(loc.rel_pc, 0x800);
	assert_true(leaksnap_maps_locate(maps, 0xffffffffff600400, &loc));
	assert_string_equal(loc.module->path, "[vsyscall]");
	assert_int_equal(loc.rel_pc, 0x400);
	assert_true(leaksnap_maps_locate(maps, 0xffffffffff600fff, &loc));
	assert_false(leaksnap_maps_locate(maps, 0xffffffffff601000, &loc));
	assert_false(leaksnap_maps_locate(maps, UINT64_MAX, &loc));

	/* Below the first mapping. */
	assert_false(leaksnap_maps_locate(maps, 0, &loc));
	assert_false(leaksnap_maps_locate(maps, 0x55d0c69fffff, &loc));
	assert_null(loc.mapping);

	/* A NULL @out still answers. */
	assert_true(leaksnap_maps_locate(maps, 0x7f5e1c029234, NULL));
	assert_false(leaksnap_maps_locate(maps, 0x1000, NULL));
	leaksnap_maps_free(maps);
}

/* ------------------------------------------------------------------------
 * 32-bit Android
 * ------------------------------------------------------------------------ */

static const char android32_text[] =
	"12c00000-12e00000 rw-p 00000000 00:05 10267      /dev/ashmem/dalvik-main space (deleted)\n"
	"70a3a000-70c1b000 rw-p 00000000 103:05 1310     "
	"/data/dalvik-cache/arm/system@framework@boot.art\n"
	"ab3e4000-ab3e6000 r-xp 00000000 b3:19 786        /system/bin/app_process32\n"
	"ab3e6000-ab3e7000 r--p 00001000 b3:19 786        /system/bin/app_process32\n"
	"ab3e7000-ab3e8000 rw-p 00000000 00:00 0 \n"
	"ab8c3000-ab8c6000 rw-p 00000000 00:00 0          [heap]\n"
	"b6e00000-b6e80000 rw-p 00000000 00:00 0          [anon:libc_malloc]\n"
	"b6e80000-b6f00000 rw-p 00000000 00:00 0          [anon:libc_malloc]\n"
	"b6f40000-b6f8e000 r-xp 00000000 b3:19 1232       /system/lib/libc.so\n"
	"b6f8e000-b6f8f000 ---p 00000000 00:00 0\n"
	"b6f8f000-b6f92000 r--p 0004e000 b3:19 1232       /system/lib/libc.so\n"
	"b6f92000-b6f94000 rw-p 00051000 b3:19 1232       /system/lib/libc.so\n"
	"beb7e000-beb9f000 rw-p 00000000 00:00 0          [stack]\n"
	"ffff0000-ffff1000 r-xp 00000000 00:00 0          [vectors]\n";

static const struct want_mapping android32_mappings[] = {
	{0x12c00000, 0x12e00000, 0, 10267, 0, 5, "rw-p", "/dev/ashmem/dalvik-main space", true, 0,
	 1},
	{0x70a3a000, 0x70c1b000, 0, 1310, 0x103, 5, "rw-p",
	 "/data/dalvik-cache/arm/system@framework@boot.art", false, 1, 2},
	{0xab3e4000, 0xab3e6000, 0, 786, 0xb3, 0x19, "r-xp", "/system/bin/app_process32", false, 2,
	 3},
	{0xab3e6000, 0xab3e7000, 0x1000, 786, 0xb3, 0x19, "r--p", "/system/bin/app_process32",
	 false, 2, 4},
	{0xab3e7000, 0xab3e8000, 0, 0, 0, 0, "rw-p", NULL, false, LEAKSNAP_MAPS_NONE, 5},
	{0xab8c3000, 0xab8c6000, 0, 0, 0, 0, "rw-p", "[heap]", false, 3, 6},
	{0xb6e00000, 0xb6e80000, 0, 0, 0, 0, "rw-p", "[anon:libc_malloc]", false, 4, 7},
	{0xb6e80000, 0xb6f00000, 0, 0, 0, 0, "rw-p", "[anon:libc_malloc]", false, 4, 8},
	{0xb6f40000, 0xb6f8e000, 0, 1232, 0xb3, 0x19, "r-xp", "/system/lib/libc.so", false, 5, 9},
	{0xb6f8e000, 0xb6f8f000, 0, 0, 0, 0, "---p", NULL, false, LEAKSNAP_MAPS_NONE, 10},
	{0xb6f8f000, 0xb6f92000, 0x4e000, 1232, 0xb3, 0x19, "r--p", "/system/lib/libc.so", false, 6,
	 11},
	{0xb6f92000, 0xb6f94000, 0x51000, 1232, 0xb3, 0x19, "rw-p", "/system/lib/libc.so", false, 6,
	 12},
	{0xbeb7e000, 0xbeb9f000, 0, 0, 0, 0, "rw-p", "[stack]", false, 7, 13},
	{0xffff0000, 0xffff1000, 0, 0, 0, 0, "r-xp", "[vectors]", false, 8, 14},
};

static const struct want_module android32_modules[] = {
	{ "/dev/ashmem/dalvik-main space", 0x12c00000, 0x12e00000, 0, 1 },
	{ "/data/dalvik-cache/arm/system@framework@boot.art", 0x70a3a000, 0x70c1b000, 1, 1 },
	{ "/system/bin/app_process32", 0xab3e4000, 0xab3e7000, 2, 2 },
	{ "[heap]", 0xab8c3000, 0xab8c6000, 5, 1 },
	{ "[anon:libc_malloc]", 0xb6e00000, 0xb6f00000, 6, 2 },
	/* The guard page splits libc into two modules. */
	{ "/system/lib/libc.so", 0xb6f40000, 0xb6f8e000, 8, 1 },
	{ "/system/lib/libc.so", 0xb6f8f000, 0xb6f94000, 10, 2 },
	{ "[stack]", 0xbeb7e000, 0xbeb9f000, 12, 1 },
	{ "[vectors]", 0xffff0000, 0xffff1000, 13, 1 },
};

static void test_android32(void **state)
{
	(void)state;
	struct leaksnap_maps *maps = parse_ok(android32_text);
	struct leaksnap_maps_location loc;

	check_all(maps, android32_mappings, COUNT(android32_mappings), android32_modules,
		  COUNT(android32_modules));

	assert_true(leaksnap_maps_locate(maps, 0xb6f5a1c4, &loc));
	assert_ptr_equal(loc.module, leaksnap_maps_module(maps, 5));
	assert_int_equal(loc.rel_pc, 0x1a1c4);
	assert_true(leaksnap_maps_locate(maps, 0xb6f90010, &loc));
	assert_ptr_equal(loc.module, leaksnap_maps_module(maps, 6));
	assert_int_equal(loc.rel_pc, 0x4f010);
	assert_true(leaksnap_maps_locate(maps, 0xb6f8e004, &loc)); /* guard page */
	assert_null(loc.module);
	assert_false(leaksnap_maps_locate(maps, 0xb6f00000, &loc)); /* gap */
	assert_false(leaksnap_maps_locate(maps, 0xffff1000, &loc));
	assert_false(leaksnap_maps_locate(maps, 0x100000000, &loc));
	leaksnap_maps_free(maps);
}

/* ------------------------------------------------------------------------
 * Line endings and whitespace
 * ------------------------------------------------------------------------ */

static void test_crlf(void **state)
{
	(void)state;
	static const char text[] =
		"00400000-00401000 r-xp 00000000 08:01 100 /bin/a\r\n"
		"00401000-00402000 rw-p 00001000 08:01 100 /bin/a\r\n"
		"00402000-00403000 rw-p 00000000 00:00 0\r\n"
		"00403000-00404000 rw-p 00000000 00:00 0          \r\n"
		"\r\n"
		"00500000-00501000 r--p 00000000 08:01 7 /lib/x (deleted)\r\n";
	struct leaksnap_maps *maps = parse_ok(text);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 5);
	assert_string_equal(leaksnap_maps_mapping(maps, 0)->path, "/bin/a");
	assert_string_equal(leaksnap_maps_mapping(maps, 1)->path, "/bin/a");
	assert_null(leaksnap_maps_mapping(maps, 2)->path);
	assert_null(leaksnap_maps_mapping(maps, 3)->path);
	assert_string_equal(leaksnap_maps_mapping(maps, 4)->path, "/lib/x");
	assert_true(leaksnap_maps_mapping(maps, 4)->deleted);
	assert_int_equal(leaksnap_maps_mapping(maps, 4)->line, 6);
	assert_int_equal(leaksnap_maps_module_count(maps), 2);
	assert_int_equal(leaksnap_maps_module(maps, 0)->mapping_count, 2);
	leaksnap_maps_free(maps);
}

static void test_no_final_newline(void **state)
{
	(void)state;
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 5 /a\n"
		"2000-3000 r--p 00001000 08:01 5 /a";
	struct leaksnap_maps *maps = parse_ok(text);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 2);
	assert_string_equal(leaksnap_maps_mapping(maps, 1)->path, "/a");
	assert_int_equal(leaksnap_maps_module_count(maps), 1);
	assert_int_equal(leaksnap_maps_module(maps, 0)->end, 0x3000);
	leaksnap_maps_free(maps);

	/* Without a path, without a newline, with CR. */
	maps = parse_ok("1000-2000 r-xp 0 0:0 0");
	assert_int_equal(leaksnap_maps_mapping_count(maps), 1);
	assert_null(leaksnap_maps_mapping(maps, 0)->path);
	assert_int_equal(leaksnap_maps_module_count(maps), 0);
	assert_int_equal(leaksnap_maps_mapping(maps, 0)->module, LEAKSNAP_MAPS_NONE);
	leaksnap_maps_free(maps);

	maps = parse_ok("1000-2000 r-xp 0 0:0 0 /b\r");
	assert_string_equal(leaksnap_maps_mapping(maps, 0)->path, "/b");
	leaksnap_maps_free(maps);
}

static void test_blank_lines_and_tabs(void **state)
{
	(void)state;
	static const char text[] =
		"\n"
		"   \t \n"
		"1000-2000\tr-xp\t00000000\t08:01\t5\t/lib/t.so\n"
		"\n"
		"2000-3000  r--p   1000  8:1  5   \t  /lib/t.so\n"
		"\t\n";
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, sizeof(text) - 1, NULL, 40, 0, NULL);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 2);
	const struct leaksnap_maps_mapping *a = leaksnap_maps_mapping(maps, 0),
					   *b = leaksnap_maps_mapping(maps, 1);
	assert_int_equal(a->line, 42);
	assert_int_equal(b->line, 44);
	assert_string_equal(a->path, "/lib/t.so");
	assert_string_equal(b->path, "/lib/t.so");
	assert_int_equal(b->offset, 0x1000);
	assert_int_equal(b->dev_major, 8);
	assert_int_equal(b->dev_minor, 1);
	/* dev "08:01" and "8:1" are the same device: one module. */
	assert_int_equal(leaksnap_maps_module_count(maps), 1);
	assert_int_equal(leaksnap_maps_module(maps, 0)->mapping_count, 2);
	leaksnap_maps_free(maps);

	/* Only blank lines: no mappings. */
	maps = parse_ok("\n\n  \n\r\n\t");
	assert_int_equal(leaksnap_maps_mapping_count(maps), 0);
	assert_int_equal(leaksnap_maps_module_count(maps), 0);
	leaksnap_maps_free(maps);
}

static void test_paths_verbatim(void **state)
{
	(void)state;
	static const char text[] =
		"1000-2000 r--p 0 0:0 0 [anon:a b  c]\n"
		"2000-3000 r--p 0 0:0 0 (deleted)\n"
		"3000-4000 r--p 0 0:0 0 /x (deleted) (deleted)\n"
		"4000-5000 r--p 0 0:0 0 /y (deleted)z\n"
		"5000-6000 r--p 0 0:0 0 /trailing space \n"
		"6000-7000 r--p 0 0:0 0 a\n"
		"7000-8000 r--p 0 0:0 0 x (deleted)\n";
	struct leaksnap_maps *maps = parse_ok(text);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 7);
	assert_string_equal(leaksnap_maps_mapping(maps, 0)->path, "[anon:a b  c]");
	assert_string_equal(leaksnap_maps_mapping(maps, 1)->path, "(deleted)");
	assert_false(leaksnap_maps_mapping(maps, 1)->deleted);
	assert_string_equal(leaksnap_maps_mapping(maps, 2)->path, "/x (deleted)");
	assert_true(leaksnap_maps_mapping(maps, 2)->deleted);
	assert_string_equal(leaksnap_maps_mapping(maps, 3)->path, "/y (deleted)z");
	assert_false(leaksnap_maps_mapping(maps, 3)->deleted);
	assert_string_equal(leaksnap_maps_mapping(maps, 4)->path, "/trailing space ");
	assert_string_equal(leaksnap_maps_mapping(maps, 5)->path, "a");
	assert_string_equal(leaksnap_maps_mapping(maps, 6)->path, "x");
	assert_true(leaksnap_maps_mapping(maps, 6)->deleted);
	assert_int_equal(leaksnap_maps_module_count(maps), 7);
	leaksnap_maps_free(maps);
}

static void test_hex_forms(void **state)
{
	(void)state;
	/* Permissions are lower case only, as the kernel prints them. */
	static const char t1[] = "ABCDEF00-ABCDF000 R-XP 0 0:0 0\n";
	expect_error(t1, sizeof(t1) - 1, 1, 1, "malformed maps line: bad permissions 'R-XP'");

	/* 17+ digits are refused even when leading zeros keep the value small. */
	static const char t2[] = "00000000000001000-2000 r--p 0 0:0 0\n";
	expect_error(t2, sizeof(t2) - 1, 1, 1, "malformed maps line: bad address range");
	static const char t3[] = "1000-2000 r--p 00000000000000000 0:0 0\n";
	expect_error(t3, sizeof(t3) - 1, 1, 1, "malformed maps line: bad offset");

	/* Exactly 16 digits with leading zeros are fine. */
	struct leaksnap_maps *maps = parse_ok(
		"0000000000001000-0000000000002000 r--p 0000000000000010 0:0 0\n");
	assert_int_equal(leaksnap_maps_mapping(maps, 0)->start, 0x1000);
	assert_int_equal(leaksnap_maps_mapping(maps, 0)->end, 0x2000);
	assert_int_equal(leaksnap_maps_mapping(maps, 0)->offset, 0x10);
	leaksnap_maps_free(maps);
}

static void test_upper_case_hex(void **state)
{
	(void)state;
	struct leaksnap_maps *maps = parse_ok(
		"ABCDEF00-ABCDF000 r-xp 0000ABCD FD:0A 9 /u\n"
		"00000000ABCDF000-00000000ABCDF001 r--p FFFFFFFFFFFFFFFF 0:0 18446744073709551615\n"
		"fffffffffffff000-ffffffffffffffff rw-p 0 ffffffff:ffffffff 0\n");
	const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(maps, 0);
	assert_int_equal(m->start, 0xabcdef00);
	assert_int_equal(m->end, 0xabcdf000);
	assert_int_equal(m->offset, 0xabcd);
	assert_int_equal(m->dev_major, 0xfd);
	assert_int_equal(m->dev_minor, 0xa);
	m = leaksnap_maps_mapping(maps, 1);
	assert_int_equal(m->start, 0xabcdf000);
	assert_int_equal(m->offset, UINT64_MAX);
	assert_int_equal(m->inode, UINT64_MAX);
	m = leaksnap_maps_mapping(maps, 2);
	assert_int_equal(m->end, UINT64_MAX);
	assert_int_equal(m->dev_major, 0xffffffffu);
	assert_int_equal(m->dev_minor, 0xffffffffu);

	/* rel_pc wraps: offset near the top of the range. */
	struct leaksnap_maps_location loc;
	assert_true(leaksnap_maps_locate(maps, 0xabcdf000, &loc));
	assert_int_equal(loc.rel_pc, UINT64_MAX);
	assert_true(leaksnap_maps_locate(maps, 0xfffffffffffffffe, &loc));
	assert_int_equal(loc.rel_pc, 0xffe);
	assert_false(leaksnap_maps_locate(maps, UINT64_MAX, &loc)); /* end is exclusive */
	leaksnap_maps_free(maps);

	maps = parse_ok("1000-3000 r-xp ffffffffffff0000 0:0 1 /w\n");
	assert_true(leaksnap_maps_locate(maps, 0x2800, &loc));
	assert_int_equal(loc.rel_pc, 0xffffffffffff1800);
	leaksnap_maps_free(maps);
	maps = parse_ok("10000-40000 r-xp ffffffffffff0000 0:0 1 /w\n");
	assert_true(leaksnap_maps_locate(maps, 0x30000, &loc));
	assert_int_equal(loc.rel_pc, 0x10000); /* wrapped */
	leaksnap_maps_free(maps);
}

/* ------------------------------------------------------------------------
 * Module grouping
 * ------------------------------------------------------------------------ */

static void test_modules_grouping(void **state)
{
	(void)state;
	static const char text[] =
		/* 0,1: same file, consecutive -> one module */
		"1000-2000 r--p 0 08:01 10 /lib/a.so\n"
		"2000-3000 r-xp 1000 08:01 10 /lib/a.so\n"
		/* 2: another file in between */
		"3000-4000 r--p 0 08:01 11 /lib/b.so\n"
		/* 3: /lib/a.so again, not consecutive -> new module */
		"4000-5000 rw-p 3000 08:01 10 /lib/a.so\n"
		/* 4: same path, different inode -> new module */
		"5000-6000 r--p 0 08:01 99 /lib/a.so\n"
		/* 5: same path and inode, different device -> new module */
		"6000-7000 r--p 0 08:02 99 /lib/a.so\n"
		/* 6: same minor, different major -> new module */
		"7000-8000 r--p 0 09:02 99 /lib/a.so\n"
		/* 7,8: gap in addresses but consecutive lines -> one module */
		"9000-a000 r--p 0 09:02 99 /lib/a.so\n"
		/* 9: anonymous */
		"a000-b000 rw-p 0 00:00 0\n"
		/* 10: same file after anonymous -> new module */
		"b000-c000 rw-p 0 09:02 99 /lib/a.so\n"
		/* 11,12: two identical pseudo paths -> one module */
		"c000-d000 rw-p 0 00:00 0 [anon:x]\n"
		"d000-e000 rw-p 0 00:00 0 [anon:x]\n"
		/* 13: different pseudo path -> new module */
		"e000-f000 rw-p 0 00:00 0 [anon:y]\n";
	struct leaksnap_maps *maps = parse_ok(text);
	static const struct { size_t module;
	} want[] = {
		{0}, {0}, {1}, {2}, {3}, {4}, {5}, {5}, {LEAKSNAP_MAPS_NONE}, {6}, {7}, {7}, {8},
	};
	assert_int_equal(leaksnap_maps_mapping_count(maps), COUNT(want));
	for (size_t i = 0; i < COUNT(want); i++)
		assert_int_equal(leaksnap_maps_mapping(maps, i)->module, want[i].module);

	static const struct want_module mods[] = {
		{ "/lib/a.so", 0x1000, 0x3000, 0, 2 },
		{ "/lib/b.so", 0x3000, 0x4000, 2, 1 },
		{ "/lib/a.so", 0x4000, 0x5000, 3, 1 },
		{ "/lib/a.so", 0x5000, 0x6000, 4, 1 },
		{ "/lib/a.so", 0x6000, 0x7000, 5, 1 },
		{ "/lib/a.so", 0x7000, 0xa000, 6, 2 },
		{ "/lib/a.so", 0xb000, 0xc000, 9, 1 },
		{ "[anon:x]", 0xc000, 0xe000, 10, 2 },
		{ "[anon:y]", 0xe000, 0xf000, 12, 1 },
	};
	assert_int_equal(leaksnap_maps_module_count(maps), COUNT(mods));
	for (size_t i = 0; i < COUNT(mods); i++)
		check_module(leaksnap_maps_module(maps, i), &mods[i]);

	/* A PC in the address gap inside module 5 is unmapped. */
	struct leaksnap_maps_location loc;
	assert_false(leaksnap_maps_locate(maps, 0x8000, &loc));
	assert_null(loc.module);
	assert_true(leaksnap_maps_locate(maps, 0x9010, &loc));
	assert_ptr_equal(loc.module, leaksnap_maps_module(maps, 5));
	assert_int_equal(loc.rel_pc, 0x10);
	leaksnap_maps_free(maps);
}

/* ------------------------------------------------------------------------
 * Lookup
 * ------------------------------------------------------------------------ */

static void test_lookup_boundaries(void **state)
{
	(void)state;
	static const char text[] =
		"10000-20000 r-xp 0 0:0 1 /a\n"
		"20000-30000 r--p 0 0:0 1 /a\n"   /* adjacent */
		"40000-41000 rw-p 0 0:0 0\n";     /* after a gap */
	struct leaksnap_maps *maps = parse_ok(text);
	const struct leaksnap_maps_mapping *m0 = leaksnap_maps_mapping(maps, 0);
	const struct leaksnap_maps_mapping *m1 = leaksnap_maps_mapping(maps, 1);
	const struct leaksnap_maps_mapping *m2 = leaksnap_maps_mapping(maps, 2);

	assert_null(leaksnap_maps_lookup(maps, 0));
	assert_null(leaksnap_maps_lookup(maps, 0xffff));
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x10000), m0);
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x1ffff), m0);
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x20000), m1); /* one past m0 = m1 */
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x2ffff), m1);
	assert_null(leaksnap_maps_lookup(maps, 0x30000));           /* one past m1 */
	assert_null(leaksnap_maps_lookup(maps, 0x3ffff));
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x40000), m2);
	assert_ptr_equal(leaksnap_maps_lookup(maps, 0x40fff), m2);
	assert_null(leaksnap_maps_lookup(maps, 0x41000));
	assert_null(leaksnap_maps_lookup(maps, UINT64_MAX));
	leaksnap_maps_free(maps);

	/* A single mapping. */
	maps = parse_ok("1000-2000 r-xp 0 0:0 0\n");
	assert_null(leaksnap_maps_lookup(maps, 0xfff));
	assert_non_null(leaksnap_maps_lookup(maps, 0x1000));
	assert_non_null(leaksnap_maps_lookup(maps, 0x1fff));
	assert_null(leaksnap_maps_lookup(maps, 0x2000));
	leaksnap_maps_free(maps);
}

static void test_null_and_empty(void **state)
{
	(void)state;
	struct leaksnap_maps_location loc;
	memset(&loc, 0x5a, sizeof(loc));
	assert_false(leaksnap_maps_locate(NULL, 0x1000, &loc));
	assert_null(loc.mapping);
	assert_null(loc.module);
	assert_int_equal(loc.rel_pc, 0);
	assert_null(leaksnap_maps_lookup(NULL, 0x1000));
	assert_int_equal(leaksnap_maps_mapping_count(NULL), 0);
	assert_int_equal(leaksnap_maps_module_count(NULL), 0);
	assert_null(leaksnap_maps_mapping(NULL, 0));
	assert_null(leaksnap_maps_module(NULL, 0));
	leaksnap_maps_free(NULL);

	struct leaksnap_error err;
	memset(&err, 0x5a, sizeof(err));
	struct leaksnap_maps *maps = leaksnap_maps_parse("", 0, "x", 1, 0, &err);
	assert_non_null(maps);
	assert_int_equal(err.code, LEAKSNAP_OK);
	assert_int_equal(err.line, 0);
	assert_int_equal(err.text[0], '\0');
	assert_int_equal(leaksnap_maps_mapping_count(maps), 0);
	assert_int_equal(leaksnap_maps_module_count(maps), 0);
	assert_null(leaksnap_maps_mapping(maps, 0));
	assert_null(leaksnap_maps_module(maps, 0));
	assert_null(leaksnap_maps_lookup(maps, 0));
	assert_null(leaksnap_maps_lookup(maps, UINT64_MAX));
	memset(&loc, 0x5a, sizeof(loc));
	assert_false(leaksnap_maps_locate(maps, 0x1234, &loc));
	assert_null(loc.mapping);
	assert_int_equal(loc.rel_pc, 0);
	leaksnap_maps_free(maps);

	/* NULL text with length 0 is an empty text too. */
	maps = leaksnap_maps_parse(NULL, 0, "x", 1, 0, &err);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 0);
	leaksnap_maps_free(maps);

	/* Only the first @len bytes are read. */
	maps = leaksnap_maps_parse("1000-2000 r-xp 0 0:0 0 /a\nGARBAGE", 26, "x", 1, 0, &err);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 1);
	assert_string_equal(leaksnap_maps_mapping(maps, 0)->path, "/a");
	leaksnap_maps_free(maps);
}

static void test_text_is_copied(void **state)
{
	(void)state;
	static const char src[] = "1000-2000 r-xp 0 08:01 3 /lib/copy.so (deleted)\n";
	char *buf = malloc(sizeof(src));
	assert_non_null(buf);
	memcpy(buf, src, sizeof(src));
	struct leaksnap_maps *maps = leaksnap_maps_parse(buf, sizeof(src) - 1, "c", 1, 0, NULL);
	assert_non_null(maps);
	/* The caller's text is left untouched... */
	assert_memory_equal(buf, src, sizeof(src));
	/* ...and may go away. */
	memset(buf, 'X', sizeof(src) - 1);
	free(buf);
	assert_string_equal(leaksnap_maps_mapping(maps, 0)->path, "/lib/copy.so");
	assert_string_equal(leaksnap_maps_module(maps, 0)->path, "/lib/copy.so");
	leaksnap_maps_free(maps);
}

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

#define GOOD1 "1000-2000 r-xp 00000000 08:01 10 /a\n"
#define GOOD2 "2000-3000 r--p 00001000 08:01 10 /a\n"

struct bad_case {
	const char *text;
	unsigned long first_line;
	unsigned long line;
	const char *msg;
};

static const struct bad_case bad_cases[] = {
	{ "MAP_DATA\n", 1, 1, "malformed maps line: bad address range" },
	{ GOOD1 GOOD2 "MAP_DATA\n", 10, 12, "malformed maps line: bad address range" },
	{ GOOD1 "\n" GOOD2 "END\n", 1, 4, "malformed maps line: bad address range" },
	{ GOOD1 GOOD2 "3000-4000 rwzp 0 0:0 0\n", 10, 12,
	  "malformed maps line: bad permissions 'rwzp'" },
	{ "1000-2000 r-x 0 0:0 0\n", 1, 1, "malformed maps line: bad permissions 'r-x'" },
	{ "1000-2000 r-xpp 0 0:0 0\n", 1, 1, "malformed maps line: bad permissions 'r-xpp'" },
	{ "1000-2000 xr-p 0 0:0 0\n", 1, 1, "malformed maps line: bad permissions 'xr-p'" },
	{ "1000-2000 r-xq 0 0:0 0\n", 1, 1, "malformed maps line: bad permissions 'r-xq'" },
	{ "1000-2000\n", 1, 1, "malformed maps line: missing permissions" },
	{ "1000-2000   \n", 1, 1, "malformed maps line: missing permissions" },
	{ "1000-1000 r-xp 0 0:0 0\n", 5, 5,
	  "malformed maps line: start address not below end address" },

	{ GOOD1 "3000-2000 r-xp 0 0:0 0\n", 1, 2,
	  "malformed maps line: start address not below end address" },
	/* overlap and out of order */
	{ GOOD1 "1800-2800 r-xp 0 0:0 0\n", 1, 2,
	  "mapping starts below the end of the previous one (line 1)" },
	{ GOOD1 GOOD2 "\n0800-0900 r-xp 0 0:0 0\n", 10, 13,
	  "mapping starts below the end of the previous one (line 11)" },
	{ GOOD1 GOOD1, 1, 2, "mapping starts below the end of the previous one (line 1)" },
	/* address syntax */
	{ "10000000000000000-10000000000000001 r-xp 0 0:0 0\n", 1, 1,
	  "malformed maps line: bad address range" },
	{ "1000-10000000000000000 r-xp 0 0:0 0\n", 1, 1,
	  "malformed maps line: bad address range" },
	{ "1000 -2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "1000- 2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "1000:2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "g000-2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "0x1000-0x2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "1000-2000r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "-2000 r-xp 0 0:0 0\n", 1, 1, "malformed maps line: bad address range" },
	{ "-\n", 1, 1, "malformed maps line: bad address range" },
	/* offset */
	{ "1000-2000 r-xp 10000000000000000 0:0 0\n", 1, 1, "malformed maps line: bad offset" },
	{ "1000-2000 r-xp 00z0 0:0 0\n", 1, 1, "malformed maps line: bad offset" },
	{ "1000-2000 r-xp\n", 1, 1, "malformed maps line: missing offset" },
	/* device */
	{ "1000-2000 r-xp 0\n", 1, 1, "malformed maps line: missing device" },
	{ "1000-2000 r-xp 0 fd01 0\n", 1, 1, "malformed maps line: bad device" },
	{ "1000-2000 r-xp 0 fd: 0\n", 1, 1, "malformed maps line: bad device" },
	{ "1000-2000 r-xp 0 :01 0\n", 1, 1, "malformed maps line: bad device" },
	{ "1000-2000 r-xp 0 fd:0g 0\n", 1, 1, "malformed maps line: bad device" },
	{ "1000-2000 r-xp 0 100000000:0 0\n", 1, 1, "malformed maps line: bad device" },
	{ "1000-2000 r-xp 0 0:100000000 0\n", 1, 1, "malformed maps line: bad device" },
	/* inode */
	{ "1000-2000 r-xp 00000000 fd:01\n", 1, 1, "malformed maps line: missing inode" },
	{ "1000-2000 r-xp 00000000 fd:01    \n", 1, 1, "malformed maps line: missing inode" },
	{ "1000-2000 r-xp 00000000 fd:01 /lib/x.so\n", 1, 1, "malformed maps line: bad inode" },
	{ "1000-2000 r-xp 00000000 fd:01 12a4 /x\n", 1, 1, "malformed maps line: bad inode" },
	{ "1000-2000 r-xp 00000000 fd:01 12/x\n", 1, 1, "malformed maps line: bad inode" },
	{ "1000-2000 r-xp 0 0:0 18446744073709551616 /x\n", 1, 1,
	  "malformed maps line: bad inode" },
	{ "1000-2000 r-xp 0 0:0 -1 /x\n", 1, 1, "malformed maps line: bad inode" },
	/* first error wins */
	{ GOOD1 "bad\nworse\n", 7, 8, "malformed maps line: bad address range" },
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < COUNT(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		expect_error(c->text, strlen(c->text), c->first_line, c->line, c->msg);
	}
}

static void test_error_offsets(void **state)
{
	(void)state;
	static const char text[] = GOOD1 GOOD2 "\nbroken line\n";
	struct leaksnap_error err;
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, sizeof(text) - 1, "big.txt", 100,
							 5000, &err);
	assert_null(maps);
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.source, "big.txt");
	assert_int_equal(err.line, 103);
	assert_true(err.has_offset);
	assert_int_equal(err.offset, 5000 + strlen(GOOD1 GOOD2 "\n"));

	char buf[256];
	leaksnap_error_format(&err, buf, sizeof(buf));
	assert_string_equal(buf, "big.txt: line 103: malformed maps line: bad address range");
}

static void test_nul_byte(void **state)
{
	(void)state;
	static const char text[] = GOOD1 "2000-3000 r--p 0 0:0 0 /l\0ib.so\n";
	expect_error(text, sizeof(text) - 1, 1, 2, "nul byte in maps text");
	expect_error(text, sizeof(text) - 1, 20, 21, "nul byte in maps text");

	struct leaksnap_error err;
	assert_null(leaksnap_maps_parse(text, sizeof(text) - 1, "n", 1, 1000, &err));
	assert_true(err.has_offset);
	assert_int_equal(err.offset, 1000 + strlen(GOOD1) + 25);

	/* A NUL anywhere, also where it would end a field or in a blank
	 * line, or in the last line. */
	static const char t2[] = "\0";
	expect_error(t2, 1, 1, 1, "nul byte in maps text");
	static const char t3[] = "\n \0 \n";
	expect_error(t3, sizeof(t3) - 1, 1, 2, "nul byte in maps text");
	static const char t4[] = GOOD1 GOOD2 "\0";
	expect_error(t4, sizeof(t4) - 1, 1, 3, "nul byte in maps text");

	/* An earlier malformed line is reported first. */
	static const char t5[] = "junk\n" GOOD1 "\0\n";
	expect_error(t5, sizeof(t5) - 1, 1, 1, "malformed maps line: bad address range");
}

static void test_error_without_record(void **state)
{
	(void)state;
	/* @err may be NULL; failure is still NULL. */
	assert_null(leaksnap_maps_parse("MAP_DATA\n", 9, "x", 1, 0, NULL));

	struct leaksnap_error err;
	assert_null(leaksnap_maps_parse("MAP_DATA\n", 9, NULL, 1, 0, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.source, "");

	/* NULL text with a length is a usage error. */
	assert_null(leaksnap_maps_parse(NULL, 5, "x", 1, 0, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);

	/* first_line 0 is read as 1 (0 means "no line" in an error). */
	assert_null(leaksnap_maps_parse("junk", 4, "x", 0, 0, &err));
	assert_int_equal(err.line, 1);
}

/* ------------------------------------------------------------------------
 * Scale
 * ------------------------------------------------------------------------ */

#define BIG_COUNT 100000

/* Mapping i: start = 0x10000000 + i * 0x3000, one or two pages long, so
 * some neighbours touch and others leave a gap.  Every fifth mapping is
 * anonymous; the others belong to libraries of up to four mappings. */
static uint64_t big_start(size_t i)
{
	return 0x7f0000000000ull + (uint64_t)i * 0x3000;
}

static uint64_t big_end(size_t i)
{
	return big_start(i) + (i % 3 == 0 ? 0x3000 : 0x1000);
}

static void test_large(void **state)
{
	(void)state;
	size_t cap = (size_t)BIG_COUNT * 96, len = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	for (size_t i = 0; i < BIG_COUNT; i++) {
		int n;
		if (i % 5 == 4)
			n = snprintf(text + len, cap - len, "%llx-%llx rw-p 00000000 00:00 0\n",
				     (unsigned long long)big_start(i),
				     (unsigned long long)big_end(i));
		else
			n = snprintf(text + len, cap - len,
				     "%llx-%llx r-xp %08llx fd:01 %zu    /system/lib64/lib%zu.so\n",
				     (unsigned long long)big_start(i),
				     (unsigned long long)big_end(i),
				     (unsigned long long)(i % 5) * 0x1000, i / 5 + 1, i / 5);
		assert_true(n > 0 && (size_t)n < cap - len);
		len += (size_t)n;
	}

	struct leaksnap_error err;
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, len, "big", 1, 0, &err);
	free(text);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), BIG_COUNT);
	assert_int_equal(leaksnap_maps_module_count(maps), BIG_COUNT / 5);

	for (size_t i = 0; i < BIG_COUNT; i++) {
		const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(maps, i);
		assert_int_equal(m->start, big_start(i));
		assert_int_equal(m->end, big_end(i));
		assert_int_equal(m->line, i + 1);
		assert_ptr_equal(leaksnap_maps_lookup(maps, m->start), m);
		assert_ptr_equal(leaksnap_maps_lookup(maps, m->end - 1), m);
		assert_ptr_equal(leaksnap_maps_lookup(maps, m->start + (m->end - m->start) / 2), m);
		/* One past the end is the next mapping, or a gap. */
		const struct leaksnap_maps_mapping *after = leaksnap_maps_lookup(maps, m->end);
		if (i + 1 < BIG_COUNT && big_start(i + 1) == m->end)
			assert_ptr_equal(after, leaksnap_maps_mapping(maps, i + 1));
		else
			assert_null(after);

		struct leaksnap_maps_location loc;
		assert_true(leaksnap_maps_locate(maps, m->end - 1, &loc));
		assert_int_equal(loc.rel_pc, m->end - 1 - m->start + m->offset);
		if (i % 5 == 4) {
			assert_int_equal(m->module, LEAKSNAP_MAPS_NONE);
			assert_null(loc.module);
		} else {
			assert_int_equal(m->module, i / 5);
			assert_ptr_equal(loc.module, leaksnap_maps_module(maps, i / 5));
		}
	}
	for (size_t k = 0; k < BIG_COUNT / 5; k++) {
		const struct leaksnap_maps_module *mod = leaksnap_maps_module(maps, k);
		char want[64];
		snprintf(want, sizeof(want), "/system/lib64/lib%zu.so", k);
		assert_string_equal(mod->path, want);
		assert_int_equal(mod->first_mapping, k * 5);
		assert_int_equal(mod->mapping_count, 4);
		assert_int_equal(mod->start, big_start(k * 5));
		assert_int_equal(mod->end, big_end(k * 5 + 3));
	}
	assert_null(leaksnap_maps_lookup(maps, big_start(0) - 1));
	assert_null(leaksnap_maps_lookup(maps, big_end(BIG_COUNT - 1)));
	leaksnap_maps_free(maps);
}

/* Many blank lines parse to nothing and do not trip the capacity logic. */
static void test_many_blank_lines(void **state)
{
	(void)state;
	size_t len = 1000000;
	char *text = malloc(len + 64);
	assert_non_null(text);
	memset(text, '\n', len);
	memcpy(text + len, "1000-2000 r-xp 0 0:0 0 /z", 25);
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, len + 25, "blank", 1, 0, NULL);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 1);
	assert_int_equal(leaksnap_maps_mapping(maps, 0)->line, len + 1);
	leaksnap_maps_free(maps);

	/* Densest possible valid text: every line is the shortest one. */
	size_t n = 50000, pos = 0;
	char *dense = malloc(n * 40);
	assert_non_null(dense);
	for (size_t i = 0; i < n; i++)
		pos += (size_t)sprintf(dense + pos, "%zx-%zx ---p 0 0:0 0\n", i * 2, i * 2 + 1);
	maps = leaksnap_maps_parse(dense, pos, "dense", 1, 0, NULL);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), n);
	assert_ptr_equal(leaksnap_maps_lookup(maps, 2 * (n - 1)),
			 leaksnap_maps_mapping(maps, n - 1));
	leaksnap_maps_free(maps);
	/* The same without newline terminators where possible: "0-1 ---p 0 0:0 0". */
	maps = leaksnap_maps_parse("0-1 ---p 0 0:0 0\n1-2 ---p 0 0:0 0", 33, "min", 1, 0, NULL);
	assert_non_null(maps);
	assert_int_equal(leaksnap_maps_mapping_count(maps), 2);
	leaksnap_maps_free(maps);
	free(dense);
	free(text);
}

/* leaksnap_maps_add_unloaded: the mappings of dlclose()d libraries join where
 * nothing is mapped; code replaces anonymous or data mappings made at its
 * place since (split around it), never code; later lines win. */
static void test_add_unloaded(void **state)
{
	(void)state;
	struct leaksnap_maps *m = parse_ok("1000-2000 r-xp 00000000 08:01 10 /bin/app\n"
				  "5000-9000 rw-p 00000000 00:00 0 \n"
				  "9000-a000 r-xp 00000000 00:00 0 [anon:jit]\n"
				  "f000-10000 rw-p 00002000 08:01 30 /data/file\n");
	const char un[] =
		"3000-4000 r--p 00000000 08:01 20 /lib/libp.so\n"
		"4000-5000 r-xp 00001000 08:01 20 /lib/libp.so\n"
		"6000-7000 r-xp 00000000 08:01 21 /lib/libq.so\n"   /* under the next two */
		"6000-7000 r-xp 00001000 08:01 22 /lib/libold.so\n" /* where the next is not */
		"6800-7800 r-xp 00000000 08:01 23 /lib/libnew.so\n" /* the latest: whole */
		"9000-9800 r-xp 00000000 08:01 24 /lib/libjit.so\n" /* code there: no */
		"f000-f800 r--p 00000000 08:01 25 /lib/librd.so\n"  /* not code: no */
		"b000-c000 r--p 00000000 00:00 0 \n";		    /* no path: no */
	struct leaksnap_error err;
	size_t shadowed = 99;
	long n = leaksnap_maps_add_unloaded(m, un, strlen(un), "x.dump", &shadowed, &err);
	assert_int_equal(n, 4);
	assert_int_equal(shadowed, 1); /* libjit.so under the [anon:jit] code */
	const struct {
		uint64_t start, end, offset;
		const char *path;
		bool unloaded;
	} want[] = {
		{0x1000, 0x2000, 0, "/bin/app", false},
		{0x3000, 0x4000, 0, "/lib/libp.so", true},
		{0x4000, 0x5000, 0x1000, "/lib/libp.so", true},
		{0x5000, 0x6000, 0, NULL, false},
		{0x6000, 0x6800, 0x1000, "/lib/libold.so", true},
		{0x6800, 0x7800, 0, "/lib/libnew.so", true},
		{0x7800, 0x9000, 0, NULL, false},
		{0x9000, 0xa000, 0, "[anon:jit]", false},
		{0xf000, 0x10000, 0x2000, "/data/file", false},
	};
	assert_int_equal(leaksnap_maps_mapping_count(m), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct leaksnap_maps_mapping *x = leaksnap_maps_mapping(m, i);
		assert_int_equal(x->start, want[i].start);
		assert_int_equal(x->end, want[i].end);
		assert_int_equal(x->offset, want[i].offset);
		if (want[i].path)
			assert_string_equal(x->path, want[i].path);
		else
			assert_null(x->path);
		assert_int_equal(x->unloaded, want[i].unloaded);
	}
	/* libp.so's two lines are one module, and a PC in it lands there */
	assert_int_equal(leaksnap_maps_mapping(m, 1)->module, leaksnap_maps_mapping(m, 2)->module);
	struct leaksnap_maps_location loc;
	assert_true(leaksnap_maps_locate(m, 0x4010, &loc));
	assert_string_equal(loc.module->path, "/lib/libp.so");
	assert_int_equal(loc.rel_pc, 0x1010);
	assert_true(leaksnap_maps_locate(m, 0x6900, &loc));
	assert_string_equal(loc.module->path, "/lib/libnew.so");
	assert_true(leaksnap_maps_locate(m, 0x6010, &loc));
	assert_string_equal(loc.module->path, "/lib/libold.so");
	assert_int_equal(loc.rel_pc, 0x1010);
	/* once per object */
	assert_int_equal(leaksnap_maps_add_unloaded(m, un, strlen(un), "x.dump", NULL, &err), -1);
	leaksnap_maps_free(m);

	/* partly under loaded code: the rest of the line is kept */
	m = parse_ok("5000-6000 r-xp 00000000 08:01 10 /bin/app\n");
	const char part[] = "3000-6000 r-xp 00000000 08:01 20 /lib/libold.so\n"
			    "8000-a000 r-xp 00000000 08:01 21 /lib/liba.so\n"
			    "9000-b000 r-xp 00000000 08:01 22 /lib/libb.so\n";
	assert_int_equal(
		leaksnap_maps_add_unloaded(m, part, strlen(part), "x.dump", &shadowed, &err), 3);
	assert_int_equal(shadowed, 1); /* libold.so, partly under /bin/app */
	assert_true(leaksnap_maps_locate(m, 0x3100, &loc));
	assert_string_equal(loc.module->path, "/lib/libold.so");
	assert_true(leaksnap_maps_locate(m, 0x5100, &loc));
	assert_string_equal(loc.module->path, "/bin/app");
	assert_true(leaksnap_maps_locate(m, 0x8100, &loc));
	assert_string_equal(loc.module->path, "/lib/liba.so");
	assert_true(leaksnap_maps_locate(m, 0x9100, &loc));
	assert_string_equal(loc.module->path, "/lib/libb.so");
	leaksnap_maps_free(m);

	/* a malformed line: -1, its line number */
	m = parse_ok("1000-2000 r-xp 00000000 08:01 10 /bin/app\n");
	const char bad[] = "3000-4000 r-xp 00000000 08:01 20 /lib/a.so\nnot a line\n";
	assert_int_equal(leaksnap_maps_add_unloaded(m, bad, strlen(bad), "x.dump", NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_int_equal(err.line, 2);
	assert_int_equal(leaksnap_maps_mapping_count(m), 1);
	leaksnap_maps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64_full),
		cmocka_unit_test(test_x86_64_locate),
		cmocka_unit_test(test_android32),
		cmocka_unit_test(test_crlf),
		cmocka_unit_test(test_no_final_newline),
		cmocka_unit_test(test_blank_lines_and_tabs),
		cmocka_unit_test(test_paths_verbatim),
		cmocka_unit_test(test_hex_forms),
		cmocka_unit_test(test_upper_case_hex),
		cmocka_unit_test(test_modules_grouping),
		cmocka_unit_test(test_lookup_boundaries),
		cmocka_unit_test(test_null_and_empty),
		cmocka_unit_test(test_text_is_copied),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_error_offsets),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_error_without_record),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_many_blank_lines),
		cmocka_unit_test(test_add_unloaded),
	};
	return cmocka_run_group_tests_name("maps", tests, NULL, NULL);
}
