/* leaksnap: heap snapshot model and readers/writer.
 *
 * One in-memory model for every snapshot format leaksnap reads: the LEAKSNAP
 * v1 container, raw bionic get_malloc_leak_info buffers, Android text heap
 * dumps (v1.0, v1.1, v1.2) and DDMS NHGT payloads.  The format is detected
 * from the content, never from the file name.
 *
 * The conventions every leaksnap library header shares (error records,
 * options with their size, borrowed pointers) are in <leaksnap/error.h>.
 */
#ifndef LEAKSNAP_SNAPSHOT_H
#define LEAKSNAP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * The snapshot model
 * ------------------------------------------------------------------------ */

enum leaksnap_snapshot_format {
	LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP = 0,   /* LEAKSNAP v1 container */
	LEAKSNAP_SNAPSHOT_FORMAT_BIONIC_RAW,     /* bare get_malloc_leak_info buffer */
	LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT,   /* "Android Native Heap Dump v1.x" */
	LEAKSNAP_SNAPSHOT_FORMAT_DDMS_NHGT,      /* DDMS native heap payload */
};

/* How the Android 7 layout (second field = frame count) was decided. */
enum leaksnap_snapshot_count_mode {
	LEAKSNAP_SNAPSHOT_COUNTS_REAL = 0,       /* second field is the allocation count */
	LEAKSNAP_SNAPSHOT_COUNTS_FLAGGED,        /* LEAKSNAP header flag bit 1 */
	LEAKSNAP_SNAPSHOT_COUNTS_DETECTED,       /* recognised from the content */
	LEAKSNAP_SNAPSHOT_COUNTS_FORCED,         /* opts.count_is_frames */
};

/* One aggregated record: @count live allocations of @size bytes each with
 * the same stack.  @frames are PCs widened to 64 bits, innermost first,
 * return addresses as captured; trailing zero padding is not included. */
struct leaksnap_snapshot_record {
	uint64_t size;          /* real size (zygote bit removed) */
	uint64_t count;         /* live allocations (>= 1 after correction) */
	const uint64_t *frames; /* @frame_count PCs, borrowed */
	uint32_t frame_count;
	bool zygote;            /* allocated in a zygote child (bit 31) */
	/* How many of the @count allocations no pointer reached at capture
	 * (the LEAKSNAP reachability section, flag bit 2); 0 when the
	 * snapshot has none (leaksnap_snapshot_has_reachability()).  <= @count. */
	uint64_t unreachable;
};

/* A metadata line "key=value" (LEAKSNAP), or a header fact of another
 * format (e.g. "build_fingerprint" from a text dump).  Borrowed strings. */
struct leaksnap_snapshot_meta {
	const char *key;
	const char *value;
};

/* Options for leaksnap_snapshot_open().  Zero-initialise, then set what you need.
 * Error texts and warnings that concern an option name it as "opts.FIELD"
 * ("opts.pointer_size", "opts.frames", "opts.count_is_frames"), so that a
 * front end can show the name under which its user sets it instead. */
struct leaksnap_snapshot_open_opts {
	size_t sz;              /* sizeof(struct leaksnap_snapshot_open_opts): LEAKSNAP_OPTS */
	unsigned pointer_size;  /* raw buffers: 4 or 8 (0 = not given) */
	unsigned frames;        /* raw buffers: backtrace size (0 = not given) */
	bool count_is_frames;   /* force the Android 7 interpretation */
	/* Leave records with the same (zygote, size, stack) unmerged: for a
	 * caller that aggregates by stack itself (the diff), which saves the
	 * reader a hash table.  Totals are the same either way. */
	bool keep_duplicates;
};

struct leaksnap_snapshot;

/* Open the snapshot at @path ("-" reads standard input) in any supported
 * format.  A LEAKSNAP, text or NHGT input is recognised by its content;
 * anything else is read as a raw bionic buffer when @opts gives both
 * pointer_size and frames.
 * Returns a new snapshot to be released with leaksnap_snapshot_close(), or NULL with
 * @err filled (file name plus byte offset or line number). */
