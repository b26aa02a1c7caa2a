/* leakdiff --db: the snapshots of a stored run as the diff's input
 * (diff_store.c). */
#ifndef LEAKSNAP_CLI_DIFF_STORE_H
#define LEAKSNAP_CLI_DIFF_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <leaksnap/diff.h>

#include "store.h"

struct diff_store;

/* The run of store @db to diff: the one whose id is @run (hex, as
 * 'history --by run' prints it), or else the newest with every one of the
 * @nwhere labels @where (several: said, as a warning).  Its snapshots,
 * records, stacks and frames are read at once.  0 with *@out set, or -1
 * after saying why (no such run, fewer than two snapshots, not a store). */
int diff_store_open(struct diff_store **out, const char *db, const char *run,
		    const struct leaksnap_store_label *where, size_t nwhere);
void diff_store_free(struct diff_store *ds);
/* Its snapshots, in capture order. */
size_t diff_store_count(const struct diff_store *ds);
/* Snapshot @i added to @d as a dump in memory: -1 after saying why. */
int diff_store_add(struct diff_store *ds, struct leaksnap_diff *d, size_t i);
/* The diff's symbols (a leaksnap_diff_symbols_fn, @arg the diff_store):
 * the store's, made when the frames were stored. */
int diff_store_symbols(void *arg, const char *path, const uint8_t *build_id, size_t build_id_len,
		       uint64_t rel_pc, struct leaksnap_resolved *out, struct leaksnap_error *err);

#endif
