/* leaksnap store: heap snapshots kept across runs and builds.
 *
 * A store is a database with one schema (docs/store.md), reached through a
 * backend: a SQLite file (the default, no server) or a ClickHouse
 * server over HTTP ("clickhouse://HOST[:PORT]/DATABASE").  Both engines'
 * tables are generated from one description (schema.c), so the same rows
 * mean the same on either.
 *
 * What is kept:
 *  - runs: one process from its start (pid + process_start + exe), with
 *    labels (build, commit, branch, device, abi, test, any KEY=VALUE);
 *  - snapshots: one per distinct dump (content hash), with capture time,
 *    totals and unreachable totals, in the run they belong to;
 *  - stacks, each once, keyed by a stable hash of their normalized frames
 *    (module build ID or path, rel_pc);
 *  - frames, each once, symbolized when first stored (function, file,
 *    line, column, inline chain, module);
 *  - records: snapshot, stack, size, count, unreachable count, zygote;
 *  - ingests: the completion marker of each write, its last row.  Readers
 *    see a snapshot only when its ingest is there (on ClickHouse, which has
 *    no transactions, this is what hides a half-written run; on SQLite a
 *    run is also written in one transaction).
 *
 * Writing: open, then per run leaksnap_store_run_begin(), the puts (or
 * leaksnap_store_add_snapshot(), which makes them from a snapshot), then
 * leaksnap_store_run_commit() -- or leaksnap_store_run_abort(), and
 * nothing of it is seen.  Reading: the query primitives below, complete
 * ingests only.
 *
 * Identifiers (run, snapshot, stack, frame) are 64-bit hashes computed by
 * the writer (docs/store.md says of what), the same on every engine.
 *
 * This folder is the tool's today (not installed); its names carry the
 * public prefix so that it can become a library of its own.
 */
#ifndef LEAKSNAP_STORE_H
#define LEAKSNAP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>
#include <leaksnap/maps.h>
#include <leaksnap/resolve.h>
#include <leaksnap/snapshot.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this code writes and reads.  A store of an older
 * version is upgraded when opened for writing (docs/store.md); a newer
 * one is refused (LEAKSNAP_ERR_VERSION). */
#define LEAKSNAP_STORE_SCHEMA_VERSION 3

enum leaksnap_store_engine {
	LEAKSNAP_STORE_SQLITE,
	LEAKSNAP_STORE_CLICKHOUSE,
};

struct leaksnap_store;

/* Options, with their own size: declare them with LEAKSNAP_OPTS. */
struct leaksnap_store_open_opts {
	size_t sz;
	/* How long a writer waits for another one (SQLite's busy timeout);
	 * 0: 60 seconds. */
	unsigned busy_timeout_ms;
	/* Open an existing store only: never create one (a missing file is
	 * LEAKSNAP_ERR_IO "No such file or directory"). */
	bool no_create;
};

/* Open the store at @target: a file name (SQLite; created with the schema
 * when missing or empty) or a clickhouse:// URL.  NULL with @err filled:
 * LEAKSNAP_ERR_FORMAT for a file that is not a store, LEAKSNAP_ERR_VERSION
 * for a schema newer than LEAKSNAP_STORE_SCHEMA_VERSION, LEAKSNAP_ERR_IO
 * for a location that cannot be written (its text says why),
 * LEAKSNAP_ERR_USAGE for a clickhouse:// URL that is not one (on
 * ClickHouse, LEAKSNAP_ERR_IO also for a server that cannot be reached, a
 * database it does not have, a user who may only read). */
struct leaksnap_store *leaksnap_store_open(const char *target,
					   const struct leaksnap_store_open_opts *opts,
					   struct leaksnap_error *err);
/* Close @s; a run begun and not committed is abandoned.  NULL-safe. */
void leaksnap_store_close(struct leaksnap_store *s);
enum leaksnap_store_engine leaksnap_store_engine(const struct leaksnap_store *s);
/* The schema version of the store as opened (after any upgrade). */
unsigned leaksnap_store_schema_version(const struct leaksnap_store *s);
/* The engine of @target, without opening it. */
enum leaksnap_store_engine leaksnap_store_engine_of(const char *target);

/* Rows --------------------------------------------------------------------- */

/* A label of a run, KEY=VALUE.  Keys are those the user gives; build_id,
 * exe and cmdline come from the dump's metadata, as run fields. */
struct leaksnap_store_label {
	const char *key;
	const char *value;
};

struct leaksnap_store_run {
	uint64_t id;            /* hash of pid, start and exe */
	int64_t pid;            /* -1: unknown */
	const char *start;      /* the dump's process_start, or "" */
	const char *exe;        /* "" when unknown (and below) */
	const char *build_id;   /* the executable's, hex */
	const char *cmdline;
	const struct leaksnap_store_label *labels;
	size_t label_count;
	char build_id_buf[129]; /* where leaksnap_store_run_of() puts build_id */
};

