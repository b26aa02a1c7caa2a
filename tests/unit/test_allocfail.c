/* Allocation-failure tests, in the way of jansson's chaos test: each
 * library call below is run again and again, with its Nth allocation made
 * to fail for N = 1, 2, ... until a run makes no Nth allocation (and so
 * succeeds).  Every failing run must return a clean error -- NULL or -1
 * with the error record filled with "out of memory" -- and free whatever
 * it had allocated; every run must leave no crash.
 *
 * The test is linked with -Wl,--wrap=malloc,... (Makefile), so the
 * library's own calls to malloc, calloc, realloc, strdup and strndup come
 * here; libc's, cmocka's and Jansson's do not.  Live blocks are counted
 * (a run must end with as many as it started with), and ASan/LSan watch
 * the same runs in the SANITIZE=1 build.
 *
 * Also here: memory is bounded by the input.  A header claiming a huge
 * record area in a tiny file is refused before anything that large is
 * allocated, and reading a real input never asks for much more memory
 * than its size justifies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/diff.h>
#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>

/* The wrapped allocator ----------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);

static unsigned long fail_at;   /* 0: never fail */
static unsigned long calls;     /* allocations since arm() */
static bool injected;           /* the fail_at'th allocation was refused */
static long live;               /* blocks allocated and not freed */
static size_t live_bytes, peak_bytes, largest; /* since arm() */

static bool refuse(size_t n)
{
	calls++;
	if (n > largest)
		largest = n;
	if (fail_at != 0 && calls == fail_at) {
		injected = true;
		return true;
	}
	return false;
}

static void *got(void *p)
{
	if (p != NULL) {
		live++;
		live_bytes += malloc_usable_size(p);
		if (live_bytes > peak_bytes)
			peak_bytes = live_bytes;
	}
	return p;
}

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	return refuse(n) ? NULL : got(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
	return refuse(n * size) ? NULL : got(__real_calloc(n, size));
}

char *__wrap_strdup(const char *s);
char *__wrap_strdup(const char *s)
{
	return refuse(strlen(s) + 1) ? NULL : got(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n);
char *__wrap_strndup(const char *s, size_t n)
{
	return refuse(strnlen(s, n) + 1) ? NULL : got(__real_strndup(s, n));
}

void __wrap_free(void *p);
void __wrap_free(void *p)
{
	if (p != NULL) {
		live--;
		live_bytes -= malloc_usable_size(p);
	}
	__real_free(p);
}

void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
	if (refuse(n))
		return NULL; /* the old block stays the caller's */
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __real_realloc(p, n);
	if (q == NULL)
		return NULL;
	if (p == NULL)
		return got(q);
	live_bytes = live_bytes - old + malloc_usable_size(q);
	if (live_bytes > peak_bytes)
		peak_bytes = live_bytes;
	return q;
}

static void arm(unsigned long n)
{
	fail_at = n;
	calls = 0;
	injected = false;
	live_bytes = peak_bytes = largest = 0;
}

static void disarm(void)
{
	fail_at = 0;
}

/* Inputs ---------------------------------------------------------------------- */

struct file {
	char *data;
	size_t len;
};

static struct file load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		fail_msg("%s: cannot open (run from the top directory)", path);
	struct file r = {__real_malloc(1 << 20), 0};
	assert_non_null(r.data);
	r.len = fread(r.data, 1, (1 << 20) - 1, f);
	assert_true(feof(f));
	fclose(f);
	r.data[r.len] = '\0';
	return r;
}

static void unload(struct file *f)
{
	__real_free(f->data);
}

/* The chaos loop ----------------------------------------------------------------
 * @run performs one library call on @arg and returns 0 when it succeeded
 * (having released what it made) or -1 with @err filled.  Returns how many
 * allocations the successful run made. */
typedef int (*run_fn)(void *arg, struct leaksnap_error *err);

