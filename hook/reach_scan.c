/* leaksnap hook: the mark, in the forked copy-on-write image
 * (docs/reachability.md).
 *
 * The child is a copy of the dumping thread at the moment every other
 * thread was stopped and every table lock held.  It may only make system
 * calls and touch memory: other threads' locks (malloc's, stdio's, the
 * dynamic loader's) were copied in whatever state they were.
 *
 *  1. /proc/self/maps (the child's maps are the parent's) into a list.
 *  2. The live blocks from the tables, sorted by address, and an index
 *     from each 4 KiB page to the blocks that overlap it (blocks larger
 *     than BIG_PAGES pages are entered at their first and last page and
 *     found in a sorted list of their own in between).
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

#include "reach.h"

#define PAGE_SHIFT 12
#define BIG_PAGES 64
#define NONE UINT32_MAX
#define MAX_EXCLUDE 256

#if defined(__x86_64__) || defined(__i386__)
#define RED_ZONE 128 /* the SysV x86-64 ABI's; harmless on i386 */
#else
#define RED_ZONE 0
#endif

enum { A_READ = 1, A_WRITE = 2, A_SHARED = 4, A_SKIP = 8, A_HEAP = 16, A_STACK = 32, A_ANON = 64 };

struct area {
	uintptr_t lo, hi;
	unsigned flags;
	uintptr_t heap_lo, heap_hi; /* the pages its live blocks span, if any */
};

struct page_ent {
	uintptr_t page; /* page number + 1; 0 = empty */
	uint32_t lo, hi;
};

static struct {
	uintptr_t *start, *end;     /* in address order (end: at least start + 1) */
	uint32_t *tag;              /* each one's tag (table_block_key) */
	size_t n;
	uintptr_t heap_lo, heap_span;
	struct page_ent *pages;
	size_t page_mask;
	uint32_t *big;              /* indices of big blocks, by address */
	size_t nbig;
	uint64_t *marks;            /* one bit per block */
	uint32_t *stack;
	size_t depth;
	uintptr_t ex[MAX_EXCLUDE][2];
	size_t nex;
	struct reach_shared *out;
	sigjmp_buf fault;
	volatile int faulting;
} S;

/* Memory of the child's own.  Large arrays are faulted in by the kernel
 * at once (MAP_POPULATE): cheaper than a fault per page. */
