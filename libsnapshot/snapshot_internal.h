/* leaksnap: the snapshot object and its builder (private to libsnapshot). */
#ifndef LEAKSNAP_SNAPSHOT_INTERNAL_H
#define LEAKSNAP_SNAPSHOT_INTERNAL_H

#include <leaksnap/snapshot.h>

#include "kit.h"
#include "kit_blob.h"

/* A build ID from the metadata, indexed by the module path. */
struct lsp_build_id {
	const char *path;   /* borrowed from the metadata value */
	size_t line;        /* its metadata line: the first of a path wins */
	size_t len;
	uint8_t id[64];
};

struct leaksnap_snapshot {
	enum leaksnap_snapshot_format format;
	char version[8];            /* "" = none */
	unsigned pointer_size;
	bool pointer_size_guessed; /* text: 4 because no address is wider */
	unsigned backtrace_size;
	bool big_endian;
	int64_t pid;                /* -1 = unknown */
	bool has_time;
	uint64_t time_ns;
	bool has_producer_total;
	uint64_t producer_total;
	uint64_t records_bytes;
	uint64_t allocation_count;
	enum leaksnap_snapshot_count_mode count_mode;
	uint64_t sample_interval;   /* sample_interval= metadata, 0: every block */
	bool has_reach;             /* reachability section read */
	uint64_t unreachable_bytes, unreachable_count;

	struct leaksnap_snapshot_record *records;
	size_t nrecords, records_cap;
	uint64_t *frame_off;        /* build time: offset of each record's frames */
	/* Binary inputs: where record i's count field lies in the file
	 * (rec_offset + i * rec_stride); rec_stride 0 for text. */
	uint64_t rec_offset, rec_stride;
	uint64_t *frames;
	size_t nframes, frames_cap;

	char *maps;
	size_t maps_len;
	unsigned long maps_line;
	uint64_t maps_offset;

	struct leaksnap_snapshot_meta *meta;
	size_t nmeta, meta_cap;
	struct lsp_build_id *bids; /* "build_id=HEX PATH" lines, by path */
	size_t nbids;

	char **warnings;
	size_t nwarnings;

	char source[LEAKSNAP_ERROR_SOURCE_MAX];
};

/* Builder ------------------------------------------------------------------
 * Readers append records as they decode them, then call snapshot_finalize,
 * which applies the Android 7 count correction, merges duplicate
 * (zygote, size, stack) records and computes the totals. */

struct leaksnap_snapshot *lsp_snapshot_new(enum leaksnap_snapshot_format format,
					   const char *source);
/* Reserve room for @records records and @frames frames (upper bounds known
 * from a binary header); avoids regrowth.  Returns 0 or -1 (ENOMEM). */
int lsp_snapshot_reserve(struct leaksnap_snapshot *s, size_t records, size_t frames,
			 struct leaksnap_error *err);
/* Append one record; @frames are copied.  Returns 0 or -1. */
int lsp_snapshot_add(struct leaksnap_snapshot *s, uint64_t size, uint64_t count, bool zygote,
		     const uint64_t *frames, uint32_t nframes, struct leaksnap_error *err);
/* Append a frame to the last record added (streaming text parsing). */
int lsp_snapshot_add_begin(struct leaksnap_snapshot *s, uint64_t size, uint64_t count, bool zygote,
			   struct leaksnap_error *err);
int lsp_snapshot_add_frame(struct leaksnap_snapshot *s, uint64_t pc, struct leaksnap_error *err);
/* Copy maps text; @line/@offset locate it in the input. */
int lsp_snapshot_set_maps(struct leaksnap_snapshot *s, const char *text, size_t len,
			  unsigned long line, uint64_t offset, struct leaksnap_error *err);
/* Add a metadata pair (both copied). */
int lsp_snapshot_add_meta(struct leaksnap_snapshot *s, const char *key, size_t key_len,
			  const char *value, size_t value_len, struct leaksnap_error *err);
int lsp_snapshot_warn(struct leaksnap_snapshot *s, const char *fmt, ...) KIT_PRINTF(2, 3);

/* May the content of this input be the Android 7 layout (raw, text v1.0)? */
enum lsp_count_hint { LSP_COUNTS_NEVER_DETECT, LSP_COUNTS_MAY_DETECT };
int lsp_snapshot_finalize(struct leaksnap_snapshot *s,
			  const struct leaksnap_snapshot_open_opts *opts, bool flagged,
			  enum lsp_count_hint hint, struct leaksnap_error *err);

/* Record area decoding shared by the LEAKSNAP, raw and NHGT readers.
 * Decodes @size bytes at @area (file offset @base) of @ptr-byte fields. */
int lsp_decode_records(struct leaksnap_snapshot *s, struct kit_blob *blob, const uint8_t *area,
		       uint64_t size, uint64_t base, unsigned ptr, unsigned frames,
		       bool big_endian, struct leaksnap_error *err);

/* Format readers. */
struct leaksnap_snapshot *lsp_read_leaksnap(struct kit_blob *blob, const char *source,
				   const struct leaksnap_snapshot_open_opts *opts,
				   struct leaksnap_error *err);
struct leaksnap_snapshot *lsp_read_raw(struct kit_blob *blob, const char *source,
				       const struct leaksnap_snapshot_open_opts *opts,
				       struct leaksnap_error *err);
struct leaksnap_snapshot *lsp_read_text(struct kit_blob *blob, const char *source,
					const struct leaksnap_snapshot_open_opts *opts,
					struct leaksnap_error *err);
/* Does the maps text name addresses above 4 GiB (a 64-bit process)?  The
 * text reader's pointer-size rule, which the text writer predicts. */
bool lsp_text_maps_wide(const char *text, size_t len);
struct leaksnap_snapshot *lsp_read_nhgt(struct kit_blob *blob, const char *source, bool old_header,
					const struct leaksnap_snapshot_open_opts *opts,
					struct leaksnap_error *err);
/* Does @blob look like an NHGT payload with the old (signature-less) header? */
bool lsp_nhgt_old_matches(const struct kit_blob *blob);

#define LSP_MAX_FRAMES 256
#define LSP_ZYGOTE_BIT ((uint64_t)1 << 31)

#endif