static unsigned long chaos(const char *what, run_fn run, void *arg)
{
	for (unsigned long n = 1;; n++) {
		struct leaksnap_error err;
		memset(&err, 0, sizeof(err));
		long before = live;
		arm(n);
		int rc = run(arg, &err);
		disarm();
		if (live != before)
			fail_msg("%s: allocation %lu failed: %ld blocks leaked", what, n,
				 live - before);
		if (!injected) {
			if (rc != 0)
				fail_msg("%s: fails without an allocation failure: %s", what,
					 err.text);
			assert_int_equal(calls, n - 1);
			if (getenv("ALLOCFAIL_VERBOSE"))
				printf("%s: %lu allocations, each failed in turn\n", what, calls);
			return calls;
		}
		if (rc == 0)
			continue; /* the failure was absorbed (e.g. a shrinking realloc) */
		if (err.code != LEAKSNAP_ERR_NOMEM || err.text[0] == '\0')
			fail_msg("%s: allocation %lu failed: error code %d (%s), text '%s'", what,
				 n, err.code, leaksnap_code_string(err.code), err.text);
	}
}

/* Readers ------------------------------------------------------------------------ */

struct open_arg {
	const struct file *in;
	struct leaksnap_snapshot_open_opts opts;
	bool with_maps;      /* also parse the snapshot's maps */
};

static int run_open(void *p, struct leaksnap_error *err)
{
	struct open_arg *a = p;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(a->in->data, a->in->len,
								    "input", &a->opts, err);
	if (s == NULL)
		return -1;
	int rc = 0;
	if (a->with_maps) {
		size_t len;
		unsigned long line;
		uint64_t off;
		const char *text = leaksnap_snapshot_maps(s, &len, &line, &off);
		assert_non_null(text);
		struct leaksnap_maps *m = leaksnap_maps_parse(text, len, "input", line ? line : 1,
							      off, err);
		if (m == NULL)
			rc = -1;
		leaksnap_maps_free(m);
	}
	leaksnap_snapshot_close(s);
	return rc;
}

static void chaos_open(const char *path, unsigned pointer_size, unsigned frames,
		       bool with_maps, unsigned long min_allocs)
{
	struct file in = load(path);
	struct open_arg a = {&in,
			     {.sz = sizeof(a.opts), .pointer_size = pointer_size, .frames = frames},
			     with_maps};
	unsigned long n = chaos(path, run_open, &a);
	if (n < min_allocs)
		fail_msg("%s: only %lu allocations", path, n);
	unload(&in);
}

static void test_leaksnap_reader(void **state)
{
	(void)state;
	chaos_open("tests/fuzz/corpus/detect/sample64le.dump", 0, 0, true, 5);
	chaos_open("tests/fuzz/corpus/detect/sample32be.dump", 0, 0, true, 5);
	chaos_open("tests/fuzz/corpus/detect/android7-flagged.dump", 0, 0, false, 3);
	chaos_open("tests/fuzz/corpus/detect/reach64be.dump", 0, 0, true, 5);
	chaos_open("tests/fuzz/corpus/detect/reach32be.dump", 0, 0, false, 3);
}

/* leaksnap_snapshot_open on a path (mmap), then --maps FILE's leaksnap_snapshot_set_maps. */
static int run_open_path(void *p, struct leaksnap_error *err)
{
	const struct file *maps = p;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open("testdata/text/v1.1-padded-64.txt",
							     NULL, err);
	if (s == NULL)
		return -1;
	int rc = leaksnap_snapshot_set_maps(s, maps->data, maps->len, err);
	leaksnap_snapshot_close(s);
	return rc;
}

static void test_open_path(void **state)
{
	(void)state;
	struct file maps = load("testdata/maps/sample64.maps");
	assert_true(chaos("leaksnap_snapshot_open", run_open_path, &maps) >= 5);
	unload(&maps);
}

static void test_text_reader(void **state)
{
	(void)state;
	chaos_open("testdata/text/v1.2-signal-64.txt", 0, 0, true, 5);
	chaos_open("testdata/text/v1.0-android7-32.txt", 0, 0, true, 5);
	chaos_open("testdata/text/v1.2-btinfo-32-crlf.txt", 0, 0, true, 5);
	chaos_open("testdata/demo/app-heap.txt", 0, 0, true, 5);
}

static void test_nhgt_reader(void **state)
{
	(void)state;
	chaos_open("tests/fuzz/corpus/detect/sample64.nhgt", 0, 0, true, 3);
	chaos_open("tests/fuzz/corpus/detect/sample-old.nhgt", 0, 0, true, 3);
}

