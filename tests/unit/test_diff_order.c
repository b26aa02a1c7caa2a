/* Unit tests for diff/order.c: the snapshots of one run are compared in
 * capture order whatever order they were added in (a shell glob's 1, 10,
 * 11, 12, 2, ...), those of other runs keep their places, keep_order keeps
 * everything as added; how runs, dump numbers and exit or crash dumps are
 * told. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/diff.h>

#define T0 1700000000000000000ull

/* One snapshot to make: a LEAKSNAP v1 dump (8-byte pointers, 2 frames)
 * of pid @pid taken at T0 + @t seconds (@t 0: no time), with the program
 * /bin/prog loaded at @base, and one record of 1024 x @count allocated
 * from it. */
struct snap {
	const char *name;
	uint32_t pid;
	uint64_t t;
	uint64_t base;
	uint64_t count;
	const char *trigger; /* NULL: numbered (trigger=api) */
	const char *start;   /* process_start=, or NULL: none */
};

static uint8_t *make_dump(const struct snap *s, size_t *len)
{
	char maps[256], meta[256];
	snprintf(maps, sizeof(maps),
		 "%llx-%llx r-xp 00000000 fd:01 42 /bin/prog\n"
		 "7f0000000000-7f0000100000 r-xp 00000000 fd:01 43 /lib/libc.so.6\n",
		 (unsigned long long)s->base, (unsigned long long)s->base + 0x10000);
	snprintf(meta, sizeof(meta), "exe=/bin/prog\n%s%s%strigger=%s\n",
		 s->start ? "process_start=" : "", s->start ? s->start : "", s->start ? "\n" : "",
		 s->trigger ? s->trigger : "api");
	size_t info = 8 * (2 + 2), ml = strlen(maps), tl = strlen(meta);
	*len = LEAKSNAP_SNAPSHOT_HEADER_SIZE + info + ml + tl;
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	struct leaksnap_snapshot_header h = {
		.version = 1, .pointer_size = 8, .backtrace_size = 2, .pid = s->pid,
		.meta_size = (uint32_t)tl, .time_ns = s->t ? T0 + s->t * 1000000000ull : 0,
		.total_memory = 1024 * s->count, .info_size = info, .records_size = info,
		.maps_size = ml};
	leaksnap_snapshot_header_encode(&h, buf);
	uint64_t v[4] = {1024, s->count, s->base + 0x1234, 0x7f0000001234};
	uint8_t *p = buf + LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	for (int k = 0; k < 4; k++)
		for (int b = 0; b < 8; b++)
			p[8 * k + b] = (uint8_t)(v[k] >> (8 * b));
	memcpy(p + info, maps, ml);
	memcpy(p + info + ml, meta, tl);
	return buf;
}

/* A ranked diff of @n snapshots added in the order of @s. */
static struct leaksnap_diff *diff_of(const struct snap *s, size_t n, bool keep_order)
{
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .keep_order = keep_order);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, n, &err);
	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		size_t len, ml;
		unsigned long line;
		uint64_t off;
		uint8_t *buf = make_dump(&s[i], &len);
		struct leaksnap_snapshot *snap = leaksnap_snapshot_open_memory(buf, len, s[i].name,
									       NULL, &err);
		if (!snap)
			fail_msg("%s: %s", s[i].name, err.text);
		const char *text = leaksnap_snapshot_maps(snap, &ml, &line, &off);
		struct leaksnap_maps *m = leaksnap_maps_parse(text, ml, "maps", line, off, &err);
		assert_non_null(m);
		if (leaksnap_diff_add_snapshot(d, snap, m, &err) != 0)
			fail_msg("add %s: %s", s[i].name, err.text);
		leaksnap_maps_free(m);
		leaksnap_snapshot_close(snap);
		free(buf);
	}
	if (leaksnap_diff_rank(d, &err) != 0)
		fail_msg("rank: %s", err.text);
	return d;
}

/* The files of @d in its order, one line. */
static void expect_files(struct leaksnap_diff *d, const char *want)
{
	char got[1024] = "";
	for (size_t i = 0; i < leaksnap_diff_snapshot_count(d); i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
			 leaksnap_diff_snapshot(d, i)->file);
	assert_string_equal(got, want);
}

