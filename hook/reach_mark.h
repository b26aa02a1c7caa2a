/* leaksnap hook: the scanning child's blocks and mark (reach_mark.c), for
 * the child's course and its roots (reach_scan.c).  The child's state and
 * own memory are reach_child.h's.  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_REACH_MARK_H
#define LEAKSNAP_HOOK_REACH_MARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reach_child.h"

/* A private anonymous mapping, or a marked block, of a megabyte or more
 * is read through its touched pages only (rc_touched_runs): a reservation
 * of gigabytes then costs its page table, not a read of every page. */
#define SPARSE_MIN (1u << 20)

/* The child's handler of SIGSEGV and SIGBUS: a fault in a guarded read
 * ends that read, any other ends the child. */
void rc_on_fault(int sig);
/* The live blocks of @a sorted, with their marks, the mark stack and the
 * page index. */
void rc_index_blocks(const struct reach_child_args *a);
/* The live block holding @w, or NONE. */
uint32_t rc_find(uintptr_t w);
/* Mark the blocks the aligned words of [@lo, @hi) point into (not
 * counted as root bytes). */
void rc_scan_words(uintptr_t lo, uintptr_t hi);
/* A root range, less the hook's own memory; a range that faults is
 * dropped from the fault on. */
void rc_scan_root(uintptr_t lo, uintptr_t hi);
/* Whether @pagemap describes this process's addresses. */
bool rc_pagemap_true(int pagemap);
/* Call @fn on the runs of [@lo, @hi) whose pages were ever touched
 * (/proc/self/pagemap @pagemap); all of it when that cannot be told. */
void rc_touched_runs(uintptr_t lo, uintptr_t hi, int pagemap,
		     void (*fn)(uintptr_t lo, uintptr_t hi));
/* Scan the marked blocks until no block is left to scan. */
void rc_drain(void);
/* Count the unmarked blocks into their records (rc.counts). */
void rc_count_unreachable(const struct reach_child_args *a);

#endif /* LEAKSNAP_HOOK_REACH_MARK_H */
