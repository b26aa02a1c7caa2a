/* Unit tests for hook/sample.c and hook/sample_filter.c: the draws of
 * sampled collection (LEAKSNAP_SAMPLE) with a fixed seed, and the filter
 * of sampled addresses, its growth and its lock-free protocol, over a
 * stand-in for the hook's tables (the shards' slots, as table_internal.h
 * lays them out, under mutexes of this file).
 *
 * Every expectation below is exact for the seeds used (the generator is
 * deterministic); the tolerances are those of sampling theory (about 2.5
 * standard deviations), so another generator of the right distribution
 * passes as well. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sample.h"
#include "table_internal.h"

/* What the sampling files take from the rest of the hook ----------------- */

struct hook_config hook_cfg;
struct shard shards[NSHARDS];

void *hook_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void hook_unmap(void *p, size_t size)
{
	munmap(p, size);
}

void hook_report(atomic_bool *once, const char *fmt, ...)
{
	(void)once;
	(void)fmt;
}

/* The stand-in tables: shard i holds thread i's blocks, packed at the
 * front of its slots (what the growth's scan reads: key 0 is empty). */
#define FAKE_CAP (1u << 17)
static pthread_mutex_t fake_locks[NSHARDS];
static __thread int fake_holds_all;
static atomic_ulong lock_all_count;

void table_lock_all(void)
{
	for (unsigned i = 0; i < NSHARDS; i++)
		pthread_mutex_lock(&fake_locks[i]);
	fake_holds_all = 1;
	atomic_fetch_add(&lock_all_count, 1);
}

void table_unlock_all(void)
{
	fake_holds_all = 0;
	for (unsigned i = NSHARDS; i-- > 0;)
		pthread_mutex_unlock(&fake_locks[i]);
}

bool table_busy_here(void)
{
	return fake_holds_all;
}

static void fake_tables(void)
{
	for (unsigned i = 0; i < NSHARDS; i++) {
		pthread_mutex_init(&fake_locks[i], NULL);
		if (!shards[i].slots)
			shards[i].slots = hook_map(FAKE_CAP * sizeof(struct ptr_slot));
		assert_non_null(shards[i].slots);
		memset(shards[i].slots, 0, FAKE_CAP * sizeof(struct ptr_slot));
		shards[i].mask = FAKE_CAP - 1;
		shards[i].live = 0;
	}
}

static void fake_insert(unsigned shard, uintptr_t key)
{
	struct shard *s = &shards[shard];
	pthread_mutex_lock(&fake_locks[shard]);
	s->slots[s->live++].key = key;
	pthread_mutex_unlock(&fake_locks[shard]);
}

/* Remove the block at @i of @shard (its last one takes its place). */
static void fake_remove(unsigned shard, size_t i)
{
	struct shard *s = &shards[shard];
	pthread_mutex_lock(&fake_locks[shard]);
	s->slots[i].key = s->slots[--s->live].key;
	s->slots[s->live].key = 0;
	pthread_mutex_unlock(&fake_locks[shard]);
}

/* A session of sampled collection at @interval with @seed. */
static void session(uint64_t interval, uint64_t seed)
{
	hook_cfg.sample = interval;
	hook_cfg.sample_seed = seed;
	assert_int_equal(sample_begin(), 0);
}

/* The hook's way: the fast path, then the slow one. */
static bool sampled(size_t size)
{
	return !sample_skip(size) && sample_take(size);
}

/* Draws ------------------------------------------------------------------- */

/* One byte at a time, the sample points' spacing is the interval on
 * average: 4M bytes at 4096 draw 1024 points (sd 32). */
static void test_mean_distance(void **state)
{
	(void)state;
	fake_tables();
	session(4096, 11);
	const uint64_t bytes = (uint64_t)4 << 20;
	uint64_t points = 0, last = 0;
	double sum_sq = 0;
	for (uint64_t i = 1; i <= bytes; i++) {
		if (sampled(1)) {
			double d = (double)(i - last);
			sum_sq += d * d;
			points++;
			last = i;
		}
	}
	double mean = (double)bytes / (double)points;
	assert_true(points >= 1024 - 80 && points <= 1024 + 80);
	assert_true(fabs(mean - 4096) < 4096 * 0.08);
	/* exponential: E[d^2] = 2 mean^2 */
	double second = sum_sq / (double)points;
	assert_true(fabs(second / (2.0 * 4096 * 4096) - 1) < 0.2);
}

/* A block of the interval or more is always sampled, among small ones and
 * at any point of the walk; never one of 0 bytes. */
static void test_big_always(void **state)
{
	(void)state;
	fake_tables();
	session(65536, 3);
	uint64_t rs = 12345;
	for (int i = 0; i < 100000; i++) {
		rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
		size_t small = 1 + (size_t)(rs % 2000);
		(void)sampled(small);
		size_t big = 65536 + (size_t)((rs >> 20) % 1000000);
		if (i % 10 == 0)
			assert_true(sampled(big));
		if (i % 1000 == 0)
			assert_true(sampled(65536));
	}
	for (int i = 0; i < 1000; i++)
		assert_false(sampled(0));
}