static void test_raw_reader(void **state)
{
	(void)state;
	/* The raw corpus entries carry two bytes of harness options first. */
	struct file in = load("tests/fuzz/corpus/raw/sample64.raw");
	struct file body = {in.data + 2, in.len - 2};
	struct open_arg a = {&body, {.sz = sizeof(a.opts), .pointer_size = 8, .frames = 4}, false};
	assert_true(chaos("sample64.raw", run_open, &a) >= 3);
	unload(&in);
}

/* Maps ------------------------------------------------------------------------------ */

static int run_maps(void *p, struct leaksnap_error *err)
{
	const struct file *in = p;
	struct leaksnap_maps *m = leaksnap_maps_parse(in->data, in->len, "maps", 1, 0, err);
	if (m == NULL)
		return -1;
	leaksnap_maps_free(m);
	return 0;
}

static void test_maps(void **state)
{
	(void)state;
	const char *files[] = {"testdata/maps/sample64.maps", "testdata/maps/sample32.maps"};
	for (size_t i = 0; i < 2; i++) {
		struct file in = load(files[i]);
		assert_true(chaos(files[i], run_maps, &in) >= 3);
		unload(&in);
	}
}

/* Diff ------------------------------------------------------------------------------- */

struct diff_arg {
	struct leaksnap_snapshot *snaps[3];
	struct leaksnap_maps *maps[3];
	size_t n;
	enum leaksnap_diff_by by;
	const struct file *supp_text;
};

static int count_stack(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
		       uint64_t bytes)
{
	(void)frames;
	(void)n;
	(void)bytes;
	++*(size_t *)arg;
	return 0;
}

static int run_diff(void *p, struct leaksnap_error *err)
{
	struct diff_arg *a = p;
	struct leaksnap_diff_suppressions *supp = NULL;
	if (a->supp_text != NULL) {
		supp = leaksnap_diff_suppressions_parse(a->supp_text->data, a->supp_text->len,
							"supp", err);
		if (supp == NULL)
			return -1;
	}
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = a->by, .suppressions = supp);
	struct leaksnap_diff *d = leaksnap_diff_new(&o, a->n, err);
	int rc = d ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < a->n; i++)
		rc = leaksnap_diff_add_snapshot(d, a->snaps[i], a->maps[i], err);
	if (rc == 0)
		rc = leaksnap_diff_rank(d, err);
	if (rc == 0) {
		assert_true(leaksnap_diff_suspect_count(d) > 0);
		for (size_t i = 0; rc == 0 && i < leaksnap_diff_suspect_count(d); i++) {
			const struct leaksnap_diff_group *g = leaksnap_diff_suspect(d, i);
			if (g == NULL) {
				/* A view is made on access; NULL only when out of memory. */
				assert_true(injected);
				err->code = LEAKSNAP_ERR_NOMEM;
				snprintf(err->text, sizeof(err->text), "out of memory");
				rc = -1;
				break;
			}
			rc = leaksnap_diff_symbolize_group(d, g, err);
		}
		/* the one-off leaks' views too (reachability) */
		for (size_t i = 0; rc == 0 && i < leaksnap_diff_unreachable_count(d); i++)
			if (leaksnap_diff_unreachable(d, i) == NULL) {
				assert_true(injected);
				err->code = LEAKSNAP_ERR_NOMEM;
				snprintf(err->text, sizeof(err->text), "out of memory");
				rc = -1;
			}
	}
	if (rc == 0) {
		size_t stacks = 0;
		rc = leaksnap_diff_foreach_growing_stack(d, count_stack, &stacks, err) ? -1 : 0;
		if (rc == 0)
			assert_true(stacks > 0);
	}
	leaksnap_diff_free(d);
	leaksnap_diff_suppressions_free(supp);
	return rc;
}

/* @times (NULL: as they are): the capture times to give the LEAKSNAP
 * dumps at @paths, in seconds after theirs. */
