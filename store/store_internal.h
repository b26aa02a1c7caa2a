/* leaksnap store: what its files share -- the schema description both
 * engines' DDL is generated from, and the backend interface each engine
 * implements. */
#ifndef LEAKSNAP_STORE_INTERNAL_H
#define LEAKSNAP_STORE_INTERNAL_H

#include "kit.h"
#include "store.h"

/* The schema --------------------------------------------------------------- */

/* A column's type, and what it is on each engine (schema.c). */
enum sto_type {
	STO_U64,      /* INTEGER (the 64 bits as signed) | UInt64 */
	STO_I64,      /* INTEGER | Int64 */
	STO_U32,      /* INTEGER | UInt32 */
	STO_BOOL,     /* INTEGER 0/1 | UInt8 */
	STO_TEXT,     /* TEXT (bytes as given) | String */
	STO_IDS,      /* BLOB of little-endian u64 | Array(UInt64) */
};

struct sto_column {
	const char *name;
	enum sto_type type;
	const char *doc;
};

/* How a table takes rows written twice (a stack two runs share). */
enum sto_dedup {
	STO_APPEND,   /* every row is new: MergeTree */
	STO_ONCE,     /* the key says it: INSERT OR IGNORE | ReplacingMergeTree */
};

struct sto_table {
	const char *name;
	const struct sto_column *cols;
	size_t ncols;
	const char *key;        /* SQLite's primary key, ClickHouse's ORDER BY */
	const char *shard;      /* the Distributed table's sharding key */
	enum sto_dedup dedup;
	const char *doc;
};

/* The tables, in the order they are created and documented. */
enum sto_table_id {
	STO_INFO, STO_RUNS, STO_LABELS, STO_SNAPSHOTS, STO_STACKS, STO_FRAMES, STO_SYMBOLS,
	STO_RECORDS, STO_GROWTH, STO_INGESTS, STO_TABLE_COUNT
};
extern const struct sto_table sto_tables[STO_TABLE_COUNT];
/* The table named @name, or NULL. */
const struct sto_table *sto_table_named(const char *name);

/* The SQLite statement inserting a row of @t, its columns in order as
 * ?1..?N: INSERT OR IGNORE for STO_ONCE tables.  Into @buf. */
size_t sto_sqlite_insert(const struct sto_table *t, char *buf, size_t size);

/* The columns of every table as docs/store.md lists them (Markdown). */
size_t sto_doc_columns(char *buf, size_t size);

/* Upgrades: the statements that take a store of version @from to @from + 1
 * (SQLite), NULL-terminated; NULL when there is no such step. */
const char *const *sto_sqlite_upgrade(unsigned from);

/* ClickHouse's upgrades: the columns added by the step from @from to
 * @from + 1 (ALTER TABLE ... ADD COLUMN name type), NULL-terminated; NULL
 * when there is no such step. */
struct sto_ch_added {
	const char *table, *column, *type;
};
const struct sto_ch_added *sto_clickhouse_added(unsigned from);

/* The snapshots' columns of version 3 as a SELECT lists them in a store
 * of @version: in one of version 2, read as it is by one who cannot
 * upgrade it, what the upgrade would give them (not sampled, the
 * estimates the totals). */
const char *sto_snapshot_v3_columns(unsigned version);

/* The backend interface ------------------------------------------------------ */

struct sto_backend;