LEAKSNAP_API struct leaksnap_snapshot *leaksnap_snapshot_open(const char *path,
					    const struct leaksnap_snapshot_open_opts *opts,
					    struct leaksnap_error *err);

/* Same as leaksnap_snapshot_open() for @size bytes at @data; @source names it in
 * errors.  @data is not retained. */
LEAKSNAP_API struct leaksnap_snapshot *leaksnap_snapshot_open_memory(const void *data, size_t size,
						   const char *source,
						   const struct leaksnap_snapshot_open_opts *opts,
						   struct leaksnap_error *err);

/* Release @snap and everything borrowed from it.  NULL-safe. */
LEAKSNAP_API void leaksnap_snapshot_close(struct leaksnap_snapshot *snap);

/* "leaksnap", "bionic-raw", "android-text", "ddms-nhgt". */
LEAKSNAP_API const char *leaksnap_snapshot_format_name(enum leaksnap_snapshot_format format);

LEAKSNAP_API enum leaksnap_snapshot_format leaksnap_snapshot_format(
	const struct leaksnap_snapshot *snap);
/* The name the snapshot was opened under (path, "<stdin>" or the source
 * given to leaksnap_snapshot_open_memory). */
LEAKSNAP_API const char *leaksnap_snapshot_source(const struct leaksnap_snapshot *snap);
/* Version as written by the producer: "1" (LEAKSNAP), "1.0"/"1.1"/"1.2"
 * (text), the NHGT header's version ("2"), or NULL (raw, old NHGT). */
LEAKSNAP_API const char *leaksnap_snapshot_version(const struct leaksnap_snapshot *snap);
LEAKSNAP_API unsigned leaksnap_snapshot_pointer_size(const struct leaksnap_snapshot *snap);
/* The pointer size when the file says it, 0 when it was only inferred: an
 * Android text dump none of whose addresses needs more than 32 bits reads
 * as 4-byte pointers, yet may be a 64-bit process's. */
LEAKSNAP_API unsigned leaksnap_snapshot_pointer_size_known(const struct leaksnap_snapshot *snap);
/* Frames per record slot (B); for text dumps without a "Backtrace size:"
 * line, the longest stack seen. */
LEAKSNAP_API unsigned leaksnap_snapshot_backtrace_size(const struct leaksnap_snapshot *snap);
/* True when the records' fields were big-endian (LEAKSNAP flag bit 0). */
LEAKSNAP_API bool leaksnap_snapshot_big_endian(const struct leaksnap_snapshot *snap);
/* Process id, or -1 when the format does not carry one. */
LEAKSNAP_API int64_t leaksnap_snapshot_pid(const struct leaksnap_snapshot *snap);
/* Capture time in ns since the epoch; false when unknown. */
LEAKSNAP_API bool leaksnap_snapshot_time_ns(const struct leaksnap_snapshot *snap, uint64_t *out);
/* The producer's own total (header or "Total memory:"), else the records'. */
LEAKSNAP_API uint64_t leaksnap_snapshot_total_memory(const struct leaksnap_snapshot *snap);
/* Sum of size * count over all records. */
LEAKSNAP_API uint64_t leaksnap_snapshot_records_bytes(const struct leaksnap_snapshot *snap);
/* Sum of count over all records. */
LEAKSNAP_API uint64_t leaksnap_snapshot_allocation_count(const struct leaksnap_snapshot *snap);
LEAKSNAP_API enum leaksnap_snapshot_count_mode leaksnap_snapshot_count_mode(
	const struct leaksnap_snapshot *snap);

/* Whether the snapshot says which blocks were unreachable at capture (a
 * LEAKSNAP file with the reachability section, flag bit 2).  Without it
 * every record's @unreachable is 0 and means "not known", not "none". */
LEAKSNAP_API bool leaksnap_snapshot_has_reachability(const struct leaksnap_snapshot *snap);
/* Sum of unreachable * size, and of unreachable, over all records (0
 * without the section). */