/* The content hash of a snapshot: 128 bits; its first 64 are the
 * snapshot's id. */
#define LEAKSNAP_STORE_HASH_HEX 33

struct leaksnap_store_snapshot {
	uint64_t id;
	uint64_t run_id;
	char hash[LEAKSNAP_STORE_HASH_HEX]; /* the content hash, hex */
	const char *source;     /* the dump's file name as given */
	uint64_t time_ns;       /* capture time, 0: unknown */
	uint64_t seq;           /* the hook's dump number, 0: none */
	uint64_t total_bytes;   /* sum of size x count */
	uint64_t allocations;
	uint64_t record_count;
	bool has_reachability;
	uint64_t unreachable_bytes, unreachable_count;
	/* Sampled collection (the dump's sample_interval=): the mean interval
	 * in bytes, 0 when every block was recorded; the totals above are
	 * then of the sampled blocks, and these their estimates (libsnapshot's
	 * leaksnap_snapshot_estimate(); the totals themselves when not
	 * sampled). */
	uint64_t sample_interval;
	uint64_t estimated_bytes, estimated_unreachable_bytes;
};

/* One symbolized frame of a PC: the PC's function, or one it was inlined
 * into (innermost first). */
struct leaksnap_store_symbol {
	const char *function;   /* "" unknown (and file) */
	const char *file;
	uint32_t line, column;  /* 0 unknown */
	bool inlined;           /* inlined into the next symbol */
};

struct leaksnap_store_frame {
	uint64_t id;            /* hash of (module identity, rel_pc) */
	const char *module;     /* the mapped file's path; "" none */
	const char *build_id;   /* hex; "" none */
	uint64_t rel_pc;        /* offset in the file; the PC when no module */
	const struct leaksnap_store_symbol *symbols;
	size_t symbol_count;    /* 0: nothing known */
};

struct leaksnap_store_stack {
	uint64_t id;            /* hash of its frame ids */
	const uint64_t *frames; /* frame ids, innermost first */
	uint32_t frame_count;
};

struct leaksnap_store_record {
	uint64_t snapshot_id;
	uint64_t index;         /* its place in the snapshot */
	uint64_t stack_id;
	uint64_t size, count, unreachable;
	bool zygote;
};

/* Writing ------------------------------------------------------------------ */

/* Begin writing @run (its row and labels are written if new; the labels
 * of a run already stored stay as they were).  On SQLite: a write
 * transaction, waiting for other writers up to the busy timeout.  One run
 * at a time. */
int leaksnap_store_run_begin(struct leaksnap_store *s, const struct leaksnap_store_run *run,
			     struct leaksnap_error *err);
/* Make what was put since the run began visible: the completion marker,
 * then (SQLite) the commit.  0 with @err's code set (not LEAKSNAP_OK): the
 * run is stored and visible, but what a ClickHouse write does after its
 * marker (the run's growth checked against other writes of it) failed: a
 * warning (@err says what). */
int leaksnap_store_run_commit(struct leaksnap_store *s, struct leaksnap_error *err);
/* Drop what was put since the run began.  Never fails; NULL-safe. */
void leaksnap_store_run_abort(struct leaksnap_store *s);

/* Whether a snapshot with id @id is stored (complete or being written by
 * this run). */
int leaksnap_store_has_snapshot(struct leaksnap_store *s, uint64_t id, bool *has,
				struct leaksnap_error *err);
/* For each of the @n frame ids at @ids, whether it is stored: @known[i]. */
int leaksnap_store_frames_known(struct leaksnap_store *s, const uint64_t *ids, size_t n,
				bool *known, struct leaksnap_error *err);
/* The puts, within a run.  Stacks and frames already stored are skipped.
 * A snapshot not sampled (sample_interval 0) is stored with its totals as
 * its estimates, whatever its estimated_ fields say. */
int leaksnap_store_put_snapshot(struct leaksnap_store *s, const struct leaksnap_store_snapshot *snap,
				struct leaksnap_error *err);
int leaksnap_store_put_stacks(struct leaksnap_store *s, const struct leaksnap_store_stack *v,
			      size_t n, struct leaksnap_error *err);
int leaksnap_store_put_frames(struct leaksnap_store *s, const struct leaksnap_store_frame *v,
			      size_t n, struct leaksnap_error *err);
int leaksnap_store_put_records(struct leaksnap_store *s, const struct leaksnap_store_record *v,
			       size_t n, struct leaksnap_error *err);

/* From a snapshot: rows ---------------------------------------------------- */