static void *child_map(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       (bytes >= (1u << 20) ? MAP_POPULATE : 0),
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void __attribute__((noreturn)) give_up(const char *why)
{
	snprintf(S.out->error, sizeof(S.out->error), "%s", why);
	atomic_store(&S.out->done, 1);
	_exit(0);
}

/* Maps ------------------------------------------------------------------------ */

static uintptr_t hex(const char **s)
{
	uintptr_t v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static bool starts(const char *s, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(end - s) >= n && !memcmp(s, prefix, n);
}

/* Read and parse /proc/self/maps; the text buffer is excluded from roots. */
static struct area *read_maps(size_t *count)
{
	size_t cap = 1 << 20, len = 0;
	char *text = child_map(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (!text || fd < 0)
		give_up("cannot read /proc/self/maps in the image");
	for (;;) {
		if (cap - len < 65536) {
			char *t = mremap(text, cap, cap * 2, MREMAP_MAYMOVE);
			if (t == MAP_FAILED)
				give_up("no memory for the maps");
			text = t;
			cap *= 2;
		}
		ssize_t r = read(fd, text + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	S.ex[S.nex][0] = (uintptr_t)text;
	S.ex[S.nex][1] = (uintptr_t)text + cap;
	S.nex++;
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	struct area *a = child_map(lines * sizeof(*a));
	if (!a)
		give_up("no memory for the maps");
	size_t n = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *s = p;
		struct area *m = &a[n];
		m->lo = hex(&s);
		if (*s == '-')
			s++;
		m->hi = hex(&s);
		while (s < eol && *s == ' ')
			s++;
		m->flags = 0;
		if (eol - s >= 4) {
			m->flags |= s[0] == 'r' ? A_READ : 0;
			m->flags |= s[1] == 'w' ? A_WRITE : 0;
			m->flags |= s[3] == 's' ? A_SHARED : 0;
		}
		/* the path: after perms, offset, dev and inode */
		for (int field = 0; s < eol && field < 4; field++) {
			while (s < eol && *s == ' ')
				s++;
			while (s < eol && *s != ' ')
				s++;
		}
		while (s < eol && *s == ' ')
			s++;
		bool anon_shared = s == eol || starts(s, eol, "/dev/zero") ||
				   starts(s, eol, "/SYSV") || starts(s, eol, "/memfd:") ||
				   starts(s, eol, "[anon_shmem");
		if (starts(s, eol, "[vvar") || starts(s, eol, "[vsyscall]") ||
		    starts(s, eol, "[vdso]") || (starts(s, eol, "/dev/") && !anon_shared) ||
		    ((m->flags & A_SHARED) && !anon_shared))
			m->flags |= A_SKIP; /* kernel pages, devices, shared files */
		if (starts(s, eol, "[anon:libc_malloc") || starts(s, eol, "[anon:scudo:") ||
		    starts(s, eol, "[anon:GWP-ASan"))
			m->flags |= A_HEAP; /* the allocator's, even with no live block */
		if ((s == eol || starts(s, eol, "[anon:")) && !(m->flags & A_SHARED))
			m->flags |= A_ANON;
		if (m->hi > m->lo)
			n++;
		p = eol + 1;
	}
	*count = n;
	return a;
}

static struct area *area_of(struct area *a, size_t n, uintptr_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo].lo <= addr && addr < a[lo].hi ? &a[lo] : NULL;
}

/* Blocks ---------------------------------------------------------------------- */

/* The blocks in address order, as S.start[], S.end[] (at least start + 1:
 * a pointer to a zero-size block is to the block) and S.tag[] (its record
 * key's makings): an LSD radix sort of the tables' {start, tag, size}, 16 bits a
 * pass over the bits in which the starts differ. */
_Static_assert(sizeof(struct table_block) >= 2 * sizeof(uintptr_t), "start[] and end[] fit");
#define DIGIT 16
static void __attribute__((noinline)) sort_blocks(struct table_block *a, uintptr_t diff)
{
	size_t n = S.n;
	struct table_block *t = child_map((n + 1) * sizeof(*t));
	size_t *count = child_map(((size_t)1 << DIGIT) * sizeof(size_t));
	if (!t || !count)
		give_up("no memory to sort the blocks");
	struct table_block *src = a, *dst = t;
	if (diff) {
		unsigned lo_bit = (unsigned)__builtin_ctzll((unsigned long long)diff);
		unsigned hi_bit = 63 - (unsigned)__builtin_clzll((unsigned long long)diff);
		size_t buckets = (size_t)1 << DIGIT, mask = buckets - 1;
		for (unsigned shift = lo_bit; shift <= hi_bit; shift += DIGIT) {
			memset(count, 0, buckets * sizeof(size_t));
			for (size_t i = 0; i < n; i++)
				count[(src[i].start >> shift) & mask]++;
			size_t sum = 0;
			for (size_t d = 0; d < buckets; d++) {
				size_t c = count[d];
				count[d] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
				dst[count[(src[i].start >> shift) & mask]++] = src[i];
			struct table_block *x = src;
			src = dst;
			dst = x;
		}
	}
	/* The sorted arrays take the two buffers' place: start[] and end[] in
	 * the free one, tag[] over the sorted items themselves (item i is
	 * read before tag[i] is written, which lies in an item before it). */
	S.start = (uintptr_t *)(void *)dst;
	S.end = S.start + n + 1;
	S.tag = (uint32_t *)(void *)src;
	for (size_t i = 0; i < n; i++) {
		struct table_block it = src[i];
		uintptr_t size = it.size ? it.size : 1;
		S.start[i] = it.start;
		S.end[i] = it.start + size < it.start ? UINTPTR_MAX : it.start + size;
		S.tag[i] = it.tag;
	}
	munmap(count, ((size_t)1 << DIGIT) * sizeof(size_t));
}

static inline size_t page_slot(uintptr_t page)
{
	return (size_t)(((uint64_t)page * 0x9e3779b97f4a7c15ULL) >> 20) & S.page_mask;
}

static void page_add(uintptr_t page, uint32_t i)
{
	size_t k = page_slot(page);
	while (S.pages[k].page && S.pages[k].page != page + 1)
		k = (k + 1) & S.page_mask;
	if (!S.pages[k].page) {
		S.pages[k].page = page + 1;
		S.pages[k].lo = i;
	}
	S.pages[k].hi = i + 1;
}

static void __attribute__((noinline)) build_index(void)
{
	size_t distinct = 0;
	uintptr_t last = UINTPTR_MAX;
	S.nbig = 0;
	for (size_t i = 0; i < S.n; i++) {
		uintptr_t a = S.start[i] >> PAGE_SHIFT, z = (S.end[i] - 1) >> PAGE_SHIFT;
		if (z - a >= BIG_PAGES) {
			distinct += 2;
			S.nbig++;
		} else {
			distinct += z - a + 1 - (a == last);
		}
		last = z;
	}
	size_t cap = 64;
	while (cap < distinct * 2)
		cap *= 2;
	S.pages = child_map(cap * sizeof(*S.pages));
	S.big = child_map((S.nbig + 1) * sizeof(uint32_t));
	if (!S.pages || !S.big)
		give_up("no memory for the block index");
	S.page_mask = cap - 1;
	S.nbig = 0;
	for (size_t i = 0; i < S.n; i++) {
		uintptr_t a = S.start[i] >> PAGE_SHIFT, z = (S.end[i] - 1) >> PAGE_SHIFT;
		if (z - a >= BIG_PAGES) {
			page_add(a, (uint32_t)i);
			page_add(z, (uint32_t)i);
			S.big[S.nbig++] = (uint32_t)i;
		} else {
			for (uintptr_t p = a; p <= z; p++)
				page_add(p, (uint32_t)i);
		}
	}
	S.heap_lo = S.n ? S.start[0] : 0;
	S.heap_span = S.n ? S.end[S.n - 1] - S.heap_lo : 0;
}

/* The range of blocks overlapping @w's page: false if the page has none
 * in the page index (then only a big block can hold @w). */
static inline bool page_range(uintptr_t w, uint32_t *lo, uint32_t *hi)
{
	uintptr_t page = w >> PAGE_SHIFT;
	for (size_t k = page_slot(page);; k = (k + 1) & S.page_mask) {
		const struct page_ent *e = &S.pages[k];
		if (e->page == page + 1) {
			*lo = e->lo;
			*hi = e->hi;
			return true;
		}
		if (!e->page)
			return false;
	}
}

/* The block holding @w among [lo, hi) of the page's range, or NONE. */
static inline uint32_t find_in(uintptr_t w, uint32_t lo, uint32_t hi)
{
	/* the last block starting at or below w */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (S.start[mid] <= w)
			lo = mid;
		else
			hi = mid;
	}
	return S.start[lo] <= w && w < S.end[lo] ? lo : NONE;
}

static uint32_t find_big(uintptr_t w)
{
	size_t lo = 0, hi = S.nbig;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (S.start[S.big[mid]] <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NONE;
	uint32_t i = S.big[lo - 1];
	return w < S.end[i] ? i : NONE;
}

/* The block holding @w, or NONE. */
static inline uint32_t find(uintptr_t w)
{
	uint32_t lo, hi;
	return page_range(w, &lo, &hi) ? find_in(w, lo, hi) : find_big(w);
}

/* The mark ---------------------------------------------------------------------- */

static inline void mark(uint32_t i)
{
	if (i == NONE || (S.marks[i >> 6] >> (i & 63) & 1))
		return;
	S.marks[i >> 6] |= (uint64_t)1 << (i & 63);
	S.stack[S.depth++] = i;
}

static inline void consider(uintptr_t w)
{
	if (w - S.heap_lo >= S.heap_span)
		return;
	mark(find(w));
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
	if (S.faulting)
		siglongjmp(S.fault, 1);
	_exit(3);
}

static void __attribute__((noinline)) scan_guarded(uintptr_t lo, uintptr_t hi)
{
	S.faulting = 1;
	if (sigsetjmp(S.fault, 0) == 0) { /* (SA_NODEFER: no mask to restore) */
		scan_words(lo, hi);
		S.out->root_bytes += hi - lo;
	}
	S.faulting = 0;
}

/* A root range less the hook's own memory; a range that faults (a file
 * mapping past its end) is dropped from the fault on. */
static void scan_root(uintptr_t lo, uintptr_t hi)
{
	while (lo < hi) {
		uintptr_t stop = hi, next = hi;
		for (size_t i = 0; i < S.nex; i++) {
			if (S.ex[i][1] <= lo || S.ex[i][0] >= hi)
				continue;
			if (S.ex[i][0] <= lo) {
				stop = lo; /* lo itself is excluded: skip past it */
				next = S.ex[i][1];
				break;
			}
			if (S.ex[i][0] < stop) {
				stop = S.ex[i][0];
				next = S.ex[i][1];
			}
		}
		if (stop > lo)
			scan_guarded(lo, stop);
		lo = next > lo ? next : hi;
	}
}

/* Whether @pagemap describes this process's addresses: of 8 fresh pages,
 * the even ones written, it must show exactly those as present.  (Under
 * qemu-user it describes the host's addresses, not the program's.) */
static bool pagemap_true(int pagemap)
{
	size_t page = (size_t)1 << PAGE_SHIFT;
	volatile char *p = child_map(8 * page);
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

/* A private anonymous mapping of a megabyte or more: only its pages that
 * were ever touched (present or swapped out, /proc/self/pagemap), the rest
 * reads as zeros.  A reservation of gigabytes then costs its page table,
 * not a read of every page. */
#define SPARSE_MIN (1u << 20)
static void scan_anon(uintptr_t lo, uintptr_t hi, int pagemap)
{
	if (pagemap < 0 || hi - lo < SPARSE_MIN) {
		scan_root(lo, hi);
		return;
	}
	uint64_t ent[512];
	for (uintptr_t at = lo; at < hi;) {
		size_t pages = (hi - at) >> PAGE_SHIFT;
		if (pages > 512)
			pages = 512;
		ssize_t r = pread(pagemap, ent, pages * 8, (off_t)((at >> PAGE_SHIFT) * 8));
		if (r != (ssize_t)(pages * 8)) {
			scan_root(at, hi); /* cannot tell: all of it */
			return;
		}
		for (size_t k = 0; k < pages;) {
			size_t run = 0;
			while (k + run < pages && (ent[k + run] >> 62))
				run++;
			if (run)
				scan_root(at + (k << PAGE_SHIFT), at + ((k + run) << PAGE_SHIFT));
			k += run;
			while (k < pages && !(ent[k] >> 62))
				k++;
		}
		at += pages << PAGE_SHIFT;
	}
}

/* Scan the marked blocks, a batch at a time, in stages so that the cache
 * misses of a graph walk overlap: the batch's blocks are asked for first
 * (prefetch); then their words that fall in the heap's range are gathered,
 * each one's page-index entry asked for; then they are looked up. */
#define BATCH 64
#define CAND 512
static void resolve(const uintptr_t *cand, size_t n)
{
	uint32_t lo[CAND], hi[CAND];
	for (size_t k = 0; k < n; k++) {
		if (!page_range(cand[k], &lo[k], &hi[k])) {
			lo[k] = NONE;
			continue;
		}
		/* the page's starts (a few lines: a binary search touches
		 * most of them) and the end its answer most likely reads */
		const uintptr_t *p = &S.start[lo[k]], *z = &S.start[hi[k]];
		for (unsigned l = 0; p < z && l < 4; l++, p += 64 / sizeof(*p))
			__builtin_prefetch(p);
		__builtin_prefetch(&S.end[lo[k] + (hi[k] - lo[k]) / 2]);
	}
	for (size_t k = 0; k < n; k++)
		mark(lo[k] == NONE ? find_big(cand[k]) : find_in(cand[k], lo[k], hi[k]));
}

static void __attribute__((noinline)) drain(void)
{
	uint32_t batch[BATCH];
	uintptr_t cand[CAND];
	while (S.depth) {
		size_t n = S.depth < BATCH ? S.depth : BATCH;
		S.depth -= n;
		memcpy(batch, S.stack + S.depth, n * sizeof(uint32_t));
		for (size_t k = 0; k < n; k++) {
			const char *p = (const char *)S.start[batch[k]];
			__builtin_prefetch(p);
			__builtin_prefetch(p + 64);
		}
		size_t nc = 0;
		for (size_t k = 0; k < n; k++) {
			uint32_t i = batch[k];
			uintptr_t lo = S.start[i], hi = S.end[i];
			S.out->marked_bytes += hi - lo;
			lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
			for (const uintptr_t *p = (const uintptr_t *)lo; (uintptr_t)(p + 1) <= hi; p++) {
				uintptr_t w = *p;
				if (w - S.heap_lo >= S.heap_span)
					continue;
				__builtin_prefetch(&S.pages[page_slot(w >> PAGE_SHIFT)]);
				cand[nc++] = w;
				if (nc == CAND) {
					resolve(cand, nc);
					nc = 0;
				}
			}
		}
		resolve(cand, nc);
	}
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void reach_child_main(const struct reach_child_args *a)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	S.out = a->out;
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
	for (size_t i = 0; i < 4; i++) {
		S.ex[S.nex][0] = a->exclude[i][0];
		S.ex[S.nex][1] = a->exclude[i][1];
		S.nex++;
	}
	/* this file's own state: the child fills it with block addresses */
	S.ex[S.nex][0] = (uintptr_t)&S;
	S.ex[S.nex][1] = (uintptr_t)(&S + 1);
	S.nex++;
	S.nex += table_own_ranges(S.ex + S.nex, MAX_EXCLUDE - S.nex - 2); /* (read_maps's, the dump thread's) */
	size_t nareas;
	struct area *areas = read_maps(&nareas);

	size_t live = table_live_count();
	struct table_block *blocks = child_map((live + 1) * sizeof(*blocks));
	S.marks = child_map((live / 64 + 1) * sizeof(uint64_t));
	S.stack = child_map((live + 1) * sizeof(uint32_t));
	if (!blocks || !S.marks || !S.stack)
		give_up("no memory for the block list");
	uintptr_t diff;
	S.n = table_blocks(blocks, live, &diff);
	sort_blocks(blocks, diff);
	build_index();

	/* The heap: the pages from a mapping's first live block to the end of
	 * its last.  Not the whole mapping: the kernel merges neighbouring
	 * anonymous mappings, so a region the program mapped can share one
	 * with an arena or a large block; the rest of the mapping stays a
	 * root. */
	for (size_t m = 0, i = 0; m < nareas; m++) {
		struct area *ar = &areas[m];
		ar->heap_lo = ar->heap_hi = 0;
		while (i < S.n && S.end[i] <= ar->lo)
			i++;
		size_t j = i;
		while (j < S.n && S.start[j] < ar->hi)
			j++;
		if (j > i) {
			uintptr_t page = ((uintptr_t)1 << PAGE_SHIFT) - 1;
			ar->heap_lo = S.start[i] & ~page;
			ar->heap_hi = S.end[j - 1] > ar->hi - page ? ar->hi : (S.end[j - 1] + page) & ~page;
			if (ar->heap_lo < ar->lo)
				ar->heap_lo = ar->lo;
		}
		if ((ar->flags & A_HEAP) || j > i)
			S.out->heap_mappings++;
	}

	/* The threads: registers, stacks from SP. */
	for (size_t t = 0; t < a->nthreads; t++) {
		const struct reach_thread *th = &a->threads[t];
		if (th->state != REACH_SAVED)
			continue;
		S.out->threads_scanned++;
		scan_words((uintptr_t)th->regs, (uintptr_t)th->regs + th->reg_bytes);
		struct area *m = th->sp ? area_of(areas, nareas, th->sp) : NULL;
		if (!m)
			continue; /* unknown SP: its stack mapping is scanned whole */
		uintptr_t lo = th->sp - RED_ZONE < m->lo ? m->lo : th->sp - RED_ZONE, hi = m->hi;
		uint32_t in = find(th->sp);
		if (in != NONE) /* a stack inside a heap block */
			hi = S.end[in];
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
	struct area *hook = a->hook_stack ? area_of(areas, nareas, a->hook_stack) : NULL;
	if (hook && S.nex < MAX_EXCLUDE) {
		S.ex[S.nex][0] = hook->lo;
		S.ex[S.nex][1] = a->hook_stack;
		S.nex++;
	}
	/* This thread: from where the program called the hook (the frames
	 * below are the hook's), or, on the dump thread, as just said. */
	struct area *self = area_of(areas, nareas, a->self_sp);
	if (self && self != hook)
		self->flags |= A_STACK;
	struct area *entry = a->entry_sp ? area_of(areas, nareas, a->entry_sp) : NULL;
	if (entry) {
		entry->flags |= A_STACK;
		scan_root(a->entry_sp, entry->hi);
	}
	/* Every other writable mapping that is not heap. */
	int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap >= 0 && !pagemap_true(pagemap)) {
		close(pagemap);
		pagemap = -1;
	}
	for (size_t m = 0; m < nareas; m++) {
		unsigned f = areas[m].flags;
		if ((f & (A_READ | A_WRITE)) != (A_READ | A_WRITE) || (f & (A_SKIP | A_HEAP | A_STACK)))
			continue;
		S.out->root_mappings++;
		uintptr_t lo = areas[m].lo, hi = areas[m].hi;
		uintptr_t cut_lo = areas[m].heap_hi > areas[m].heap_lo ? areas[m].heap_lo : hi;
		uintptr_t cut_hi = areas[m].heap_hi > areas[m].heap_lo ? areas[m].heap_hi : hi;
		if (f & A_ANON) {
			scan_anon(lo, cut_lo, pagemap);
			scan_anon(cut_hi, hi, pagemap);
		} else {
			scan_root(lo, cut_lo);
			scan_root(cut_hi, hi);
		}
	}
	if (pagemap >= 0)
		close(pagemap);
	drain();

	/* Count the unmarked blocks into their records. */
	for (size_t i = 0; i < S.n; i++) {
		if (S.marks[i >> 6] >> (i & 63) & 1)
			continue;
		uint64_t key = table_block_key(S.tag[i], (uint32_t)(S.end[i] - S.start[i]));
		size_t lo = 0, hi = a->nrec;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < a->nrec && a->keys[lo] == key) {
			S.out->counts[lo]++;
			S.out->unreachable_blocks++;
			S.out->unreachable_bytes += (uint32_t)key; /* its size */
		}
	}
	S.out->blocks = S.n;
	S.out->scan_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	S.out->scan_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	atomic_store(&S.out->done, 1);
	_exit(0);
}
