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
	const struct leaksnap_sym_module *module; /* NULL: the frame is in no module */
	const struct leaksnap_sym_frame *frames;  /* innermost first; none: not found */
	size_t frame_count;
};

struct leaksnap_resolver;

/* A problem met while resolving (a symbol file that could not be read, a
 * layout the maps contradict), as it is met: the caller says it.  Each is
 * reported once per module, or once per frame for a failed lookup. */
typedef void (*leaksnap_resolve_warn_fn)(void *arg, const struct leaksnap_error *problem);

/* A module whose file names no function (leaksnap_sym_module.no_symbols:
 * stripped, and no debug file found), said once, when the first of its
 * frames is left unknown (frames with an exported name do not count). */
typedef void (*leaksnap_resolve_module_fn)(void *arg, const struct leaksnap_sym_module *module);

/* Options, with their own size: declare them with LEAKSNAP_OPTS. */
struct leaksnap_resolver_opts {
	size_t sz;
	/* Where module files are looked for, in order (leaksnap_symbolizer_module);
	 * the strings must live as long as the resolver. */
	const char *const *symbol_dirs;
	size_t symbol_dir_count;
	bool return_addresses; /* PCs are return addresses: answer for the call */
	unsigned jobs;         /* threads indexing compile units after a prefetch */
	unsigned pointer_size; /* the process's: 4 or 8; 0: unknown */
	leaksnap_resolve_warn_fn warn; /* NULL: problems are only counted */
	void *warn_arg;
	bool debuginfod;       /* ask the debuginfod servers (leaksnap_sym_options) */
	leaksnap_resolve_module_fn no_symbols; /* NULL: not said */
	void *no_symbols_arg;
};

/* A resolver, with a symbolizer of its own (demangled names; a symbol-table
 * name only inside the symbol's extent).  NULL with @err filled.  @opts may
 * be NULL (defaults: no symbol directories, this host's files). */
LEAKSNAP_API struct leaksnap_resolver *leaksnap_resolver_new(
	const struct leaksnap_resolver_opts *opts, struct leaksnap_error *err);
/* Release @r and every answer it gave.  NULL-safe. */
LEAKSNAP_API void leaksnap_resolver_free(struct leaksnap_resolver *r);
/* Its symbolizer (e.g. to tell it a snapshot's pointer size). */
LEAKSNAP_API struct leaksnap_symbolizer *leaksnap_resolver_symbolizer(struct leaksnap_resolver *r);

/* Resolve the frame at @loc (leaksnap_maps_locate() of a PC in @maps, the maps of
 * snapshot @s): its module (located with the build ID @s recorded for it)
 * and its frames.  0, or -1 with @err filled when out of memory; problems
 * with symbol files go to the warn callback and leave the frame without
 * frames. */
LEAKSNAP_API int leaksnap_resolve_pc(struct leaksnap_resolver *r, const struct leaksnap_snapshot *s,
				     const struct leaksnap_maps *maps,
				     const struct leaksnap_maps_location *loc,
				     struct leaksnap_resolved *out, struct leaksnap_error *err);
/* Hint: the frames of @records[0..count) of @s are about to be resolved;
 * their compile units are indexed ahead on the resolver's threads (jobs). */
LEAKSNAP_API void leaksnap_resolve_prefetch(struct leaksnap_resolver *r,
					    const struct leaksnap_snapshot *s,
					    const struct leaksnap_maps *maps, const size_t *records,
					    size_t count);

/* The same by parts, for callers with their own module identity (diff):
 * the module of a frame at *@rel_pc of the file @path as a process mapped
 * it, with its build ID (@build_id_len 0: none known) and the process's
 * @mappings of it (for a debug-only file's layout; may be none).  An APK's
 * library becomes its own module and *@rel_pc an offset in it.  NULL with
 * @err filled only when out of memory. */
LEAKSNAP_API const struct leaksnap_sym_module *leaksnap_resolve_module(
	struct leaksnap_resolver *r, const char *path, const uint8_t *build_id, size_t build_id_len,
	const struct leaksnap_sym_mapping *mappings, size_t count, uint64_t *rel_pc,
	struct leaksnap_error *err);
/* The frames of @rel_pc in @module (NULL: no module), each (module,
 * rel_pc) looked up once.  As leaksnap_resolve_pc. */
LEAKSNAP_API int leaksnap_resolve_frame(struct leaksnap_resolver *r,
					const struct leaksnap_sym_module *module, uint64_t rel_pc,
					struct leaksnap_resolved *out, struct leaksnap_error *err);

/* Send problems to @warn with @arg from now on; the callback and argument
 * before are stored at @old_warn and @old_arg (each may be NULL). */
LEAKSNAP_API void leaksnap_resolver_set_warn(struct leaksnap_resolver *r,
					     leaksnap_resolve_warn_fn warn, void *arg,
					     leaksnap_resolve_warn_fn *old_warn, void **old_arg);
/* Whether a problem was reported. */
LEAKSNAP_API bool leaksnap_resolver_failed(const struct leaksnap_resolver *r);
/* The modules met, in the order their first frame was resolved. */
LEAKSNAP_API size_t leaksnap_resolver_module_count(const struct leaksnap_resolver *r);
LEAKSNAP_API const struct leaksnap_sym_module *leaksnap_resolver_module(
	const struct leaksnap_resolver *r, size_t i);
/* The distinct (module, rel_pc) answered so far. */
LEAKSNAP_API size_t leaksnap_resolver_address_count(const struct leaksnap_resolver *r);

#ifdef __cplusplus
}
#endif

#endif