LEAKSNAP_API uint64_t leaksnap_snapshot_unreachable_bytes(const struct leaksnap_snapshot *snap);
LEAKSNAP_API uint64_t leaksnap_snapshot_unreachable_count(const struct leaksnap_snapshot *snap);

/* Sampled snapshots (docs/format.md, sample_interval=) ----------------------
 * A sampled snapshot's records hold the blocks that were sampled: true
 * sizes, and counts of sampled blocks (unreachable counts too).  A sampled
 * block of size s below the interval B stands for 1 / (1 - e^(-s/B))
 * blocks, one of B or more for itself: the estimates below, which readers
 * rank and gate on. */

/* The interval in bytes of a sampled snapshot; 0 when every block was
 * recorded (then every estimate equals the recorded value). */
LEAKSNAP_API uint64_t leaksnap_snapshot_sample_interval(const struct leaksnap_snapshot *snap);
/* How many blocks a sampled block of @size stands for at @interval:
 * 1 / (1 - e^(-size/interval)) for 0 < size < interval, else 1 (and 1 for
 * an @interval of 0). */
LEAKSNAP_API double leaksnap_sample_weight(uint64_t size, uint64_t interval);
/* The estimated bytes and count of @count sampled blocks of @size at
 * @interval (either pointer may be NULL), each rounded to the nearest
 * integer: the one estimate of a record, for readers that hold the
 * record's figures rather than a snapshot (the store). */
LEAKSNAP_API void leaksnap_sample_estimate(uint64_t size, uint64_t count, uint64_t interval,
					   uint64_t *bytes, uint64_t *est_count);
/* The estimated bytes and count of @rec of @snap, and of its @rec->unreachable
 * blocks (any pointer may be NULL), each rounded to the nearest integer.
 * The rounding rule of every reader: a record's estimates are rounded, and
 * every figure over many records is the sum of their rounded estimates. */
LEAKSNAP_API void leaksnap_snapshot_record_estimate(const struct leaksnap_snapshot *snap,
						    const struct leaksnap_snapshot_record *rec,
						    uint64_t *bytes, uint64_t *count,
						    uint64_t *unreachable_bytes,
						    uint64_t *unreachable_count);
/* The snapshot's estimated bytes and allocations, and unreachable bytes
 * and allocations (any pointer may be NULL): the sums of its records'
 * rounded estimates (leaksnap_snapshot_record_estimate()), saturating at
 * UINT64_MAX; the figures leakdiff sums for the same records. */
LEAKSNAP_API void leaksnap_snapshot_estimate(const struct leaksnap_snapshot *snap, uint64_t *bytes,
					     uint64_t *count, uint64_t *unreachable_bytes,
					     uint64_t *unreachable_count);

/* Records after merging duplicates, in input order of first appearance. */
LEAKSNAP_API size_t leaksnap_snapshot_record_count(const struct leaksnap_snapshot *snap);
LEAKSNAP_API const struct leaksnap_snapshot_record *leaksnap_snapshot_record(
	const struct leaksnap_snapshot *snap, size_t index);

/* Fill @out with the indexes of the @limit largest records by total bytes
 * (size * count; in a sampled snapshot, the estimated bytes), largest first; ties broken by size, count, app before
 * zygote, then stack.  Returns the number written (min(@limit, count)). */
LEAKSNAP_API size_t leaksnap_snapshot_records_top(const struct leaksnap_snapshot *snap,
						  size_t limit, size_t *out);

/* Maps text (/proc/pid/maps) carried by the input; NULL with *len = 0 when
 * it has none.  *line and *offset (either may be NULL) receive the 1-based
 * line number (text inputs, else 0) and byte offset of its first byte in
 * the input, so that maps errors can point into the original file. */
LEAKSNAP_API const char *leaksnap_snapshot_maps(const struct leaksnap_snapshot *snap, size_t *len,
				       unsigned long *line, uint64_t *offset);

