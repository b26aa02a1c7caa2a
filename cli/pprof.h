/* leaksnap CLI: pprof profiles (profile.proto, gzip-compressed).
 *
 * pprof.c builds and writes a profile: the caller declares the sample
 * types, adds mappings, locations (with their symbolized inline chains)
 * and samples; the samples go straight to the compressed stream as they
 * are added, and pprof_finish() writes the tables (mappings, locations,
 * functions, the deduplicated string table) and the header fields.  It
 * prints nothing: errors are a status and pprof_error().
 *
 * pprof_snapshot.c and pprof_diff.c are the two users: `leaksnap convert
 * --to pprof` and `leakdiff --pprof` (they print their errors). */
#ifndef LEAKSNAP_CLI_PPROF_H
#define LEAKSNAP_CLI_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>
#include <leaksnap/symbolizer.h>

struct pprof;

/* A label of a sample: @str, or when it is NULL the number @num with its
 * unit @unit (NULL: none). */
struct pprof_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *unit;
};

/* A new profile written to @out (gzip-compressed; @out is not closed),
 * the gzip header's comment @comment (who wrote it, and which kind: see
 * cli.h).  NULL when out of memory. */
struct pprof *pprof_new(FILE *out, const char *comment);
/* Release @p (NULL-safe); it does not finish the stream. */
void pprof_free(struct pprof *p);
/* What went wrong after a call returned -1 or 0 ("out of memory", or the
 * write error). */
const char *pprof_error(const struct pprof *p);

/* Header fields: call before the first sample.  The sample types, in the
 * order of every sample's values; the default one is named by its type. */
int pprof_sample_type(struct pprof *p, const char *type, const char *unit);
int pprof_default_sample_type(struct pprof *p, const char *type);
int pprof_period(struct pprof *p, const char *type, const char *unit, int64_t period);
void pprof_time(struct pprof *p, int64_t time_ns, int64_t duration_ns);
/* One line of the profile's comments. */
int pprof_comment(struct pprof *p, const char *text);

/* A mapping: [start, limit) mapping @file from @offset; @build_id (NULL:
 * none) is written as lower-case hex; @symbolized: its locations carry
 * their functions and lines (pprof then does not symbolize them itself).
 * Returns its id (from 1), 0 with the error set. */
uint64_t pprof_mapping(struct pprof *p, uint64_t start, uint64_t limit, uint64_t offset,
		       const char *file, const uint8_t *build_id, size_t build_id_len,
		       bool symbolized);
/* The program's file: its mappings are written first (pprof takes the
 * first mapping for the program the profile is of). */
int pprof_main_file(struct pprof *p, const char *file);
/* Widen mapping @id to cover @address, keeping the file offset of every
 * address it covered. */
void pprof_mapping_cover(struct pprof *p, uint64_t id, uint64_t address);

/* The location added with @key, or 0 when there is none. */
uint64_t pprof_location_find(const struct pprof *p, uint64_t key);
/* A location known by @key (the caller's: a PC, a frame): @address in
 * mapping @mapping_id (0: none), with one line per frame of @frames
 * (innermost first, as the symbolizer answers: pprof's order too).
 * Returns its id (from 1), 0 with the error set. */
uint64_t pprof_location(struct pprof *p, uint64_t key, uint64_t mapping_id, uint64_t address,
			const struct sym_frame *frames, size_t nframes);

/* The location a sample without frames is given (pprof leaves out
 * samples without locations): no address, no mapping, one line in a
 * function named "(no frames)".  0 with the error set. */
uint64_t pprof_no_frames(struct pprof *p);

/* A sample: @locations leaf first, one value per sample type.  -1 with
 * the error set. */
int pprof_sample(struct pprof *p, const uint64_t *locations, size_t nlocations,
		 const int64_t *values, size_t nvalues, const struct pprof_label *labels,
		 size_t nlabels);

/* Write the tables and the header, and end the compressed stream (@out
 * is flushed, not closed).  -1 with the error set. */
int pprof_finish(struct pprof *p);

/* The CLI's two profiles (they print their errors; EXIT_OK or EXIT_ERROR). */

/* Options of `convert --to pprof`. */
struct pprof_convert_opts {
	const char *const *dirs; /* --symbols trees */
	size_t ndirs;
	bool no_symbols, no_adjust;
	struct snapshot_rewrite *rewrites; /* --rewrite-prefix, applied to file names */
	size_t rewrite_count;
};
/* Write @s (with its parsed @maps, NULL: none) as a profile at @path,
 * never replacing a file ("-": standard output). */
int cli_pprof_snapshot(const struct snapshot *s, const struct maps *maps, const char *path,
		       const struct pprof_convert_opts *o);

struct diff;
/* Write the suspects' growth of the ranked @d as a profile at @path (an
 * existing regular file is replaced; "-": standard output); @adjust: the
 * frames were looked up at pc - 1, which the locations' addresses are. */
int cli_pprof_diff(struct diff *d, const char *path, bool adjust);

#endif
