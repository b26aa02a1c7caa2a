/* leaksnap hook: snapshots of the live-allocation tables (table.c), and
 * the live blocks and the tables' own memory for reachability.  The
 * pointer tables are read with every table lock held (or in a forked image
 * of such a moment); a plain snapshot then builds its records unlocked,
 * with snap_readers keeping the stack store where it is.
 *
 * The records of get_malloc_leak_info -- (zygote bit | size, stack) with a
 * count -- exist only here: the live pointers are grouped by stack and
 * size when a snapshot is taken. */
#include <errno.h>
#include <string.h>

#include "table_internal.h"

/* Snapshots ----------------------------------------------------------------- */

static size_t snap_frames;

static int record_cmp(const uintptr_t *x, const uintptr_t *y)
{
	uintptr_t xs = x[0] & ~HOOK_ZYGOTE_BIT, ys = y[0] & ~HOOK_ZYGOTE_BIT;
	if (xs != ys)
		return xs > ys ? -1 : 1;
	if (x[0] != y[0])
		return x[0] > y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] > y[1] ? -1 : 1;
	for (size_t i = 0; i < snap_frames; i++)
		if (x[2 + i] != y[2 + i])
			return x[2 + i] < y[2 + i] ? -1 : 1;
	return 0;
}

static void swap_words(uintptr_t *a, uintptr_t *b, size_t words)
{
	for (size_t i = 0; i < words; i++) {
		uintptr_t t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

#define REC(i) ((uintptr_t *)(void *)(base + (i) * size))

static void sift_down(uint8_t *base, size_t size, size_t root, size_t end, uint32_t *aux)
{
	size_t words = size / sizeof(uintptr_t);
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= end)
			return;
		if (child + 1 < end && record_cmp(REC(child), REC(child + 1)) < 0)
			child++;
		if (record_cmp(REC(root), REC(child)) >= 0)
			return;
		swap_words(REC(root), REC(child), words);
		if (aux) {
			uint32_t t = aux[root];
			aux[root] = aux[child];
			aux[child] = t;
		}
		root = child;
	}
}

/* Heapsort of @n records of @size bytes, in place: qsort may call malloc,
 * and a dump can run where malloc must not be called (exit() from a signal
 * handler that interrupted the allocator). */
static void sort_records(uint8_t *base, size_t n, size_t size, uint32_t *aux)
{
	snap_frames = size / sizeof(uintptr_t) - 2;
	for (size_t start = n / 2; start-- > 0;)
		sift_down(base, size, start, n, aux);
	for (size_t end = n; end-- > 1;) {
		swap_words(REC(0), REC(end), size / sizeof(uintptr_t));
		if (aux) {
			uint32_t t = aux[0];
			aux[0] = aux[end];
			aux[end] = t;
		}
		sift_down(base, size, 0, end, aux);
	}
}
#undef REC

#define SNAP_ZYGOTE ((uint64_t)1 << 32) /* above any slot size */

/* Ascending sort of @a[0..n) in place, without malloc.  Short runs by
 * insertion; longer ones by an LSD radix sort, RADIX_BITS a pass, over just
 * the bits in which the words differ (the sizes of one stack usually
 * differ in a few low bits: one pass), through @tmp (n words, then
 * 1 << RADIX_BITS counters). */
