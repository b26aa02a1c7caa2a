/* leaksnap hook: the scanning child's blocks and mark (docs/reachability.md):
 * the child's own memory and the list of the hook's memory left out of
 * the roots; the live blocks sorted and indexed by address; a root range
 * read word by word (less the hook's memory; a fault ends it), each word
 * that points into a live block marking it; the marked blocks scanned in
 * turn (rc_drain); the unmarked ones counted into their records.  What the
 * roots are is reach_scan.c's, which calls in here; nothing here calls
 * out.  In the forked image: system calls and memory only. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reach_mark.h"

struct reach_child rc;

/* Memory of the child's own.  Large arrays are faulted in by the kernel
 * at once (MAP_POPULATE): cheaper than a fault per page.  (Not in huge
 * pages: the kernel may compact memory to find them, which costs more.) */
void *rc_map(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       (bytes >= (1u << 20) ? MAP_POPULATE : 0),
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void rc_give_up(const char *why)
{
	snprintf(rc.out->error, sizeof(rc.out->error), "%s", why);
	atomic_store(&rc.out->done, 1);
	_exit(0);
}

void rc_exclude_room(size_t n)
{
	if (!rc.ex) {
		rc.ex = rc.ex_first;
		rc.ex_cap = MAX_EXCLUDE;
	}
	if (rc.ex_cap - rc.nex >= n)
		return;
	size_t cap = rc.ex_cap * 2;
	while (cap - rc.nex < n + 1) /* (+ 1: the new list's own range) */
		cap *= 2;
	uintptr_t(*ex)[2] = rc_map(cap * sizeof(*ex));
	if (!ex)
		rc_give_up("no memory for the list of the hook's own memory to leave out of the roots");
	memcpy(ex, rc.ex, rc.nex * sizeof(*ex));
	rc.ex = ex;
	rc.ex_cap = cap;
	/* (the list itself holds no block's address, but is the child's) */
	rc_exclude((uintptr_t)ex, (uintptr_t)(ex + cap));
}

void rc_exclude(uintptr_t lo, uintptr_t hi)
{
	rc_exclude_room(1);
	rc.ex[rc.nex][0] = lo;
	rc.ex[rc.nex][1] = hi;
	rc.nex++;
}

/* Blocks ---------------------------------------------------------------------- */

/* The blocks in address order, as rc.start[], rc.end[] (at least start + 1:
 * a pointer to a zero-size block is to the block) and rc.tag[] (its record
 * key's makings): an LSD radix sort of the parent's list of {start, tag,
 * size} over the bits in which the starts differ, in as few passes of at
 * most MAX_DIGIT bits as cover them, every pass's counts taken in one read
 * first.  The parent's list is only read (a write would copy its page);
 * the passes go between two buffers of the child's own. */
_Static_assert(sizeof(struct table_block) >= 2 * sizeof(uintptr_t), "start[] and end[] fit");
#define MAX_DIGIT 16
#define MAX_PASSES ((sizeof(uintptr_t) * 8 + MAX_DIGIT - 1) / MAX_DIGIT)
static size_t __attribute__((noinline)) sort_blocks(const struct table_block *list, size_t n,
						    uintptr_t diff)
{
	unsigned lo_bit = diff ? (unsigned)__builtin_ctzll((unsigned long long)diff) : 0;
	unsigned bits = diff ? 64 - (unsigned)__builtin_clzll((unsigned long long)diff) - lo_bit : 0;
	unsigned passes = (bits + MAX_DIGIT - 1) / MAX_DIGIT;
	unsigned digit = passes ? (bits + passes - 1) / passes : 0;
	size_t buckets = (size_t)1 << digit, mask = buckets - 1;
	size_t count_size = passes * buckets * sizeof(uint32_t);
	struct table_block *t1 = rc_map((n + 1) * sizeof(*t1));
	struct table_block *t2 = rc_map((n + 1) * sizeof(*t2));
	uint32_t *count = rc_map(count_size);
	if (!t1 || !t2 || !count)
		rc_give_up("no memory to sort the blocks");
	for (size_t i = 0; i < n; i++) {
		uintptr_t k = list[i].start >> lo_bit;
		for (unsigned p = 0; p < passes; p++, k >>= digit)
			count[p * buckets + (k & mask)]++;
	}
	const struct table_block *src = list;
	struct table_block *dst = t1;
	for (unsigned p = 0; p < passes; p++) {
		uint32_t *c = count + p * buckets, sum = 0;
		unsigned shift = lo_bit + p * digit;
		for (size_t d = 0; d < buckets; d++) {
			uint32_t x = c[d];
			c[d] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].start >> shift) & mask]++] = src[i];
		src = dst;
		dst = dst == t1 ? t2 : t1;
	}
	/* The sorted arrays take the buffers' place: start[] and end[] in the
	 * free one, tag[] over the sorted items themselves (item i is read
	 * before tag[i] is written, which lies in an item before it) -- or,
	 * when no pass ran, in the other buffer. */
	rc.start = (uintptr_t *)(void *)dst;
	rc.end = rc.start + n + 1;
	rc.tag = (uint32_t *)(void *)(src == list ? t2 : (struct table_block *)(uintptr_t)src);
	/* tag[] takes a quarter of its buffer: the rest is spare (spare_take) */
	rc.spare = (uint8_t *)(rc.tag + n + 2);
	rc.spare_end = (uint8_t *)rc.tag + (n + 1) * sizeof(struct table_block);
	size_t huge = 0;
	for (size_t i = 0; i < n; i++) {
		struct table_block it = src[i];
		uintptr_t size = it.size ? it.size : 1;
		rc.start[i] = it.start;
		rc.end[i] = it.start + size < it.start ? UINTPTR_MAX : it.start + size;
		rc.tag[i] = it.tag;
		huge += it.size == UINT32_MAX;
	}
	munmap(count, count_size);
	return huge;
}

