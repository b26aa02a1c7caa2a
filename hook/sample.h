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
 * rare unsampled one that shares a counter with one). */
#ifndef LEAKSNAP_HOOK_SAMPLE_H
#define LEAKSNAP_HOOK_SAMPLE_H

#include "hook_internal.h"

/* sample_base plus the bytes to go on this thread to the next sample point
 * (or to the point where the drawn distance was cut); sample_base or less
 * in full tracking. */
extern HOOK_TLS int64_t sample_left;
/* The floor of this session's counters (raised at each sample_begin). */
extern _Atomic int64_t sample_base;

/* The filter of sampled addresses (NULL in full tracking). */
#define SAMPLE_FILTER_BITS 16
extern atomic_uint *sample_filter;

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

static inline atomic_uint *sample_filter_slot(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL;
	return &sample_filter[h >> (64 - SAMPLE_FILTER_BITS)];
}

/* A sampled block @p enters the table (before the program can free it). */
static inline void sample_filter_add(const void *p)
{
	atomic_fetch_add_explicit(sample_filter_slot(p), 1, memory_order_relaxed);
}

/* A sampled block left the table. */
static inline void sample_filter_del(const void *p)
{
	atomic_fetch_sub_explicit(sample_filter_slot(p), 1, memory_order_relaxed);
}

/* False when @p is certainly not a sampled block. */
static inline bool sample_filter_may_have(const void *p)
{
	return atomic_load_explicit(sample_filter_slot(p), memory_order_relaxed) != 0;
}

/* Map the filter (hook_collect_begin, when hook_cfg.sample is set).
 * Returns 0, or -1 (no memory). */
int sample_begin(void);

/* In a fork's child: its thread draws from a generator of its own, not
 * the parent's (the same draws would sample the same blocks). */
void sample_fork_child(void);

#endif