struct sto_ops {
	void (*close)(struct sto_backend *b);
	int (*run_begin)(struct sto_backend *b, const struct leaksnap_store_run *run,
			 uint64_t ingest_id, struct leaksnap_error *err);
	int (*run_commit)(struct sto_backend *b, struct leaksnap_error *err);
	void (*run_abort)(struct sto_backend *b);
	int (*has_snapshot)(struct sto_backend *b, uint64_t id, bool *has,
			    struct leaksnap_error *err);
	int (*frames_known)(struct sto_backend *b, const uint64_t *ids, size_t n, bool *known,
			    struct leaksnap_error *err);
	int (*put_snapshot)(struct sto_backend *b, const struct leaksnap_store_snapshot *snap,
			    struct leaksnap_error *err);
	int (*put_stacks)(struct sto_backend *b, const struct leaksnap_store_stack *v, size_t n,
			  struct leaksnap_error *err);
	int (*put_frames)(struct sto_backend *b, const struct leaksnap_store_frame *v, size_t n,
			  struct leaksnap_error *err);
	int (*put_records)(struct sto_backend *b, const struct leaksnap_store_record *v,
			   size_t n, struct leaksnap_error *err);
	/* Reading: rows of complete ingests only, each key once (on
	 * ClickHouse a row may have been written twice, by a write killed
	 * and by the next; the rows of one key are the same), in no set order
	 * unless said. */
	/* The runs with a complete ingest, their labels sorted by key. */
	int (*runs)(struct sto_backend *b, leaksnap_store_run_fn fn, void *arg,
		    struct leaksnap_error *err);
	/* The snapshots of run @run_id (0: of every run); with @with_current,
	 * also those of the run being written (within a run only). */
	int (*snapshots)(struct sto_backend *b, uint64_t run_id, bool with_current,
			 leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err);
	/* A snapshot's records in index order, complete or being written. */
	int (*records)(struct sto_backend *b, uint64_t snapshot_id, leaksnap_store_record_fn fn,
		       void *arg, struct leaksnap_error *err);
	int (*stacks)(struct sto_backend *b, const uint64_t *ids, size_t n,
		      leaksnap_store_stack_fn fn, void *arg, struct leaksnap_error *err);
	int (*frames)(struct sto_backend *b, const uint64_t *ids, size_t n,
		      leaksnap_store_frame_fn fn, void *arg, struct leaksnap_error *err);
	/* Within a run: the growth of the run being written, all rows of one
	 * (first, last) pair (rows of the run's other pairs may be dropped). */
	int (*put_growth)(struct sto_backend *b, const struct leaksnap_store_growth *v, size_t n,
			  struct leaksnap_error *err);
	/* Every growth row, of every pair (the caller keeps the current ones). */
	int (*growth)(struct sto_backend *b, leaksnap_store_growth_fn fn, void *arg,
		      struct leaksnap_error *err);
	int (*row_count)(struct sto_backend *b, const struct sto_table *t, uint64_t *n,
			 struct leaksnap_error *err);
};

/* Every backend's state begins with this. */
struct sto_backend {
	const struct sto_ops *ops;
	enum leaksnap_store_engine engine;
	unsigned version;       /* the schema version opened */
	const char *name;       /* what errors name: the file, or the URL */
	bool rows_repeat;       /* its growth op may give a row twice (ClickHouse) */
};

/* A store: its backend, and the run being written. */
struct leaksnap_store {
	struct sto_backend *b;
	bool in_run;
	uint64_t run_id;
	size_t run_snapshots;   /* put in this run */
};

/* Capture order: time, dump number, snapshot id (unsigned); as qsort's. */
int sto_cmp_capture(const struct leaksnap_store_snapshot *x,
		    const struct leaksnap_store_snapshot *y);

/* The growth of run @run_id as written so far (growth.c): when its first
 * or last snapshot changed, the stacks that grew between them, put. */
int sto_run_growth(struct sto_backend *b, uint64_t run_id, struct leaksnap_error *err);
/* The first and last of the @n snapshots of run @run_id in capture order
 * (complete ones; @with_current: and those of the run being written;
 * their source NULL); zeroes when none. */
int sto_run_pair(struct sto_backend *b, uint64_t run_id, bool with_current,
		 struct leaksnap_store_snapshot *first, struct leaksnap_store_snapshot *last,
		 size_t *n, struct leaksnap_error *err);
/* The growth of run @run_id from snapshot @first to @last, computed from
 * their records (estimated where a snapshot is sampled) and put. */
int sto_pair_growth(struct sto_backend *b, uint64_t run_id,
		    const struct leaksnap_store_snapshot *first,
		    const struct leaksnap_store_snapshot *last, struct leaksnap_error *err);

/* The SQLite backend (sqlite.c): NULL with @err filled. */
struct sto_backend *sto_sqlite_open(const char *path, const struct leaksnap_store_open_opts *o,
				    struct leaksnap_error *err);

/* The ClickHouse backend (clickhouse.c): @url is clickhouse://[USER[:PASSWORD]@]
 * HOST[:PORT]/DATABASE; NULL with @err filled. */
struct sto_backend *sto_clickhouse_open(const char *url, const struct leaksnap_store_open_opts *o,
					struct leaksnap_error *err);

/* 64-bit hashes of the store's identifiers (docs/store.md) */
uint64_t sto_hash_text(uint64_t h, const char *s);
uint64_t sto_hash_u64(uint64_t h, uint64_t v);
#define STO_HASH_START 0xcbf29ce484222325ULL

#endif