/* Blocks of 4 GiB or more, whose sizes the tables keep as UINT32_MAX
 * (64-bit only): their sizes as the allocator gave them when the parent
 * listed them (@huge, {start, size}). */
static void extend_huge(const uintptr_t (*huge)[2], size_t nhuge)
{
	for (size_t i = 0; i < rc.n; i++) {
		if (rc.end[i] - rc.start[i] != UINT32_MAX)
			continue;
		for (size_t k = 0; k < nhuge; k++)
			if (huge[k][0] == rc.start[i] && huge[k][1] > UINT32_MAX)
				rc.end[i] = rc.start[i] + huge[k][1] < rc.start[i] ? UINTPTR_MAX
									  : rc.start[i] + huge[k][1];
	}
}

/* @bytes of the sort's spare memory (8-aligned, not zeroed), else of a
 * mapping of their own: fewer pages to fault in. */
static void *spare_take(size_t bytes)
{
	uintptr_t at = ((uintptr_t)rc.spare + 7) & ~(uintptr_t)7;
	if (rc.spare && at <= (uintptr_t)rc.spare_end && bytes <= (uintptr_t)rc.spare_end - at) {
		rc.spare = (uint8_t *)(at + bytes);
		return (void *)at;
	}
	return rc_map(bytes);
}

/* The index: the blocks fall into clusters, runs of blocks less than
 * GAP_BYTES apart (the main heap, each arena, each block malloc mapped on
 * its own).  Each cluster is cut into grains of a power of two bytes (at
 * least 64), no more grains than it has blocks: a dense array rc.first[]
 * gives, for each grain, the first block starting at or after it, and one
 * entry more.  The block holding an address is the last one starting at or
 * below it: among the few starting in its grain (one or two where blocks
 * are as dense as grains), else the one just before them.  Memory: about
 * one entry a block.  (Grains of 4 KiB pages, some 40 blocks of 100 bytes
 * each, made the mark a fifth slower: the binary search's loads.) */
