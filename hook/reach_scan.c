/* leaksnap hook: the scanning child's course and its roots, in the forked
 * copy-on-write image (docs/reachability.md): its setup, the tables
 * walked in the image, the roots (threads' registers and stacks, the
 * stacks of ended threads, the other writable mappings less their heap),
 * the unreadable parts of blocks, and the report.  The blocks' index and
 * the mark are reach_mark.c's (steps 2, 4 and 5 below); the maps,
 * reach_maps.c's.
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
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "reach_mark.h"

/* A private anonymous mapping of SPARSE_MIN or more: only its touched
 * pages. */
static void scan_anon(uintptr_t lo, uintptr_t hi, int pagemap)
{
	if (pagemap < 0 || hi - lo < SPARSE_MIN)
		rc_scan_root(lo, hi);
	else
		rc_touched_runs(lo, hi, pagemap, rc_scan_root);
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
			(ar->flags & A_ANON) ? scan_anon(pos, lo, pagemap) : rc_scan_root(pos, lo);
		if (hi > pos)
			pos = hi;
	}
	if (ar->hi > pos)
		(ar->flags & A_ANON) ? scan_anon(pos, ar->hi, pagemap) : rc_scan_root(pos, ar->hi);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The child's own setup: faults are the only signals it takes (see
 * rc_on_fault), the OOM killer is to pick it first, and the hook's own memory
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
	sa.sa_handler = rc_on_fault;
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
		rc_scan_words((uintptr_t)th->regs, (uintptr_t)th->regs + th->reg_bytes);
		struct area *m = th->sp ? rc_area_of(areas, nareas, th->sp) : NULL;
		if (!m)
			continue; /* unknown SP: its stack mapping is scanned whole */
		uintptr_t lo = th->sp - RED_ZONE < m->lo ? m->lo : th->sp - RED_ZONE, hi = m->hi;
		uint32_t in = rc_find(th->sp);
		if (in != NONE) /* a stack inside a heap block */
			hi = rc.end[in];
		else
			m->flags |= A_STACK;
		rc_scan_root(lo, hi);
	}
	/* A thread stopped inside realloc(): the block out of the tables
	 * meanwhile, old or new, where a readable mapping still holds it
	 * (docs/reachability.md, "a thread stopped inside realloc"). */
	for (size_t t = 0; t < a->nthreads; t++) {
		const struct reach_thread *th = &a->threads[t];
		uintptr_t lo = th->inflight[0], hi = th->inflight[1];
		struct area *m = th->state == REACH_SAVED && lo < hi ? rc_area_of(areas, nareas, lo)
								   : NULL;
		if (m && (m->flags & A_READ) && !(m->flags & A_SKIP))
			rc_scan_root(lo, hi < m->hi ? hi : m->hi);
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
		rc_scan_root(a->entry_sp, entry->hi);
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
		rc_scan_words(dtv, dtv + ws);
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
	if (pagemap >= 0 && !rc_pagemap_true(pagemap)) {
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
	rc_drain();
	if (pagemap >= 0)
		close(pagemap);
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
	rc_index_blocks(a);
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
	rc_count_unreachable(a);
	rc.out->scan_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	rc.out->scan_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	atomic_store(&rc.out->done, 1);
	_exit(0);
}

