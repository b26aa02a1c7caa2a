/* leaksnap hook: the mark, in the forked copy-on-write image
 * (docs/reachability.md).
 *
 * The child is a copy of the dumping thread at the moment every other
 * thread was stopped and every table lock held.  It may only make system
 * calls and touch memory: other threads' locks (malloc's, stdio's, the
 * dynamic loader's) were copied in whatever state they were.
 *
 *  1. /proc/self/maps (the child's maps are the parent's) into a list.
 *  2. The live blocks the parent listed with its locks held, sorted by
 *     address, and an index with an entry per grain (a power of two bytes,
 *     about one grain a block) of each cluster of blocks: the first block
 *     starting there.
 *  3. Roots: every stopped thread's saved registers and its stack from
 *     its stack pointer (less the red zone) to the end of the mapping
 *     holding it; the dumping program thread's from where it entered the
 *     hook (none for the hook's own thread); every other readable,
 *     writable mapping less the pages its live blocks span (the heap) --
 *     modules' data and bss, static TLS and the other threads' stacks
 *     whose pointer is unknown, anonymous mappings (large ones only where
 *     pagemap shows pages) -- minus the hook's own memory.
 *  4. Each aligned word that points into a live block (interior pointers
 *     too) marks it; marked blocks go on an explicit stack (at most one
 *     entry per block) and are scanned in turn.
 *  5. Unmarked blocks are counted into their record (found by key). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "reach_child.h"

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

static void __attribute__((noinline)) scan_words(uintptr_t lo, uintptr_t hi)
{
	lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
	for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++)
		consider(*p);
}

static void on_fault(int sig)
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
		scan_words(lo, hi);
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
static void scan_root(uintptr_t lo, uintptr_t hi)
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
static bool pagemap_true(int pagemap)
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
static void touched_runs(uintptr_t lo, uintptr_t hi, int pagemap,
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

/* A private anonymous mapping of a megabyte or more: only its touched
 * pages.  A reservation of gigabytes then costs its page table, not a read
 * of every page. */
#define SPARSE_MIN (1u << 20)
static void scan_anon(uintptr_t lo, uintptr_t hi, int pagemap)
{
	if (pagemap < 0 || hi - lo < SPARSE_MIN)
		scan_root(lo, hi);
	else
		touched_runs(lo, hi, pagemap, scan_root);
}

/* Whether block @i of mapping @ar is a glibc chunk that is a mapping of
 * its own (bit 1, IS_MMAPPED, of the size word before it; read only where
 * the mapping holds that word). */
static bool own_mapping(const struct area *ar, size_t i)
{
	return rc.glibc && rc.start[i] - ar->lo >= sizeof(uintptr_t) && rc.start[i] < ar->hi &&
	       ((const uintptr_t *)rc.start[i])[-1] & 2;
}

/* A mapping as a root, less its heap: the pages from the first to the
 * end of the last of each run of its live blocks between blocks that are
 * mappings of their own (an arena's: free chunks between them hold stale
 * pointers), and the pages of each block that is a mapping of its own.  Not the whole mapping: the kernel
 * merges neighbouring anonymous mappings, so a region the program mapped
 * can share one with an arena or with large blocks -- beside them, or
 * between two of them. */
static void scan_area_roots(const struct area *ar, int pagemap)
{
	const uintptr_t page = ((uintptr_t)1 << PAGE_SHIFT) - 1;
	uintptr_t pos = ar->lo;
	for (size_t k = ar->first, end = ar->first + ar->nblocks; k < end; k++) {
		uintptr_t lo = rc.start[k] & ~page, hi = rc.end[k];
		if (!own_mapping(ar, k))
			while (k + 1 < end && !own_mapping(ar, k + 1))
				hi = rc.end[++k] > hi ? rc.end[k] : hi;
		hi = hi > ar->hi - page ? ar->hi : (hi + page) & ~page;
		if (lo < pos)
			lo = pos;
		if (lo > pos)
			(ar->flags & A_ANON) ? scan_anon(pos, lo, pagemap) : scan_root(pos, lo);
		if (hi > pos)
			pos = hi;
	}
	if (ar->hi > pos)
		(ar->flags & A_ANON) ? scan_anon(pos, ar->hi, pagemap) : scan_root(pos, ar->hi);
}

