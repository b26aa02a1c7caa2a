/* leaksnap hook: sampled collection (LEAKSNAP_SAMPLE=BYTES, docs/hook.md).
 *
 * Sampling is by bytes: each thread walks along the bytes it allocates,
 * and sample points fall on that line as a Poisson process with mean
 * spacing BYTES.  A block under BYTES is recorded when a point falls
 * inside it (probability 1 - e^(-size/BYTES)); a block of BYTES or more
 * is always recorded and takes no part in the walk.
 *
 * The fast path is sample_skip(): a subtraction and a compare of a
 * thread-local counter with a global floor, sample_base.  The counter is
 * kept relative to the floor and never holds more than BYTES above it (a
 * distance drawn longer is cut at BYTES, and the exponential's lack of
 * memory lets the slow path draw afresh from there), so that a block of
 * BYTES or more always reaches the slow path.  When sampling is off the
 * counter stays at the floor or below, and the slow path is the full
 * tracking.  Each start of collection (sample_begin) raises the floor far
 * above any counter a thread kept from the session before, so that every
 * thread's next allocation takes the slow path, which sees the new
 * session's generation and draws afresh (an in-app stop then start with
 * another interval).
 *
 * A free learns whether its block was sampled from a filter of counters
 * indexed by the address's hash, read without a lock: a zero means "not
 * sampled" and the free goes straight to the allocator; only a free whose
 * counter is not zero takes the table's lock (sampled blocks, and the
 * rare unsampled one that shares a counter with one).  The filter grows
 * with the sampled blocks (sample_filter.c): it is rebuilt from the table
 * at twice or more the size, and the new one published, with every table
 * lock held, so that a free never misses a sampled block (below). */
#ifndef LEAKSNAP_HOOK_SAMPLE_H
#define LEAKSNAP_HOOK_SAMPLE_H

#include "hook_internal.h"

/* sample_base plus the bytes to go on this thread to the next sample point
 * (or to the point where the drawn distance was cut); sample_base or less
 * in full tracking. */
extern HOOK_TLS int64_t sample_left;
/* The floor of this session's counters (raised at each sample_begin). */
extern _Atomic int64_t sample_base;

/* True when the allocation of @size bytes is not sampled: it is then not
 * recorded at all. */
static inline __attribute__((always_inline)) bool sample_skip(size_t size)
{
	sample_left -= (int64_t)size;
	return sample_left > atomic_load_explicit(&sample_base, memory_order_relaxed);
}

/* Full tracking: this thread's counter at the floor. */
static inline void sample_full(void)
{
	sample_left = atomic_load_explicit(&sample_base, memory_order_relaxed);
}

/* The slow path, once sample_skip() said no and the allocation is to be
 * tracked: true when it is sampled (the next distance is drawn then).
 * In full tracking, true (and the counter is reset). */
bool sample_take(size_t size);

/* The estimated bytes and blocks of @count sampled blocks of @size at
 * @interval, each rounded to the nearest integer, added to @bytes and
 * @blocks: libsnapshot's leaksnap_sample_estimate() (a block under the
 * interval stands for 1 / (1 - e^(-size/interval)) blocks), computed
 * without libm, for the control socket's stats: the same figures but where
 * one lies within a rounding error of a half (then it may round the other
 * way). */
void sample_estimate_add(uint64_t size, uint64_t count, uint64_t interval, uint64_t *bytes,
			 uint64_t *blocks);

/* The filter of sampled addresses: 2^bits counters, one per hash bucket,
 * each the number of sampled blocks (live, or a few more) in it. */
struct sample_filter {
	unsigned shift;   /* 64 - bits */
	size_t counters;  /* 2^bits */
	size_t map_size;  /* bytes mapped */
	atomic_uint c[];
};
#define SAMPLE_FILTER_MIN_BITS 10 /* 4 KiB */
#define SAMPLE_FILTER_MAX_BITS 30
/* It grows when it holds more than one sampled block in this many counters,
 * to at least twice that many per block. */
#define SAMPLE_FILTER_LOAD 16

/* The filter in use (NULL in full tracking).  Published with release,
 * read with acquire: a reader sees the counts it was built with. */
extern _Atomic(struct sample_filter *) sample_filter;

/* Lock-free protocol (rules that keep a sampled block's counter above 0
 * in whatever filter a free of it reads):
 *  - an allocation adds to the filter in use before its table insert
 *    (sample_filter_add), and after the insert adds to the filter then in
 *    use, if another (sample_filter_added): a growth that took its table
 *    locks before the insert counted the block from the table, one after it
 *    is seen as a changed filter (the insert's lock orders it);
 *  - a free reads the filter once, before its table remove, and takes
 *    from that one (sample_filter_del): if it is the filter a growth built,
 *    the remove follows the growth's scan, which counted the block or was
 *    followed by the allocation's add to it;
 *  - an old filter is never unmapped (a free may still read it).
 * A race can leave a counter one too high (a block counted twice, or taken
 * from the old filter after the scan counted it in the new): a false
 * "maybe" until the next growth counts afresh, never a false "no". */