static void diff_inputs_at(struct diff_arg *a, const char *const paths[3], const int *times)
{
	for (size_t i = 0; i < 3; i++) {
		struct file in = load(paths[i]);
		struct leaksnap_error err;
		for (int b = 0; times && b < 8; b++) /* the header's time_ns, at byte 24 */
			in.data[24 + b] = (char)((1763720553123456789ull +
						  (uint64_t)times[i] * 1000000000u) >> (8 * b));
		a->snaps[i] = leaksnap_snapshot_open_memory(in.data, in.len, paths[i], NULL, &err);
		assert_non_null(a->snaps[i]);
		size_t len;
		unsigned long line;
		uint64_t off;
		const char *text = leaksnap_snapshot_maps(a->snaps[i], &len, &line, &off);
		a->maps[i] = leaksnap_maps_parse(text, len, paths[i], line ? line : 1, off, &err);
		assert_non_null(a->maps[i]);
		unload(&in);
	}
}

static void diff_inputs(struct diff_arg *a, const char *const paths[3])
{
	diff_inputs_at(a, paths, NULL);
}

/* The reach-diff series (tests/tools/mkfixture.c): the unreachable sums are
 * made once the first snapshot has them, and grouped by site too. */
static void test_diff_reachability(void **state)
{
	(void)state;
	static const char *const paths[] = {"tests/fuzz/corpus/detect/reach-diff1.dump",
					    "tests/fuzz/corpus/detect/reach-diff2.dump",
					    "tests/fuzz/corpus/detect/reach-diff3.dump"};
	struct diff_arg a = {.n = 3};
	diff_inputs(&a, paths);
	for (int by = LEAKSNAP_DIFF_BY_STACK; by <= LEAKSNAP_DIFF_BY_SITE; by++) {
		a.by = (enum leaksnap_diff_by)by;
		char what[64];
		snprintf(what, sizeof(what), "reachability diff --by %s",
			 leaksnap_diff_by_name(a.by));
		assert_true(chaos(what, run_diff, &a) >= 10);
	}
	for (size_t i = 0; i < 3; i++) {
		leaksnap_maps_free(a.maps[i]);
		leaksnap_snapshot_close(a.snaps[i]);
	}
}

/* The same series given out of capture order: the diff puts the
 * snapshots of the run (one pid, program and load address) in order, and
 * a failure on the way leaks nothing. */
static void test_diff_reordered(void **state)
{
	(void)state;
	static const char *const paths[] = {"tests/fuzz/corpus/detect/reach-diff3.dump",
					    "tests/fuzz/corpus/detect/reach-diff1.dump",
					    "tests/fuzz/corpus/detect/reach-diff2.dump"};
	static const int times[] = {3, 1, 2};
	struct diff_arg a = {.n = 3};
	diff_inputs_at(&a, paths, times);
	assert_true(chaos("reordered diff", run_diff, &a) >= 10);
	for (size_t i = 0; i < 3; i++) {
		leaksnap_maps_free(a.maps[i]);
		leaksnap_snapshot_close(a.snaps[i]);
	}
}

static void test_diff(void **state)
{
	(void)state;
	const char *paths[] = {"testdata/diff/trend1.txt", "testdata/diff/trend2.txt",
			       "testdata/diff/trend3.txt"};
	struct diff_arg a = {.n = 3};
	for (size_t i = 0; i < 3; i++) {
		struct file in = load(paths[i]);
		struct leaksnap_error err;
		a.snaps[i] = leaksnap_snapshot_open_memory(in.data, in.len, paths[i], NULL, &err);
		assert_non_null(a.snaps[i]);
		size_t len;
		unsigned long line;
		uint64_t off;
		const char *text = leaksnap_snapshot_maps(a.snaps[i], &len, &line, &off);
		a.maps[i] = leaksnap_maps_parse(text, len, paths[i], line, off, &err);
		assert_non_null(a.maps[i]);
		unload(&in);
	}
	struct file supp = load("testdata/diff/suppressions.txt");
	for (int by = LEAKSNAP_DIFF_BY_STACK; by <= LEAKSNAP_DIFF_BY_MODULE; by++) {
		a.by = (enum leaksnap_diff_by)by;
		a.supp_text = by == LEAKSNAP_DIFF_BY_SITE ? &supp : NULL;
		char what[64];
		snprintf(what, sizeof(what), "diff --by %s", leaksnap_diff_by_name(a.by));
		assert_true(chaos(what, run_diff, &a) >= 10);
	}
	unload(&supp);
	for (size_t i = 0; i < 3; i++) {
		leaksnap_maps_free(a.maps[i]);
		leaksnap_snapshot_close(a.snaps[i]);
	}
}