/* The 12 numbered dumps of pid 100 and its exit dump, in glob order. */
static const char *const glob_names[] = {"m.100.1.dump", "m.100.10.dump", "m.100.11.dump",
					 "m.100.12.dump", "m.100.2.dump", "m.100.3.dump",
					 "m.100.4.dump", "m.100.5.dump", "m.100.6.dump",
					 "m.100.7.dump", "m.100.8.dump", "m.100.9.dump",
					 "m.100.exit.dump"};
static const uint64_t glob_seq[] = {1, 10, 11, 12, 2, 3, 4, 5, 6, 7, 8, 9, 13};

static void glob_series(struct snap *s)
{
	for (size_t i = 0; i < 13; i++)
		s[i] = (struct snap){glob_names[i], 100, glob_seq[i], 0x555555550000, glob_seq[i],
				     i == 12 ? "exit" : NULL, NULL};
}

static void test_glob_order(void **state)
{
	(void)state;
	struct snap s[13];
	glob_series(s);
	struct leaksnap_diff *d = diff_of(s, 13, false);
	expect_files(d, "m.100.1.dump m.100.2.dump m.100.3.dump m.100.4.dump m.100.5.dump "
			"m.100.6.dump m.100.7.dump m.100.8.dump m.100.9.dump m.100.10.dump "
			"m.100.11.dump m.100.12.dump m.100.exit.dump");
	static const size_t given[] = {0, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2, 3, 12};
	for (size_t i = 0; i < 13; i++) {
		const struct leaksnap_diff_snapshot *x = leaksnap_diff_snapshot(d, i);
		assert_int_equal(x->given, given[i]);
		assert_int_equal(x->run, 0);
		assert_int_equal(x->seq, i < 12 ? i + 1 : 0);
		assert_int_equal(x->ends_run, i == 12);
		assert_int_equal(x->exit_dump, i == 12);
		assert_false(x->crash_dump);
		assert_int_equal(x->bytes, 1024 * (i + 1));
	}
	/* the record grew in every interval: a steady suspect */
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_int_equal(g->trend, LEAKSNAP_DIFF_TREND_STEADY);
	assert_int_equal(g->grew, 12);
	assert_int_equal(g->shrank, 0);
	for (size_t i = 0; i < 13; i++)
		assert_int_equal(g->bytes[i], 1024 * (i + 1));
	assert_int_equal(g->bytes_delta, 12 * 1024);
	leaksnap_diff_free(d);
}

static void test_keep_order(void **state)
{
	(void)state;
	struct snap s[13];
	glob_series(s);
	struct leaksnap_diff *d = diff_of(s, 13, true);
	for (size_t i = 0; i < 13; i++) {
		const struct leaksnap_diff_snapshot *x = leaksnap_diff_snapshot(d, i);
		assert_string_equal(x->file, glob_names[i]);
		assert_int_equal(x->given, i);
		assert_int_equal(x->run, 0); /* the run is told all the same */
	}
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_non_null(g);
	assert_int_equal(g->bytes[1], 10 * 1024);
	assert_int_equal(g->bytes[4], 2 * 1024);
	assert_int_equal(g->shrank, 1);
	assert_int_not_equal(g->trend, LEAKSNAP_DIFF_TREND_STEADY);
	leaksnap_diff_free(d);
}

/* Two runs interleaved: each is sorted in the places it holds.  A third
 * process with run A's pid but the program elsewhere (a pid reused by a
 * later run) is a run of its own, as are snapshots with no time. */
static void test_runs(void **state)
{
	(void)state;
	const struct snap s[] = {
		{"a.100.3.dump", 100, 30, 0x555555550000, 3, NULL, NULL},
		{"b.200.2.dump", 200, 12, 0x566666660000, 2, NULL, NULL},
		{"c.100.2.dump", 100, 99, 0x577777770000, 2, NULL, NULL},
		{"a.100.1.dump", 100, 10, 0x555555550000, 1, NULL, NULL},
		{"notime.dump", 100, 0, 0x555555550000, 1, NULL, NULL},
		{"b.200.1.dump", 200, 11, 0x566666660000, 1, NULL, NULL},
		{"c.100.1.dump", 100, 98, 0x577777770000, 1, NULL, NULL},
	};
	struct leaksnap_diff *d = diff_of(s, 7, false);
	expect_files(d, "a.100.1.dump b.200.1.dump c.100.1.dump a.100.3.dump notime.dump "
			"b.200.2.dump c.100.2.dump");
	static const size_t run[] = {0, 1, 2, 0, SIZE_MAX, 1, 2};
	static const size_t given[] = {3, 5, 6, 0, 4, 1, 2};
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(leaksnap_diff_snapshot(d, i)->run, run[i]);
		assert_int_equal(leaksnap_diff_snapshot(d, i)->given, given[i]);
	}
	leaksnap_diff_free(d);
	/* runs given newest first stay so */
	const struct snap two[] = {
		{"b.200.1.dump", 200, 50, 0x566666660000, 1, NULL, NULL},
		{"a.100.1.dump", 100, 10, 0x555555550000, 2, NULL, NULL},
	};
	d = diff_of(two, 2, false);
	expect_files(d, "b.200.1.dump a.100.1.dump");
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->run, 1);
	leaksnap_diff_free(d);
}

