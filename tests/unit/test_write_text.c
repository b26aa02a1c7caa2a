/* Unit tests of leaksnap_snapshot_save_text (Android text v1.2 as bionic writes it)
 * and of the path rewrites both writers apply. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/snapshot.h>

static char dir[] = "/tmp/leaksnap-unit-text.XXXXXX";

static int make_dir(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_in_dir(const char *name)
{
	static char buf[4][256];
	static unsigned next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

/* The whole of @path as a NUL-terminated string (tests' files are small). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static size_t entries_in_dir(void)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	unsigned long n = 0;
	assert_int_equal(fscanf(p, "%lu", &n), 1);
	pclose(p);
	return n;
}

static struct leaksnap_snapshot *open_text(const char *text)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(text, strlen(text), "in.txt",
								    NULL, &err);
	if (s == NULL)
		fail_msg("%s", err.text);
	return s;
}

/* What the writer said it left out. */
struct said {
	char lines[8][512];
	size_t n;
};

static void collect(void *ctx, const char *what)
{
	struct said *s = ctx;
	assert_true(s->n < 8);
	snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%s", what);
}

/* Out of bionic's order, with duplicates, an Android 7 free v1.1 header,
 * a size wider than %8, and counts of several digits. */
static const char unsorted[] =
	"Android Native Heap Dump v1.1\n\n"
	"Build fingerprint: 'acme/x/x:9/P/1:user/release-keys'\n\n"
	"Total memory: 123459077\n"
	"Allocation records: 7\n"
	"Backtrace size: 3\n\n"
	"z 1  sz       16  num        3  bt 0000f100\n"
	"z 0  sz       16  num        1  bt 0000a100 0000a200\n"
	"z 0  sz       16  num        2  bt\n"
	"z 0  sz 123456789  num        1  bt 0000a300\n"
	"z 0  sz       16  num       12  bt 0000a100 0000a200\n"
	"z 0  sz       16  num      100  bt 0000b100 0000b200 0000b300\n"
	"z 1  sz      400  num        1  bt 0000f200 0000f300\n"
	"MAPS\n"
	"0000a000-0000c000 r-xp 00000000 b3:17 12 /system/lib/libx.so\n"
	"END\n";

static void test_exact_bytes_and_order(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_text(unsorted);
	struct leaksnap_error err;
	struct said said = {.n = 0};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, o, .dropped = collect, .dropped_ctx = &said);
	const char *out = path_in_dir("exact.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &o, &err), 0);
	assert_string_equal(slurp(out),
			    "Android Native Heap Dump v1.2\n\n"
			    "Build fingerprint: 'acme/x/x:9/P/1:user/release-keys'\n\n"
			    "Total memory: 123459077\n"
			    "Allocation records: 6\n"
			    "Backtrace size: 3\n\n"
			    "z 0  sz 123456789  num    1  bt a300\n"
			    "z 0  sz       16  num    100  bt b100 b200 b300\n"
			    "z 0  sz       16  num    13  bt a100 a200\n"
			    "z 0  sz       16  num    2  bt\n"
			    "z 1  sz      400  num    1  bt f200 f300\n"
			    "z 1  sz       16  num    3  bt f100\n"
			    "MAPS\n"
			    "0000a000-0000c000 r-xp 00000000 b3:17 12 /system/lib/libx.so\n"
			    "END\n");
	assert_int_equal(said.n, 0); /* a text input loses nothing */
	/* Published under its name only, nothing left beside it. */
	assert_int_equal(entries_in_dir(), 1);
	unlink(out);
	leaksnap_snapshot_close(s);
}

