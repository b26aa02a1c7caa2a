/* Unit tests for diff/: patterns, the suppressions parser, module identity
 * across snapshots (build IDs, paths, formats), scores and trends, the
 * definite leaks of snapshots with the reachability section, and the
 * estimates and sampled blocks of sampled snapshots. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/diff.h>

/* Helpers ------------------------------------------------------------------------ */

struct rec {
	uint64_t size, count;
	uint64_t frames[4]; /* 0-terminated */
};

/* A LEAKSNAP v1 dump (8-byte pointers, 4 frames) in memory; with @reach,
 * flag bit 2 and the n unreachable counts after the metadata. */
static uint8_t *leaksnap_dump_reach(const struct rec *recs, size_t n, const char *maps,
				    const char *meta, const uint32_t *reach, size_t *len)
{
	size_t info = 8 * (2 + 4), ml = strlen(maps), tl = strlen(meta);
	*len = LEAKSNAP_SNAPSHOT_HEADER_SIZE + n * info + ml + tl + (reach ? 4 * n : 0);
	uint8_t *buf = calloc(1, *len);
	assert_non_null(buf);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += recs[i].size * recs[i].count;
	struct leaksnap_snapshot_header h = {.version = 1, .pointer_size = 8, .backtrace_size = 4,
				    .pid = 100, .meta_size = (uint32_t)tl, .total_memory = total,
				    .info_size = info, .records_size = n * info, .maps_size = ml,
				    .flags = reach ? LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY : 0};
	leaksnap_snapshot_header_encode(&h, buf);
	uint8_t *p = buf + LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	for (size_t i = 0; i < n; i++) {
		uint64_t v[6] = {recs[i].size, recs[i].count, recs[i].frames[0], recs[i].frames[1],
				 recs[i].frames[2], recs[i].frames[3]};
		for (int k = 0; k < 6; k++)
			for (int b = 0; b < 8; b++)
				p[8 * k + b] = (uint8_t)(v[k] >> (8 * b));
		p += info;
	}
	memcpy(p, maps, ml);
	memcpy(p + ml, meta, tl);
	for (size_t i = 0; reach && i < n; i++)
		for (int b = 0; b < 4; b++)
			p[ml + tl + 4 * i + b] = (uint8_t)(reach[i] >> (8 * b));
	return buf;
}

static uint8_t *leaksnap_dump(const struct rec *recs, size_t n, const char *maps,
			      const char *meta, size_t *len)
{
	return leaksnap_dump_reach(recs, n, maps, meta, NULL, len);
}

static struct leaksnap_snapshot *open_mem(const void *data, size_t len, const char *name)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(data, len, name, NULL, &err);
	if (!s)
		fail_msg("%s: %s", name, err.text);
	return s;
}

/* Add @s (with its own maps) to @d. */
static void add(struct leaksnap_diff *d, struct leaksnap_snapshot *s)
{
	struct leaksnap_error err;
	size_t ml;
	unsigned long line;
	uint64_t off;
	const char *text = leaksnap_snapshot_maps(s, &ml, &line, &off);
	struct leaksnap_maps *m = text ? leaksnap_maps_parse(text, ml, "maps", line, off, &err)
				       : NULL;
	assert_true(text == NULL || m != NULL);
	if (leaksnap_diff_add_snapshot(d, s, m, &err) != 0)
		fail_msg("add: %s", err.text);
	leaksnap_maps_free(m);
	leaksnap_snapshot_close(s);
}

static struct leaksnap_diff *new_diff(enum leaksnap_diff_by by, size_t n)
{
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = by);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, n, &err);
	assert_non_null(d);
	return d;
}

/* Patterns ------------------------------------------------------------------------ */

