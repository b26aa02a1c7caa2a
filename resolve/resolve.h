/* leaksnap resolve: the frames of a snapshot, symbolized.
 *
 * Between the maps (a PC -> module + rel_pc) and the symbolizer (a file +
 * address -> frames) stands what only a snapshot knows: the build ID the
 * dump recorded for each module, and the layout of a module whose only
 * file here is debug-only, taken from the maps.  A resolver answers each
 * (module, rel_pc) once and keeps the answer as long as it lives.
 */
#ifndef LEAKSNAP_RESOLVE_H
#define LEAKSNAP_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>
#include <leaksnap/symbolizer.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One resolved frame (a PC): the module it lies in and its symbolized
 * frames, innermost first.  Everything belongs to the resolver. */
struct leaksnap_resolved {
	const struct sym_module *module; /* NULL: the frame is in no module */
	const struct sym_frame *frames;  /* innermost first; none: not found */
	size_t frame_count;
};

#ifdef __cplusplus
}
#endif

#endif