#define GAP_BYTES ((uintptr_t)16 << 10)
#define MIN_GRAIN_SHIFT 6
static void __attribute__((noinline)) build_index(void)
{
	size_t ncl = 0;
	uintptr_t hi = 0;
	for (size_t i = 0; i < rc.n; i++) {
		if (!ncl || (rc.start[i] > hi && rc.start[i] - hi > GAP_BYTES))
			ncl++, hi = 0;
		if (rc.end[i] > hi)
			hi = rc.end[i];
	}
	rc.cl = rc_map((ncl + 1) * sizeof(*rc.cl));
	if (!rc.cl)
		rc_give_up("no memory for the block index");
	struct cluster *c = NULL;
	for (size_t i = 0; i < rc.n; i++) {
		if (!c || (rc.start[i] > c->hi && rc.start[i] - c->hi > GAP_BYTES)) {
			c = c ? c + 1 : rc.cl;
			c->lo = rc.start[i];
			c->hi = 0;
			c->first_block = i;
			c->nblocks = 0;
		}
		c->nblocks++;
		if (rc.end[i] > c->hi)
			c->hi = rc.end[i];
	}
	rc.ncl = ncl;
	size_t entries = 0;
	for (size_t k = 0; k < ncl; k++) {
		c = &rc.cl[k];
		uintptr_t span = c->hi - c->lo, want = c->nblocks;
		unsigned shift = MIN_GRAIN_SHIFT;
		while (shift < sizeof(uintptr_t) * 8 - 1 && (span >> shift) > want)
			shift++;
		c->shift = shift;
		c->base = c->lo >> shift;
		c->off = entries;
		entries += ((c->hi - 1) >> shift) - c->base + 2; /* its grains and one */
	}
	rc.first = spare_take((entries + 1) * sizeof(uint32_t));
	if (!rc.first)
		rc_give_up("no memory for the block index");
	for (size_t k = 0; k < ncl; k++) {
		c = &rc.cl[k];
		uint32_t *e = &rc.first[c->off];
		size_t grains = ((c->hi - 1) >> c->shift) - c->base + 1, next = 0;
		size_t b = c->first_block, z = b + c->nblocks;
		for (; b < z; b++) {
			size_t g = (rc.start[b] >> c->shift) - c->base;
			for (; next <= g; next++)
				e[next] = (uint32_t)b;
		}
		for (; next <= grains; next++)
			e[next] = (uint32_t)z;
	}
	rc.heap_lo = ncl ? rc.cl[0].lo : 0;
	rc.heap_span = ncl ? rc.cl[ncl - 1].hi - rc.heap_lo : 0;
}

/* The index entry of @w's grain, or NULL when no cluster holds @w. */
static inline const uint32_t *page_entry(uintptr_t w)
{
	if (w - rc.heap_lo >= rc.heap_span)
		return NULL;
	const struct cluster *c = rc.cl;
	if (rc.ncl > 1) {
		size_t lo = 0, hi = rc.ncl;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (rc.cl[mid].lo <= w)
				lo = mid;
			else
				hi = mid;
		}
		c = &rc.cl[lo];
		if (w - c->lo >= c->hi - c->lo)
			return NULL;
	}
	return &rc.first[c->off + ((w >> c->shift) - c->base)];
}

/* The block holding @w, whose grain's index entry is @e, or NONE. */
static inline uint32_t find_at(uintptr_t w, const uint32_t *e)
{
	uint32_t lo = e[0], hi = e[1];
	if (lo == hi || rc.start[lo] > w) {
		/* none starts in this page at or below w: the one before */
		if (!lo)
			return NONE;
		lo--;
	} else {
		while (hi - lo > 1) { /* the last starting at or below w */
			uint32_t mid = lo + (hi - lo) / 2;
			if (rc.start[mid] <= w)
				lo = mid;
			else
				hi = mid;
		}
	}
	return w < rc.end[lo] ? lo : NONE;
}