static inline struct sample_filter *sample_filter_now(void)
{
	return atomic_load_explicit(&sample_filter, memory_order_acquire);
}

static inline atomic_uint *sample_filter_slot(struct sample_filter *f, const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL;
	return &f->c[h >> f->shift];
}

/* The live sampled blocks, roughly: each thread's changes, given to
 * sample_live every SAMPLE_LIVE_BATCH of them. */
extern HOOK_TLS int sample_live_mine;
extern _Atomic int64_t sample_live;
#define SAMPLE_LIVE_BATCH 64

/* Grow the filter if it is too full for sample_live blocks (not while
 * this thread is inside the tables). */
void sample_filter_grow(void);

static inline void sample_live_note(int d)
{
	sample_live_mine += d;
	if (HOOK_UNLIKELY(sample_live_mine >= SAMPLE_LIVE_BATCH ||
			  sample_live_mine <= -SAMPLE_LIVE_BATCH)) {
		int64_t n = atomic_fetch_add_explicit(&sample_live, sample_live_mine,
						      memory_order_relaxed) + sample_live_mine;
		sample_live_mine = 0;
		struct sample_filter *f = atomic_load_explicit(&sample_filter, memory_order_relaxed);
		if (d > 0 && f && n > 0 && (uint64_t)n * SAMPLE_FILTER_LOAD > f->counters)
			sample_filter_grow();
	}
}

/* A sampled block @p is about to enter the table (before the program
 * can free it): returns the filter it was counted in, for
 * sample_filter_added(), or NULL in full tracking. */
static inline struct sample_filter *sample_filter_add(const void *p)
{
	struct sample_filter *f = sample_filter_now();
	if (f)
		atomic_fetch_add_explicit(sample_filter_slot(f, p), 1, memory_order_relaxed);
	return f;
}

/* @p entered the table (or was left out of it) after sample_filter_add
 * gave @f. */
static inline void sample_filter_added(const void *p, struct sample_filter *f)
{
	if (!f)
		return;
	struct sample_filter *now = sample_filter_now();
	if (HOOK_UNLIKELY(now != f)) /* grown meanwhile: perhaps after the insert */
		atomic_fetch_add_explicit(sample_filter_slot(now, p), 1, memory_order_relaxed);
	sample_live_note(1);
}

/* A sampled block left the table; @f is the filter read before. */
static inline void sample_filter_del(struct sample_filter *f, const void *p)
{
	atomic_fetch_sub_explicit(sample_filter_slot(f, p), 1, memory_order_relaxed);
	sample_live_note(-1);
}

/* False when @p is certainly not a sampled block. */
static inline bool sample_filter_may_have(struct sample_filter *f, const void *p)
{
	return atomic_load_explicit(sample_filter_slot(f, p), memory_order_relaxed) != 0;
}

/* Frees that took the table lock (the filter said "maybe"), and those of
 * them that found no sampled block, counted where the table's shard of
 * the address is (threads rarely share one).  Read by sample_filter_stats. */
struct sample_free_count {
	atomic_ulong locked, unsampled;
} __attribute__((aligned(64)));
#define SAMPLE_COUNT_BITS 6
extern struct sample_free_count sample_free_counts[1u << SAMPLE_COUNT_BITS];

static inline void sample_filter_count(const void *p, bool sampled)
{
	struct sample_free_count *c =
		&sample_free_counts[((uint64_t)((uintptr_t)p >> 26) * 0x9e3779b97f4a7c15ULL) >>
				    (64 - SAMPLE_COUNT_BITS)];
	atomic_fetch_add_explicit(&c->locked, 1, memory_order_relaxed);
	if (!sampled)
		atomic_fetch_add_explicit(&c->unsampled, 1, memory_order_relaxed);
}

/* The filter's counters now, and the frees counted so far. */
void sample_filter_stats(size_t *counters, unsigned long *locked, unsigned long *unsampled);

/* Map (or clear) the filter at the start of a sampled session (NULL in
 * full tracking).  Returns 0, or -1 (no memory). */
int sample_filter_begin(void);
/* In a fork's child (a growth in another thread of the parent is over:
 * fork waited for the table locks). */
void sample_filter_fork_child(void);

/* A new session (hook_collect_begin): every thread draws afresh, and the
 * filter is mapped or cleared when hook_cfg.sample is set.  Returns 0, or
 * -1 (no memory). */
int sample_begin(void);

/* In a fork's child: its thread draws from a generator of its own, not
 * the parent's (the same draws would sample the same blocks). */
void sample_fork_child(void);

#endif
