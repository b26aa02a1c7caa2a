/* leaksnap hook: reachability at capture time (docs/reachability.md).
 * Shared by reach.c (the snapshot: the fork, the result), reach_stop.c
 * (stopping the threads) and the files of the scanning child, in the
 * forked image (reach_child.h).  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_REACH_H
#define LEAKSNAP_HOOK_REACH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hook_internal.h"

/* Bytes of a thread's machine context kept: every general register on
 * each ABI (x86-64 gregs: 184; arm64 x0-x30, sp, pc, pstate: 272; arm:
 * 84), the rest whatever follows them in mcontext_t. */
#define REACH_REG_BYTES 512

enum reach_thread_state {
	REACH_NEW,      /* listed, not yet signalled */
	REACH_SIGNALLED,
	REACH_SAVED,    /* its handler saved the registers and waits */
	REACH_GONE,     /* exited meanwhile */
	REACH_BLOCKED,  /* blocks the stop signal and sleeps: not signalled */
	REACH_FROZEN,   /* signal pending, not yet run (in the kernel) */
	REACH_WATCH,    /* blocks the stop signal and runs: not signalled, looked at */
};

struct reach_thread {
	atomic_int tid;
	atomic_uint want;     /* the stop phase it is asked to answer */
	atomic_uint answered; /* the phase it answered */
	int state;            /* enum reach_thread_state (stopper only) */
	int strikes;          /* looks that found it blocking the signal, running */
	uintptr_t sp;
	uintptr_t memo[2];    /* its memo of stacks (table_memo_range) */
	uintptr_t inflight[2]; /* its realloc's block out of the tables
				* (table_inflight): a root */
	unsigned reg_bytes;
	/* Raised to SCHED_FIFO for its stop (reach_stop.c's boost_thread): its
	 * own scheduling before (a struct sched_attr as the kernel gave it,
	 * its size first), given back by the thread itself in its handler,
	 * or by the dump thread if it never runs it -- only while the thread
	 * has the start time it had when listed (a tid may be reused). */
	atomic_bool boosted;
	unsigned long long start_time;
	uint32_t sched[16];
	uintptr_t regs[REACH_REG_BYTES / sizeof(uintptr_t)];
};

/* What the scanning child reports back (shared memory). */
struct reach_shared {
	atomic_int done;          /* 1 when the rest is written */
	char error[120];          /* non-empty: the scan could not be done */
	uint64_t blocks, unreachable_blocks, unreachable_bytes;
	uint64_t root_bytes, heap_bytes, root_mappings, heap_mappings, threads_scanned;
	uint64_t marked_bytes;    /* bytes of the blocks scanned */
	uint64_t scan_ns, scan_cpu_ns;
	uint64_t index_ns;        /* of scan_ns: listing, sorting, indexing the blocks */
	uint64_t unreadable_read; /* bytes of live blocks in pages without read
				   * access, read after the child lifted it */
	uint64_t unreadable_skipped; /* bytes of live blocks not mapped (or not
				      * made readable): not read */
	uint64_t ended_stacks;    /* cached stacks of ended threads: DTV only */
	/* The records, when the child walked the tables in its image (the
	 * parent gave it @reach_child_args.walk_fd): how many, in what it
	 * wrote there, and the walk's time. */
	uint64_t nrec, records_size, total_memory, clamped, walk_ns;
	uint32_t counts[];        /* one per record, in the unsorted record order
				   * (when the parent walked the tables) */
};

/* Where glibc keeps what the scan needs in a thread's descriptor (struct
 * pthread), learnt on the hook's own thread (reach_learn_thread_layout):
 * the stack of an ended thread that glibc keeps for reuse is read at its
 * DTV pointer only (docs/reachability.md, "stacks of ended threads"). */
struct reach_tcb_layout {
	bool ok;
	uintptr_t top_to_pd;  /* a glibc-made stack's end less its descriptor */
	size_t list_off;      /* the descriptor's list node (next, prev) */
	size_t tid_off;       /* its tid: 0 once ended, -1 once joined */
	size_t joinid_off;    /* its joinid: the descriptor when detached */
	size_t dtv_off;       /* the word holding the DTV pointer */
	size_t block_off;     /* its stack's start (with the guard), then size */
};