/* The block holding @w, or NONE. */
static inline uint32_t find(uintptr_t w)
{
	const uint32_t *e = page_entry(w);
	return e ? find_at(w, e) : NONE;
}

/* The mark ---------------------------------------------------------------------- */

static inline void mark(uint32_t i)
{
	if (i == NONE || (rc.marks[i >> 6] >> (i & 63) & 1))
		return;
	rc.marks[i >> 6] |= (uint64_t)1 << (i & 63);
	rc.stack[rc.depth++] = i;
}

/* The range [@lo, @hi) overlaps a part of a block that cannot be read
 * (unmapped: prepare_unreadable).  Rare: a linear look. */
static bool skipped(uintptr_t lo, uintptr_t hi)
{
	for (size_t k = 0; k < rc.nskip; k++)
		if (rc.skip[k][0] < hi && rc.skip[k][1] > lo)
			return true;
	return false;
}

/* The glibc chunk header that follows block @b, or 0: its chunk's size
 * word lies just before it; a chunk malloc mapped on its own has none. */
static uintptr_t next_chunk(uint32_t b)
{
	uintptr_t p = rc.start[b];
	if (rc.nskip && skipped(p - WORD, p))
		return 0;
	uintptr_t size = ((const uintptr_t *)p)[-1];
	if (size & 2) /* IS_MMAPPED */
		return 0;
	return p - 2 * WORD + (size & ~(uintptr_t)7);
}

/* A root word.  In the allocator's own memory (rc.chunk_rule: the C
 * library's data, where glibc's main arena lies, and the parts of heap
 * mappings outside their runs of live blocks: other arenas' headers, free
 * chunks), a word that is the address of the chunk header following a
 * live block is one of glibc's chunk pointers (top, bins, last_remainder,
 * a free chunk's links), not a reference to that block, though the header
 * lies in its last bytes (requested sizes of 16k+1 .. 16k+8 on 64-bit). */
static inline void consider(uintptr_t w)
{
	uint32_t b = find(w);
	if (rc.chunk_rule && b != NONE && w == next_chunk(b))
		return;
	mark(b);
}

void __attribute__((noinline)) rc_scan_words(uintptr_t lo, uintptr_t hi)
{
	lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
	for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++)
		consider(*p);
}

void rc_on_fault(int sig)
{
	(void)sig;
	if (rc.faulting)
		siglongjmp(rc.fault, 1);
	_exit(3);
}

static void __attribute__((noinline)) scan_guarded(uintptr_t lo, uintptr_t hi)
{
	rc.faulting = 1;
	if (sigsetjmp(rc.fault, 0) == 0) { /* (SA_NODEFER: no mask to restore) */
		rc_scan_words(lo, hi);
		rc.out->root_bytes += hi - lo;
	}
	rc.faulting = 0;
}

/* A root range, the part of it in the C library's data under the chunk
 * rule (consider). */
static void scan_libc_split(uintptr_t lo, uintptr_t hi)
{
	if (!rc.glibc || rc.chunk_rule || hi <= rc.libc_lo || lo >= rc.libc_hi) {
		scan_guarded(lo, hi);
		return;
	}
	uintptr_t a = lo > rc.libc_lo ? lo : rc.libc_lo, z = hi < rc.libc_hi ? hi : rc.libc_hi;
	if (a > lo)
		scan_guarded(lo, a);
	rc.chunk_rule = true;
	scan_guarded(a, z);
	rc.chunk_rule = false;
	if (hi > z)
		scan_guarded(z, hi);
}

/* A root range less the hook's own memory; a range that faults (a file
 * mapping past its end) is dropped from the fault on. */
void rc_scan_root(uintptr_t lo, uintptr_t hi)
{
	while (lo < hi) {
		uintptr_t stop = hi, next = hi;
		for (size_t i = 0; i < rc.nex; i++) {
			if (rc.ex[i][1] <= lo || rc.ex[i][0] >= hi)
				continue;
			if (rc.ex[i][0] <= lo) {
				stop = lo; /* lo itself is excluded: skip past it */
				next = rc.ex[i][1];
				break;
			}
			if (rc.ex[i][0] < stop) {
				stop = rc.ex[i][0];
				next = rc.ex[i][1];
			}
		}
		if (stop > lo)
			scan_libc_split(lo, stop);
		lo = next > lo ? next : hi;
	}
}

