/* leaksnap hook: sampled collection, the slow path (see sample.h; the
 * filter of sampled addresses is in sample_filter.c). */
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sample.h"

HOOK_TLS int64_t sample_left;
_Atomic int64_t sample_base;
/* Raised by this much at each sample_begin: far more than a counter holds
 * above the floor (LEAKSNAP_HOOK_SAMPLE_MAX), and 2^22 sessions before
 * the counters run out of room. */
#define BASE_STEP ((int64_t)1 << 40)
/* The session whose floor this thread's counter and generator follow (a
 * thread that sees another draws afresh) */
static HOOK_TLS int64_t sample_mine_base;
/* This thread's generator: a splitmix64 counter in the bits above 2; bit 0
 * set once seeded, bit 1 set while the distance in sample_left was cut at
 * the interval (its end is then no sample point). */
static HOOK_TLS uint64_t sample_rng;
#define RNG_SEEDED 1u
#define RNG_CUT 2u
#define RNG_STEP (0x9e3779b97f4a7c15ULL << 2)

/* Threads seeded so far: with LEAKSNAP_SAMPLE_SEED, the n-th thread to
 * draw gets the seed's n-th stream. */
static atomic_uint seeded_threads;

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(void)
{
	uint64_t s;
	if (hook_cfg.sample_seed) {
		unsigned n = atomic_fetch_add_explicit(&seeded_threads, 1, memory_order_relaxed);
		s = mix64(hook_cfg.sample_seed * 0xd1b54a32d192ed03ULL + n);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = mix64((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^
			  (uint64_t)syscall(SYS_gettid) << 17 ^ (uint64_t)(uintptr_t)&sample_left);
	}
	sample_rng = (s & ~(uint64_t)3) | RNG_SEEDED;
}

static uint64_t rng_next(void)
{
	sample_rng += RNG_STEP;
	return mix64(sample_rng & ~(uint64_t)3);
}

/* The natural logarithm of @x in (0, 1], to about 1e-16 (the hook links
 * no libm): x = m * 2^e with m in [1/sqrt 2, sqrt 2], ln m = 2 atanh(t)
 * for t = (m - 1) / (m + 1), |t| < 0.18, summed as a series. */
static double sample_log(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof(bits));
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ULL << 52) - 1)) | (1023ULL << 52);
	double m;
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double t = (m - 1) / (m + 1), t2 = t * t, term = t, sum = t;
	for (int k = 3; k <= 21; k += 2) {
		term *= t2;
		sum += term / k;
	}
	return 2 * sum + e * 0.6931471805599453;
}

/* @x rounded to the nearest whole number (halves away from zero), within
 * [0, UINT64_MAX]: llround without libm. */
static uint64_t sample_round(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0) /* 2^64 */
		return UINT64_MAX;
	uint64_t t = (uint64_t)x;
	if (x < 9007199254740992.0 && x - (double)t >= 0.5) /* below 2^53: x - t exact */
		t++;
	return t;
}

void sample_estimate_add(uint64_t size, uint64_t count, uint64_t interval, uint64_t *bytes,
			 uint64_t *blocks)
{
	double w = 1.0;
	if (interval && size && size < interval) {
		/* 1 / (1 - e^-x) for x in (0, 1): e^-x - 1 by its series in
		 * Horner form, -x (1 - x/2 (1 - x/3 (...))), to 1/20! */
		double x = (double)size / (double)interval, m = 1.0;
		for (int k = 20; k >= 2; k--)
			m = 1.0 - x / k * m;
		w = 1.0 / (x * m);
	}
	uint64_t b = sample_round((double)count * w * (double)size);
	uint64_t c = sample_round((double)count * w);
	*bytes = *bytes + b < *bytes ? UINT64_MAX : *bytes + b;
	*blocks = *blocks + c < *blocks ? UINT64_MAX : *blocks + c;
}

/* The distance to the next sample point, in whole bytes (>= 1), cut at
 * the interval (RNG_CUT set then). */
static int64_t draw(void)
{
	double u = (double)((rng_next() >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
	double d = -sample_log(u) * (double)hook_cfg.sample;
	if (d >= (double)hook_cfg.sample) {
		sample_rng |= RNG_CUT;
		return (int64_t)hook_cfg.sample;
	}
	sample_rng &= ~(uint64_t)RNG_CUT;
	return (int64_t)d + 1;
}

bool sample_take(size_t size)
{
	uint64_t interval = hook_cfg.sample;
	int64_t base = atomic_load_explicit(&sample_base, memory_order_relaxed);
	if (!interval) {
		sample_left = base;
		return true;
	}
	if (HOOK_UNLIKELY(sample_mine_base != base)) {
		/* a new session: this thread's counter and generator are the
		 * old one's */
		sample_mine_base = base;
		sample_rng = 0;
		sample_left = base - (int64_t)size;
	}
	if (size >= interval) {
		/* stands for itself, outside the walk */
		sample_left += (int64_t)size;
		return true;
	}
	/* the next point, from the start of this block */
	int64_t at = sample_left - base + (int64_t)size;
	if (HOOK_UNLIKELY(!(sample_rng & RNG_SEEDED))) {
		rng_seed();
		at = draw();
	} else if (at < 1) {
		at = 1; /* (passed while the hook could not look: here) */
	}
	bool sampled = false;
	while (at <= (int64_t)size) {
		if (!(sample_rng & RNG_CUT))
			sampled = true;
		at += draw();
	}
	sample_left = base + at - (int64_t)size;
	return sampled;
}

int sample_begin(void)
{
	/* every thread's next allocation takes the slow path and starts
	 * again there */
	atomic_fetch_add_explicit(&sample_base, BASE_STEP, memory_order_relaxed);
	atomic_store(&seeded_threads, 0);
	return sample_filter_begin();
}

void sample_fork_child(void)
{
	sample_rng = 0;
	sample_mine_base = 0; /* (the next allocation draws afresh) */
	sample_full();
	sample_filter_fork_child();
}
