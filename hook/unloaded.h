/* leaksnap hook: the mappings of libraries dlclose() unloads, kept for
 * later dumps (unloaded.c). */
#ifndef LEAKSNAP_HOOK_UNLOADED_H
#define LEAKSNAP_HOOK_UNLOADED_H

#include <stdbool.h>
#include <stdint.h>

#include "procbuf.h"

/* What the process had mapped just before a dlclose(). */
struct unload_probe {
	bool on;
	struct buf maps, ids;
};

/* Around the real dlclose(): read the maps before; after, keep the lines
 * of the files whose code is gone, with their build IDs. */
void unloaded_before(struct unload_probe *pr);
void unloaded_after(struct unload_probe *pr);

/* Append the kept lines to a dump's metadata @meta, which already holds
 * its loaded libraries' "build_id=" lines. */
void unloaded_meta(struct buf *meta);

/* Hold the record's lock across fork(). */
void unloaded_fork_prepare(void);
void unloaded_fork_parent(void);
void unloaded_fork_child(void);
/* This thread holds the kept lines' lock (a signal interrupted it there). */
bool unloaded_busy_here(void);
/* As dump_lock_free, for the lock of the unloaded libraries' lines. */
bool unloaded_lock_free(void);

/* The GNU build ID of the module @info describes: its length (0: none),
 * with *@id pointing at it in the module's memory, and *@first_load the
 * address of its first loadable segment (dump.c). */
struct dl_phdr_info;
unsigned module_build_id(const struct dl_phdr_info *info, uintptr_t *first_load,
			 const uint8_t **id);

#endif