/* The fraction of blocks of size s sampled is 1 - e^(-s/interval), also
 * for blocks near the interval, where most distances drawn were cut at
 * the interval (a cut's end is no sample point: were it one, every block
 * that spans a cut would be sampled). */
static double fraction(size_t size, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++)
		k += sampled(size);
	return (double)k / n;
}

static void test_cut_at_interval(void **state)
{
	(void)state;
	fake_tables();
	session(1000, 5);
	const int n = 200000;
	static const size_t sizes[] = {10, 100, 500, 900, 999};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double p = 1 - exp(-(double)sizes[i] / 1000);
		double sd = sqrt(p * (1 - p) / n);
		double got = fraction(sizes[i], n);
		if (fabs(got - p) > 3 * sd)
			fail_msg("blocks of %zu: %.4f sampled, expected %.4f (sd %.4f)", sizes[i], got, p,
				 sd);
		/* the counter never holds more than the interval above the floor */
		int64_t ahead = sample_left - atomic_load(&sample_base);
		assert_true(ahead >= 0 && ahead <= 1000);
	}
}

/* A new session: the thread's counter (far ahead after a session at
 * 1 GiB) starts again, and with the same seed the same draws come. */
static void test_new_session(void **state)
{
	(void)state;
	fake_tables();
	session(1u << 30, 9);
	assert_false(sampled(100)); /* the first draw: (almost surely) far away */
	for (int i = 0; i < 100; i++)
		assert_false(sampled(100000));
	session(4096, 9);
	/* the counter is at the floor: the slow path at once */
	assert_false(sample_skip(1));
	assert_true(sampled(100000));
	char first[2000], again[2000];
	for (int i = 0; i < 2000; i++)
		first[i] = sampled(64);
	session(4096, 9);
	for (int i = 0; i < 2000; i++)
		again[i] = sampled(64);
	assert_memory_equal(first, again, sizeof(first));
	int k = 0;
	for (int i = 0; i < 2000; i++)
		k += first[i];
	/* 1 - e^(-1/64) of 2000: 31 (sd 5.5) */
	assert_true(k >= 17 && k <= 45);
	/* another seed, other draws */
	session(4096, 10);
	for (int i = 0; i < 2000; i++)
		again[i] = sampled(64);
	assert_true(memcmp(first, again, sizeof(first)) != 0);
	/* full tracking: every block */
	session(0, 0);
	sample_full();
	for (int i = 0; i < 100; i++)
		assert_true(sampled(1));
	assert_null(sample_filter_now());
}

/* The filter ------------------------------------------------------------- */

/* Record @p as the hook does (filter, table, filter again). */
static void enter(unsigned shard, uintptr_t p)
{
	struct sample_filter *f = sample_filter_add((void *)p);
	fake_insert(shard, p);
	sample_filter_added((void *)p, f);
}

/* Of @n addresses that are not sampled, how many the filter may have. */
static size_t false_maybes(uintptr_t base, size_t n)
{
	size_t k = 0;
	struct sample_filter *f = sample_filter_now();
	for (size_t i = 0; i < n; i++)
		k += sample_filter_may_have(f, (void *)(base + 48 * i));
	return k;
}

/* The filter grows with the sampled blocks: 65,536 sampled blocks (4 GiB of
 * small blocks at 64 KiB sampling) leave about 1 - e^(-1/16) (6%) of the
 * other frees a "maybe", 7% at most (a filter of 65,536 counters: 63%). */
static void test_filter_grows(void **state)
{
	(void)state;
	fake_tables();
	session(65536, 1);
	assert_int_equal(sample_filter_now()->counters, (size_t)1 << SAMPLE_FILTER_MIN_BITS);
	const uintptr_t heap = (uintptr_t)0x7f1200000000ULL;
	for (size_t i = 0; i < 65536; i++)
		enter(0, heap + 65536 * i + 16);
	struct sample_filter *f = sample_filter_now();
	assert_true(f->counters >= (size_t)65536 * SAMPLE_FILTER_LOAD - 64 * SAMPLE_FILTER_LOAD);
	for (size_t i = 0; i < 65536; i++)
		assert_true(sample_filter_may_have(f, (void *)(heap + 65536 * i + 16)));
	size_t fp = false_maybes(heap + 8, 1000000);
	assert_true(fp < 1000000 * 0.07);
	/* the same filter (cleared) in the next session */
	session(65536, 1);
	assert_ptr_equal(sample_filter_now(), f);
	assert_int_equal(false_maybes(heap + 8, 100000), 0);
}

/* Threads that allocate and free sampled blocks while the filter grows
 * under them: a free never hears "no" for a live sampled block. */