static void test_patterns(void **state)
{
	(void)state;
	static const struct {
		const char *pat, *s;
		bool match;
	} cases[] = {
		{"leak", "my_leak_fn", true},       {"^leak", "my_leak_fn", false},
		{"^my_", "my_leak_fn", true},        {"fn$", "my_leak_fn", true},
		{"leak$", "my_leak_fn", false},      {"^my_leak_fn$", "my_leak_fn", true},
		{"^my*fn$", "my_leak_fn", true},     {"^my*x$", "my_leak_fn", false},
		{"a*b*c", "xxaxxbxxcxx", true},      {"a*b*c", "xxaxxcxxbxx", false},
		{"operator new[]", "operator new[](unsigned long)", true},
		{"^operator new", "foo::operator new", false},
		{"*", "", true},                     {"", "anything", true},
		{"^$", "", true},                    {"^$", "x", false},
		{"$", "x", true},                    {"^", "x", true},
		{"std::map<int, int>", "void std::map<int, int>::insert()", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		if (leaksnap_diff_pattern_match(cases[i].pat, cases[i].s) != cases[i].match)
			fail_msg("'%s' against '%s': expected %s", cases[i].pat, cases[i].s,
				 cases[i].match ? "a match" : "no match");
	assert_false(leaksnap_diff_pattern_match(NULL, "x"));
	assert_false(leaksnap_diff_pattern_match("x", NULL));
	/* many stars on a long name stay fast (quadratic at worst) */
	char longname[4096];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(leaksnap_diff_pattern_match("a*a*a*a*a*a*a*a*b", longname));
}

/* Suppressions ---------------------------------------------------------------------- */

static void test_suppressions_parse(void **state)
{
	(void)state;
	const char *text =
		"# comment\n\n  leak:foo  \r\nleak: ^bar$\n\t# indented comment\nleak:*baz*";
	struct leaksnap_error err;
	struct leaksnap_diff_suppressions *s = leaksnap_diff_suppressions_parse(text, strlen(text),
										"s.txt", &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_diff_suppressions_count(s), 3);
	assert_string_equal(leaksnap_diff_suppressions_pattern(s, 0), "foo");
	assert_string_equal(leaksnap_diff_suppressions_pattern(s, 1), "^bar$");
	assert_string_equal(leaksnap_diff_suppressions_pattern(s, 2), "*baz*");
	assert_null(leaksnap_diff_suppressions_pattern(s, 3));
	assert_int_equal(leaksnap_diff_suppressions_hits(s, 0), 0);
	leaksnap_diff_suppressions_free(s);

	static const struct {
		const char *text;
		unsigned long line;
		const char *msg;
	} bad[] = {
		{"leak:a\nfun:b\n", 2, "unsupported suppression type 'fun'"},
		{"leak:\n", 1, "empty pattern after 'leak:'"},
		{"\n\nleak   \n", 3, "expected 'leak:PATTERN'"},
		{"leak:a\nleak:b\x00" "c\n", 2, "NUL byte"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		size_t len = strlen(bad[i].text);
		if (i == 3)
			len = 15;
		s = leaksnap_diff_suppressions_parse(bad[i].text, len, "bad.txt", &err);
		assert_null(s);
		assert_int_equal(err.line, bad[i].line);
		assert_string_equal(err.source, "bad.txt");
		if (!strstr(err.text, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text, bad[i].msg);
	}
	/* an empty file suppresses nothing */
	s = leaksnap_diff_suppressions_parse("", 0, "empty", &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_diff_suppressions_count(s), 0);
	leaksnap_diff_suppressions_free(s);
}

/* Module identity ------------------------------------------------------------------- */

#define MAPS_AT(base, path)                                                        \
	base "0000-" base "1000 r--p 00000000 fd:01 7 " path "\n" base "1000-" base \
	     "9000 r-xp 00001000 fd:01 7 " path "\n"

/* A LEAKSNAP dump with a build ID and an Android text dump of the same build
 * without one, loaded elsewhere: their frames are one. */
static void test_build_id_and_path(void **state)
{
	(void)state;
	struct rec ra[] = {{100, 2, {0x55000001234, 0x55000002000, 0}},
			   {64, 1, {0x55000003000, 0}}};
	size_t len;
	uint8_t *a = leaksnap_dump(ra, 2, MAPS_AT("5500000", "/lib/libx.so"),
				   "build_id=0a0b0c0d /lib/libx.so\n", &len);
	const char *b = "Android Native Heap Dump v1.2\n\nBuild fingerprint: ''\n\n"
			"Total memory: 564\nAllocation records: 2\nBacktrace size: 4\n\n"
			"z 0  sz      100  num    5  bt 77000001234 77000002000\n"
			"z 0  sz       64  num    1  bt 77000003000\n"
			"MAPS\n" MAPS_AT("7700000", "/lib/libx.so") "END\n";
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	add(d, open_mem(a, len, "a.dump"));
	add(d, open_mem(b, strlen(b), "b.txt"));
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_non_null(g);
	assert_int_equal(g->bytes[0], 200);
	assert_int_equal(g->bytes[1], 500);
	assert_int_equal(g->bytes_delta, 300);
	assert_int_equal(g->count_delta, 3);
	assert_false(g->is_new);
	assert_int_equal(g->frame_count, 2);
	assert_string_equal(g->frames[0]->module, "/lib/libx.so");
	assert_int_equal(g->frames[0]->rel_pc, 0x1234);
	assert_int_equal(g->frames[0]->pc, 0x77000001234); /* as the latest snapshot has it */
	assert_int_equal(g->frames[0]->build_id_len, 4);
	assert_int_equal(g->frames[0]->build_id[3], 0x0d);
	assert_int_equal(leaksnap_diff_stopped_count(d), 0);
	leaksnap_diff_free(d);
	free(a);
}

/* One build ID under two paths (an app reinstalled) is one module; one path
 * with two build IDs (two builds) is two. */
static void test_reinstall_and_rebuild(void **state)
{
	(void)state;
	struct rec r1[] = {{32, 1, {0x55000001234, 0}}};
	struct rec r2[] = {{32, 3, {0x66000001234, 0}}};
	size_t l1, l2, l3;
	uint8_t *a = leaksnap_dump(r1, 1, MAPS_AT("5500000", "/data/app/~~A==/lib/libg.so"),
				   "build_id=aabb /data/app/~~A==/lib/libg.so\n", &l1);
	uint8_t *b = leaksnap_dump(r2, 1, MAPS_AT("6600000", "/data/app/~~B==/lib/libg.so"),
				   "build_id=aabb /data/app/~~B==/lib/libg.so\n", &l2);
	uint8_t *c = leaksnap_dump(r2, 1, MAPS_AT("6600000", "/data/app/~~A==/lib/libg.so"),
				   "build_id=ccdd /data/app/~~A==/lib/libg.so\n", &l3);
	struct leaksnap_error err;
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	add(d, open_mem(a, l1, "a"));
	add(d, open_mem(b, l2, "b"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	assert_false(leaksnap_diff_suspect(d, 0)->is_new);
	assert_int_equal(leaksnap_diff_suspect(d, 0)->bytes_delta, 64);
	leaksnap_diff_free(d);

	d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	add(d, open_mem(a, l1, "a"));
	add(d, open_mem(c, l3, "c"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	assert_true(leaksnap_diff_suspect(d, 0)->is_new); /* another build: other code */
	assert_int_equal(leaksnap_diff_suspect(d, 0)->bytes_delta, 96);
	leaksnap_diff_free(d);

	/* by module, the two builds are one library that grew */
	d = new_diff(LEAKSNAP_DIFF_BY_MODULE, 2);
	add(d, open_mem(a, l1, "a"));
	add(d, open_mem(c, l3, "c"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	assert_int_equal(leaksnap_diff_suspect(d, 0)->bytes_delta, 64);
	assert_string_equal(leaksnap_diff_suspect(d, 0)->module, "/data/app/~~A==/lib/libg.so");
	leaksnap_diff_free(d);
	free(a);
	free(b);
	free(c);
}

/* A group of several stacks shows the one that grew most, not the one
 * holding most: by module, a steady 320 KB stack and two that grew. */
static void test_group_face(void **state)
{
	(void)state;
	struct rec r1[] = {{320000, 1, {0x55000001100, 0}},
			   {64, 10, {0x55000001200, 0}},
			   {100, 1, {0x55000001300, 0}}};
	struct rec r2[] = {{320000, 1, {0x55000001100, 0}},
			   {64, 40, {0x55000001200, 0}},
			   {100, 3, {0x55000001300, 0}}};
	size_t l1, l2;
	uint8_t *a = leaksnap_dump(r1, 3, MAPS_AT("5500000", "/lib/libx.so"), "", &l1);
	uint8_t *b = leaksnap_dump(r2, 3, MAPS_AT("5500000", "/lib/libx.so"), "", &l2);
	struct leaksnap_error err;
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_MODULE, 2);
	add(d, open_mem(a, l1, "a"));
	add(d, open_mem(b, l2, "b"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_int_equal(g->stack_count, 3);
	assert_int_equal(g->bytes_delta, 30 * 64 + 2 * 100);
	assert_int_equal(g->frame_count, 1);
	assert_int_equal(g->frames[0]->pc, 0x55000001200);
	leaksnap_diff_free(d);
	free(a);
	free(b);
}

/* Scores and trends over four snapshots. */
static void test_trends(void **state)
{
	(void)state;
	/* steady: 1,2,3,4 KiB; late: 0,0,0,8 KiB; cache: 0,5,5,5 KiB;
	 * bouncy: 4,1,4,5 KiB */
	static const uint64_t kib[4][4] = {{1, 2, 3, 4}, {0, 0, 0, 8}, {0, 5, 5, 5}, {4, 1, 4, 5}};
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 4);
	for (int s = 0; s < 4; s++) {
		struct rec r[4];
		size_t n = 0;
		for (int g = 0; g < 4; g++)
			if (kib[g][s])
				r[n++] = (struct rec){
					1024, kib[g][s], {0x55000001000 + 0x10 * (uint64_t)g, 0}};
		size_t len;
		uint8_t *buf = leaksnap_dump(r, n, MAPS_AT("5500000", "/bin/app"), "", &len);
		add(d, open_mem(buf, len, "s"));
		free(buf);
	}
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 3);
	/* steady: 3072 x 3/3; late: 8192 x 1/3; bouncy: 1024 x (2-1)/3 */
	const struct leaksnap_diff_group *g0 = leaksnap_diff_suspect(d, 0),
					 *g1 = leaksnap_diff_suspect(d, 1),
					 *g2 = leaksnap_diff_suspect(d, 2);
	assert_int_equal(g0->frames[0]->rel_pc, 0x1000);
	assert_int_equal(g0->trend, LEAKSNAP_DIFF_TREND_STEADY);
	assert_true(g0->score == 3072.0);
	assert_int_equal(g1->frames[0]->rel_pc, 0x1010);
	assert_int_equal(g1->trend, LEAKSNAP_DIFF_TREND_GROWING);
	assert_true(g1->score > 2730.6 && g1->score < 2730.7);
	assert_true(g1->is_new);
	assert_int_equal(g2->frames[0]->rel_pc, 0x1030);
	assert_int_equal(g2->grew, 2);
	assert_int_equal(g2->shrank, 1);
	assert_true(g2->score > 341.3 && g2->score < 341.4);
	assert_int_equal(leaksnap_diff_stopped_count(d), 1);
	assert_int_equal(leaksnap_diff_stopped(d, 0)->frames[0]->rel_pc, 0x1020);
	assert_int_equal(leaksnap_diff_stopped(d, 0)->trend, LEAKSNAP_DIFF_TREND_STOPPED);
	assert_int_equal(leaksnap_diff_suspects_bytes(d), 3072 + 8192 + 1024);
	leaksnap_diff_free(d);
}

/* Rank order: the lazily ordered suspects (a selection of the first 64,
 * then a sort of the rest) come out in the same order whatever index is
 * asked for first, and that order is the documented one: score, then bytes,
 * then count, then first appearance. */
#define ORDER_GROUPS 300

static struct leaksnap_diff *order_diff(void)
{
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	struct rec *r = calloc(ORDER_GROUPS, sizeof(*r));
	assert_non_null(r);
	size_t len;
	r[0] = (struct rec){16, 1, {0x55000000ff0, 0}}; /* the same in both */
	uint8_t *buf = leaksnap_dump(r, 1, MAPS_AT("5500000", "/bin/app"), "", &len);
	add(d, open_mem(buf, len, "old"));
	free(buf);
	for (size_t g = 0; g < ORDER_GROUPS; g++) /* many ties on bytes, some on counts */
		r[g] = (struct rec){1024 * (g % 7 + 1) / (g % 3 + 1), g % 3 + 1,
				    {0x55000001000 + 0x10 * (uint64_t)g, 0}};
	r[0].frames[0] = 0x55000000ff0; /* grew from 16 bytes */
	buf = leaksnap_dump(r, ORDER_GROUPS, MAPS_AT("5500000", "/bin/app"), "", &len);
	add(d, open_mem(buf, len, "new"));
	free(buf);
	free(r);
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), ORDER_GROUPS);
	return d;
}

/* leaksnap_diff_symbolize_group() finds its own view of a group (without a
 * symbolizer it only sets the site); a group of another diff is refused. */
static void test_symbolize_group_owner(void **state)
{
	(void)state;
	struct leaksnap_diff *a = order_diff(), *b = order_diff();
	const struct leaksnap_diff_group *ga = leaksnap_diff_suspect(a, 0),
					 *gb = leaksnap_diff_suspect(b, 3);
	assert_non_null(ga);
	assert_non_null(gb);
	assert_int_equal(ga->site, SIZE_MAX);
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_symbolize_group(a, ga, &err), 0);
	assert_int_equal(ga->site, 0);
	assert_int_equal(ga->site_level, 0);
	assert_int_equal(leaksnap_diff_symbolize_group(a, gb, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.text, "not a group of this diff");
	assert_int_equal(gb->site, SIZE_MAX);
	assert_int_equal(leaksnap_diff_symbolize_group(b, gb, &err), 0);
	assert_int_equal(gb->site, 0);
	leaksnap_diff_free(a);
	leaksnap_diff_free(b);
}

/* A resolver shared by two diffs, freed in the order they were made: its
 * problems (a module file that is no ELF file) are the warnings of the
 * diff that met them, never the caller's, and the caller's callback is
 * its own again between and after (each diff hands it back as soon as it
 * has resolved). */
struct said {
	int count;
};
static void said_problem(void *arg, const struct leaksnap_error *e)
{
	(void)e;
	((struct said *)arg)->count++;
}

static struct leaksnap_diff *resolver_diff(struct leaksnap_resolver *r, const char *maps)
{
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = LEAKSNAP_DIFF_BY_STACK, .resolver = r);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	assert_non_null(d);
	struct rec r1 = {64, 1, {0x7f0000000100, 0}}, r2 = {64, 9, {0x7f0000000100, 0}};
	size_t len;
	uint8_t *buf = leaksnap_dump(&r1, 1, maps, "", &len);
	add(d, open_mem(buf, len, "old"));
	free(buf);
	buf = leaksnap_dump(&r2, 1, maps, "", &len);
	add(d, open_mem(buf, len, "new"));
	free(buf);
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	assert_int_equal(leaksnap_diff_symbolize_group(d, leaksnap_diff_suspect(d, 0), &err), 0);
	return d;
}

static void assert_caller_warn(struct leaksnap_resolver *r, struct said *said)
{
	leaksnap_resolve_warn_fn fn;
	void *arg;
	leaksnap_resolver_set_warn(r, said_problem, said, &fn, &arg);
	assert_ptr_equal(fn, said_problem);
	assert_ptr_equal(arg, said);
}

static void test_shared_resolver(void **state)
{
	(void)state;
	char dir[] = "/tmp/leaksnap-diffres.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[4200], maps[8400];
	snprintf(path, sizeof(path), "%s/libbroken.so", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("\x7f" "ELF and nothing more", f);
	fclose(f);
	snprintf(maps, sizeof(maps), "7f0000000000-7f0000001000 r-xp 00000000 fd:01 12 %s\n", path);
	struct said said = {0};
	LEAKSNAP_OPTS(leaksnap_resolver_opts, ro, .warn = said_problem, .warn_arg = &said);
	struct leaksnap_error err;
	struct leaksnap_resolver *r = leaksnap_resolver_new(&ro, &err);
	assert_non_null(r);
	struct leaksnap_diff *a = resolver_diff(r, maps);
	assert_int_equal(leaksnap_diff_warning_count(a), 1);
	assert_non_null(strstr(leaksnap_diff_warning(a, 0), path));
	assert_caller_warn(r, &said);
	struct leaksnap_diff *b = resolver_diff(r, maps);
	assert_int_equal(leaksnap_diff_warning_count(b), 0); /* said once, to the first */
	leaksnap_diff_free(a);
	assert_caller_warn(r, &said);
	leaksnap_diff_free(b);
	assert_caller_warn(r, &said);
	assert_int_equal(said.count, 0);
	assert_true(leaksnap_resolver_failed(r));
	leaksnap_resolver_free(r);
	unlink(path);
	rmdir(dir);
}

static void test_rank_order(void **state)
{
	(void)state;
	static const size_t firsts[] = {0, 250, 63, 64, ORDER_GROUPS - 1};
	uint64_t order[ORDER_GROUPS];
	for (size_t t = 0; t < sizeof(firsts) / sizeof(*firsts); t++) {
		struct leaksnap_diff *d = order_diff();
		assert_non_null(leaksnap_diff_suspect(d, firsts[t])); /* asked for first */
		for (size_t i = 0; i < ORDER_GROUPS; i++) {
			const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, i);
			assert_non_null(g);
			if (t == 0) {
				order[i] = g->frames[0]->rel_pc;
				continue;
			}
			assert_int_equal(g->frames[0]->rel_pc, order[i]);
		}
		if (t > 0) {
			leaksnap_diff_free(d);
			continue;
		}
		for (size_t i = 1; i < ORDER_GROUPS; i++) {
			const struct leaksnap_diff_group *a = leaksnap_diff_suspect(d, i - 1),
							 *b = leaksnap_diff_suspect(d, i);
			assert_true(a->score >= b->score);
			if (a->score > b->score)
				continue;
			assert_true(a->bytes_delta >= b->bytes_delta);
			if (a->bytes_delta > b->bytes_delta)
				continue;
			assert_true(a->count_delta >= b->count_delta);
			if (a->count_delta == b->count_delta) /* first appearance */
				assert_true(a->frames[0]->rel_pc < b->frames[0]->rel_pc);
		}
		/* group 0 grew from 16 to 1024 bytes: 1008 */
		int found = 0;
		for (size_t i = 0; i < ORDER_GROUPS; i++)
			if (leaksnap_diff_suspect(d, i)->frames[0]->rel_pc == 0xff0) {
				assert_int_equal(leaksnap_diff_suspect(d, i)->bytes_delta, 1008);
				found++;
			}
		assert_int_equal(found, 1);
		assert_null(leaksnap_diff_suspect(d, ORDER_GROUPS));
		leaksnap_diff_free(d);
	}
}

/* leaksnap_diff_foreach_top_growing_stack: the N stacks that grew most, largest
 * first (ties: first appearance), and what is left out, for every N. */
struct grown {
	uint64_t rel_pc, bytes;
};
struct grown_list {
	struct grown v[ORDER_GROUPS];
	size_t n;
};

static int collect_grown(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
			 uint64_t bytes)
{
	struct grown_list *l = arg;
	assert_int_equal(n, 1);
	assert_true(l->n < ORDER_GROUPS);
	l->v[l->n++] = (struct grown){frames[0]->rel_pc, bytes};
	return 0;
}

static int cmp_grown(const void *a, const void *b)
{
	const struct grown *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->rel_pc < y->rel_pc ? -1 : x->rel_pc > y->rel_pc;
}

static void test_top_growing_stacks(void **state)
{
	(void)state;
	struct leaksnap_diff *d = order_diff();
	struct leaksnap_error err;
	static struct grown_list all, top;
	all.n = 0;
	assert_int_equal(leaksnap_diff_foreach_growing_stack(d, collect_grown, &all, &err), 0);
	assert_int_equal(all.n, ORDER_GROUPS);
	qsort(all.v, all.n, sizeof(*all.v), cmp_grown);
	uint64_t sum = 0;
	for (size_t i = 0; i < all.n; i++)
		sum += all.v[i].bytes;
	static const size_t maxes[] = {0, 1, 2, 10, 64, 299, 300, 1000};
	for (size_t t = 0; t < sizeof(maxes) / sizeof(*maxes); t++) {
		top.n = 0;
		uint64_t rest = 1;
		size_t nrest = 1;
		assert_int_equal(leaksnap_diff_foreach_top_growing_stack(d, maxes[t], collect_grown,
									 &top, &rest, &nrest, &err),
				 0);
		size_t want = maxes[t] < all.n ? maxes[t] : all.n;
		assert_int_equal(top.n, want);
		uint64_t kept = 0;
		for (size_t i = 0; i < want; i++) {
			assert_int_equal(top.v[i].rel_pc, all.v[i].rel_pc);
			assert_int_equal(top.v[i].bytes, all.v[i].bytes);
			kept += top.v[i].bytes;
		}
		assert_int_equal(nrest, all.n - want);
		assert_int_equal(rest, sum - kept);
	}
	/* the first is the biggest grower: 1024 * 7 bytes, first appearance */
	assert_int_equal(all.v[0].bytes, 7168);
	leaksnap_diff_free(d);
}

/* leaksnap_diff_foreach_growing_stack_delta: the same stacks in the same order as
 * leaksnap_diff_foreach_growing_stack, each with its group's exact count delta
 * (grouping by stack: one stack per group). */
struct grown_delta {
	const struct grown_list *plain;
	struct leaksnap_diff *d;
	size_t n;
};

static int check_delta(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
		       uint64_t bytes, int64_t count)
{
	struct grown_delta *gd = arg;
	assert_int_equal(n, 1);
	assert_true(gd->n < gd->plain->n);
	assert_int_equal(frames[0]->rel_pc, gd->plain->v[gd->n].rel_pc);
	assert_int_equal(bytes, gd->plain->v[gd->n].bytes);
	gd->n++;
	int seen = 0;
	for (size_t i = 0; i < leaksnap_diff_suspect_count(gd->d); i++) {
		const struct leaksnap_diff_group *g = leaksnap_diff_suspect(gd->d, i);
		if (g->frames[0]->rel_pc != frames[0]->rel_pc)
			continue;
		assert_int_equal((int64_t)bytes, g->bytes_delta);
		assert_int_equal(count, g->count_delta);
		seen++;
	}
	assert_int_equal(seen, 1);
	return 0;
}

static void test_growing_stack_delta(void **state)
{
	(void)state;
	struct leaksnap_diff *d = order_diff();
	struct leaksnap_error err;
	static struct grown_list all;
	all.n = 0;
	assert_int_equal(leaksnap_diff_foreach_growing_stack(d, collect_grown, &all, &err), 0);
	struct grown_delta gd = {&all, d, 0};
	assert_int_equal(leaksnap_diff_foreach_growing_stack_delta(d, check_delta, &gd, &err), 0);
	assert_int_equal(gd.n, ORDER_GROUPS);
	leaksnap_diff_free(d);
}

/* A dump with duplicate records: opened with keep_duplicates the snapshot
 * keeps them (the reader does not merge), and the diff sums them into the
 * same groups as the merged model gives. */
static void test_keep_duplicates(void **state)
{
	(void)state;
	static const struct rec old[] = {{100, 1, {0x55000001000, 0}}};
	static const struct rec dup[] = {{100, 2, {0x55000001000, 0}},
					 {64, 1, {0x55000001010, 0x55000001020, 0}},
					 {100, 3, {0x55000001000, 0}},
					 {64, 4, {0x55000001010, 0x55000001020, 0}}};
	size_t olen, nlen;
	uint8_t *ob = leaksnap_dump(old, 1, MAPS_AT("5500000", "/bin/app"), "", &olen);
	uint8_t *nb = leaksnap_dump(dup, 4, MAPS_AT("5500000", "/bin/app"), "", &nlen);
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, keep, .keep_duplicates = true);
	struct leaksnap_snapshot *merged = leaksnap_snapshot_open_memory(nb, nlen, "m", NULL, &err);
	struct leaksnap_snapshot *kept = leaksnap_snapshot_open_memory(nb, nlen, "k", &keep, &err);
	assert_non_null(merged);
	assert_non_null(kept);
	assert_int_equal(leaksnap_snapshot_record_count(merged), 2);
	assert_int_equal(leaksnap_snapshot_record_count(kept), 4);
	assert_int_equal(leaksnap_snapshot_total_memory(kept),
			 leaksnap_snapshot_total_memory(merged));
	assert_int_equal(leaksnap_snapshot_allocation_count(kept), 10);
	assert_int_equal(leaksnap_snapshot_allocation_count(merged), 10);
	struct leaksnap_snapshot *both[2] = {merged, kept};
	for (int k = 0; k < 2; k++) {
		struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
		add(d, open_mem(ob, olen, "old"));
		add(d, both[k]);
		assert_int_equal(leaksnap_diff_rank(d, &err), 0);
		assert_int_equal(leaksnap_diff_suspect_count(d), 2);
		const struct leaksnap_diff_group *g0 = leaksnap_diff_suspect(d, 0),
						 *g1 = leaksnap_diff_suspect(d, 1);
		assert_int_equal(g0->bytes_delta, 400); /* 100 x (2 + 3) - 100 */
		assert_int_equal(g0->count_delta, 4);
		assert_int_equal(g0->frame_count, 1);
		assert_int_equal(g0->stack_count, 1);
		assert_int_equal(g1->bytes_delta, 320); /* 64 x (1 + 4), new */
		assert_int_equal(g1->count_delta, 5);
		assert_int_equal(g1->frame_count, 2);
		assert_true(g1->is_new);
		leaksnap_diff_free(d);
	}
	free(ob);
	free(nb);
}

/* A large diff (enough records for the translating thread) gives the
 * same groups, sums and order with jobs = 2 as without threads. */
#define BIG_RECORDS 40000

static struct leaksnap_diff *big_diff(unsigned jobs)
{
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = LEAKSNAP_DIFF_BY_STACK, .jobs = jobs);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	assert_non_null(d);
	struct rec *r = calloc(BIG_RECORDS, sizeof(*r));
	assert_non_null(r);
	uint64_t x = 88172645463325252ull;
	for (int snap = 0; snap < 2; snap++) {
		for (size_t i = 0; i < BIG_RECORDS; i++) {
			/* xorshift64: stacks of 1..3 frames over 4096 PCs, so
			 * records repeat stacks within and across snapshots */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			r[i].size = 16 + (x >> 52);
			r[i].count = 1 + (x >> 61);
			memset(r[i].frames, 0, sizeof(r[i].frames));
			for (uint64_t f = 0; f < 1 + (x >> 40) % 3; f++)
				r[i].frames[f] = 0x55000001000 + 4 * ((x >> (12 * f)) & 4095);
		}
		size_t len;
		uint8_t *buf = leaksnap_dump(r, BIG_RECORDS, MAPS_AT("5500000", "/bin/app"), "",
					     &len);
		add(d, open_mem(buf, len, snap ? "new" : "old"));
		free(buf);
	}
	free(r);
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	return d;
}

static void test_threaded_add(void **state)
{
	(void)state;
	struct leaksnap_diff *a = big_diff(0), *b = big_diff(2);
	assert_true(leaksnap_diff_suspect_count(a) > 1000);
	assert_int_equal(leaksnap_diff_suspect_count(a), leaksnap_diff_suspect_count(b));
	assert_int_equal(leaksnap_diff_stopped_count(a), leaksnap_diff_stopped_count(b));
	assert_int_equal(leaksnap_diff_suspects_bytes(a), leaksnap_diff_suspects_bytes(b));
	for (size_t k = 0; k < 2; k++)
		assert_int_equal(leaksnap_diff_snapshot(a, k)->bytes,
				 leaksnap_diff_snapshot(b, k)->bytes);
	for (size_t i = 0; i < leaksnap_diff_suspect_count(a); i++) {
		const struct leaksnap_diff_group *x = leaksnap_diff_suspect(a, i),
						 *y = leaksnap_diff_suspect(b, i);
		assert_int_equal(x->bytes_delta, y->bytes_delta);
		assert_int_equal(x->count_delta, y->count_delta);
		assert_int_equal(x->frame_count, y->frame_count);
		for (size_t f = 0; f < x->frame_count; f++)
			assert_int_equal(x->frames[f]->rel_pc, y->frames[f]->rel_pc);
	}
	leaksnap_diff_free(a);
	leaksnap_diff_free(b);
}

/* leaksnap_snapshot_build_id: the first well-formed line of a path. */
static void test_snapshot_build_id(void **state)
{
	(void)state;
	struct rec r[] = {{8, 1, {0x55000001000, 0}}};
	size_t len;
	uint8_t *a = leaksnap_dump(r, 1, MAPS_AT("5500000", "/bin/app"),
				   "build_id=zz /a\nbuild_id=0a0B /lib/x\nbuild_id=ffff /lib/x\n"
				   "build_id=abc /odd\nbuild_id=01 \nabi=x86_64\n",
				   &len);
	struct leaksnap_snapshot *s = open_mem(a, len, "ids");
	uint8_t id[4] = {0};
	assert_int_equal(leaksnap_snapshot_build_id(s, "/lib/x", id, sizeof(id)), 2);
	assert_int_equal(id[0], 0x0a);
	assert_int_equal(id[1], 0x0b);
	memset(id, 0, sizeof(id));
	assert_int_equal(leaksnap_snapshot_build_id(s, "/lib/x", id, 1),
			 2); /* length, 1 byte written */
	assert_int_equal(id[0], 0x0a);
	assert_int_equal(id[1], 0);
	assert_int_equal(leaksnap_snapshot_build_id(s, "/a", id, sizeof(id)), 0);     /* not hex */
	assert_int_equal(leaksnap_snapshot_build_id(s, "/odd", id, sizeof(id)), 0); /* odd length */
	assert_int_equal(leaksnap_snapshot_build_id(s, "", id, sizeof(id)), 0);       /* no path */
	assert_int_equal(leaksnap_snapshot_build_id(s, "/none", id, sizeof(id)), 0);
	leaksnap_snapshot_close(s);
	free(a);
}

/* Reachability ----------------------------------------------------------------------
 * Snapshots with the reachability section: definite leaks rank first,
 * reachable caches stay caches, flat groups holding unreachable blocks are
 * one-off leaks, and the sums follow grouping, zygote joins and
 * suppressions. */

static void add_reach(struct leaksnap_diff *d, const struct rec *r, size_t n, const uint32_t *reach,
		      const char *maps)
{
	size_t len;
	uint8_t *buf = leaksnap_dump_reach(r, n, maps, "", reach, &len);
	add(d, open_mem(buf, len, reach ? "reach" : "plain"));
	free(buf);
}

static void assert_series(const uint64_t *v, uint64_t a, uint64_t b, uint64_t c)
{
	assert_non_null(v);
	assert_int_equal(v[0], a);
	assert_int_equal(v[1], b);
	assert_int_equal(v[2], c);
}

static void test_reach_definite_first(void **state)
{
	(void)state;
	/* size, counts and unreachable counts in 3 snapshots of 6 groups:
	 * A grows and leaks, B grows reachable (the best score), C is flat and
	 * leaks, E stopped but leaks in the last, F a reachable cache, G flat
	 * and leaks less than C */
	static const uint64_t size[6] = {32, 1000, 512, 100, 200, 48};
	static const uint64_t count[3][6] = {
		{10, 1, 2, 1, 1, 1}, {20, 3, 2, 4, 3, 1}, {30, 6, 2, 3, 2, 1}};
	static const uint32_t unreach[3][6] = {
		{5, 0, 1, 0, 0, 1}, {15, 0, 1, 0, 0, 1}, {25, 0, 1, 2, 0, 1}};
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 3);
	for (int k = 0; k < 3; k++) {
		struct rec r[6];
		for (int g = 0; g < 6; g++)
			r[g] = (struct rec){
				size[g], count[k][g], {0x55000001000 + 0x10 * (uint64_t)g, 0}};
		add_reach(d, r, 6, unreach[k], MAPS_AT("5500000", "/bin/app"));
	}
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 3);
	assert_int_equal(leaksnap_diff_definite_count(d), 2);
	const struct leaksnap_diff_group *a = leaksnap_diff_suspect(d, 0),
					 *e = leaksnap_diff_suspect(d, 1),
					 *b = leaksnap_diff_suspect(d, 2);
	assert_int_equal(a->frames[0]->rel_pc, 0x1000);
	assert_true(a->definite);
	assert_true(a->score == 640.0);
	assert_series(a->unreachable_bytes, 160, 480, 800);
	assert_series(a->unreachable_counts, 5, 15, 25);
	assert_int_equal(e->frames[0]->rel_pc, 0x1030);
	assert_true(e->definite);
	assert_int_equal(e->trend, LEAKSNAP_DIFF_TREND_STOPPED); /* a cache, were it not leaking */
	assert_true(e->score == 0.0);
	assert_series(e->unreachable_bytes, 0, 0, 200);
	assert_int_equal(b->frames[0]->rel_pc, 0x1010);
	assert_false(b->definite);
	assert_true(b->score == 5000.0);
	assert_series(b->unreachable_bytes, 0, 0, 0);
	assert_int_equal(leaksnap_diff_suspects_bytes(d), 640 + 200 + 5000);
	assert_int_equal(leaksnap_diff_stopped_count(d), 1);
	assert_int_equal(leaksnap_diff_stopped(d, 0)->frames[0]->rel_pc, 0x1040);
	assert_false(leaksnap_diff_stopped(d, 0)->definite);
	assert_int_equal(leaksnap_diff_unreachable_count(d), 2);
	const struct leaksnap_diff_group *c = leaksnap_diff_unreachable(d, 0),
					 *g = leaksnap_diff_unreachable(d, 1);
	assert_int_equal(c->frames[0]->rel_pc, 0x1020);
	assert_true(c->definite);
	assert_series(c->unreachable_bytes, 512, 512, 512);
	assert_int_equal(c->bytes_delta, 0);
	assert_int_equal(g->frames[0]->rel_pc, 0x1050);
	assert_series(g->unreachable_counts, 1, 1, 1);
	assert_null(leaksnap_diff_unreachable(d, 2));
	static const uint64_t ubytes[3] = {720, 1040, 1560}, ucount[3] = {7, 17, 29};
	for (size_t i = 0; i < 3; i++) {
		assert_true(leaksnap_diff_snapshot(d, i)->has_reachability);
		assert_int_equal(leaksnap_diff_snapshot(d, i)->unreachable_bytes, ubytes[i]);
		assert_int_equal(leaksnap_diff_snapshot(d, i)->unreachable_count, ucount[i]);
	}
	leaksnap_diff_free(d);
}

/* Sampled snapshots (sample_interval=64): every figure of the diff is the
 * sum of the records' rounded estimates, the same leaksnap_snapshot_estimate()
 * gives, and the blocks sampled are beside them, per snapshot and per
 * group.  32 bytes stand for 2.5415 blocks, 16 for 4.5208, 128 for one. */
static void test_sampled_figures(void **state)
{
	(void)state;
	static const uint64_t size[3] = {32, 16, 128};
	static const uint64_t count[2][3] = {{2, 1, 1}, {7, 1, 2}};
	static const uint32_t unreach[2][3] = {{0, 1, 0}, {3, 1, 0}};
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	uint64_t eb[2], ec[2], eub[2], euc[2];
	for (int k = 0; k < 2; k++) {
		struct rec r[3];
		for (int g = 0; g < 3; g++)
			r[g] = (struct rec){
				size[g], count[k][g], {0x55000001000 + 0x10 * (uint64_t)g, 0}};
		size_t len;
		uint8_t *buf = leaksnap_dump_reach(r, 3, MAPS_AT("5500000", "/bin/app"),
						   "sample_interval=64\n", unreach[k], &len);
		struct leaksnap_snapshot *s = open_mem(buf, len, "sampled");
		leaksnap_snapshot_estimate(s, &eb[k], &ec[k], &eub[k], &euc[k]);
		add(d, s);
		free(buf);
	}
	/* 163 + 72 + 128 in 5 + 5 + 1; 569 + 72 + 256 in 18 + 5 + 2; unreachable
	 * 72 in 5, then 244 + 72 in 8 + 5 (the sums rounded once would be 898
	 * in 24, 316 in 12) */
	assert_int_equal(eb[0], 363);
	assert_int_equal(ec[0], 11);
	assert_int_equal(eb[1], 897);
	assert_int_equal(ec[1], 25);
	assert_int_equal(eub[1], 316);
	assert_int_equal(euc[1], 13);
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_sample_interval(d), 64);
	static const uint64_t sb[2] = {208, 496}, sc[2] = {4, 10}, sub[2] = {16, 112},
			      suc[2] = {1, 4};
	for (size_t i = 0; i < 2; i++) {
		const struct leaksnap_diff_snapshot *ds = leaksnap_diff_snapshot(d, i);
		assert_int_equal(ds->bytes, eb[i]);
		assert_int_equal(ds->count, ec[i]);
		assert_int_equal(ds->unreachable_bytes, eub[i]);
		assert_int_equal(ds->unreachable_count, euc[i]);
		assert_int_equal(ds->sampled_bytes, sb[i]);
		assert_int_equal(ds->sampled_count, sc[i]);
		assert_int_equal(ds->sampled_unreachable_bytes, sub[i]);
		assert_int_equal(ds->sampled_unreachable_count, suc[i]);
	}
	const struct leaksnap_diff_group *a = leaksnap_diff_suspect(d, 0);
	assert_non_null(a);
	assert_int_equal(a->frames[0]->rel_pc, 0x1000);
	assert_int_equal(a->bytes[1], 569);
	assert_int_equal(a->sampled_counts[1], 7);
	assert_non_null(a->sampled_unreachable_bytes);
	assert_int_equal(a->sampled_unreachable_bytes[0], 0);
	assert_int_equal(a->sampled_unreachable_bytes[1], 96);
	assert_int_equal(a->sampled_unreachable_counts[1], 3);
	assert_int_equal(a->unreachable_bytes[1], 244);
	leaksnap_diff_free(d);
}

/* The first snapshot has no section (its stacks are interned before the
 * sums exist), the second has: grouped by site, all are one group. */
static void test_reach_mixed_and_grouped(void **state)
{
	(void)state;
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_SITE, 2);
	struct rec r1[] = {{64, 4, {0x55000001000, 0x55000001100, 0}},
			   {64, 1, {0x55000001000, 0x55000001200, 0}}};
	add_reach(d, r1, 2, NULL, MAPS_AT("5500000", "/bin/app"));
	struct rec r2[] = {{64, 5, {0x55000001000, 0x55000001100, 0}},
			   {16, 3, {0x55000001000, 0x55000001300, 0}}};
	static const uint32_t u2[] = {2, 3};
	add_reach(d, r2, 2, u2, MAPS_AT("5500000", "/bin/app"));
	struct leaksnap_error err;
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_false(leaksnap_diff_snapshot(d, 0)->has_reachability);
	assert_int_equal(leaksnap_diff_snapshot(d, 0)->unreachable_bytes, 0);
	assert_true(leaksnap_diff_snapshot(d, 1)->has_reachability);
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->unreachable_bytes, 2 * 64 + 3 * 16);
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->unreachable_count, 5);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_int_equal(g->stack_count, 3);
	assert_true(g->definite);
	assert_int_equal(g->unreachable_bytes[0], 0);
	assert_int_equal(g->unreachable_bytes[1], 176);
	assert_int_equal(g->unreachable_counts[1], 5);
	assert_int_equal(g->bytes_delta, (64 * 5 + 16 * 3) - (64 * 4 + 64 * 1));
	leaksnap_diff_free(d);
}