/* Whether @pagemap describes this process's addresses: of 8 fresh pages,
 * the even ones written, it must show exactly those as present.  (Under
 * qemu-user it describes the host's addresses, not the program's.) */
bool rc_pagemap_true(int pagemap)
{
	size_t page = (size_t)1 << PAGE_SHIFT;
	volatile char *p = rc_map(8 * page);
	if (!p)
		return false;
	for (size_t k = 0; k < 8; k += 2)
		p[k * page] = 1;
	uint64_t ent[8];
	bool ok = pread(pagemap, ent, sizeof(ent), (off_t)(((uintptr_t)p >> PAGE_SHIFT) * 8)) ==
		  (ssize_t)sizeof(ent);
	for (size_t k = 0; ok && k < 8; k++)
		ok = (ent[k] >> 63) == !(k & 1);
	munmap((void *)(uintptr_t)p, 8 * page);
	return ok;
}

/* Call @fn on the runs of [lo, hi) whose pages were ever touched (present
 * or swapped out, /proc/self/pagemap): the rest of private anonymous
 * memory reads as zeros.  All of it when that cannot be told. */
void rc_touched_runs(uintptr_t lo, uintptr_t hi, int pagemap,
			 void (*fn)(uintptr_t lo, uintptr_t hi))
{
	const uintptr_t page = (uintptr_t)1 << PAGE_SHIFT;
	uint64_t ent[512];
	for (uintptr_t at = lo & ~(page - 1); at < hi;) {
		size_t pages = ((hi - at) + page - 1) >> PAGE_SHIFT;
		if (pages > 512)
			pages = 512;
		ssize_t r = pread(pagemap, ent, pages * 8, (off_t)((at >> PAGE_SHIFT) * 8));
		if (r != (ssize_t)(pages * 8)) {
			fn(at > lo ? at : lo, hi); /* cannot tell: all of it */
			return;
		}
		for (size_t k = 0; k < pages;) {
			size_t run = 0;
			while (k + run < pages && (ent[k + run] >> 62))
				run++;
			if (run) {
				uintptr_t a = at + (k << PAGE_SHIFT), z = at + ((k + run) << PAGE_SHIFT);
				fn(a > lo ? a : lo, z < hi ? z : hi);
			}
			k += run;
			while (k < pages && !(ent[k] >> 62))
				k++;
		}
		at += pages << PAGE_SHIFT;
	}
}


/* A run of a large marked block. */
static void scan_block_run(uintptr_t lo, uintptr_t hi)
{
	rc.out->marked_bytes += hi - lo;
	rc_scan_words(lo, hi);
}

/* A marked block of which a part cannot be read: the rest. */
static void __attribute__((noinline)) scan_block_parts(uintptr_t lo, uintptr_t hi)
{
	while (lo < hi) {
		uintptr_t stop = hi, next = hi;
		for (size_t k = 0; k < rc.nskip; k++) {
			if (rc.skip[k][1] <= lo || rc.skip[k][0] >= stop)
				continue;
			stop = rc.skip[k][0] > lo ? rc.skip[k][0] : lo;
			next = rc.skip[k][1];
		}
		if (stop > lo) {
			if (stop - lo >= SPARSE_MIN && rc.pagemap >= 0)
				rc_touched_runs(lo, stop, rc.pagemap, scan_block_run);
			else
				scan_block_run(lo, stop);
		}
		lo = next > stop ? next : hi;
	}
}

/* Scan the marked blocks, a batch at a time, in stages so that the cache
 * misses of a graph walk overlap: the batch's blocks are asked for first
 * (prefetch); then their words that fall in a cluster are gathered with
 * their page's index entry, each entry asked for; then they are looked
 * up. */
