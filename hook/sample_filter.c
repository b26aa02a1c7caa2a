/* leaksnap hook: the filter of sampled addresses and its growth (see the
 * protocol in sample.h).
 *
 * A counter is not zero while a sampled block in its bucket is live, so an
 * unsampled free takes the table lock with about the probability that one
 * of the live sampled blocks shares its counter: 1 - e^(-live/counters).
 * A fixed filter fills on a big heap (at 64 KiB sampling, 4 GiB of live
 * small blocks are 65,536 sampled ones); this one grows once it holds more
 * than one block in SAMPLE_FILTER_LOAD counters, to SAMPLE_FILTER_LOAD * 2
 * counters per block or more, which keeps that probability under 1 - e^(-1/16)
 * (6%) at a cost of 64 to 256 bytes per sampled block in the filter in use,
 * and up to about 128 more in the old ones it replaced, which stay mapped
 * (docs/hook.md). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample.h"
#include "table_internal.h"

_Atomic(struct sample_filter *) sample_filter;
HOOK_TLS int sample_live_mine;
_Atomic int64_t sample_live;
struct sample_free_count sample_free_counts[1u << SAMPLE_COUNT_BITS];

/* The largest filter made so far: kept for the next session (a filter is
 * never unmapped, see sample.h). */
static struct sample_filter *filter_kept;
/* Set while a thread grows the filter (one at a time; the others go on). */
static atomic_flag growing = ATOMIC_FLAG_INIT;
static atomic_bool report_nomem;

static struct sample_filter *filter_map(unsigned bits)
{
	size_t counters = (size_t)1 << bits;
	size_t size = sizeof(struct sample_filter) + counters * sizeof(atomic_uint);
	struct sample_filter *f = hook_map(size); /* zeroed */
	if (!f)
		return NULL;
	f->shift = 64 - bits;
	f->counters = counters;
	f->map_size = size;
	return f;
}

/* All of @f's counters to zero: the whole pages among them given back
 * (MADV_DONTNEED on a private anonymous mapping: zero pages when next
 * touched), rather than written, which for the largest filter would touch
 * up to 64 MiB; written when the kernel refuses. */
static void filter_clear(struct sample_filter *f)
{
	uintptr_t page = (uintptr_t)getpagesize();
	uintptr_t from = (uintptr_t)f->c, to = from + f->counters * sizeof(atomic_uint);
	uintptr_t head = (from + page - 1) & ~(page - 1), tail = to & ~(page - 1);
	int saved = errno;
	bool dropped = head < tail && madvise((void *)head, tail - head, MADV_DONTNEED) == 0;
	errno = saved;
	if (!dropped) {
		memset(f->c, 0, f->counters * sizeof(atomic_uint));
		return;
	}
	memset(f->c, 0, head - from);
	memset((void *)tail, 0, to - tail);
}

static unsigned bits_of(size_t counters)
{
	unsigned bits = 0;
	while (((size_t)1 << bits) < counters)
		bits++;
	return bits;
}

void sample_filter_grow(void)
{
	if (table_busy_here())
		return; /* inside the tables (a signal handler, or every lock held) */
	if (atomic_flag_test_and_set_explicit(&growing, memory_order_acquire))
		return;
	struct sample_filter *f = atomic_load_explicit(&sample_filter, memory_order_relaxed);
	int64_t live = atomic_load_explicit(&sample_live, memory_order_relaxed);
	if (!f || live <= 0 || (uint64_t)live * SAMPLE_FILTER_LOAD <= f->counters)
		goto out;
	unsigned bits = bits_of(f->counters);
	while (bits < SAMPLE_FILTER_MAX_BITS &&
	       ((size_t)1 << bits) < (size_t)live * 2 * SAMPLE_FILTER_LOAD)
		bits++;
	if (bits == bits_of(f->counters))
		goto out; /* as large as it goes */
	/* mapped before any lock is taken (a system call, no allocation) */
	struct sample_filter *nf = filter_map(bits);
	if (!nf) {
		hook_report(&report_nomem, "out of memory for the filter of sampled blocks");
		goto out;
	}
	/* Every table lock: no block enters or leaves the table while it is
	 * counted, and the new filter is in use before any does again. */
	table_lock_all();
	int64_t count = 0;
	for (unsigned i = 0; i < NSHARDS; i++) {
		const struct shard *s = &shards[i];
		for (size_t j = 0; s->slots && j <= s->mask; j++) {
			uintptr_t key = s->slots[j].key;
			if (!key)
				continue;
			atomic_uint *c = sample_filter_slot(nf, (const void *)key);
			atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			count++;
		}
	}
	atomic_store_explicit(&sample_filter, nf, memory_order_release);
	atomic_store_explicit(&sample_live, count, memory_order_relaxed);
	filter_kept = nf;
	table_unlock_all();
out:
	atomic_flag_clear_explicit(&growing, memory_order_release);
}

void sample_filter_stats(size_t *counters, unsigned long *locked, unsigned long *unsampled)
{
	struct sample_filter *f = sample_filter_now();
	*counters = f ? f->counters : 0;
	*locked = *unsampled = 0;
	for (size_t i = 0; i < (1u << SAMPLE_COUNT_BITS); i++) {
		*locked += atomic_load_explicit(&sample_free_counts[i].locked, memory_order_relaxed);
		*unsampled +=
			atomic_load_explicit(&sample_free_counts[i].unsampled, memory_order_relaxed);
	}
}

int sample_filter_begin(void)
{
	atomic_store(&sample_filter, NULL);
	if (!hook_cfg.sample)
		return 0;
	/* (the table is empty: a new session) */
	if (!filter_kept) {
		filter_kept = filter_map(SAMPLE_FILTER_MIN_BITS);
		if (!filter_kept)
			return -1;
	} else {
		filter_clear(filter_kept);
	}
	atomic_store(&sample_live, 0);
	sample_live_mine = 0;
	for (size_t i = 0; i < (1u << SAMPLE_COUNT_BITS); i++) {
		atomic_store(&sample_free_counts[i].locked, 0);
		atomic_store(&sample_free_counts[i].unsampled, 0);
	}
	atomic_store_explicit(&sample_filter, filter_kept, memory_order_release);
	return 0;
}

void sample_filter_fork_child(void)
{
	/* (the parent's growing thread, if any, is not in the child) */
	atomic_flag_clear(&growing);
}