/* A run of a large marked block. */
static void scan_block_run(uintptr_t lo, uintptr_t hi)
{
	rc.out->marked_bytes += hi - lo;
	scan_words(lo, hi);
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
				touched_runs(lo, stop, rc.pagemap, scan_block_run);
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

static void __attribute__((noinline)) drain(void)
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
				touched_runs(lo, hi, rc.pagemap, scan_block_run);
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

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The child's own setup: faults are the only signals it takes (see
 * on_fault), the OOM killer is to pick it first, and the hook's own memory
 * is never a root. */
static void child_setup(const struct reach_child_args *a)
{
	sigset_t all;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigprocmask(SIG_SETMASK, &all, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	/* If memory runs out, the kernel is to kill this child, not the
	 * program (raising one's own score needs no privilege). */
	int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (oom >= 0) {
		if (write(oom, "1000", 4) != 4) {
			/* nothing to do: the scan goes on */
		}
		close(oom);
	}
	for (size_t i = 0; i < sizeof(a->exclude) / sizeof(a->exclude[0]); i++)
		rc_exclude(a->exclude[i][0], a->exclude[i][1]);
	/* the child's own state: it fills it with block addresses */
	rc_exclude((uintptr_t)&rc, (uintptr_t)(&rc + 1));
	/* the tables' memory, the dumps the control streams: each writes
	 * as many as there is room for, so room for all (the count it
	 * wrote below the room means it had no more) */
	for (size_t room = 256;; room *= 2) {
		rc_exclude_room(room);
		size_t n = table_own_ranges(rc.ex + rc.nex, room);
		if (n + 2 > room) /* (it stops two short of a full list) */
			continue;
		rc.nex += n;
		break;
	}
	for (size_t room = 256;; room *= 2) {
		rc_exclude_room(room);
		size_t n = control_image_ranges(rc.ex + rc.nex, room);
		if (n == room)
			continue;
		rc.nex += n;
		break;
	}
}

/* The blocks sorted, with their marks, the mark stack and the page index. */
static void index_blocks(const struct reach_child_args *a)
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

/* Each mapping's live blocks (the heap cuts of scan_area_roots). */
static void assign_blocks(struct area *areas, size_t nareas)
{
	for (size_t m = 0, i = 0; m < nareas; m++) {
		struct area *ar = &areas[m];
		while (i < rc.n && rc.end[i] <= ar->lo)
			i++;
		size_t j = i;
		while (j < rc.n && rc.start[j] < ar->hi)
			j++;
		ar->first = i;
		ar->nblocks = j - i;
		if ((ar->flags & A_HEAP) || j > i)
			rc.out->heap_mappings++;
	}
}

/* The first block ending after @addr (blocks do not overlap: their ends
 * ascend as their starts do). */
static size_t block_after(uintptr_t addr)
{
	size_t lo = 0, hi = rc.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rc.end[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The parts of live blocks in [@lo, @hi), a range the program cannot read
 * (@mapped: a mapping without read access; else no mapping at all), each
 * block with the chunk header word before it under glibc.  A mapping's
 * part is made readable in this image (mprotect here changes nothing of
 * the program's) and is read as any other; what cannot be, is skipped. */
static void unreadable_range(uintptr_t lo, uintptr_t hi, bool mapped)
{
	const uintptr_t page = ((uintptr_t)1 << PAGE_SHIFT) - 1;
	uintptr_t head = rc.glibc ? 2 * WORD : 0;
	for (size_t i = block_after(lo); i < rc.n && rc.start[i] - head < hi; i++) {
		uintptr_t a = rc.start[i] - head > lo ? rc.start[i] - head : lo;
		uintptr_t z = rc.end[i] < hi ? rc.end[i] : hi;
		if (a >= z)
			continue;
		uintptr_t body = rc.start[i] > a ? rc.start[i] : a; /* (past its header) */
		uintptr_t inside = z > body ? z - body : 0;
		uintptr_t pa = a & ~page, pz = (z + page) & ~page;
		pa = pa > lo ? pa : lo;
		pz = pz < hi ? pz : hi;
		if (mapped && mprotect((void *)pa, pz - pa, PROT_READ) == 0) {
			rc.out->unreadable_read += inside;
			continue;
		}
		rc.out->unreadable_skipped += inside;
		if (rc.nskip && rc.skip[rc.nskip - 1][1] >= pa) {
			rc.skip[rc.nskip - 1][1] = pz > rc.skip[rc.nskip - 1][1] ? pz : rc.skip[rc.nskip - 1][1];
		} else {
			if (rc.nskip == MAX_SKIP)
				rc_give_up("too many unmapped parts of blocks");
			rc.skip[rc.nskip][0] = pa;
			rc.skip[rc.nskip][1] = pz;
			rc.nskip++;
		}
	}
}

/* Pages of live blocks the program cannot read: a page it protected
 * (PROT_NONE, or write- or execute-only: no "r" in the maps), or one it
 * unmapped.  Reading them would kill this child. */
static void prepare_unreadable(const struct area *areas, size_t nareas)
{
	if (!rc.n)
		return;
	uintptr_t lo = rc.start[0] - (rc.glibc ? 2 * WORD : 0), hi = rc.end[rc.n - 1], pos = lo;
	for (size_t m = 0; m < nareas && pos < hi; m++) {
		if (areas[m].hi <= pos)
			continue;
		if (areas[m].lo > pos)
			unreadable_range(pos, areas[m].lo < hi ? areas[m].lo : hi, false);
		if (!(areas[m].flags & A_READ) && areas[m].lo < hi)
			unreadable_range(areas[m].lo > pos ? areas[m].lo : pos,
					 areas[m].hi < hi ? areas[m].hi : hi, true);
		pos = areas[m].hi;
	}
	if (pos < hi)
		unreadable_range(pos, hi, false);
}

/* The stopped threads: registers, stacks from SP.  Then the hook's own
 * stacks: the dump thread's, below where its loop runs, is left out;
 * this thread's is scanned from where the program called the hook. */
static void scan_threads(const struct reach_child_args *a, struct area *areas, size_t nareas)
{
	for (size_t t = 0; t < a->nthreads; t++) {
		const struct reach_thread *th = &a->threads[t];
		if (th->state != REACH_SAVED)
			continue;
		rc.out->threads_scanned++;
		scan_words((uintptr_t)th->regs, (uintptr_t)th->regs + th->reg_bytes);
		struct area *m = th->sp ? rc_area_of(areas, nareas, th->sp) : NULL;
		if (!m)
			continue; /* unknown SP: its stack mapping is scanned whole */
		uintptr_t lo = th->sp - RED_ZONE < m->lo ? m->lo : th->sp - RED_ZONE, hi = m->hi;
		uint32_t in = find(th->sp);
		if (in != NONE) /* a stack inside a heap block */
			hi = rc.end[in];
		else
			m->flags |= A_STACK;
		scan_root(lo, hi);
	}
	/* The dump thread's stack, below where its loop runs, holds the
	 * hook's data only (stale block addresses of earlier snapshots among
	 * them): that range is left out, not its whole mapping, which the
	 * kernel (or qemu-user) may have merged with the anonymous mapping
	 * above it -- on 32-bit ARM, the one that holds the main thread's
	 * static TLS. */
	struct area *hook = a->hook_stack ? rc_area_of(areas, nareas, a->hook_stack) : NULL;
	if (hook)
		rc_exclude(hook->lo, a->hook_stack);
	/* The control thread's (control.c), the same way. */
	struct area *ctl = a->control_stack ? rc_area_of(areas, nareas, a->control_stack) : NULL;
	if (ctl)
		rc_exclude(ctl->lo, a->control_stack);
	/* This thread: from where the program called the hook (the frames
	 * below are the hook's), or, on the hook's threads, as just said. */
	struct area *self = rc_area_of(areas, nareas, a->self_sp);
	if (self && self != hook && self != ctl)
		self->flags |= A_STACK;
	struct area *entry = a->entry_sp ? rc_area_of(areas, nareas, a->entry_sp) : NULL;
	if (entry) {
		entry->flags |= A_STACK;
		scan_root(a->entry_sp, entry->hi);
	}
}

/* A word of the image at @addr, if a readable mapping holds it. */
static bool image_word(struct area *areas, size_t nareas, uintptr_t addr, uintptr_t *out)
{
	const struct area *m = addr % sizeof(uintptr_t) ? NULL : rc_area_of(areas, nareas, addr);
	if (!m || !(m->flags & A_READ) || (m->flags & A_SKIP) || addr + sizeof(uintptr_t) > m->hi)
		return false;
	*out = *(const uintptr_t *)addr;
	return true;
}

/* Whether @pd holds the descriptor (@l) of a thread that ended and was
 * joined (glibc then sets its tid to -1) or was detached (joinid is the
 * descriptor itself) and ended (the kernel cleared its tid), whose stack
 * block ends at @top: its list node linked both ways, in readable memory.
 * Its stack block's start in *@block. */
static bool ended_descriptor(const struct reach_tcb_layout *l, struct area *areas, size_t nareas,
			     uintptr_t pd, uintptr_t top, uintptr_t *block)
{
	const size_t ws = sizeof(uintptr_t);
	uintptr_t node = pd + l->list_off, next, prev, back, fwd, start, size, join;
	if (!image_word(areas, nareas, node, &next) || !next ||
	    !image_word(areas, nareas, node + ws, &prev) ||
	    !image_word(areas, nareas, next + ws, &back) || back != node ||
	    !image_word(areas, nareas, prev, &fwd) || fwd != node ||
	    !image_word(areas, nareas, pd + l->block_off, &start) ||
	    !image_word(areas, nareas, pd + l->block_off + ws, &size) || start + size != top ||
	    start >= pd || !image_word(areas, nareas, pd + l->joinid_off, &join))
		return false;
	int tid;
	memcpy(&tid, (const void *)(pd + l->tid_off), sizeof(tid));
	if (tid != -1 && (tid != 0 || join != pd))
		return false; /* running, or ended and not joined yet */
	*block = start;
	return true;
}

/* The stacks of ended threads that glibc keeps for reuse.  Such a stack
 * is a writable anonymous mapping right above its guard page (an
 * unreadable mapping), without live blocks or a thread's stack pointer,
 * whose descriptor lies at the stack's end: at the mapping's end, or,
 * when the kernel merged the stack with a mapping made just above it,
 * at a page boundary inside (looked for page by page, up to 256 MiB).
 * Nothing in the stack is the program's any more: its frames are
 * finished, its static TLS is initialised anew when the stack is reused.
 * What glibc itself still uses is the DTV, whose dynamic TLS blocks it
 * frees at the reuse: that one word is the root, the rest of the stack is
 * not (what lies above it in the mapping is, as any mapping).  An ended
 * thread not joined yet is left whole: pthread_join will still give its
 * result, kept in the descriptor. */
#define ENDED_WALK ((uintptr_t)256 << 20)
static void scan_ended_stacks(const struct reach_tcb_layout *l, struct area *areas, size_t nareas)
{
	if (!l->ok)
		return;
	const uintptr_t ws = sizeof(uintptr_t), page = (uintptr_t)1 << PAGE_SHIFT;
	for (size_t m = 1; m < nareas; m++) {
		struct area *ar = &areas[m];
		if ((ar->flags & (A_READ | A_WRITE | A_ANON)) != (A_READ | A_WRITE | A_ANON) ||
		    (ar->flags & (A_SKIP | A_HEAP | A_STACK | A_SHARED)) || ar->nblocks ||
		    areas[m - 1].hi != ar->lo || (areas[m - 1].flags & A_READ) ||
		    l->top_to_pd > ar->hi - ar->lo)
			continue;
		uintptr_t block = 0, top = ar->hi;
		bool found = ended_descriptor(l, areas, nareas, top - l->top_to_pd, top, &block);
		uintptr_t last = ar->hi - ar->lo > ENDED_WALK ? ar->lo + ENDED_WALK : ar->hi;
		if (!found)
			top = (ar->lo + l->top_to_pd + page - 1) & ~(page - 1);
		for (; !found && top < last; top += found ? 0 : page)
			found = ended_descriptor(l, areas, nareas, top - l->top_to_pd, top, &block);
		if (!found || block > ar->lo)
			continue;
		uintptr_t dtv = top - l->top_to_pd + l->dtv_off;
		scan_words(dtv, dtv + ws);
		rc.out->root_bytes += ws;
		rc.out->ended_stacks++;
		if (top == ar->hi) {
			ar->flags |= A_SKIP;
		} else {
			rc_exclude(ar->lo, top);
		}
	}
}

/* Every other writable mapping that is not heap, then what is reached
 * from the roots. */
static void scan_mappings(struct area *areas, size_t nareas)
{
	int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap >= 0 && !pagemap_true(pagemap)) {
		close(pagemap);
		pagemap = -1;
	}
	rc.pagemap = pagemap;
	for (size_t m = 0; m < nareas; m++) {
		unsigned f = areas[m].flags;
		if ((f & (A_READ | A_WRITE)) != (A_READ | A_WRITE) || (f & (A_SKIP | A_HEAP | A_STACK)))
			continue;
		rc.out->root_mappings++;
		/* a heap mapping's parts outside its runs of live blocks are
		 * the allocator's: arena headers, free chunks, the top */
		rc.chunk_rule = rc.glibc && areas[m].nblocks;
		scan_area_roots(&areas[m], pagemap);
		rc.chunk_rule = false;
	}
	drain();
	if (pagemap >= 0)
		close(pagemap);
}

/* Count the unmarked blocks into their records. */
static void count_unreachable(const struct reach_child_args *a)
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

/* The memos of stacks of the stopped threads and of this one hold hashes
 * (table_memo_range), which on 32-bit fall inside a large block as often
 * as any word: this image's copy of them is cleared before anything is
 * scanned (the program's is untouched).  Those of threads not stopped
 * stay: their whole stacks are roots anyway. */
static void forget_memos(const struct reach_child_args *a)
{
	if (a->self_memo[1] > a->self_memo[0])
		memset((void *)a->self_memo[0], 0, a->self_memo[1] - a->self_memo[0]);
	for (size_t t = 0; t < a->nthreads; t++) {
		const struct reach_thread *th = &a->threads[t];
		if (th->state == REACH_SAVED && th->memo[1] > th->memo[0])
			memset((void *)th->memo[0], 0, th->memo[1] - th->memo[0]);
	}
}

/* The tables walked in this image (the parent held every table lock when
 * it forked, so they are as they were at that moment, and no thread of
 * the program waits for this): the records go into the parent's file
 * (@a->walk_fd), the counts after them; the block list and the records'
 * keys stay here, out of the roots.  Fills @b from @a with them. */
static void walk_tables(const struct reach_child_args *a, struct reach_child_args *b)
{
	static struct table_snapshot snap; /* (excluded from the roots below) */
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	*b = *a;
	if (table_snapshot_locked(&snap, true) != 0)
		rc_give_up("no memory for the records");
	size_t counts_off, total;
	reach_walk_layout(snap.record_count, snap.records_size, &counts_off, &total);
	if (ftruncate(a->walk_fd, (off_t)total) != 0)
		rc_give_up("cannot size the file of the records");
	uint8_t *out = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, a->walk_fd, 0);
	if (out == MAP_FAILED)
		rc_give_up("cannot map the file of the records");
	memcpy(out, snap.records, snap.records_size);
	rc.counts = (uint32_t *)(void *)(out + counts_off);
	b->blocks = snap.blocks;
	b->nblocks = snap.block_count;
	b->blocks_diff = snap.blocks_diff;
	b->huge = (const uintptr_t(*)[2])snap.huge;
	b->nhuge = snap.huge_count;
	b->keys = snap.keys;
	b->nrec = snap.record_count;
	/* the walk's own memory holds every block's address: never a root */
	uintptr_t own[][2] = {
		{(uintptr_t)snap.records, (uintptr_t)snap.records + snap.map_size},
		{(uintptr_t)snap.keys, (uintptr_t)snap.keys + snap.keys_size},
		{(uintptr_t)snap.blocks, (uintptr_t)snap.blocks + snap.blocks_size},
		{(uintptr_t)out, (uintptr_t)out + total},
		{(uintptr_t)&snap, (uintptr_t)(&snap + 1)},
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		rc_exclude(own[i][0], own[i][1]);
	rc.out->nrec = snap.record_count;
	rc.out->records_size = snap.records_size;
	rc.out->total_memory = snap.total_memory;
	rc.out->clamped = snap.clamped;
	rc.out->walk_ns = clock_ns(CLOCK_MONOTONIC) - t0;
}

void reach_child_main(const struct reach_child_args *args)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	rc.out = args->out;
	rc.counts = args->out->counts;
	child_setup(args);
	struct reach_child_args walked;
	const struct reach_child_args *a = args;
	if (args->walk_fd >= 0) {
		walk_tables(args, &walked);
		a = &walked;
		/* the scan's time starts after the walk (as when the parent
		 * walked: its speed is the mark's) */
		t0 = clock_ns(CLOCK_MONOTONIC);
		c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	}
	size_t nareas;
	struct area *areas = rc_read_maps(&nareas);
	index_blocks(a);
	forget_memos(a);
	rc.out->index_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	rc.glibc = a->glibc_chunks;
	rc.libc_lo = a->libc_data[0] & ~(WORD - 1);
	rc.libc_hi = (a->libc_data[1] + WORD - 1) & ~(WORD - 1);
	assign_blocks(areas, nareas);
	prepare_unreadable(areas, nareas);
	scan_threads(a, areas, nareas);
	scan_ended_stacks(&a->tcb, areas, nareas);
	scan_mappings(areas, nareas);
	count_unreachable(a);
	rc.out->scan_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	rc.out->scan_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	atomic_store(&rc.out->done, 1);
	_exit(0);
}
