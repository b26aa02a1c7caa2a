/* leaksnap hook: what the files of the scanning child share (reach_scan.c,
 * its course and roots; reach_mark.c, the blocks and the mark, which also
 * owns the state and memory below; reach_maps.c, its maps).  The child is
 * the forked image of reach.c: system calls and memory only
 * (docs/reachability.md). */
#ifndef LEAKSNAP_HOOK_REACH_CHILD_H
#define LEAKSNAP_HOOK_REACH_CHILD_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reach.h"

#define PAGE_SHIFT 12
#define NONE UINT32_MAX
#define MAX_EXCLUDE 256
#define MAX_SKIP 256
#define WORD sizeof(uintptr_t)

#if defined(__x86_64__) || defined(__i386__)
#define RED_ZONE 128 /* the SysV x86-64 ABI's; harmless on i386 */
#else
#define RED_ZONE 0
#endif

enum { A_READ = 1, A_WRITE = 2, A_SHARED = 4, A_SKIP = 8, A_HEAP = 16, A_STACK = 32, A_ANON = 64 };

struct area {
	uintptr_t lo, hi;
	unsigned flags;
	size_t first, nblocks;      /* its live blocks (indices in rc.start[]) */
};

struct cluster {
	uintptr_t lo, hi;   /* its first block's start, its blocks' furthest end */
	uintptr_t base;     /* lo >> shift: the grain of its first entry */
	unsigned shift;     /* its grains are 1 << shift bytes */
	size_t off;         /* its first entry in rc.first[] */
	size_t first_block, nblocks;
};

struct reach_child {
	uintptr_t *start, *end;     /* in address order (end: at least start + 1) */
	uint32_t *tag;              /* each one's tag (table_block_key) */
	size_t n;
	uintptr_t heap_lo, heap_span; /* the clusters' first start to their last end */
	struct cluster *cl;         /* in address order */
	size_t ncl;
	uint32_t *first;            /* the clusters' page entries (build_index) */
	uint8_t *spare, *spare_end; /* what sort_blocks' buffers leave free */
	uint64_t *marks;            /* one bit per block */
	int pagemap;                /* /proc/self/pagemap, or -1 */
	bool glibc;                 /* reach_child_args.glibc_chunks */
	uintptr_t libc_lo, libc_hi; /* the C library's writable segment */
	bool chunk_rule;            /* the root being read is the allocator's
				     * (consider) */
	uintptr_t skip[MAX_SKIP][2]; /* parts of blocks that cannot be read,
				      * in address order */
	size_t nskip;
	uint32_t *stack;
	size_t depth;
	uintptr_t (*ex)[2];         /* the hook's own memory, never a root:
				     * ex_first, then memory of the child's
				     * as it grows (rc_exclude) */
	size_t nex, ex_cap;
	uintptr_t ex_first[MAX_EXCLUDE][2];
	struct reach_shared *out;
	uint32_t *counts;           /* one per record (out->counts, or the
				     * records' file: walk_tables) */
	sigjmp_buf fault;
	volatile int faulting;
};

/* The child's state (reach_mark.c). */
extern struct reach_child rc;

/* Memory of the child's own (NULL: none). */
void *rc_map(size_t bytes);
/* Say @why in the shared result and end the child. */
void rc_give_up(const char *why) __attribute__((noreturn));
/* Leave [@lo, @hi) out of the roots; room for @n more ranges at
 * rc.ex + rc.nex.  The list grows as needed; where it cannot (no memory)
 * the child gives up, saying so: a range dropped would make the blocks its
 * memory points to look reachable. */
void rc_exclude(uintptr_t lo, uintptr_t hi);
void rc_exclude_room(size_t n);
/* /proc/self/maps as areas, in address order (*@count of them); the text
 * read is excluded from the roots.  reach_maps.c */
struct area *rc_read_maps(size_t *count);
/* The area of @a[0..@n) that holds @addr, or NULL. */
struct area *rc_area_of(struct area *a, size_t n, uintptr_t addr);

#endif /* LEAKSNAP_HOOK_REACH_CHILD_H */