/* Equal (zygote, size, frame count): the snapshot's order is kept. */
static void test_ties_keep_snapshot_order(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_text("Android Native Heap Dump v1.2\n\n"
				       "z 0  sz 8  num 1  bt 3 1\n"
				       "z 0  sz 8  num 1  bt 1 2\n"
				       "z 0  sz 8  num 1  bt 2 9\n"
				       "MAPS\nEND\n");
	struct leaksnap_error err;
	const char *out = path_in_dir("ties.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, NULL, &err), 0);
	assert_string_equal(strstr(slurp(out), "z "), "z 0  sz        8  num    1  bt 3 1\n"
						     "z 0  sz        8  num    1  bt 1 2\n"
						     "z 0  sz        8  num    1  bt 2 9\n"
						     "MAPS\nEND\n");
	unlink(out);
	leaksnap_snapshot_close(s);
}

/* A LEAKSNAP snapshot made in memory: 8-byte pointers, pid, time, three
 * records, @maps and @meta. */
static struct leaksnap_snapshot *open_leaksnap(const char *maps, const char *meta)
{
	static uint8_t buf[2048];
	static const uint64_t recs[][5] = {
		/* size (bit 31: zygote), count, 3 frames */
		{64, 2, 0x1000, 0x2000, 0},
		{32 | (1ull << 31), 1, 0x1010, 0, 0},
		{4096, 7, 0x2000, 0x1000, 0x1010},
	};
	struct leaksnap_snapshot_header h = {
		.version = 1,
		.pointer_size = 8,
		.backtrace_size = 3,
		.pid = 777,
		.meta_size = (uint32_t)strlen(meta),
		.time_ns = 1700000000000000000ull,
		.total_memory = 64 * 2 + 32 + 4096 * 7,
		.info_size = 8 * 5,
		.records_size = sizeof(recs),
		.maps_size = strlen(maps),
	};
	leaksnap_snapshot_header_encode(&h, buf);
	size_t n = LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	for (size_t r = 0; r < 3; r++)
		for (size_t f = 0; f < 5; f++)
			for (unsigned b = 0; b < 8; b++)
				buf[n++] = (uint8_t)(recs[r][f] >> (8 * b));
	memcpy(buf + n, maps, strlen(maps));
	n += strlen(maps);
	memcpy(buf + n, meta, strlen(meta));
	n += strlen(meta);
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(buf, n, "in.dump", NULL, &err);
	if (s == NULL)
		fail_msg("%s", err.text);
	return s;
}

static const char small_maps[] =
	"00001000-00003000 r-xp 00000000 fd:01 5 /system/lib64/liba.so\n";

static void test_leaksnap_reads_back_and_losses_said(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_leaksnap(small_maps,
					   "abi=arm64\nbuild_id=00ff /system/lib64/liba.so\n"
					   "build_id=0102 /system/bin/app\nexe=/system/bin/app\n");
	struct leaksnap_error err;
	struct said said = {.n = 0};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, o, .dropped = collect, .dropped_ctx = &said);
	const char *out = path_in_dir("from-leaksnap.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &o, &err), 0);
	assert_int_equal(said.n, 4);
	assert_string_equal(said.lines[0],
			    "the pid (777) is not written: the text format has no place for it");
	assert_string_equal(said.lines[1], "the capture time is not written: the text format "
					   "has no place for it");
	assert_string_equal(said.lines[2], "4 metadata lines are not written: the text format "
					   "keeps only the build fingerprint (abi, build_id, exe)");
	assert_string_equal(said.lines[3], "pointer size 8 is not carried: no PC or maps address "
					   "is above 4 GiB, so the text reads back as 4-byte "
					   "pointers");
	assert_string_equal(slurp(out),
			    "Android Native Heap Dump v1.2\n\n"
			    "Build fingerprint: 'unknown'\n\n"
			    "Total memory: 28832\n"
			    "Allocation records: 3\n"
			    "Backtrace size: 3\n\n"
			    "z 0  sz     4096  num    7  bt 2000 1000 1010\n"
			    "z 0  sz       64  num    2  bt 1000 2000\n"
			    "z 1  sz       32  num    1  bt 1010\n"
			    "MAPS\n"
			    "00001000-00003000 r-xp 00000000 fd:01 5 /system/lib64/liba.so\n"
			    "END\n");

	/* Read back: the same records, maps and sizes. */
	struct leaksnap_snapshot *r = leaksnap_snapshot_open(out, NULL, &err);
	assert_non_null(r);
	assert_int_equal(leaksnap_snapshot_record_count(r), 3);
	assert_int_equal(leaksnap_snapshot_backtrace_size(r), 3);
	assert_int_equal(leaksnap_snapshot_pointer_size(r), 4); /* as said */
	assert_int_equal(leaksnap_snapshot_records_bytes(r), leaksnap_snapshot_records_bytes(s));
	assert_int_equal(leaksnap_snapshot_allocation_count(r),
			 leaksnap_snapshot_allocation_count(s));
	for (size_t i = 0; i < 3; i++) {
		const struct leaksnap_snapshot_record *a = leaksnap_snapshot_record(s, i);
		bool found = false;
		for (size_t j = 0; j < 3 && !found; j++) {
			const struct leaksnap_snapshot_record *b = leaksnap_snapshot_record(r, j);
			found = a->size == b->size && a->count == b->count &&
				a->zygote == b->zygote && a->frame_count == b->frame_count &&
				memcmp(a->frames, b->frames, a->frame_count * 8) == 0;
		}
		assert_true(found);
	}
	size_t la, lb;
	const char *ma = leaksnap_snapshot_maps(s, &la, NULL, NULL),
		   *mb = leaksnap_snapshot_maps(r, &lb, NULL, NULL);
	assert_int_equal(la, lb);
	assert_memory_equal(ma, mb, la);
	assert_string_equal(leaksnap_snapshot_meta_get(r, "build_fingerprint"), "unknown");
	leaksnap_snapshot_close(r);
	unlink(out);
	leaksnap_snapshot_close(s);
}

/* Only the first fingerprint is written; a second one is said to be left
 * out, and so is every other key (each named once, however many lines). */
static void test_second_fingerprint_said(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_leaksnap(small_maps,
					   "build_fingerprint=fp'x\nabi=arm64\nabi=arm\n"
					   "build_fingerprint=second\n");
	struct leaksnap_error err;
	struct said said = {.n = 0};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, o, .dropped = collect, .dropped_ctx = &said);
	const char *out = path_in_dir("two-fingerprints.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &o, &err), 0);
	assert_int_equal(said.n, 4);
	assert_string_equal(said.lines[2], "3 metadata lines are not written: the text format "
					   "keeps only the build fingerprint (abi, "
					   "build_fingerprint)");
	char *text = slurp(out);
	assert_non_null(strstr(text, "Build fingerprint: 'fp'x'\n"));
	assert_null(strstr(text, "second"));
	assert_int_equal(unlink(out), 0);
	leaksnap_snapshot_close(s);
}

static void test_refusals(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_text(unsorted);
	struct leaksnap_error err;
	const char *out = path_in_dir("refused.txt");
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, be, .big_endian = true);
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, ptr, .pointer_size = 8);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &be, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &ptr, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);

	/* Maps the text cannot carry: a line "END" (also with CR), a NUL. */
	static const char end_line[] = "0000a000-0000c000 r-xp 00000000 b3:17 12 /x\nEND\r\n";
	assert_int_equal(leaksnap_snapshot_set_maps(s, end_line, strlen(end_line), &err), 0);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.text,
			    "maps line 2 reads 'END': in a text dump it would end the maps");
	static const char nul[] = "0000a000-0000c000 r-xp 00000000 b3:17 12 /x\0y\n";
	assert_int_equal(leaksnap_snapshot_set_maps(s, nul, sizeof(nul) - 1, &err), 0);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.text, "the maps hold a NUL byte: a text dump cannot carry it");
	assert_int_equal(entries_in_dir(), 0);

	/* Maps without a final newline get one before END. */
	static const char no_nl[] = "0000a000-0000c000 r-xp 00000000 b3:17 12 /x";
	assert_int_equal(leaksnap_snapshot_set_maps(s, no_nl, strlen(no_nl), &err), 0);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, NULL, &err), 0);
	assert_non_null(
		strstr(slurp(out), "MAPS\n0000a000-0000c000 r-xp 00000000 b3:17 12 /x\nEND\n"));

	/* Never overwrite: the file just written, or a symlink. */
	struct stat before, after;
	assert_int_equal(stat(out, &before), 0);
	assert_int_equal(leaksnap_snapshot_save_text(s, out, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_EXISTS);
	assert_int_equal(stat(out, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_size, after.st_size);
	const char *link_path = path_in_dir("link.txt");
	assert_int_equal(symlink(path_in_dir("victim"), link_path), 0);
	assert_int_equal(leaksnap_snapshot_save_text(s, link_path, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_EXISTS);
	assert_int_equal(access(path_in_dir("victim"), F_OK), -1);
	assert_int_equal(entries_in_dir(), 2);
	unlink(out);
	unlink(link_path);
	leaksnap_snapshot_close(s);
}

/* No "Backtrace size:" and no frames: B is 0, written as 1 and said. */
static void test_backtrace_size_zero(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_text(
		"Android Native Heap Dump v1.0\n\nz 0  sz 8  num 1  bt\n"
		"MAPS\nEND\n");
	assert_int_equal(leaksnap_snapshot_backtrace_size(s), 0);
	struct leaksnap_error err;
	struct said said = {.n = 0};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, o, .dropped = collect, .dropped_ctx = &said);
	const char *out = path_in_dir("bt0.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &o, &err), 0);
	assert_non_null(strstr(slurp(out), "\nBacktrace size: 1\n"));
	assert_int_equal(said.n, 1);
	assert_string_equal(said.lines[0],
			    "backtrace size 0 is written as 1, the smallest a text dump states");
	unlink(out);
	leaksnap_snapshot_close(s);
}

static const char rewrite_maps[] =
	"00001000-00002000 r-xp 00000000 fd:01 5                          /system/lib64/liba.so\r\n"
	"00002000-00003000 r-xp 00000000 fd:01 6 /system/lib/libb.so (deleted)\n"
	"00003000-00004000 rw-p 00000000 00:00 0 \n"
	"00004000-00005000 r-xp 00000000 fd:01 7 /system/bin/app\n"
	"00005000-00006000 r-xp 00000000 fd:01 8 /vendor/lib64/libc.so";

static void test_rewrite_both_writers(void **state)
{
	(void)state;
	struct leaksnap_snapshot *s = open_leaksnap(
		rewrite_maps, "build_id=00ff /system/lib64/liba.so\nexe=/system/bin/app\n"
			      "cmdline=/system/bin/app -x\n");
	struct leaksnap_error err;
	struct leaksnap_snapshot_rewrite rules[] = {
		{"/system/lib", "/sym/lib", 99},          /* plain prefix: lib64 too */
		{"/system/lib64/", "/never/", 99},       /* shadowed by the first */
		{"/system/", "/", 99},
		{"/nowhere/", "/x/", 99},
	};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, o, .rewrites = rules, .rewrite_count = 4);
	const char *out = path_in_dir("rw.dump");
	assert_int_equal(leaksnap_snapshot_save(s, out, &o, &err), 0);
	/* maps: liba, libb; app + exe; build_id: liba. */
	assert_int_equal(rules[0].matched, 3);
	assert_int_equal(rules[1].matched, 0);
	assert_int_equal(rules[2].matched, 2);
	assert_int_equal(rules[3].matched, 0);
	struct leaksnap_snapshot *r = leaksnap_snapshot_open(out, NULL, &err);
	assert_non_null(r);
	static const char want[] =
		"00001000-00002000 r-xp 00000000 fd:01 5                          "
		"/sym/lib64/liba.so\r\n"
		"00002000-00003000 r-xp 00000000 fd:01 6 /sym/lib/libb.so (deleted)\n"
		"00003000-00004000 rw-p 00000000 00:00 0 \n"
		"00004000-00005000 r-xp 00000000 fd:01 7 /bin/app\n"
		"00005000-00006000 r-xp 00000000 fd:01 8 /vendor/lib64/libc.so";
	size_t len;
	const char *m = leaksnap_snapshot_maps(r, &len, NULL, NULL);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(m, want, len);
	assert_string_equal(leaksnap_snapshot_meta_get(r, "build_id"), "00ff /sym/lib64/liba.so");
	assert_string_equal(leaksnap_snapshot_meta_get(r, "exe"), "/bin/app");
	assert_string_equal(leaksnap_snapshot_meta_get(r, "cmdline"), "/system/bin/app -x");
	uint8_t id[4];
	assert_int_equal(leaksnap_snapshot_build_id(r, "/sym/lib64/liba.so", id, sizeof(id)), 2);
	leaksnap_snapshot_close(r);
	unlink(out);

	/* The text writer rewrites the maps (its only paths) the same way. */
	out = path_in_dir("rw.txt");
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &o, &err), 0);
	assert_int_equal(rules[0].matched, 2);
	assert_int_equal(rules[2].matched, 1);
	assert_non_null(strstr(slurp(out), "fd:01 7 /bin/app\n"));
	unlink(out);

	/* Bad rules and a rewrite that empties a path: nothing is written. */
	struct leaksnap_snapshot_rewrite empty_old = {"", "/x/", 0}, line_break = {"/a", "/b\n", 0},
				empties = {"/system/bin/app", "", 0};
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, bad, .rewrites = &empty_old, .rewrite_count = 1);
	assert_int_equal(leaksnap_snapshot_save(s, out, &bad, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	bad.rewrites = &line_break;
	assert_int_equal(leaksnap_snapshot_save_text(s, out, &bad, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	bad.rewrites = &empties;
	assert_int_equal(leaksnap_snapshot_save(s, out, &bad, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(
		err.text,
		"rewriting '/system/bin/app' would leave the path of maps line 4 empty or "
		"starting with a blank");
	assert_int_equal(entries_in_dir(), 0);
	leaksnap_snapshot_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_bytes_and_order),
		cmocka_unit_test(test_ties_keep_snapshot_order),
		cmocka_unit_test(test_leaksnap_reads_back_and_losses_said),
		cmocka_unit_test(test_second_fingerprint_said),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_backtrace_size_zero),
		cmocka_unit_test(test_rewrite_both_writers),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