/* An included zygote stack joins the app stack of the same frames, its
 * unreachable counts too; a snapshot pair without sections has none. */
static void test_reach_zygote_and_none(void **state)
{
	(void)state;
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = LEAKSNAP_DIFF_BY_STACK,
		      .zygote = LEAKSNAP_DIFF_ZYGOTE_INCLUDE);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	assert_non_null(d);
	struct rec r1[] = {{64, 1, {0x55000001000, 0}}};
	static const uint32_t u1[] = {0};
	add_reach(d, r1, 1, u1, MAPS_AT("5500000", "/bin/app"));
	struct rec r2[] = {{64, 2, {0x55000001000, 0}}, {64 | (1ull << 31), 3, {0x55000001000, 0}}};
	static const uint32_t u2[] = {1, 2};
	add_reach(d, r2, 2, u2, MAPS_AT("5500000", "/bin/app"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suspect_count(d), 1);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_int_equal(g->counts[1], 5);
	assert_int_equal(g->unreachable_counts[1], 3);
	assert_int_equal(g->unreachable_bytes[1], 192);
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->unreachable_bytes, 192);
	leaksnap_diff_free(d);

	d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	add_reach(d, r1, 1, NULL, MAPS_AT("5500000", "/bin/app"));
	add_reach(d, r2, 1, NULL, MAPS_AT("5500000", "/bin/app"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	g = leaksnap_diff_suspect(d, 0);
	assert_null(g->unreachable_bytes);
	assert_null(g->unreachable_counts);
	assert_false(g->definite);
	assert_int_equal(leaksnap_diff_definite_count(d), 0);
	assert_int_equal(leaksnap_diff_unreachable_count(d), 0);
	assert_false(leaksnap_diff_snapshot(d, 1)->has_reachability);
	leaksnap_diff_free(d);
}

/* Suppressions leave a group's unreachable blocks out of every sum. */
static void test_reach_suppressions(void **state)
{
	(void)state;
	struct leaksnap_error err;
	const char *text = "leak:libx.so\n";
	struct leaksnap_diff_suppressions *supp = leaksnap_diff_suppressions_parse(
		text, strlen(text), "s", &err);
	assert_non_null(supp);
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = LEAKSNAP_DIFF_BY_STACK, .suppressions = supp);
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	assert_non_null(d);
	struct rec r[] = {{16, 4, {0x55000001000, 0}}, {32, 2, {0x56000001000, 0}}};
	static const uint32_t u[] = {4, 2};
	for (int k = 0; k < 2; k++)
		add_reach(d, r, 2, u,
			  MAPS_AT("5500000", "/bin/app") MAPS_AT("5600000", "/lib/libx.so"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(leaksnap_diff_suppressed_records(d), 1);
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->unreachable_bytes, 64);
	assert_int_equal(leaksnap_diff_snapshot(d, 1)->unreachable_count, 4);
	assert_int_equal(leaksnap_diff_suspect_count(d), 0);
	assert_int_equal(leaksnap_diff_unreachable_count(d), 1);
	assert_int_equal(leaksnap_diff_unreachable(d, 0)->frames[0]->rel_pc, 0x1000);
	assert_string_equal(leaksnap_diff_unreachable(d, 0)->frames[0]->module, "/bin/app");
	leaksnap_diff_free(d);
	leaksnap_diff_suppressions_free(supp);
}

static void test_errors(void **state)
{
	(void)state;
	struct leaksnap_error err;
	struct leaksnap_diff_options o = {.sz = sizeof(struct leaksnap_diff_options)};
	assert_null(leaksnap_diff_new(&o, 1, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	o.by = (enum leaksnap_diff_by)9;
	assert_null(leaksnap_diff_new(&o, 2, &err));

	/* a 32-bit snapshot after a 64-bit one */
	struct rec r[] = {{8, 1, {0x55000001000, 0}}};
	size_t len;
	uint8_t *a = leaksnap_dump(r, 1, MAPS_AT("5500000", "/bin/app"), "", &len);
	const char *b32 = "Android Native Heap Dump v1.2\n\nBuild fingerprint: ''\n\n"
			  "Total memory: 8\nAllocation records: 1\nBacktrace size: 4\n\n"
			  "z 0  sz        8  num    1  bt f0001000\n"
			  "MAPS\nf0000000-f0009000 r-xp 00000000 fd:01 7 /bin/app\nEND\n";
	struct leaksnap_diff *d = new_diff(LEAKSNAP_DIFF_BY_STACK, 2);
	add(d, open_mem(a, len, "a64"));
	struct leaksnap_snapshot *s = open_mem(b32, strlen(b32), "b32");
	assert_int_not_equal(leaksnap_diff_add_snapshot(d, s, NULL, &err), 0);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.source, "b32");
	leaksnap_snapshot_close(s);
	/* ranking before every snapshot was added */
	assert_int_not_equal(leaksnap_diff_rank(d, &err), 0);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	leaksnap_diff_free(d);
	free(a);
}

/* Symbols known before the diff (options.symbols, a store's): every
 * frame of a module is answered by the callback with its path, build ID
 * and offset, no resolver is asked, and --by function groups by those
 * names: two stacks of other offsets, one name, are one group. */
struct known {
	int calls;
	struct leaksnap_sym_frame grow[2], other;
	const struct leaksnap_sym_module *module;
};

static int known_symbols(void *arg, const char *path, const uint8_t *build_id, size_t build_id_len,
			 uint64_t rel_pc, struct leaksnap_resolved *out, struct leaksnap_error *err)
{
	(void)err;
	struct known *k = arg;
	k->calls++;
	assert_string_equal(path, "/lib/libx.so");
	assert_int_equal(build_id_len, 4);
	assert_int_equal(build_id[0], 0x0a);
	*out = (struct leaksnap_resolved){k->module, NULL, 0};
	if (rel_pc == 0x1234 || rel_pc == 0x1240) { /* grow, inlined into main */
		out->frames = k->grow;
		out->frame_count = 2;
	} else if (rel_pc == 0x2000) {
		out->frames = &k->other;
		out->frame_count = 1;
	}
	return 0;
}

static void test_known_symbols(void **state)
{
	(void)state;
	struct rec r1[] = {{100, 1, {0x55000001234, 0x55000002000, 0}},
			   {10, 1, {0x55000001240, 0x55000002000, 0}},
			   {8, 1, {0x55000003000, 0}}};
	struct rec r2[] = {{100, 3, {0x55000001234, 0x55000002000, 0}},
			   {10, 5, {0x55000001240, 0x55000002000, 0}},
			   {8, 2, {0x55000003000, 0}}};
	size_t l1, l2;
	const char *meta = "build_id=0a0b0c0d /lib/libx.so\n";
	uint8_t *a = leaksnap_dump(r1, 3, MAPS_AT("5500000", "/lib/libx.so"), meta, &l1);
	uint8_t *b = leaksnap_dump(r2, 3, MAPS_AT("5500000", "/lib/libx.so"), meta, &l2);
	struct known k = {0, {{.function = "grow", .file = "g.c", .line = 3, .inlined = true},
			      {.function = "main", .file = "m.c", .line = 9}},
			  {.function = "caller", .file = "c.c", .line = 1}, NULL};
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = LEAKSNAP_DIFF_BY_FUNCTION,
		      .symbols = known_symbols, .symbols_arg = &k);
	struct leaksnap_error err;
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	assert_non_null(d);
	add(d, open_mem(a, l1, "a.dump"));
	add(d, open_mem(b, l2, "b.dump"));
	assert_int_equal(leaksnap_diff_rank(d, &err), 0);
	/* grow<main<caller twice (0x1234 and 0x1240): one group, 200 + 40 bytes */
	assert_int_equal(leaksnap_diff_suspect_count(d), 2);
	const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, 0);
	assert_non_null(g);
	assert_int_equal(g->bytes_delta, 240);
	assert_int_equal(g->stack_count, 2);
	assert_int_equal(leaksnap_diff_symbolize_group(d, g, &err), 0);
	assert_null(g->frames[0]->sym_module);
	assert_int_equal(g->frames[0]->sym_count, 2);
	assert_string_equal(g->frames[0]->sym[0].function, "grow");
	assert_true(g->frames[0]->sym[0].inlined);
	assert_string_equal(g->frames[0]->sym[1].function, "main");
	assert_string_equal(g->frames[1]->sym[0].function, "caller");
	assert_int_equal(g->site, 0);
	/* a frame the callback knows nothing of: module+offset */
	const struct leaksnap_diff_group *h = leaksnap_diff_suspect(d, 1);
	assert_int_equal(leaksnap_diff_symbolize_group(d, h, &err), 0);
	assert_int_equal(h->frames[0]->sym_count, 0);
	assert_int_equal(h->frames[0]->rel_pc, 0x3000);
	/* no modules were looked up: none to list */
	assert_int_equal(leaksnap_diff_symbol_module_count(d), 0);
	assert_true(k.calls >= 4);
	leaksnap_diff_free(d);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_suppressions_parse),
		cmocka_unit_test(test_build_id_and_path),
		cmocka_unit_test(test_reinstall_and_rebuild),
		cmocka_unit_test(test_group_face),
		cmocka_unit_test(test_trends),
		cmocka_unit_test(test_rank_order),
		cmocka_unit_test(test_symbolize_group_owner),
		cmocka_unit_test(test_shared_resolver),
		cmocka_unit_test(test_top_growing_stacks),
		cmocka_unit_test(test_growing_stack_delta),
		cmocka_unit_test(test_keep_duplicates),
		cmocka_unit_test(test_threaded_add),
		cmocka_unit_test(test_snapshot_build_id),
		cmocka_unit_test(test_reach_definite_first),
		cmocka_unit_test(test_reach_mixed_and_grouped),
		cmocka_unit_test(test_reach_zygote_and_none),
		cmocka_unit_test(test_reach_suppressions),
		cmocka_unit_test(test_sampled_figures),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_known_symbols),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
