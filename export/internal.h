/* leaksnap export: helpers private to the export library (lsx_). */
#ifndef LEAKSNAP_EXPORT_INTERNAL_H
#define LEAKSNAP_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <leaksnap/snapshot.h>

#include "kit.h"
#include "kit_json.h"
#include "kit_utf8.h"

struct leaksnap_export_pprof;
/* Fill @err with the error of profile @p (out of memory, or the write
 * error).  Returns -1. */
int lsx_pprof_fail(struct leaksnap_error *err, const struct leaksnap_export_pprof *p);

#endif