/* Replace the maps text with a copy of @len bytes at @text (the maps of
 * the process read from a file of their own).
 * Returns 0, or -1 with @err filled. */
LEAKSNAP_API int leaksnap_snapshot_set_maps(struct leaksnap_snapshot *snap, const char *text,
					    size_t len, struct leaksnap_error *err);

/* Metadata lines in input order. */
LEAKSNAP_API size_t leaksnap_snapshot_meta_count(const struct leaksnap_snapshot *snap);
LEAKSNAP_API const struct leaksnap_snapshot_meta *leaksnap_snapshot_meta(
	const struct leaksnap_snapshot *snap, size_t index);
/* Value of the first metadata line with @key, or NULL. */
LEAKSNAP_API const char *leaksnap_snapshot_meta_get(const struct leaksnap_snapshot *snap,
						    const char *key);
/* The build ID the metadata records for the module at @path (the first
 * line "build_id=<hex> <path>", as the hook writes one per module): its
 * length in bytes (at most 64), with up to @cap bytes of it written to @out;
 * 0 when none is recorded or the line is malformed.  O(log n). */
LEAKSNAP_API size_t leaksnap_snapshot_build_id(const struct leaksnap_snapshot *snap,
					       const char *path, uint8_t *out, size_t cap);
/* The build ID the metadata records for a library unloaded before the
 * dump, the file @path with inode @inode as its "unloaded=" lines name it
 * (a line "unloaded_build_id=<hex> <inode> <path>": a library of that
 * path loaded now may be another build).  As leaksnap_snapshot_build_id(). */
LEAKSNAP_API size_t leaksnap_snapshot_unloaded_build_id(const struct leaksnap_snapshot *snap,
							const char *path, uint64_t inode,
							uint8_t *out, size_t cap);

/* Non-fatal findings while reading (e.g. total_memory differs from the
 * records' sum), as complete sentences without the file name. */
LEAKSNAP_API size_t leaksnap_snapshot_warning_count(const struct leaksnap_snapshot *snap);
LEAKSNAP_API const char *leaksnap_snapshot_warning(const struct leaksnap_snapshot *snap,
						   size_t index);

/* ------------------------------------------------------------------------
 * Writing LEAKSNAP v1 and Android text dumps
 * ------------------------------------------------------------------------ */

#define LEAKSNAP_SNAPSHOT_HEADER_SIZE 64

/* Header fields of a LEAKSNAP v1 file, host byte order. */
struct leaksnap_snapshot_header {
	uint16_t version;        /* 1 */
	uint8_t pointer_size;    /* 4 or 8 */
	uint8_t flags;           /* LEAKSNAP_SNAPSHOT_FLAG_* */
	uint32_t backtrace_size; /* 1..256 */
	uint32_t pid;
	uint32_t meta_size;
	uint64_t time_ns;
	uint64_t total_memory;
	uint64_t info_size;      /* pointer_size * (2 + backtrace_size) */
	uint64_t records_size;
	uint64_t maps_size;
};

#define LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN 0x01u
#define LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES 0x02u
/* A reachability section (one u32 unreachable count per record, in the
 * records' byte order) follows the metadata; never with bit 1. */
#define LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY 0x04u
/* Bytes of the reachability section for @records_size bytes of records of
 * @info_size bytes each. */
#define LEAKSNAP_SNAPSHOT_REACHABILITY_SIZE(records_size, info_size) \
	(4 * ((records_size) / (info_size)))

/* Encode @hdr into the 64-byte on-disk header at @out.  Never allocates;
 * safe to call from the malloc hook. */
LEAKSNAP_API void leaksnap_snapshot_header_encode(const struct leaksnap_snapshot_header *hdr,
					 uint8_t out[LEAKSNAP_SNAPSHOT_HEADER_SIZE]);

/* Decode and validate a LEAKSNAP header from the first @len bytes at @buf of
 * a file of @file_size bytes (every rule of docs/format.md, including the file size).
 * Returns 0, or -1 with @err filled (byte offset of the bad field). */