/* Memory bounded by the input ----------------------------------------------------------- */

static void le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Headers that claim a 10 GB record area in a 100-byte file are refused
 * with an error, and no allocation on the way is larger than the file. */
static void test_huge_claims(void **state)
{
	(void)state;
	uint8_t buf[100];
	struct leaksnap_error err;
	const uint64_t huge = (uint64_t)10 << 30;

	/* LEAKSNAP: records_size = 10 GB (a multiple of info_size 48). */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "LEAKSNAP", 8);
	le(buf + 8, 1, 2);
	buf[10] = 8;
	le(buf + 12, 4, 4);
	le(buf + 40, 48, 8);
	le(buf + 48, huge / 48 * 48, 8);
	arm(0);
	assert_null(leaksnap_snapshot_open_memory(buf, sizeof(buf), "huge.dump", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_true(err.has_offset && err.offset == 48);
	assert_true(largest <= sizeof(buf));

	/* The same in maps_size. */
	le(buf + 48, 0, 8);
	le(buf + 56, huge, 8);
	arm(0);
	assert_null(leaksnap_snapshot_open_memory(buf, sizeof(buf), "huge.dump", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_true(err.has_offset && err.offset == 56);
	assert_true(largest <= sizeof(buf));

	/* NHGT (new header, 8-byte fields): allocSize = 10 GB. */
	memset(buf, 0, sizeof(buf));
	le(buf, 0x812345ddu, 4);
	le(buf + 4, 2, 2);
	le(buf + 6, 8, 2);
	le(buf + 16, huge / 48 * 48, 8); /* allocSize */
	le(buf + 24, 48, 8);             /* allocInfoSize: 8 * (2 + 4) */
	le(buf + 40, 4, 8);              /* backtraceSize */
	arm(0);
	assert_null(leaksnap_snapshot_open_memory(buf, sizeof(buf), "huge.nhgt", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_true(largest <= sizeof(buf));

	/* Text: a record claiming 4 billion allocations of 2^40 bytes is a
	 * number, not an allocation. */
	static const char text[] =
		"Android Native Heap Dump v1.2\n\nBuild fingerprint: 'x'\n\n"
		"Total memory: 0\nAllocation records: 1\nBacktrace size: 4\n\n"
		"z 0  sz 1099511627776  num 4000000000  bt 1000\nMAPS\nEND\n";
	arm(0);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(text, sizeof(text) - 1,
								    "huge.txt", NULL, &err);
	if (s == NULL)
		assert_int_not_equal(err.code, LEAKSNAP_ERR_NOMEM);
	leaksnap_snapshot_close(s);
	assert_true(largest <= 64 * 1024);
}

/* Reading real inputs: the peak of live memory stays within a small
 * multiple of the input's size (plus a fixed 16 KiB for tables' first
 * sizes). */
static void test_memory_bounded_by_input(void **state)
{
	(void)state;
	const char *files[] = {
		"tests/fuzz/corpus/detect/sample64le.dump",
		"tests/fuzz/corpus/detect/sample64.nhgt",
		"testdata/text/v1.2-signal-64.txt",
		"testdata/text/v1.1-padded-64.txt",
		"testdata/demo/app-heap.txt",
		"testdata/diff/run2.txt",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct file in = load(files[i]);
		struct open_arg a = {&in, {.sz = sizeof(a.opts)}, true};
		struct leaksnap_error err;
		arm(0);
		assert_int_equal(run_open(&a, &err), 0);
		size_t bound = 8 * in.len + 16 * 1024;
		if (getenv("ALLOCFAIL_VERBOSE"))
			printf("%s: %zu bytes of input, %zu bytes at peak\n", files[i], in.len,
			       peak_bytes);
		if (peak_bytes > bound)
			fail_msg("%s: %zu bytes at peak for %zu bytes of input", files[i],
				 peak_bytes, in.len);
		unload(&in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaksnap_reader),
		cmocka_unit_test(test_text_reader),
		cmocka_unit_test(test_open_path),
		cmocka_unit_test(test_nhgt_reader),
		cmocka_unit_test(test_raw_reader),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_reachability),
		cmocka_unit_test(test_diff_reordered),
		cmocka_unit_test(test_huge_claims),
		cmocka_unit_test(test_memory_bounded_by_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
