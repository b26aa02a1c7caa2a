/* leaksnap store: the schema, described once.  Both engines' DDL, the
 * SQLite insert statements and docs/store.md's table definitions are
 * generated from sto_tables (the documentation test compares them). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

#define COLS(a) a, sizeof(a) / sizeof(a[0])

static const struct sto_column info_cols[] = {
	{"name", STO_TEXT, "a fact's name: schema_version"},
	{"value", STO_TEXT, "its value"},
};
static const struct sto_column run_cols[] = {
	{"run_id", STO_U64, "hash of pid, process_start and exe"},
	{"pid", STO_I64, "-1: unknown"},
	{"process_start", STO_TEXT, "the dump's process_start (boot ID and start ticks), or ''"},
	{"exe", STO_TEXT, "the dump's exe, or ''"},
	{"build_id", STO_TEXT, "the executable's build ID (hex), or ''"},
	{"cmdline", STO_TEXT, "the dump's cmdline, or ''"},
};
static const struct sto_column label_cols[] = {
	{"run_id", STO_U64, "the run"},
	{"name", STO_TEXT, "KEY of --label KEY=VALUE"},
	{"value", STO_TEXT, "VALUE"},
};
static const struct sto_column snapshot_cols[] = {
	{"snapshot_id", STO_U64, "the first 64 bits of content_hash"},
	{"run_id", STO_U64, "the run it belongs to"},
	{"ingest_id", STO_U64, "the write that stored it: seen once ingests has it"},
	{"content_hash", STO_TEXT, "128-bit hash of the snapshot's content, hex"},
	{"source", STO_TEXT, "the dump's file name as given"},
	{"time_ns", STO_U64, "capture time, ns since the epoch; 0: unknown"},
	{"seq", STO_U64, "the hook's dump number (PREFIX.PID.N.dump); 0: none"},
	{"total_bytes", STO_U64, "sum of size x count"},
	{"allocations", STO_U64, "sum of count"},
	{"record_count", STO_U64, "records"},
	{"has_reachability", STO_BOOL, "recorded with reachability"},
	{"unreachable_bytes", STO_U64, "bytes no pointer reached (definite leaks)"},
	{"unreachable_count", STO_U64, "allocations no pointer reached"},
	{"sample_interval", STO_U64, "sampled collection's mean interval in bytes (the dump's "
				     "sample_interval=); 0: every block recorded"},
	{"estimated_bytes", STO_U64, "total_bytes as estimated from the sampled blocks; "
				     "total_bytes itself when not sampled"},
	{"estimated_unreachable_bytes", STO_U64, "unreachable_bytes likewise estimated"},
};
static const struct sto_column stack_cols[] = {
	{"stack_id", STO_U64, "hash of its frame ids"},
	{"frame_count", STO_U32, "frames"},
	{"frame_ids", STO_IDS, "frame ids, innermost first"},
};
static const struct sto_column frame_cols[] = {
	{"frame_id", STO_U64, "hash of (module identity, rel_pc)"},
	{"module", STO_TEXT, "the mapped file's path; '' none"},
	{"build_id", STO_TEXT, "the module's build ID (hex); '' none"},
	{"rel_pc", STO_U64, "offset in the file; the PC itself when in no module"},
};
static const struct sto_column symbol_cols[] = {
	{"frame_id", STO_U64, "the frame"},
	{"depth", STO_U32, "0: innermost (the PC's own function), then the functions it was "
			   "inlined into"},
	{"function", STO_TEXT, "demangled name; '' unknown"},
	{"file", STO_TEXT, "source file; '' unknown"},
	{"line", STO_U32, "0: unknown"},
	{"col", STO_U32, "0: unknown"},
	{"inlined", STO_BOOL, "inlined into the next depth"},
};
static const struct sto_column record_cols[] = {
	{"snapshot_id", STO_U64, "the snapshot"},
	{"idx", STO_U64, "its place in the snapshot"},
	{"stack_id", STO_U64, "the stack"},
	{"size", STO_U64, "bytes per allocation"},
	{"count", STO_U64, "live allocations"},
	{"unreachable", STO_U64, "of them, unreachable"},
	{"zygote", STO_BOOL, "allocated in a zygote child"},
};
static const struct sto_column growth_cols[] = {
	{"run_id", STO_U64, "the run"},
	{"first_snapshot", STO_U64, "the run's first snapshot when the row was written"},
	{"last_snapshot", STO_U64, "and its last: rows of other pairs than the run's "
				   "first and last now are stale"},
	{"stack_id", STO_U64, "a stack whose bytes grew from the first to the last"},
	{"bytes", STO_I64, "by how many bytes (> 0): estimated bytes when a snapshot is sampled"},
	{"count", STO_I64, "its allocations, last minus first (estimated likewise)"},
};
static const struct sto_column ingest_cols[] = {
	{"ingest_id", STO_U64, "random, per write"},
	{"run_id", STO_U64, "the run written"},
	{"snapshot_count", STO_U64, "snapshots it added"},
	{"stored_ns", STO_U64, "when, ns since the epoch"},
};

const struct sto_table sto_tables[STO_TABLE_COUNT] = {
	[STO_INFO] = {"store_info", COLS(info_cols), "name", "0", STO_ONCE,
		      "facts about the store: its schema version"},
	[STO_RUNS] = {"runs", COLS(run_cols), "run_id", "run_id", STO_ONCE,
		      "one process from its start"},
	[STO_LABELS] = {"run_labels", COLS(label_cols), "run_id, name", "run_id", STO_ONCE,
			"the labels a run was stored with"},
	[STO_SNAPSHOTS] = {"snapshots", COLS(snapshot_cols), "snapshot_id", "run_id", STO_ONCE,
			   "one per distinct dump"},
	[STO_STACKS] = {"stacks", COLS(stack_cols), "stack_id", "stack_id", STO_ONCE,
			"each distinct normalized stack once"},
	[STO_FRAMES] = {"frames", COLS(frame_cols), "frame_id", "frame_id", STO_ONCE,
			"each distinct (module, rel_pc) once"},
	[STO_SYMBOLS] = {"symbols", COLS(symbol_cols), "frame_id, depth", "frame_id", STO_ONCE,
			 "a frame's symbolized functions, symbolized once at ingest"},
	[STO_RECORDS] = {"records", COLS(record_cols), "snapshot_id, idx", "snapshot_id",
			 STO_ONCE, "a snapshot's records"},
	[STO_GROWTH] = {"growth", COLS(growth_cols), "run_id, first_snapshot, last_snapshot, stack_id",
			"run_id", STO_ONCE,
			"what grew within each run, kept when the run is written (history reads "
			"this, never the records)"},
	[STO_INGESTS] = {"ingests", COLS(ingest_cols), "ingest_id", "run_id", STO_APPEND,
			 "completion markers: a write's last row"},
};

const struct sto_table *sto_table_named(const char *name)
{
	for (size_t i = 0; i < STO_TABLE_COUNT; i++)
		if (strcmp(sto_tables[i].name, name) == 0)
			return &sto_tables[i];
	return NULL;
}

/* Appending to a buffer as snprintf does: the length needed is counted
 * even past @size. */
struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
			  o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static const char *sqlite_type(enum sto_type t)
{
	switch (t) {
	case STO_TEXT: return "TEXT";
	case STO_IDS: return "BLOB";
	case STO_U64: case STO_I64: case STO_U32: case STO_BOOL: break;
	}
	return "INTEGER";
}

static const char *clickhouse_type(enum sto_type t)
{
	switch (t) {
	case STO_U64: return "UInt64";
	case STO_I64: return "Int64";
	case STO_U32: return "UInt32";
	case STO_BOOL: return "UInt8";
	case STO_TEXT: return "String";
	case STO_IDS: return "Array(UInt64)";
	}
	return "String";
}

/* ClickHouse's ordering keys: the key, but for tables read by run or in
 * capture order, what the queries filter on first. */
static const char *clickhouse_order(const struct sto_table *t)
{
	if (t == &sto_tables[STO_SNAPSHOTS])
		return "run_id, time_ns, seq, snapshot_id";
	if (t == &sto_tables[STO_INGESTS])
		return "run_id, ingest_id";
	return t->key;
}

/* A table keyed by one 64-bit id keeps it as its rowid (INTEGER PRIMARY
 * KEY: rows written in key order are appended, the fast path); any other
 * key makes a table WITHOUT ROWID. */
static bool sqlite_rowid_key(const struct sto_table *t, size_t c)
{
	return strcmp(t->key, t->cols[c].name) == 0 &&
	       (t->cols[c].type == STO_U64 || t->cols[c].type == STO_I64);
}