#define RADIX_BITS 11
#define RADIX_TMP(n) ((n) + ((size_t)1 << RADIX_BITS))
static void sort_words(uint64_t *a, size_t n, uint64_t *tmp)
{
	if (n < 48) {
		for (size_t i = 1; i < n; i++) {
			uint64_t v = a[i];
			size_t j = i;
			for (; j > 0 && a[j - 1] > v; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	uint64_t diff = 0;
	for (size_t i = 1; i < n; i++)
		diff |= a[i] ^ a[0];
	if (!diff)
		return;
	unsigned lo = (unsigned)__builtin_ctzll(diff), hi = 63 - (unsigned)__builtin_clzll(diff);
	size_t buckets = (size_t)1 << RADIX_BITS, mask = buckets - 1;
	uint64_t *count = tmp + n, *src = a, *dst = tmp;
	for (unsigned shift = lo; shift <= hi; shift += RADIX_BITS) {
		memset(count, 0, buckets * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & mask]++;
		uint64_t sum = 0;
		for (size_t d = 0; d < buckets; d++) {
			uint64_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & mask]++] = src[i];
		uint64_t *x = src;
		src = dst;
		dst = x;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* The key of a live entry, as table_snapshot_locked gives its records. */
static inline uint64_t slot_key(const struct ptr_slot *e)
{
	return (uint64_t)(e->stack & ~SLOT_ZYGOTE) << 33 | e->size |
	       (e->stack & SLOT_ZYGOTE ? SNAP_ZYGOTE : 0);
}

size_t table_info_size(void)
{
	return sizeof(uintptr_t) * (2 + rec_frames);
}

size_t table_live_count(void)
{
	size_t live = 0;
	for (unsigned i = 0; i < NSHARDS; i++)
		live += shards[i].live;
	return live;
}

/* A block's tag: its slot's stack number and zygote bit, and whether its
 * size is 0 (a size the start and end of the scan's block list cannot
 * tell from 1); stack numbers stay below 2^27. */
#define TAG_SIZE0 0x40000000u

/* A block whose size the slot keeps saturated (4 GiB or more, 64-bit):
 * its size as the allocator knows it (a read of its header: no lock, no
 * allocation; the block cannot be freed meanwhile, every lock is held). */
static void note_huge(struct table_snapshot *snap, uintptr_t key)
{
	if (snap->huge_count == TABLE_HUGE_MAX || !hook_real.malloc_usable_size)
		return; /* (the scan then takes its first 4 GiB) */
	snap->huge[snap->huge_count][0] = key;
	snap->huge[snap->huge_count][1] = hook_real.malloc_usable_size((void *)key);
	snap->huge_count++;
}

/* The live pointers' (stack number with its zygote bit, size) pairs, one
 * u64 each (stack << 32 | size), copied out of the shards: the only part of
 * a plain snapshot that needs the locks.  With @snap, its block list too
 * (reachability).  NULL when out of memory.
 *
 * No branch on whether a slot is in use (most are not, in no order a
 * predictor could learn): every slot is written at [n] and n moves on past
 * the used ones only. */
static uint64_t *copy_pairs(size_t *np, size_t *map_size, struct table_snapshot *snap)
{
	size_t live = table_live_count();
	*map_size = (live + 1) * sizeof(uint64_t);
	uint64_t *pairs = hook_map(*map_size);
	if (!pairs)
		return NULL;
	struct table_block *blocks = NULL;
	if (snap) {
		snap->blocks_size = (live + 1) * sizeof(*blocks);
		blocks = hook_map(snap->blocks_size);
		if (!blocks) {
			hook_unmap(pairs, *map_size);
			return NULL;
		}
	}
	size_t n = 0;
	uintptr_t first = 0, diff = 0;
	for (unsigned i = 0; i < NSHARDS; i++) {
		const struct ptr_slot *e = shards[i].slots, *z = e + shards[i].mask + 1;
		if (!blocks) {
			for (; e < z && n < live; e++) {
				pairs[n] = (uint64_t)e->stack << 32 | e->size;
				n += e->key != 0;
			}
			continue;
		}
		for (const struct ptr_slot *f = e; f < z && !first; f++)
			first = f->key;
		for (; e < z && n < live; e++) {
			uintptr_t key = e->key;
			pairs[n] = (uint64_t)e->stack << 32 | e->size;
			blocks[n].start = key;
			blocks[n].tag = e->stack | (e->size ? 0 : TAG_SIZE0);
			blocks[n].size = e->size;
			diff |= (key ^ first) & -(uintptr_t)(key != 0);
			n += key != 0;
			if (HOOK_UNLIKELY(e->size == UINT32_MAX) && key)
				note_huge(snap, key);
		}
	}
	if (snap) {
		snap->blocks = blocks;
		snap->block_count = n;
		snap->blocks_diff = diff;
	}
	*np = n;
	return pairs;
}

/* The records of @pairs[0..np): the stacks they name must stay where they
 * are meanwhile (every lock held, or snap_readers raised). */
static int build_records(struct table_snapshot *snap, const uint64_t *pairs, size_t np,
			 uint32_t nst, bool want_keys)
{
	/* The live sizes grouped by stack (a counting sort on the stack
	 * number), then sorted within each stack: runs of one size are the
	 * records, their lengths the counts. */
	size_t end_size = ((size_t)nst + 1) * sizeof(size_t);
	size_t sizes_size = (np ? np : 1) * sizeof(uint64_t);
	size_t tmp_size = RADIX_TMP(np) * sizeof(uint64_t);
	size_t *end = hook_map(end_size);
	uint64_t *sizes = hook_map(sizes_size), *tmp = hook_map(tmp_size);
	if (!end || !sizes || !tmp)
		goto nomem;
	for (size_t k = 0; k < np; k++) {
		uint32_t stack = (uint32_t)(pairs[k] >> 32) & ~SLOT_ZYGOTE;
		if (stack < nst)
			end[stack + 1]++;
	}
	for (uint32_t i = 0; i < nst; i++)
		end[i + 1] += end[i];
	/* now end[i] is where stack i's sizes start; filling moves it to
	 * where they end */
	for (size_t k = 0; k < np; k++) {
		uint32_t stack = (uint32_t)(pairs[k] >> 32);
		if ((stack & ~SLOT_ZYGOTE) < nst)
			sizes[end[stack & ~SLOT_ZYGOTE]++] =
				(uint32_t)pairs[k] | (stack & SLOT_ZYGOTE ? SNAP_ZYGOTE : 0);
	}
	size_t used = 0;
	for (uint32_t i = 1; i < nst; i++) {
		size_t from = end[i - 1], to = end[i];
		sort_words(sizes + from, to - from, tmp);
		for (size_t k = from; k < to; k++)
			used += k == from || sizes[k] != sizes[k - 1];
	}
	snap->map_size = used ? used * snap->info_size : 1;
	snap->records = hook_map(snap->map_size);
	if (!snap->records)
		goto nomem;
	if (want_keys) {
		snap->keys_size = (used ? used : 1) * sizeof(uint64_t);
		snap->keys = hook_map(snap->keys_size);
		if (!snap->keys)
			goto nomem;
	}
	uintptr_t *out = (uintptr_t *)snap->records;
	size_t r = 0;
	for (uint32_t i = 1; i < nst; i++) {
		const struct stk *st = stk_at(i);
		for (size_t k = end[i - 1], to = end[i]; k < to;) {
			size_t run = 1;
			while (k + run < to && sizes[k + run] == sizes[k])
				run++;
			/* The format's size field keeps bit 31 for the zygote
			 * flag, also on 64-bit: a size that needs bit 31 is
			 * clamped below it (and counted in the metadata) rather
			 * than read as a flag. */
			uint64_t size = sizes[k] & ~SNAP_ZYGOTE;
			if (size >= HOOK_ZYGOTE_BIT) {
				size = HOOK_ZYGOTE_BIT - 1;
				snap->clamped++;
			}
			out[0] = (uintptr_t)size | (sizes[k] & SNAP_ZYGOTE ? HOOK_ZYGOTE_BIT : 0);
			out[1] = (uintptr_t)run;
			memcpy(out + 2, st->pcs, st->n * sizeof(uintptr_t));
			/* the rest of the slot is already zero (fresh mapping) */
			snap->total_memory += (uint64_t)size * run;
			/* keys ascend: stack number, then the sorted sizes */
			if (snap->keys)
				snap->keys[r] = (uint64_t)i << 33 | sizes[k];
			r++;
			out += 2 + rec_frames;
			k += run;
		}
	}
	hook_unmap(end, end_size);
	hook_unmap(sizes, sizes_size);
	hook_unmap(tmp, tmp_size);
	snap->record_count = used;
	snap->records_size = used * snap->info_size;
	return 0;
nomem:
	if (end)
		hook_unmap(end, end_size);
	if (sizes)
		hook_unmap(sizes, sizes_size);
	if (tmp)
		hook_unmap(tmp, tmp_size);
	table_snapshot_free(snap);
	return -1;
}

static uint32_t stack_count(void)
{
	uint32_t nst = atomic_load(&stk_next);
	return nst > STK_MAX_CHUNKS * STK_CHUNK ? STK_MAX_CHUNKS * STK_CHUNK : nst;
}

int table_snapshot_locked(struct table_snapshot *snap, bool want_keys)
{
	memset(snap, 0, sizeof(*snap));
	snap->info_size = sizeof(uintptr_t) * (2 + rec_frames);
	size_t np, pairs_size;
	uint64_t *pairs = copy_pairs(&np, &pairs_size, want_keys ? snap : NULL);
	if (!pairs)
		return -1;
	int rc = build_records(snap, pairs, np, stack_count(), want_keys);
	hook_unmap(pairs, pairs_size);
	return rc;
}

void table_snapshot_sort(struct table_snapshot *snap, uint32_t *aux)
{
	sort_records(snap->records, snap->record_count, snap->info_size, aux);
}

int table_snapshot(struct table_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (table_busy_here()) {
		/* A signal handler interrupted this thread inside the tables
		 * (exit() from a handler): waiting for the lock would hang. */
		errno = EDEADLK;
		return -1;
	}
	/* Every lock is held only while the live pointers' (stack, size)
	 * pairs are copied out; grouping them into records, reading the
	 * stacks (which no rebuild moves meanwhile: snap_readers) and
	 * sorting happen while the program runs on. */
	snap->info_size = sizeof(uintptr_t) * (2 + rec_frames);
	table_lock_all();
	uint32_t nst = stack_count();
	size_t np, pairs_size;
	uint64_t *pairs = copy_pairs(&np, &pairs_size, NULL);
	if (!pairs) {
		table_unlock_all();
		return -1;
	}
	atomic_fetch_add(&snap_readers, 1);
	table_unlock_all();
	int rc = build_records(snap, pairs, np, nst, false);
	atomic_fetch_sub(&snap_readers, 1);
	hook_unmap(pairs, pairs_size);
	if (rc == 0)
		table_snapshot_sort(snap, NULL);
	return rc;
}

uint64_t table_block_key(uint32_t tag, uint32_t size)
{
	struct ptr_slot e = {.size = tag & TAG_SIZE0 ? 0 : size, .stack = tag & ~TAG_SIZE0};
	return slot_key(&e);
}

size_t table_own_ranges(uintptr_t (*out)[2], size_t cap)
{
	size_t n = 0;
	/* the stack index: two hashes a stack, which on 32-bit are as
	 * likely as any word to fall inside a large block */
	if (cap) {
		table_index_range(out[n]);
		n++;
	}
	for (unsigned i = 0; i < NSHARDS && n + 2 <= cap; i++) {
		out[n][0] = (uintptr_t)shards[i].slots;
		out[n][1] = (uintptr_t)(shards[i].slots + shards[i].mask + 1);
		n++;
		out[n][0] = (uintptr_t)shards[i].freed;
		out[n][1] = (uintptr_t)(shards[i].freed + FREED_SET);
		n++;
	}
	return n;
}

void table_snapshot_free(struct table_snapshot *snap)
{
	if (snap->records)
		hook_unmap(snap->records, snap->map_size);
	snap->records = NULL;
	if (snap->keys)
		hook_unmap(snap->keys, snap->keys_size);
	snap->keys = NULL;
	table_snapshot_blocks_free(snap);
}

void table_snapshot_blocks_free(struct table_snapshot *snap)
{
	if (snap->blocks)
		hook_unmap(snap->blocks, snap->blocks_size);
	snap->blocks = NULL;
}
