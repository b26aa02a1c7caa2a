/* leaksnap export: snapshots and diffs in other tools' formats.
 *
 *  - pprof profiles (profile.proto, gzip-compressed): a low-level encoder
 *    (sample types, mappings, locations with their inline chains, samples)
 *    and the two profiles leaksnap writes with it: a snapshot's live
 *    allocations and a diff's growth.
 *  - Flame-graph folding: a stack of frames, each inline level its own
 *    frame, outermost first, as folded text lines ("a;b;c BYTES") or as
 *    the flame data of the HTML report.
 *
 * Frames come in resolved (struct leaksnap_resolved, <leaksnap/resolve.h>):
 * this library never symbolizes.  It lives in its own library,
 * libleaksnap-export (it needs protobuf-c and zlib), on top of libleaksnap.
 *
 * It never prints.  Functions that can fail return a negative value (or 0
 * for an id, NULL for an object) and fill the caller's error record.  An
 * error of the output this library writes (out of memory, a write error)
 * has an empty source: the caller names the output it gave. */
#ifndef LEAKSNAP_EXPORT_H
#define LEAKSNAP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <leaksnap/diff.h>
#include <leaksnap/maps.h>
#include <leaksnap/resolve.h>
#include <leaksnap/snapshot.h>
#include <leaksnap/symbolizer.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * pprof encoder
 * ------------------------------------------------------------------------
 * The caller declares the sample types, adds mappings, locations (with
 * their symbolized inline chains) and samples; the samples go straight to
 * the compressed stream as they are added, and _finish() writes the tables
 * (mappings, locations, functions, the deduplicated string table) and the
 * header fields.  Errors: a status, then leaksnap_export_pprof_error(). */

struct leaksnap_export_pprof;

/* The gzip header's comment of the profiles leaksnap writes: who wrote the
 * file, and which kind (a growth profile may be replaced by the next one). */
#define LEAKSNAP_EXPORT_PPROF_DIFF_COMMENT "leaksnap"
#define LEAKSNAP_EXPORT_PPROF_SNAPSHOT_COMMENT "leaksnap snapshot"

/* A label of a sample: @str, or when it is NULL the number @num with its
 * unit @unit (NULL: none). */
struct leaksnap_export_pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

/* A new profile written to @out (gzip-compressed; @out is not closed),
 * the gzip header's comment @comment.  NULL with @err filled when out of
 * memory. */
LEAKSNAP_API struct leaksnap_export_pprof *leaksnap_export_pprof_new(FILE *out, const char *comment,
								  struct leaksnap_error *err);
/* Release @p (NULL-safe); it does not finish the stream. */
LEAKSNAP_API void leaksnap_export_pprof_free(struct leaksnap_export_pprof *p);
/* What went wrong after a call returned -1 or 0, in @err: out of memory
 * (LEAKSNAP_ERR_NOMEM), else a write error or a call that does not fit the
 * profile (LEAKSNAP_ERR_IO), with an empty source (the caller names the
 * output).  The first error stays.  Returns -1. */
LEAKSNAP_API int leaksnap_export_pprof_error(const struct leaksnap_export_pprof *p,
					     struct leaksnap_error *err);

/* Header fields: call before the first sample.  The sample types, in the
 * order of every sample's values; the default one is named by its type. */
LEAKSNAP_API int leaksnap_export_pprof_sample_type(struct leaksnap_export_pprof *p,
						   const char *type, const char *unit);
LEAKSNAP_API int leaksnap_export_pprof_default_sample_type(struct leaksnap_export_pprof *p,
							   const char *type);
LEAKSNAP_API int leaksnap_export_pprof_period(struct leaksnap_export_pprof *p, const char *type,
					      const char *unit, int64_t period);
LEAKSNAP_API void leaksnap_export_pprof_time(struct leaksnap_export_pprof *p, int64_t time_ns,
					     int64_t duration_ns);
/* One line of the profile's comments. */
LEAKSNAP_API int leaksnap_export_pprof_comment(struct leaksnap_export_pprof *p, const char *text);

/* A mapping: [start, limit) mapping @file from @offset; @build_id (NULL:
 * none) is written as lower-case hex; @symbolized: its locations carry
 * their functions and lines (pprof then does not symbolize them itself).
 * Returns its id (from 1), 0 with the error set. */
LEAKSNAP_API uint64_t leaksnap_export_pprof_mapping(struct leaksnap_export_pprof *p,
						    uint64_t start, uint64_t limit,
						    uint64_t offset, const char *file,
						    const uint8_t *build_id, size_t build_id_len,
						    bool symbolized);
/* The program's file: its mappings are written first (pprof takes the
 * first mapping for the program the profile is of). */
LEAKSNAP_API int leaksnap_export_pprof_main_file(struct leaksnap_export_pprof *p,
						 const char *file);
/* Widen mapping @id to cover @address, keeping the file offset of every
 * address it covered. */