static void ddl_sqlite(struct out *o, const struct sto_table *t)
{
	bool rowid = false;
	for (size_t c = 0; c < t->ncols; c++)
		rowid |= sqlite_rowid_key(t, c);
	put(o, "CREATE TABLE %s (\n", t->name);
	for (size_t c = 0; c < t->ncols; c++) {
		bool key = sqlite_rowid_key(t, c);
		put(o, "    %s %s%s%s\n", t->cols[c].name, sqlite_type(t->cols[c].type),
		    key ? " PRIMARY KEY" : " NOT NULL", c + 1 < t->ncols || !rowid ? "," : "");
	}
	if (rowid)
		put(o, ");\n");
	else
		put(o, "    PRIMARY KEY (%s)\n) WITHOUT ROWID;\n", t->key);
}

static void ddl_clickhouse(struct out *o, const struct sto_table *t, const char *db)
{
	put(o, "CREATE TABLE IF NOT EXISTS %s.%s (\n", db, t->name);
	for (size_t c = 0; c < t->ncols; c++)
		put(o, "    %s %s%s\n", t->cols[c].name, clickhouse_type(t->cols[c].type),
		    c + 1 < t->ncols ? "," : "");
	put(o, ") ENGINE = %s() ORDER BY (%s);\n",
	    t->dedup == STO_ONCE ? "ReplacingMergeTree" : "MergeTree", clickhouse_order(t));
}

static void ddl_distributed(struct out *o, const struct sto_table *t, const char *db,
			    const char *cluster)
{
	put(o, "CREATE TABLE IF NOT EXISTS %s.%s_all AS %s.%s\n"
	       "    ENGINE = Distributed(%s, %s, %s, %s);\n",
	    db, t->name, db, t->name, cluster, db, t->name, t->shard);
}

size_t leaksnap_store_ddl(enum leaksnap_store_engine engine, const char *database,
			  const char *cluster, char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < STO_TABLE_COUNT; i++) {
		const struct sto_table *t = &sto_tables[i];
		if (i)
			put(&o, "\n");
		if (engine == LEAKSNAP_STORE_SQLITE)
			ddl_sqlite(&o, t);
		else if (cluster)
			ddl_distributed(&o, t, database, cluster);
		else
			ddl_clickhouse(&o, t, database);
	}
	if (engine == LEAKSNAP_STORE_SQLITE)
		put(&o, "\nCREATE INDEX snapshots_run ON snapshots (run_id, time_ns, seq);\n");
	return o.len;
}

/* The columns of every table as docs/store.md lists them: a Markdown
 * table per table, each column with its type on both engines. */
size_t sto_doc_columns(char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < STO_TABLE_COUNT; i++) {
		const struct sto_table *t = &sto_tables[i];
		put(&o, "%s### `%s`: %s\n\n", i ? "\n" : "", t->name, t->doc);
		put(&o, "Key: `%s`; %s; sharded by `%s`.\n\n", t->key,
		    t->dedup == STO_ONCE ? "a row written again is kept once" : "rows are only added",
		    t->shard);
		put(&o, "| column | SQLite | ClickHouse | what |\n|---|---|---|---|\n");
		for (size_t c = 0; c < t->ncols; c++)
			put(&o, "| `%s` | %s | %s | %s |\n", t->cols[c].name,
			    sqlite_type(t->cols[c].type), clickhouse_type(t->cols[c].type),
			    t->cols[c].doc);
	}
	return o.len;
}

size_t sto_sqlite_insert(const struct sto_table *t, char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	put(&o, "INSERT %sINTO %s (", t->dedup == STO_ONCE ? "OR IGNORE " : "", t->name);
	for (size_t c = 0; c < t->ncols; c++)
		put(&o, "%s%s", c ? ", " : "", t->cols[c].name);
	put(&o, ") VALUES (");
	for (size_t c = 0; c < t->ncols; c++)
		put(&o, "%s?%zu", c ? ", " : "", c + 1);
	put(&o, ")");
	return o.len;
}

/* A step from N to N + 1 is a list of statements (ALTER TABLE ... ADD
 * COLUMN with a default, new tables), run in the transaction that sets the
 * version to N + 1; docs/store.md lists each with its ClickHouse twin.
 *
 * 1 -> 2: the growth table, filled from the records of each run's first
 * and last complete snapshot (capture order: time, dump number, then
 * snapshot id as unsigned: SQLite keeps it signed, so the negative ones,
 * the top half, come last). */