/* The run of snapshot @snap (its maps @maps, may be NULL) into @out, with
 * the @n @labels (borrowed, as are the strings filled in from @snap's
 * metadata: valid while @snap and @labels are). */
void leaksnap_store_run_of(const struct leaksnap_snapshot *snap, const struct leaksnap_maps *maps,
			   const struct leaksnap_store_label *labels, size_t n,
			   struct leaksnap_store_run *out);

/* Symbolizing a frame at ingest: the caller's resolver (resolve/), as the
 * symbolize command would answer @loc.  0, or -1 to stop the ingest (the
 * callback said why). */
typedef int (*leaksnap_store_resolve_fn)(void *arg, const struct leaksnap_maps_location *loc,
					 struct leaksnap_resolved *out);

struct leaksnap_store_add_opts {
	size_t sz;
	leaksnap_store_resolve_fn resolve; /* NULL: frames are stored unsymbolized */
	void *resolve_arg;
	/* Called with the indexes of the records whose stacks hold frames
	 * about to be resolved (a prefetch hint); may be NULL. */
	void (*prefetch)(void *arg, const size_t *records, size_t count);
};

/* What leaksnap_store_add_snapshot() did. */
struct leaksnap_store_added {
	bool duplicate;         /* the same dump was stored before: nothing added */
	uint64_t snapshot_id;
	size_t records, stacks, new_frames;
};

/* Store snapshot @snap (its maps @maps; @source the name to keep) in the
 * run begun, which must be leaksnap_store_run_of(@snap): its content hash
 * first (a dump stored before adds nothing), then its stacks normalized
 * and hashed, the frames not stored yet symbolized once through
 * @opts->resolve, and its records. */
int leaksnap_store_add_snapshot(struct leaksnap_store *s, const struct leaksnap_snapshot *snap,
				const struct leaksnap_maps *maps, const char *source,
				const struct leaksnap_store_add_opts *opts,
				struct leaksnap_store_added *out, struct leaksnap_error *err);
/* The content hash of @snap (what it holds, not its file's bytes: header
 * facts, records, metadata, maps) as hex. */
void leaksnap_store_content_hash(const struct leaksnap_snapshot *snap,
				 char hex[LEAKSNAP_STORE_HASH_HEX]);

/* Reading ------------------------------------------------------------------ */
/* Each visits rows through a callback that returns 0 to go on, non-zero to
 * stop (that value is returned).  Strings are valid during the call only.
 * Only complete ingests are seen. */

/* The runs, oldest first (by their first snapshot's capture time, then
 * run id as unsigned), with their labels sorted by key. */
typedef int (*leaksnap_store_run_fn)(void *arg, const struct leaksnap_store_run *run);
int leaksnap_store_runs(struct leaksnap_store *s, leaksnap_store_run_fn fn, void *arg,
			struct leaksnap_error *err);
/* The snapshots of run @run_id (0: of every run) in capture order: time,
 * then dump number, then snapshot id as unsigned. */
typedef int (*leaksnap_store_snapshot_fn)(void *arg, const struct leaksnap_store_snapshot *snap);
int leaksnap_store_snapshots(struct leaksnap_store *s, uint64_t run_id,
			     leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err);
/* The records of snapshot @snapshot_id, in their order. */
typedef int (*leaksnap_store_record_fn)(void *arg, const struct leaksnap_store_record *rec);
int leaksnap_store_records(struct leaksnap_store *s, uint64_t snapshot_id,
			   leaksnap_store_record_fn fn, void *arg, struct leaksnap_error *err);
/* The stacks whose ids are among the @n at @ids, each once, in no set
 * order (ids not stored: not visited). */
typedef int (*leaksnap_store_stack_fn)(void *arg, const struct leaksnap_store_stack *stack);
int leaksnap_store_stacks(struct leaksnap_store *s, const uint64_t *ids, size_t n,
			  leaksnap_store_stack_fn fn, void *arg, struct leaksnap_error *err);
/* The frames whose ids are among the @n at @ids, with their symbols, each
 * once, in no set order. */
typedef int (*leaksnap_store_frame_fn)(void *arg, const struct leaksnap_store_frame *frame);
int leaksnap_store_frames(struct leaksnap_store *s, const uint64_t *ids, size_t n,
			  leaksnap_store_frame_fn fn, void *arg, struct leaksnap_error *err);

/* What grew within a run: for each stack whose bytes at the run's last
 * snapshot exceed those at its first, the difference.  Kept when a run is
 * written (its first and last snapshot as stored then), so that history
 * never reads records. */
struct leaksnap_store_growth {
	uint64_t run_id;
	uint64_t first_snapshot, last_snapshot;
	uint64_t stack_id;
	int64_t bytes;          /* > 0 */
	int64_t count;          /* allocations, last minus first (any sign) */
	/* (where the first or last snapshot is sampled, both are estimates:
	 * the sums of each record's rounded estimates, leaksnap_sample_estimate(),
	 * the rule every reader follows) */
};
/* The growth of every run, as of its first and last snapshot now; runs of
 * one snapshot have none.  In no set order. */