LEAKSNAP_API void leaksnap_export_pprof_mapping_cover(struct leaksnap_export_pprof *p,
						      uint64_t id, uint64_t address);

/* The location added with @key, or 0 when there is none. */
LEAKSNAP_API uint64_t leaksnap_export_pprof_location_find(const struct leaksnap_export_pprof *p,
							  uint64_t key);
/* A location known by @key (the caller's: a PC, a frame): @address in
 * mapping @mapping_id (0: none), with one line per frame of @frames
 * (innermost first, as the symbolizer answers: pprof's order too).
 * Returns its id (from 1), 0 with the error set. */
LEAKSNAP_API uint64_t leaksnap_export_pprof_location(struct leaksnap_export_pprof *p,
						     uint64_t key, uint64_t mapping_id,
						     uint64_t address,
						     const struct leaksnap_sym_frame *frames,
						     size_t nframes);

/* The location a sample without frames is given (pprof leaves out
 * samples without locations): no address, no mapping, one line in a
 * function named "(no frames)".  0 with the error set. */
LEAKSNAP_API uint64_t leaksnap_export_pprof_no_frames(struct leaksnap_export_pprof *p);

/* A sample: @locations leaf first, one value per sample type.  -1 with
 * the error set. */
LEAKSNAP_API int leaksnap_export_pprof_sample(struct leaksnap_export_pprof *p,
					      const uint64_t *locations, size_t nlocations,
					      const int64_t *values, size_t nvalues,
					      const struct leaksnap_export_pprof_label *labels,
					      size_t nlabels);

/* Write the tables and the header, and end the compressed stream (@out
 * is flushed, not closed).  -1 with the error set. */
LEAKSNAP_API int leaksnap_export_pprof_finish(struct leaksnap_export_pprof *p);

/* ------------------------------------------------------------------------
 * The profiles leaksnap writes
 * ------------------------------------------------------------------------ */

/* How a snapshot's profile is made.  The caller resolves the frames: the
 * library asks for each PC once. */
struct leaksnap_export_pprof_snapshot_opts {
	size_t sz; /* sizeof(struct leaksnap_export_pprof_snapshot_opts): LEAKSNAP_OPTS */
	/* the frames were looked up at pc - 1: the locations' addresses are
	 * the calls, as pprof's own converters write return addresses */
	bool adjust;
	/* applied to file names (mappings, the program); each rule counts
	 * the maps paths it matches in its @matched */
	struct leaksnap_snapshot_rewrite *rewrites;
	size_t rewrite_count;
	/* the frames of @loc (a PC in a module), filled in @out and owned by
	 * the caller; NULL: no PC is symbolized.  0, or a positive value that
	 * stops the profile, which returns it (the callback said why; a
	 * negative one is the callback's bug: -1 with @err set). */
	int (*resolve)(void *arg, const struct leaksnap_maps_location *loc,
		       struct leaksnap_resolved *out);
	/* told of each record written (@done of @total); NULL: not told */
	void (*progress)(void *arg, size_t done, size_t total);
	void *arg;
};

/* Write @s (with its parsed @maps, NULL: none) as a heap profile of the
 * live allocations (inuse_objects/count, inuse_space/bytes) on @out: one
 * sample per record, one location per distinct PC with the maps line it
 * falls in as its mapping.  0; -1 with @err set; or the resolve callback's
 * nonzero value. */
LEAKSNAP_API int leaksnap_export_pprof_snapshot(FILE *out, const struct leaksnap_snapshot *s,
						const struct leaksnap_maps *maps,
						const struct leaksnap_export_pprof_snapshot_opts *o,
						struct leaksnap_error *err);

/* Write the suspects' growth of the ranked @d as a profile on @out
 * (growth_objects/count, growth_space/bytes; one sample per growing stack
 * of a suspect); @adjust: the frames were looked up at pc - 1, which the
 * locations' addresses are.  0, or -1 with @err set (the diff's errors
 * carry their source). */
LEAKSNAP_API int leaksnap_export_pprof_diff(FILE *out, struct leaksnap_diff *d, bool adjust,
					    struct leaksnap_error *err);

/* ------------------------------------------------------------------------
 * Flame-graph folding
 * ------------------------------------------------------------------------
 * A stack is folded into its levels, outermost first: each frame's inline
 * chain (the symbolizer's frames, innermost first) is unfolded callers
 * first; a frame without symbolized frames is one level. */

/* A stack that filled every frame slot of its dump may have been cut: its
 * outermost frames are then not the program's roots.  Folded lines and
 * flame graphs put such a stack under a first level of this name, so that
 * its frames are not drawn as roots beside the real ones. */
#define LEAKSNAP_EXPORT_TRUNCATED "[truncated]"
/* Whether a stack of @frames frames in the diff @d may have been cut: it
 * has as many as the frame slots (backtrace size) of one of its
 * snapshots, or more. */