LEAKSNAP_API int leaksnap_snapshot_header_decode(const uint8_t *buf, size_t len, uint64_t file_size,
					struct leaksnap_snapshot_header *hdr, const char *source,
					struct leaksnap_error *err);

/* A module path rewrite (OLD=NEW): a
 * path that starts with @old_prefix is written starting with @new_prefix
 * instead.  The match is a plain byte prefix, not a path component:
 * "/system/lib" also matches "/system/lib64/libc.so"; end the prefix with
 * "/" to match a directory only. */
struct leaksnap_snapshot_rewrite {
	const char *old_prefix; /* non-empty, no line break */
	const char *new_prefix; /* may be empty, no line break */
	size_t matched;         /* out: paths this rule rewrote */
};

/* Options for leaksnap_snapshot_save() and leaksnap_snapshot_save_text().  Zero-initialise. */
struct leaksnap_snapshot_save_opts {
	size_t sz;              /* sizeof(struct leaksnap_snapshot_save_opts): LEAKSNAP_OPTS */
	bool big_endian;        /* LEAKSNAP: write record fields big-endian */
	unsigned pointer_size;  /* LEAKSNAP: 0 = the snapshot's own */
	/* Path rewrites, tried in order: the first rule whose old prefix
	 * starts a path rewrites it, once.  They apply to the path of every
	 * maps line and to the paths in the metadata values
	 * "build_id=<hex> <path>" and "exe=<path>".  The snapshot itself is
	 * not changed; each rule's @matched is set to the paths it rewrote. */
	struct leaksnap_snapshot_rewrite *rewrites;
	size_t rewrite_count;
	/* Called (when not NULL) with one sentence for each thing of the
	 * snapshot that the output format cannot carry and leaves out, before
	 * anything is created; the caller decides whether to show them. */
	void (*dropped)(void *ctx, const char *what);
	void *dropped_ctx;
};

/* Write @snap as a LEAKSNAP v1 file at @path ("-": standard output), with
 * its maps embedded, its metadata and its reachability section (when it
 * has one) kept.  Counts are written as corrected (flag bit 1 clear).  The file is written under a temporary
 * name in the same directory, then published without ever replacing an
 * existing file (exists -> error LEAKSNAP_ERR_EXISTS; nothing is
 * overwritten).  Returns 0, or -1 with @err filled. */
LEAKSNAP_API int leaksnap_snapshot_save(const struct leaksnap_snapshot *snap, const char *path,
			       const struct leaksnap_snapshot_save_opts *opts,
			       struct leaksnap_error *err);

/* Write @snap as an Android text heap dump v1.2 at @path ("-": standard
 * output), byte for byte as bionic's malloc_debug writes one: the header
 * lines (the snapshot's build_fingerprint, else 'unknown' as on a device
 * without ro.build.fingerprint; "Total memory:" is the records' sum), one
 * "z Z  sz %8u  num    N  bt PC..." line per record (PCs in unpadded hex),
 * `z 0` records before `z 1` ones, each group by size descending, then by
 * frame count descending, then in the snapshot's order; then MAPS, the
 * maps text and END.  The pid, the capture time, metadata other than
 * build_fingerprint, the unreachable counts, and a pointer size the PCs
 * and maps addresses do not imply are not carried: each is reported through @opts->dropped.  Maps
 * with a line reading "END" or a NUL byte cannot be written
 * (LEAKSNAP_ERR_FORMAT); @opts->big_endian and
 * @opts->pointer_size must be unset (LEAKSNAP_ERR_USAGE).  Published as by
 * leaksnap_snapshot_save(), never replacing a file.  Returns 0, or -1 with @err
 * filled. */
LEAKSNAP_API int leaksnap_snapshot_save_text(const struct leaksnap_snapshot *snap, const char *path,
				    const struct leaksnap_snapshot_save_opts *opts,
				    struct leaksnap_error *err);

#ifdef __cplusplus
}
#endif

#endif /* LEAKSNAP_SNAPSHOT_H */