typedef int (*leaksnap_store_growth_fn)(void *arg, const struct leaksnap_store_growth *g);
int leaksnap_store_growth(struct leaksnap_store *s, leaksnap_store_growth_fn fn, void *arg,
			  struct leaksnap_error *err);
/* The rows of table @table (a name of the schema), all of them, complete
 * or not (for tests and sizes). */
int leaksnap_store_row_count(struct leaksnap_store *s, const char *table, uint64_t *n,
			     struct leaksnap_error *err);

/* History ------------------------------------------------------------------ */

/* One row of a history: the runs of one build (or of one value of another
 * label, or one run), oldest first. */
struct leaksnap_store_suspect {
	const char *const *chain; /* the first functions outside allocation
				   * wrappers, innermost first */
	size_t chain_len;
	int64_t growth;           /* bytes its stacks grew by within the runs
				   * (estimated in sampled runs) */
	bool is_new;              /* not a suspect of the row before */
	/* Its stack that grew most (of the row's runs), and with the option
	 * stacks, that stack's frames, innermost first, with their symbols
	 * (NULL and 0 without). */
	uint64_t stack_id;
	const struct leaksnap_store_frame *frames;
	size_t frame_count;
};

/* One line of the curves: the row's runs with one value of the series
 * label. */
struct leaksnap_store_history_point {
	const char *value;        /* "" when the runs have no such label */
	size_t runs;
	uint64_t memory;
	int64_t growth;
	uint64_t definite;
};

struct leaksnap_store_history_row {
	const char *key;          /* the label's value ("" when the runs have none),
				   * or the run's id in hex */
	size_t runs;
	uint64_t first_time_ns;   /* its first snapshot's */
	uint64_t last_time_ns;    /* the last snapshot's of its runs */
	uint64_t memory;          /* bytes live at each run's last snapshot, summed */
	int64_t growth;           /* last - first snapshot of each run, summed */
	uint64_t definite;        /* unreachable bytes at the last snapshots */
	const struct leaksnap_store_suspect *suspects; /* the largest growth first */
	size_t suspect_count;
	const struct leaksnap_store_suspect *gone;     /* the row before's, not here */
	size_t gone_count;
	/* With the option series: the row split by that label's values,
	 * sorted by value. */
	const struct leaksnap_store_history_point *points;
	size_t point_count;
	/* The sampling intervals of its runs' snapshots, distinct, ascending
	 * (0: not sampled).  One of them not 0: the figures above (and the
	 * suspects' growth, the points') are estimates (libsnapshot's), each
	 * run's own summed; more than one: runs (or snapshots of a run)
	 * sampled at different intervals, or some not sampled, in one row. */
	const uint64_t *intervals;
	size_t interval_count;
};

struct leaksnap_store_history_opts {
	size_t sz;
	const char *by;           /* a label's key, or "run"; NULL: "build" */
	const struct leaksnap_store_label *where; /* runs with each of these labels */
	size_t where_count;
	size_t last;              /* only the newest N rows; 0: all */
	size_t suspects;          /* per row; 0: 3 */
	const char *series;       /* a label's key: each row's points; NULL: none */
	bool stacks;              /* the suspects' frames too */
};

struct leaksnap_store_history;

/* The history of @s as @opts ask; NULL with @err filled. */
struct leaksnap_store_history *leaksnap_store_history_new(
	struct leaksnap_store *s, const struct leaksnap_store_history_opts *opts,
	struct leaksnap_error *err);
void leaksnap_store_history_free(struct leaksnap_store_history *h);
size_t leaksnap_store_history_count(const struct leaksnap_store_history *h);
const struct leaksnap_store_history_row *leaksnap_store_history_row(
	const struct leaksnap_store_history *h, size_t i);
/* The row just before the first one shown (opts.last left some out), or
 * NULL: what the first row shown is compared with. */
const struct leaksnap_store_history_row *leaksnap_store_history_before(
	const struct leaksnap_store_history *h);

/* The schema ---------------------------------------------------------------- */

/* The DDL of @engine's tables, each statement ending ";\n", a blank line
 * between them:
 * SQLite's CREATE TABLE statements, ClickHouse's MergeTree tables in
 * @database, or with @cluster non-NULL, ClickHouse's Distributed tables
 * over them (TABLE_all, sharded).  Into @buf (@size bytes); returns the
 * length it needs (as snprintf). */
size_t leaksnap_store_ddl(enum leaksnap_store_engine engine, const char *database,
			  const char *cluster, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