LEAKSNAP_API bool leaksnap_export_diff_stack_cut(const struct leaksnap_diff *d, size_t frames);

/* One frame of a stack: where it lies and what it resolved to. */
struct leaksnap_export_frame {
	uint64_t key;       /* the same key is the same frame */
	uint64_t pc;
	const char *module; /* NULL: the PC is in no module */
	uint64_t rel_pc;
	struct leaksnap_resolved r; /* r.module may be NULL: not symbolized */
};

/* A diff's frame as an export frame, keyed by its address (a diff's
 * frames are shared by its stacks). */
LEAKSNAP_API struct leaksnap_export_frame
leaksnap_export_frame_of_diff(const struct leaksnap_diff_frame *f);
/* The levels of @r: its frame count, or 1 when it has no frames. */
LEAKSNAP_API size_t leaksnap_export_fold_levels(const struct leaksnap_resolved *r);
/* Level @i of @r, outermost first: a frame of @r, NULL when it has none. */
LEAKSNAP_API const struct leaksnap_sym_frame *leaksnap_export_fold_level(
	const struct leaksnap_resolved *r, size_t i);

/* One folded line on @out: the levels of @frames[0..n) (outermost frame
 * first) as "level;level;level BYTES" (a function name, "??", or
 * module+0xOFFSET, with ';' shown as ',' and newlines as spaces), or
 * "(no frames) BYTES".  -1 on a write error (ferror(@out)). */
LEAKSNAP_API int leaksnap_export_folded_line(FILE *out, const struct leaksnap_export_frame *frames,
					     size_t n, uint64_t bytes);
/* Every growing stack of a suspect of the ranked @d as folded lines on
 * @out, those that may have been cut under LEAKSNAP_EXPORT_TRUNCATED.  0,
 * or -1 with @err set. */
LEAKSNAP_API int leaksnap_export_folded_diff(FILE *out, struct leaksnap_diff *d,
					     struct leaksnap_error *err);

/* The frames of @f as JSON objects appended to the Jansson array @frames,
 * innermost level first (one object when @f has no symbolized frames):
 * pc, module, rel_pc, function, file, line, column, inlined, symbol_file,
 * build_id_status.  The frame objects of leaksnap's JSON documents and of
 * the report's flame data; @frames is a Jansson array (json_t *, from
 * <jansson.h>: link with -ljansson to call this).  -1 when out of memory. */
struct json_t;
LEAKSNAP_API int leaksnap_export_json_frames(struct json_t *frames,
					     const struct leaksnap_export_frame *f);

/* Flame graph data: stacks of frames (every inline level its own frame,
 * outermost first) with their bytes; frames are shared by their key. */
struct leaksnap_export_flame;
/* NULL when out of memory. */
LEAKSNAP_API struct leaksnap_export_flame *leaksnap_export_flame_new(void);
LEAKSNAP_API void leaksnap_export_flame_free(struct leaksnap_export_flame *fl);
/* A new stack of @bytes: the frames added next are its frames, outermost
 * first.  -1 with @err set (out of memory). */
LEAKSNAP_API int leaksnap_export_flame_stack(struct leaksnap_export_flame *fl, uint64_t bytes,
					     struct leaksnap_error *err);
LEAKSNAP_API int leaksnap_export_flame_frame(struct leaksnap_export_flame *fl,
					     const struct leaksnap_export_frame *f,
					     struct leaksnap_error *err);
/* The level LEAKSNAP_EXPORT_TRUNCATED, first in the new stack: it may have
 * been cut.  Its frame object has that function name, null elsewhere, and
 * "truncated": true.  -1 with @err set (out of memory). */
LEAKSNAP_API int leaksnap_export_flame_truncated(struct leaksnap_export_flame *fl,
						 struct leaksnap_error *err);
/* The @max stacks of the ranked @d that grew most (those that may have
 * been cut under LEAKSNAP_EXPORT_TRUNCATED), with the bytes and the count
 * of the stacks left out in @rest_bytes and @rest_stacks.  0, or -1 with
 * @err set. */
LEAKSNAP_API int leaksnap_export_flame_diff(struct leaksnap_export_flame *fl,
					    struct leaksnap_diff *d, size_t max,
					    uint64_t *rest_bytes, uint64_t *rest_stacks,
					    struct leaksnap_error *err);
/* Write the data object on @out: {"what": @what, "total": bytes of every
 * stack, "rest_bytes", "rest_stacks", "frames": [frame objects, as
 * leaksnap_export_json_frames writes them], "stacks": [[bytes, [frame ids,
 * outermost level first]], ...]}.  -1 on a write error (ferror(@out)). */
LEAKSNAP_API int leaksnap_export_flame_write(const struct leaksnap_export_flame *fl, FILE *out,
					     const char *what, uint64_t rest_bytes,
					     uint64_t rest_stacks);

#ifdef __cplusplus
}
#endif

#endif