#define BATCH 64
#define CAND 512
static void resolve(const uintptr_t *cand, const uint32_t *const *ent, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		/* the page's starts (a few lines: a binary search touches
		 * most of them) and the end its answer most likely reads */
		uint32_t lo = ent[k][0], hi = ent[k][1];
		const uintptr_t *p = &rc.start[lo ? lo - 1 : 0], *z = &rc.start[hi];
		for (unsigned l = 0; p < z && l < 4; l++, p += 64 / sizeof(*p))
			__builtin_prefetch(p);
		__builtin_prefetch(&rc.end[lo + (hi - lo) / 2]);
	}
	for (size_t k = 0; k < n; k++)
		mark(find_at(cand[k], ent[k]));
}

void __attribute__((noinline)) rc_drain(void)
{
	uint32_t batch[BATCH];
	uintptr_t cand[CAND];
	const uint32_t *ent[CAND];
	while (rc.depth) {
		size_t n = rc.depth < BATCH ? rc.depth : BATCH;
		rc.depth -= n;
		memcpy(batch, rc.stack + rc.depth, n * sizeof(uint32_t));
		for (size_t k = 0; k < n; k++) {
			const char *p = (const char *)rc.start[batch[k]];
			__builtin_prefetch(p);
			__builtin_prefetch(p + 64);
		}
		size_t nc = 0;
		for (size_t k = 0; k < n; k++) {
			uint32_t i = batch[k];
			uintptr_t lo = rc.start[i], hi = rc.end[i];
			if (rc.nskip && skipped(lo, hi)) {
				scan_block_parts(lo, hi);
				continue;
			}
			if (hi - lo >= SPARSE_MIN && rc.pagemap >= 0) {
				/* (a block of megabytes: its touched pages only) */
				rc_touched_runs(lo, hi, rc.pagemap, scan_block_run);
				continue;
			}
			rc.out->marked_bytes += hi - lo;
			lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
			for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++) {
				uintptr_t w = *p;
				const uint32_t *e = page_entry(w);
				if (!e)
					continue;
				__builtin_prefetch(e);
				cand[nc] = w;
				ent[nc++] = e;
				if (nc == CAND) {
					resolve(cand, ent, nc);
					nc = 0;
				}
			}
		}
		resolve(cand, ent, nc);
	}
}

/* The blocks sorted, with their marks, the mark stack and the page index. */
void rc_index_blocks(const struct reach_child_args *a)
{
	rc.n = a->nblocks;
	if (sort_blocks(a->blocks, rc.n, a->blocks_diff) && a->nhuge)
		extend_huge(a->huge, a->nhuge);
	rc.stack = spare_take((rc.n + 1) * sizeof(uint32_t));
	rc.marks = spare_take((rc.n / 64 + 1) * sizeof(uint64_t));
	if (!rc.marks || !rc.stack)
		rc_give_up("no memory for the block list");
	memset(rc.marks, 0, (rc.n / 64 + 1) * sizeof(uint64_t));
	build_index();
}


/* Count the unmarked blocks into their records. */
void rc_count_unreachable(const struct reach_child_args *a)
{
	for (size_t i = 0; i < rc.n; i++) {
		if (rc.marks[i >> 6] >> (i & 63) & 1)
			continue;
		uintptr_t size = rc.end[i] - rc.start[i]; /* (saturated, as the tables keep it) */
		uint64_t key = table_block_key(rc.tag[i], size < UINT32_MAX ? (uint32_t)size : UINT32_MAX);
		size_t lo = 0, hi = a->nrec;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < a->nrec && a->keys[lo] == key) {
			rc.counts[lo]++;
			rc.out->unreachable_blocks++;
			rc.out->unreachable_bytes += (uint32_t)key; /* its size */
		}
	}
	rc.out->blocks = rc.n;
}


uint32_t rc_find(uintptr_t w)
{
	return find(w);
}
