/* leaksnap hook: a dump laid out in memory, the parts of a LEAKSNAP v1 file
 * (docs/format.md) ready to be written to files (dump.c) or sent over the
 * control socket (control.c).  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_DUMP_H
#define LEAKSNAP_HOOK_DUMP_H

#include <stdint.h>
#include <sys/uio.h>

#include <leaksnap/snapshot.h>

#include "hook_internal.h"
#include "procbuf.h"
#include "reach.h"

#define DUMP_IMAGE_PARTS 5

/* Everything in the hook's own memory (hook_map), nothing from malloc. */
struct dump_image {
	struct table_snapshot snap;
	struct reach_result reach;
	struct buf maps, meta;
	uint8_t header[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
	/* header, records, maps, metadata, reachability counts (empty
	 * without): the dump file, in order */
	struct iovec iov[DUMP_IMAGE_PARTS];
	uint64_t size; /* the sum of their lengths */
};

/* Take a dump as a file dump is taken (dump_write: the same lock, the same
 * snapshot, the same pause), into @img; with @reach its blocks are
 * classified whether LEAKSNAP_REACHABILITY is on or not.  Returns 0, or -1
 * with errno (ECANCELED: the process is exiting; EDEADLK; ENOMEM; what
 * reading the maps failed with).  Release @img with dump_image_free. */
int dump_take(struct dump_image *img, enum hook_trigger trigger, bool reach);
void dump_image_free(struct dump_image *img);

/* Under LEAKSNAP_UNWIND=fp, add to @meta "fp_shallow=N/M": N of the M
 * records of @snap whose stacks have at most FP_SHALLOW_DEPTH frames, and
 * "frame_pointers=missing" when that is most of them (at least
 * FP_SHALLOW_MIN records): walks that stop there are what code built
 * without frame pointers gives (dump_meta.c). */
#define FP_SHALLOW_DEPTH 1
#define FP_SHALLOW_MIN 8
void dump_fp_meta(struct buf *meta, const struct table_snapshot *snap);

/* dump.c's state, for dump_thread.c: a crash dump was written (no exit
 * dump after it); wait for a dump another thread is writing; no more
 * dumps but the exit dump (exit has begun); a forked child's fresh start. */
bool dump_crash_written(void);
void dump_files_wait(void);
void dump_files_end(void);
void dump_files_after_fork_child(void);

#endif