/* The hook's process_start= tells runs apart where the load address
 * cannot (address-space randomization off: every run at one address):
 * two runs of pid 100 stay as given, each sorted in its places; and a
 * process_start makes one run of snapshots whatever their load address. */
static void test_process_start(void **state)
{
	(void)state;
	const char *r1 = "0f1e2d3c-0000-4000-8000-000000000001 1000",
		   *r2 = "0f1e2d3c-0000-4000-8000-000000000001 5000";
	const struct snap s[] = {
		{"m.100.2.dump", 100, 20, 0x555555550000, 2, NULL, r2},
		{"m.100.2.dump", 100, 12, 0x555555550000, 2, NULL, r1},
		{"m.100.1.dump", 100, 11, 0x555555550000, 1, NULL, r1},
		{"m.100.1.dump", 100, 19, 0x555555550000, 1, NULL, r2},
	};
	struct leaksnap_diff *d = diff_of(s, 4, false);
	static const size_t run[] = {0, 1, 1, 0};
	static const size_t given[] = {3, 2, 1, 0};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(leaksnap_diff_snapshot(d, i)->run, run[i]);
		assert_int_equal(leaksnap_diff_snapshot(d, i)->given, given[i]);
	}
	leaksnap_diff_free(d);
	const struct snap moved[] = {
		{"m.100.2.dump", 100, 20, 0x555555550000, 2, NULL, r1},
		{"m.100.1.dump", 100, 10, 0x566666660000, 1, NULL, r1},
	};
	d = diff_of(moved, 2, false);
	expect_files(d, "m.100.1.dump m.100.2.dump");
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->run, 0);
	leaksnap_diff_free(d);
}

/* Names: zero-padded numbers, another pid's number (not ours: no number),
 * a crash dump, a path with dots; equal times go by dump number. */
static void test_names(void **state)
{
	(void)state;
	const struct snap s[] = {
		{"/tmp/x.y/m.100.crash.dump", 100, 40, 0x555555550000, 4, NULL, NULL},
		{"/tmp/x.y/m.100.0010.dump", 100, 20, 0x555555550000, 3, NULL, NULL},
		{"/tmp/x.y/m.100.0009.dump", 100, 20, 0x555555550000, 2, NULL, NULL},
		{"/tmp/x.y/m.999.3.dump", 100, 5, 0x555555550000, 1, NULL, NULL},
		{"/tmp/x.y/m.100.exit.dump", 100, 40, 0x555555550000, 5, "exit", NULL},
		{"/tmp/x.y/m.100.0008.dump", 100, 40, 0x555555550000, 5, "crash", NULL},
	};
	struct leaksnap_diff *d = diff_of(s, 6, false);
	expect_files(d, "/tmp/x.y/m.999.3.dump /tmp/x.y/m.100.0009.dump /tmp/x.y/m.100.0010.dump "
			"/tmp/x.y/m.100.crash.dump /tmp/x.y/m.100.exit.dump /tmp/x.y/m.100.0008.dump");
	static const uint64_t seq[] = {0, 9, 10, 0, 0, 8};
	static const bool crash[] = {false, false, false, true, false, true};
	static const bool ends[] = {false, false, false, true, true, true};
	for (size_t i = 0; i < 6; i++) {
		const struct leaksnap_diff_snapshot *x = leaksnap_diff_snapshot(d, i);
		assert_int_equal(x->seq, seq[i]);
		assert_int_equal(x->crash_dump, crash[i]);
		assert_int_equal(x->ends_run, ends[i]);
	}
	leaksnap_diff_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_order),
		cmocka_unit_test(test_keep_order),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_process_start),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