#define THREADS 4
struct worker {
	unsigned shard;
	unsigned long frees, misses;
	int rounds;
	uint64_t seed;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct shard *s = &shards[w->shard];
	uint64_t rs = 0x9e3779b97f4a7c15ULL * (w->shard + 1) + w->seed, next = 1;
	for (int r = 0; r < w->rounds; r++) {
		/* up to this many live, then down to a few */
		size_t top = 1000 + (size_t)(rs % 30000);
		for (int phase = 0; phase < 2; phase++) {
			for (;;) {
				rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
				bool grow = phase == 0 ? rs % 4 != 0 : rs % 4 == 0;
				size_t live = s->live; /* (only this thread changes it) */
				if (phase == 0 && live >= top)
					break;
				if (phase == 1 && live < 10)
					break;
				if (grow || !live) {
					uintptr_t p = ((uintptr_t)(w->shard + 1) << 40) + 16 * next++;
					enter(w->shard, p);
					continue;
				}
				size_t i = (size_t)((rs >> 16) % live);
				uintptr_t p = s->slots[i].key;
				struct sample_filter *f = sample_filter_now();
				w->frees++;
				if (!sample_filter_may_have(f, (void *)p))
					w->misses++;
				fake_remove(w->shard, i);
				sample_filter_del(f, (void *)p);
			}
		}
	}
	return NULL;
}

static void test_filter_concurrent(void **state)
{
	(void)state;
	for (int round = 0; round < 8; round++) {
		fake_tables();
		session(65536, 1);
		/* from a filter of 256 counters: eight growths or so a round */
		struct sample_filter *small = hook_map(sizeof(*small) + 256 * sizeof(atomic_uint));
		if (!small)
			abort();
		small->counters = 256;
		small->shift = 64 - 8;
		atomic_store(&sample_filter, small);
		unsigned long grown = atomic_load(&lock_all_count);
		pthread_t t[THREADS];
		struct worker w[THREADS];
		for (unsigned i = 0; i < THREADS; i++) {
			w[i] = (struct worker){.shard = i, .rounds = 1, .seed = (uint64_t)round};
			assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
		}
		unsigned long frees = 0, misses = 0;
		for (unsigned i = 0; i < THREADS; i++) {
			pthread_join(t[i], NULL);
			frees += w[i].frees;
			misses += w[i].misses;
		}
		assert_true(frees > 10000);
		assert_int_equal(misses, 0);
		/* it did grow meanwhile */
		assert_true(atomic_load(&lock_all_count) >= grown + 2);
		assert_true(sample_filter_now()->counters > (size_t)1 << SAMPLE_FILTER_MIN_BITS);
	}
}

/* The stats' estimates (sample_estimate_add, without libm) are the readers'
 * (libsnapshot's leaksnap_sample_estimate: -1 / expm1(-s/B), llround) to
 * the unit, over sizes across the interval, counts and intervals, but where
 * the readers' figure before rounding is within a rounding error of a half
 * (the two weights may differ in their last bit): then by one at most.  Sums
 * saturate. */
static uint64_t ref_round(double x)
{
	return x > 0 ? (uint64_t)llround(x) : 0;
}

/* @got is @want's rounding, or one off it when @want is a half within
 * 1e-12 of its size */
static bool near(uint64_t got, double want)
{
	if (got == ref_round(want))
		return true;
	double frac = want - floor(want);
	return fabs(frac - 0.5) <= want * 1e-12 && fabs((double)got - want) < 1.0;
}

static void test_estimate(void **state)
{
	(void)state;
	static const uint64_t intervals[] = {1, 7, 640, 4096, 65536, 1u << 30};
	unsigned long checked = 0, halves = 0;
	for (size_t k = 0; k < sizeof(intervals) / sizeof(intervals[0]); k++) {
		uint64_t iv = intervals[k];
		for (uint64_t size = 1; size <= iv + iv / 8 + 2; size += size / 64 + 1) {
			double w = size < iv ? -1.0 / expm1(-(double)size / (double)iv) : 1.0;
			for (uint64_t count = 1; count <= 100000; count = count * 3 + 1) {
				uint64_t b = 0, c = 0;
				double wb = (double)count * w * (double)size, wc = (double)count * w;
				sample_estimate_add(size, count, iv, &b, &c);
				if (!near(b, wb) || !near(c, wc))
					fail_msg("size %llu count %llu interval %llu: %llu %llu, "
						 "expected %.3f %.3f",
						 (unsigned long long)size, (unsigned long long)count,
						 (unsigned long long)iv, (unsigned long long)b,
						 (unsigned long long)c, wb, wc);
				halves += b != ref_round(wb) || c != ref_round(wc);
				checked++;
			}
		}
	}
	/* the knife edges are rare */
	assert_true(halves * 1000 < checked);
	assert_true(checked > 10000);
	/* added to what is there; no interval: the figures themselves */
	uint64_t b = 5, c = 1;
	sample_estimate_add(100, 3, 0, &b, &c);
	assert_int_equal(b, 305);
	assert_int_equal(c, 4);
	/* saturating */
	b = UINT64_MAX - 1;
	c = UINT64_MAX;
	sample_estimate_add(64, 2, 4096, &b, &c);
	assert_true(b == UINT64_MAX && c == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mean_distance),
		cmocka_unit_test(test_big_always),
		cmocka_unit_test(test_cut_at_interval),
		cmocka_unit_test(test_new_session),
		cmocka_unit_test(test_filter_grows),
		cmocka_unit_test(test_filter_concurrent),
		cmocka_unit_test(test_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