static const char *const upgrade_1[] = {
	"CREATE TABLE growth (\n"
	"    run_id INTEGER NOT NULL,\n"
	"    first_snapshot INTEGER NOT NULL,\n"
	"    last_snapshot INTEGER NOT NULL,\n"
	"    stack_id INTEGER NOT NULL,\n"
	"    bytes INTEGER NOT NULL,\n"
	"    count INTEGER NOT NULL,\n"
	"    PRIMARY KEY (run_id, first_snapshot, last_snapshot, stack_id)\n"
	") WITHOUT ROWID",
	"INSERT INTO growth "
	"WITH o AS (SELECT run_id, snapshot_id, "
	"  row_number() OVER (PARTITION BY run_id ORDER BY time_ns, seq, "
	"    snapshot_id < 0, snapshot_id) AS rn, "
	"  count(*) OVER (PARTITION BY run_id) AS n "
	"  FROM snapshots WHERE ingest_id IN (SELECT ingest_id FROM ingests)), "
	"p AS (SELECT run_id, max(CASE WHEN rn = 1 THEN snapshot_id END) AS f, "
	"  max(CASE WHEN rn = n THEN snapshot_id END) AS l FROM o WHERE n > 1 GROUP BY run_id) "
	"SELECT p.run_id, p.f, p.l, r.stack_id, "
	"  sum(CASE WHEN r.snapshot_id = p.l THEN r.size * r.count ELSE -(r.size * r.count) END) AS b, "
	"  sum(CASE WHEN r.snapshot_id = p.l THEN r.count ELSE -r.count END) "
	"FROM p JOIN records r ON r.snapshot_id = p.f OR r.snapshot_id = p.l "
	"GROUP BY p.run_id, r.stack_id HAVING b > 0",
	NULL,
};

/* 2 -> 3: sampled snapshots -- each snapshot's interval (0 in a store of
 * version 2: taken as every block recorded) and its estimated totals,
 * which are then the totals themselves.  The growth rows of version 2 are
 * taken as of unsampled runs: estimates already.  Not always so: the
 * builds between cb39c5a and d1f18bb stored sampled dumps into stores of
 * version 2 as they were (the sampled counts, no interval).  Nothing in
 * such a store tells those snapshots apart or says their interval, so
 * they read as exact after the upgrade; docs/store.md says so, and that
 * those dumps are to be stored again into a new store. */
static const char *const upgrade_2[] = {
	"ALTER TABLE snapshots ADD COLUMN sample_interval INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE snapshots ADD COLUMN estimated_bytes INTEGER NOT NULL DEFAULT 0",
	"ALTER TABLE snapshots ADD COLUMN estimated_unreachable_bytes INTEGER NOT NULL DEFAULT 0",
	"UPDATE snapshots SET estimated_bytes = total_bytes, "
	"estimated_unreachable_bytes = unreachable_bytes",
	NULL,
};

const char *const *sto_sqlite_upgrade(unsigned from)
{
	return from == 1 ? upgrade_1 : from == 2 ? upgrade_2 : NULL;
}

/* ClickHouse's step 2 -> 3: the columns of version 3 that a table lacks,
 * each with the default that makes an old row's value what it was
 * (evaluated when old parts are read) -- an old row taken as not sampled,
 * as on SQLite (upgrade_2 above: a sampled dump stored by a build of
 * version 2 reads as exact). */
static const struct sto_ch_added ch_added_3[] = {
	{"snapshots", "sample_interval", "UInt64 DEFAULT 0"},
	{"snapshots", "estimated_bytes", "UInt64 DEFAULT total_bytes"},
	{"snapshots", "estimated_unreachable_bytes", "UInt64 DEFAULT unreachable_bytes"},
	{NULL, NULL, NULL},
};

const struct sto_ch_added *sto_clickhouse_added(unsigned from)
{
	return from == 2 ? ch_added_3 : NULL;
}

const char *sto_snapshot_v3_columns(unsigned version)
{
	return version < 3 ? "0, total_bytes, unreachable_bytes"
			   : "sample_interval, estimated_bytes, estimated_unreachable_bytes";
}

/* Identifiers: FNV-1a over the bytes, then the kit's finalizer per part,
 * so that a part's end is marked (a text ends with its length). */
uint64_t sto_hash_text(uint64_t h, const char *s)
{
	size_t n = strlen(s);
	h = kit_fnv1a(h, s, n);
	return kit_mix64(h ^ (uint64_t)n);
}

uint64_t sto_hash_u64(uint64_t h, uint64_t v)
{
	return kit_mix64(h ^ kit_mix64(v + 0x9e3779b97f4a7c15ULL));
}
