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

#endif