/* Everything the child needs, in the parent's memory (its copy). */
struct reach_child_args {
	struct reach_thread *threads;
	size_t nthreads;
	uintptr_t self_sp;        /* the forking thread's stack pointer */
	uintptr_t self_memo[2];   /* its memo of stacks (table_memo_range) */
	uintptr_t entry_sp;       /* where the program called into the hook on
				   * this thread (scanned from there up), or 0:
				   * the hook's own thread (not scanned) */
	uintptr_t hook_stack;     /* an address on the dump thread's stack, or 0 */
	uintptr_t control_stack;  /* one on the control thread's, or 0 */
	const struct table_block *blocks; /* the live blocks, in no order */
	size_t nblocks;
	uintptr_t blocks_diff;    /* the address bits in which they differ */
	const uintptr_t (*huge)[2]; /* {start, size} of those of 4 GiB or more */
	size_t nhuge;
	const uint64_t *keys;     /* the records' keys, ascending */
	size_t nrec;
	struct reach_shared *out;
	size_t out_size;
	uintptr_t exclude[8][2];  /* the hook's own memory above (not roots), the
				   * control socket's state, and the hook's
				   * writable segment less its start-up pool */
	struct reach_tcb_layout tcb; /* (ok false: ended stacks read whole) */
	bool glibc_chunks;        /* the blocks are glibc malloc's: the word
				   * before each holds its chunk's size, bit 1
				   * set when the chunk is a mapping of its own */
	uintptr_t libc_data[2];   /* the C library's writable segment (.data,
				   * .bss), or {0, 0} */
	int walk_fd;              /* >= 0: the tables are not walked yet; the
				   * child walks them in its image and writes
				   * the records, then (at a page's offset) the
				   * counts into this file (reach_walk_layout) */
};

/* Where the records and the counts lie in the file of walk_fd: records
 * from 0, counts from *@counts_off, *@total bytes in all. */
static inline void reach_walk_layout(size_t nrec, size_t records_size, size_t *counts_off,
				     size_t *total)
{
	size_t page = 65536; /* any page size of Linux's (an mmap offset) */
	*counts_off = (records_size + page - 1) / page * page;
	*total = *counts_off + (nrec ? nrec : 1) * sizeof(uint32_t);
}

/* In the forked child: mark, count, report, _exit.  Never returns. */
void reach_child_main(const struct reach_child_args *a) __attribute__((noreturn));

/* The outcome of one reachable snapshot, for the dump writer. */
struct reach_result {
	bool ok;             /* counts are valid: write flag bit 2 */
	uint32_t *counts;    /* one per record, in the sorted record order */
	size_t counts_size;  /* bytes of the section (4 * records) */
	void *map;           /* what to unmap afterwards */
	size_t map_size;
	void *counts_map;    /* and this (the counts the child walked into) */
	size_t counts_map_size;
	char meta[1024];      /* the reachability metadata lines */
};

/* The stack pointer here. */
static inline __attribute__((always_inline)) uintptr_t reach_current_sp(void)
{
	uintptr_t sp;
#if defined(__x86_64__)
	__asm__ volatile("movq %%rsp, %0" : "=r"(sp));
#elif defined(__i386__)
	__asm__ volatile("movl %%esp, %0" : "=r"(sp));
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ volatile("mov %0, sp" : "=r"(sp));
#elif defined(__riscv)
	__asm__ volatile("mv %0, sp" : "=r"(sp));
#else
	sp = (uintptr_t)__builtin_frame_address(0) - 4096;
#endif
	return sp;
}

/* Where the program's thread entered the hook for a dump (leaksnap_dump,
 * the exit destructor): set by REACH_ENTER, with every callee-saved
 * register of the program's spilled into the frame above it. */
extern HOOK_TLS uintptr_t reach_entry_sp;
#define REACH_ENTER()                                   \
	do {                                            \
		__builtin_unwind_init();                \
		reach_entry_sp = reach_current_sp();    \
	} while (0)

/* On the dump thread (a thread glibc made), before it is seen: where
 * the descriptor's fields lie (struct reach_tcb_layout).  reach_tcb.c */
void reach_learn_thread_layout(void);
/* What reach_learn_thread_layout() learned (ok false: nothing). */
struct reach_tcb_layout reach_tcb(void);
/* On the main thread at exit after a return from main(): the stack
 * pointer near where glibc's start code called exit(), or 0. */
uintptr_t reach_main_exit_sp(void);
/* Install the stop signal's handler (with LEAKSNAP_REACHABILITY). */
void reach_init(void);
/* Put back the stop signal's handler reach_init() set (in-app stop). */
void reach_stop(void);
/* Take a snapshot as table_snapshot does, and classify its blocks.  Returns
 * 0 with @snap filled (and @res->ok telling whether the counts came too),
 * or -1 as table_snapshot. */
int reach_snapshot(struct table_snapshot *snap, struct reach_result *res);
void reach_result_free(struct reach_result *res);

#endif
