/* leaksnap store: the SQLite backend.  One file, WAL (readers never wait
 * for the writer), a busy timeout (writers wait for each other), each run
 * written in one transaction begun IMMEDIATE (the write lock taken first,
 * so two writers never deadlock upgrading their locks).  Every value is
 * bound as a parameter; the only names put in statements are the schema's
 * own. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

struct sq {
	struct sto_backend base;
	sqlite3 *db;
	char *path;
	bool in_run;
	uint64_t run_id, ingest_id, snapshots;
	sqlite3_stmt *ins[STO_TABLE_COUNT];
	sqlite3_stmt *has_snapshot, *has_frame;
	sqlite3_stmt *symbols_of, *labels_of; /* a frame's symbols, a run's labels */
	uint8_t *blob;          /* a stack's frame ids, encoded */
	size_t blob_cap;
};

/* Errors ---------------------------------------------------------------------- */

/* @what failed with SQLite's @rc: said in the store's terms. */
static int fail_rc(struct sq *q, int rc, const char *what, struct leaksnap_error *err)
{
	int sys = q->db ? sqlite3_system_errno(q->db) : 0;
	const char *msg = q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc);
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		return kit_error(err, LEAKSNAP_ERR_FORMAT, q->path,
				 "not a leaksnap store (not a SQLite database)");
	case SQLITE_CORRUPT:
		return kit_error(err, LEAKSNAP_ERR_FORMAT, q->path, "corrupt store: %s", msg);
	case SQLITE_NOMEM:
		return kit_error(err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return kit_error(err, LEAKSNAP_ERR_IO, q->path,
				 "%s: another writer held the store past the busy timeout", what);
	case SQLITE_READONLY:
		return kit_error(err, LEAKSNAP_ERR_IO, q->path, "read-only: cannot write the store%s%s",
				 sys ? ": " : "", sys ? strerror(sys) : "");
	case SQLITE_CANTOPEN:
	case SQLITE_IOERR:
	case SQLITE_PERM:
	case SQLITE_FULL:
		if (sys)
			return kit_error(err, LEAKSNAP_ERR_IO, q->path, "%s: %s", what, strerror(sys));
		return kit_error(err, LEAKSNAP_ERR_IO, q->path, "%s: %s", what, msg);
	default:
		return kit_error(err, LEAKSNAP_ERR_IO, q->path, "%s: %s", what, msg);
	}
}

static int exec(struct sq *q, const char *sql, const char *what, struct leaksnap_error *err)
{
	int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : fail_rc(q, rc, what, err);
}

/* Step a statement that returns no row (or whose row is not wanted), then
 * reset it. */
static int step_done(struct sq *q, sqlite3_stmt *st, const char *what, struct leaksnap_error *err)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	return fail_rc(q, rc, what, err);
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : "";
}

/* Opening --------------------------------------------------------------------- */

static int prepare(struct sq *q, const char *sql, sqlite3_stmt **st, struct leaksnap_error *err)
{
	int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	return rc == SQLITE_OK ? 0 : fail_rc(q, rc, "prepare", err);
}

/* The schema version the store says, 0 when it has no tables at all; -1
 * (error filled) when it is some other database. */
static int read_version(struct sq *q, unsigned *version, struct leaksnap_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(q->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail_rc(q, rc, "cannot read the store", err);
	rc = sqlite3_step(st);
	int64_t objects = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return fail_rc(q, rc, "cannot read the store", err);
	*version = 0;
	if (objects == 0)
		return 0;
	rc = sqlite3_prepare_v2(q->db, "SELECT value FROM store_info WHERE name = 'schema_version'",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, q->path,
				 "not a leaksnap store (a SQLite database without its tables)");
	rc = sqlite3_step(st);
	long v = rc == SQLITE_ROW ? strtol(col_text(st, 0), NULL, 10) : 0;
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW && v > 0) {
		*version = (unsigned)v;
		return 0;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_rc(q, rc, "cannot read the store", err);
	return kit_error(err, LEAKSNAP_ERR_FORMAT, q->path,
			 "not a leaksnap store (no schema version)");
}

static int create_schema(struct sq *q, struct leaksnap_error *err)
{
	size_t n = leaksnap_store_ddl(LEAKSNAP_STORE_SQLITE, NULL, NULL, NULL, 0);
	char *ddl = malloc(n + 1);
	if (!ddl)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	leaksnap_store_ddl(LEAKSNAP_STORE_SQLITE, NULL, NULL, ddl, n + 1);
	int rc = exec(q, ddl, "cannot create the store", err);
	free(ddl);
	if (rc)
		return -1;
	char sql[160];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO store_info (name, value) VALUES ('schema_version', '%d');"
		 "PRAGMA user_version = %d;",
		 LEAKSNAP_STORE_SCHEMA_VERSION, LEAKSNAP_STORE_SCHEMA_VERSION);
	return exec(q, sql, "cannot create the store", err);
}

/* Each step from @from up to this version, in the transaction begun. */
static int upgrade(struct sq *q, unsigned from, struct leaksnap_error *err)
{
	for (unsigned v = from; v < LEAKSNAP_STORE_SCHEMA_VERSION; v++) {
		const char *const *steps = sto_sqlite_upgrade(v);
		if (!steps)
			return kit_error(err, LEAKSNAP_ERR_VERSION, q->path,
					 "schema version %u cannot be upgraded", v);
		for (size_t i = 0; steps[i]; i++)
			if (exec(q, steps[i], "cannot upgrade the store", err))
				return -1;
	}
	char sql[200];
	snprintf(sql, sizeof(sql),
		 "UPDATE store_info SET value = '%d' WHERE name = 'schema_version';"
		 "PRAGMA user_version = %d;",
		 LEAKSNAP_STORE_SCHEMA_VERSION, LEAKSNAP_STORE_SCHEMA_VERSION);
	return exec(q, sql, "cannot upgrade the store", err);
}

/* The schema: made when the store is new, upgraded when older, refused
 * when newer.  Creating and upgrading hold the write lock, and look again
 * once they have it (another writer may have been first). */
static int check_schema(struct sq *q, bool no_create, struct leaksnap_error *err)
{
	unsigned v;
	if (read_version(q, &v, err))
		return -1;
	if (v == LEAKSNAP_STORE_SCHEMA_VERSION)
		goto done;
	if (v > LEAKSNAP_STORE_SCHEMA_VERSION)
		return kit_error(err, LEAKSNAP_ERR_VERSION, q->path,
				 "schema version %u is newer than this leaksnap's (%d): "
				 "a newer leaksnap wrote it",
				 v, LEAKSNAP_STORE_SCHEMA_VERSION);
	if (v == 0 && no_create)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, q->path, "not a leaksnap store (empty)");
	if (exec(q, "BEGIN IMMEDIATE", "cannot write the store", err))
		return -1;
	if (read_version(q, &v, err))
		goto rollback;
	if (v == 0 ? create_schema(q, err) : v < LEAKSNAP_STORE_SCHEMA_VERSION ? upgrade(q, v, err) : 0)
		goto rollback;
	if (exec(q, "COMMIT", "cannot write the store", err))
		goto rollback;
	if (read_version(q, &v, err))
		return -1;
	if (v != LEAKSNAP_STORE_SCHEMA_VERSION)
		return kit_error(err, LEAKSNAP_ERR_VERSION, q->path,
				 "schema version %u is not this leaksnap's (%d)", v,
				 LEAKSNAP_STORE_SCHEMA_VERSION);
done:
	q->base.version = v;
	return 0;
rollback:
	sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int prepare_all(struct sq *q, struct leaksnap_error *err)
{
	/* (a store of an older version is only read: no inserts) */
	for (size_t i = 0; q->base.version == LEAKSNAP_STORE_SCHEMA_VERSION && i < STO_TABLE_COUNT;
	     i++) {
		char sql[1024];
		sto_sqlite_insert(&sto_tables[i], sql, sizeof(sql));
		if (prepare(q, sql, &q->ins[i], err))
			return -1;
	}
	return prepare(q, "SELECT 1 FROM snapshots WHERE snapshot_id = ?1", &q->has_snapshot,
		       err) ||
	       prepare(q, "SELECT 1 FROM frames WHERE frame_id = ?1", &q->has_frame, err) ||
	       prepare(q, "SELECT function, file, line, col, inlined FROM symbols "
			  "WHERE frame_id = ?1 ORDER BY depth",
		       &q->symbols_of, err) ||
	       prepare(q, "SELECT name, value FROM run_labels WHERE run_id = ?1 ORDER BY name",
		       &q->labels_of, err);
}

static void sq_close(struct sto_backend *b)
{
	struct sq *q = (struct sq *)b;
	if (q->in_run)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	for (size_t i = 0; i < STO_TABLE_COUNT; i++)
		sqlite3_finalize(q->ins[i]);
	sqlite3_finalize(q->has_snapshot);
	sqlite3_finalize(q->has_frame);
	sqlite3_finalize(q->symbols_of);
	sqlite3_finalize(q->labels_of);
	sqlite3_close(q->db);
	free(q->blob);
	free(q->path);
	free(q);
}

static const struct sto_ops sq_ops;

/* The connection: read-write, or for a reader that may not write the file,
 * read-only -- and when SQLite cannot read a write-ahead-log store so
 * (no shared-memory file, and none can be made beside it), as an
 * immutable file: no writer can be at work where nobody may write. */
static int open_db(struct sq *q, bool writable, bool create, struct leaksnap_error *err)
{
	int flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX |
		    (create ? SQLITE_OPEN_CREATE : 0);
	int rc = sqlite3_open_v2(q->path, &q->db, flags, NULL);
	if (rc == SQLITE_OK && !writable) {
		rc = sqlite3_exec(q->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		if (rc != SQLITE_OK && rc != SQLITE_NOTADB) {
			sqlite3_close(q->db);
			q->db = NULL;
			size_t n = strlen(q->path);
			char *uri = malloc(3 * n + 32);
			if (!uri)
				return kit_error(err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
			char *w = uri + sprintf(uri, "file:");
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char)q->path[i];
				if (c == '%' || c == '?' || c == '#' || c <= ' ' || c >= 0x7f)
					w += sprintf(w, "%%%02X", c);
				else
					*w++ = (char)c;
			}
			strcpy(w, "?immutable=1");
			rc = sqlite3_open_v2(uri, &q->db,
					     SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
					     NULL);
			free(uri);
		}
	}
	if (rc != SQLITE_OK)
		return fail_rc(q, rc, "cannot open the store", err);
	sqlite3_extended_result_codes(q->db, 1);
	return 0;
}

static int set_wal(struct sq *q, struct leaksnap_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(q->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	bool wal = rc == SQLITE_ROW && strcmp(col_text(st, 0), "wal") == 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return fail_rc(q, rc, "cannot open the store", err);
	if (!wal)
		return kit_error(err, LEAKSNAP_ERR_IO, q->path,
				 "cannot open the store: its journal cannot be a write-ahead log");
	return 0;
}

/* A store read by one who may not write it: its version as it is -- this
 * one's, or 2 (3 only added columns: sto_snapshot_v3_columns reads a
 * version 2 store's snapshots as version 3 would hold them); an older one
 * is refused. */
static int read_only_schema(struct sq *q, unsigned v, struct leaksnap_error *err)
{
	if (v > LEAKSNAP_STORE_SCHEMA_VERSION)
		return kit_error(err, LEAKSNAP_ERR_VERSION, q->path,
				 "schema version %u is newer than this leaksnap's (%d): "
				 "a newer leaksnap wrote it",
				 v, LEAKSNAP_STORE_SCHEMA_VERSION);
	if (v < 2)
		return kit_error(err, LEAKSNAP_ERR_VERSION, q->path,
				 "schema version %u is older than this leaksnap's (%d), and only "
				 "one who may write the store can upgrade it ('leaksnap store' "
				 "upgrades it)",
				 v, LEAKSNAP_STORE_SCHEMA_VERSION);
	q->base.version = v;
	return 0;
}

struct sto_backend *sto_sqlite_open(const char *path, const struct leaksnap_store_open_opts *o,
				    struct leaksnap_error *err)
{
	struct sq *q = calloc(1, sizeof(*q));
	if (!q || !(q->path = strdup(path))) {
		free(q);
		kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
		return NULL;
	}
	q->base = (struct sto_backend){&sq_ops, LEAKSNAP_STORE_SQLITE, 0, q->path, false};
	struct stat sb;
	bool exists = stat(path, &sb) == 0;
	if (exists && S_ISDIR(sb.st_mode)) {
		kit_error(err, LEAKSNAP_ERR_IO, path, "is a directory, not a store");
		goto fail;
	}
	if (exists && !S_ISREG(sb.st_mode)) {
		kit_error(err, LEAKSNAP_ERR_FORMAT, path, "not a leaksnap store (not a file)");
		goto fail;
	}
	if (!exists && o->no_create) { /* (an input: said as every command says one) */
		kit_error_errno(err, path, ENOENT);
		goto fail;
	}
	/* A reader (no_create) that may not write the file reads it as it is;
	 * anyone else needs to write it. */
	bool writable = !o->no_create || access(path, W_OK) == 0;
	if (!o->no_create) {
		/* The file opened for writing (made, when new) by the system
		 * first: its errno says why a location cannot be written, where
		 * SQLite's fallback to reading would say something else. */
		int fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0666);
		if (fd < 0) {
			kit_error(err, LEAKSNAP_ERR_IO, path, "cannot %s the store: %s",
				  exists ? "write" : "create", strerror(errno));
			goto fail;
		}
		close(fd);
	}
	if (open_db(q, writable, !o->no_create, err))
		goto fail;
	if (!o->no_create && sqlite3_db_readonly(q->db, "main") == 1) {
		kit_error(err, LEAKSNAP_ERR_IO, path, "read-only: cannot write the store");
		goto fail;
	}
	sqlite3_busy_timeout(q->db, o->busy_timeout_ms ? (int)o->busy_timeout_ms : 60000);
	/* A new store (a writer's new or empty file) is made a write-ahead-log
	 * one at once, before writers starting together race for its lock; its
	 * pages are the largest SQLite has (an existing one keeps its own): a
	 * run writes many rows at once, and its pages are copied from the log
	 * into the file once more at the checkpoint -- a sixteenth of the
	 * calls, 1M records stored in ~15% less time than with 4 KiB. */
	bool fresh = !o->no_create && (!exists || sb.st_size == 0);
	if (fresh) {
		sqlite3_exec(q->db, "PRAGMA page_size = 65536", NULL, NULL, NULL);
		if (set_wal(q, err))
			goto fail;
	}
	/* Any other file: what it is, before anything is changed in it -- a
	 * database of something else, or an empty file given to a reader,
	 * stays as it was. */
	unsigned v;
	if (read_version(q, &v, err))
		goto fail;
	if (v == 0 && o->no_create) {
		kit_error(err, LEAKSNAP_ERR_FORMAT, path, "not a leaksnap store (empty)");
		goto fail;
	}
	if (writable && !fresh && set_wal(q, err))
		goto fail;
	if (exec(q, "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA mmap_size = 17179869184;",
		 "cannot open the store", err))
		goto fail;
	if (writable ? check_schema(q, o->no_create, err) : read_only_schema(q, v, err))
		goto fail;
	if (prepare_all(q, err))
		goto fail;
	return &q->base;
fail:
	sq_close(&q->base);
	return NULL;
}

/* Writing ----------------------------------------------------------------------- */

static int sq_run_begin(struct sto_backend *b, const struct leaksnap_store_run *run,
			uint64_t ingest_id, struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	if (exec(q, "BEGIN IMMEDIATE", "cannot write the store", err))
		return -1;
	q->in_run = true;
	q->run_id = run->id;
	q->ingest_id = ingest_id;
	q->snapshots = 0;
	sqlite3_stmt *st = q->ins[STO_RUNS];
	bind_u64(st, 1, run->id);
	sqlite3_bind_int64(st, 2, run->pid);
	bind_text(st, 3, run->start);
	bind_text(st, 4, run->exe);
	bind_text(st, 5, run->build_id);
	bind_text(st, 6, run->cmdline);
	if (step_done(q, st, "cannot write a run", err))
		return -1;
	if (sqlite3_changes(q->db) == 0)
		return 0; /* a run stored before keeps the labels it was first stored with */
	st = q->ins[STO_LABELS];
	for (size_t i = 0; i < run->label_count; i++) {
		bind_u64(st, 1, run->id);
		bind_text(st, 2, run->labels[i].key);
		bind_text(st, 3, run->labels[i].value);
		if (step_done(q, st, "cannot write a label", err))
			return -1;
	}
	return 0;
}

static void sq_run_abort(struct sto_backend *b)
{
	struct sq *q = (struct sq *)b;
	if (q->in_run)
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	q->in_run = false;
}

static int sq_run_commit(struct sto_backend *b, struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	if (q->snapshots == 0) { /* nothing new: not even the run's row */
		sq_run_abort(b);
		return 0;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	sqlite3_stmt *st = q->ins[STO_INGESTS];
	bind_u64(st, 1, q->ingest_id);
	bind_u64(st, 2, q->run_id);
	bind_u64(st, 3, q->snapshots);
	bind_u64(st, 4, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	if (step_done(q, st, "cannot write the completion marker", err) ||
	    exec(q, "COMMIT", "cannot commit the run", err)) {
		sq_run_abort(b);
		return -1;
	}
	q->in_run = false;
	return 0;
}

static int exists(struct sq *q, sqlite3_stmt *st, uint64_t id, bool *has,
		  struct leaksnap_error *err)
{
	bind_u64(st, 1, id);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail_rc(q, rc, "cannot read the store", err);
	*has = rc == SQLITE_ROW;
	return 0;
}

static int sq_has_snapshot(struct sto_backend *b, uint64_t id, bool *has,
			   struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	return exists(q, q->has_snapshot, id, has, err);
}

static int sq_frames_known(struct sto_backend *b, const uint64_t *ids, size_t n, bool *known,
			   struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	for (size_t i = 0; i < n; i++)
		if (exists(q, q->has_frame, ids[i], &known[i], err))
			return -1;
	return 0;
}

static int sq_put_snapshot(struct sto_backend *b, const struct leaksnap_store_snapshot *s,
			   struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	sqlite3_stmt *st = q->ins[STO_SNAPSHOTS];
	bind_u64(st, 1, s->id);
	bind_u64(st, 2, s->run_id);
	bind_u64(st, 3, q->ingest_id);
	bind_text(st, 4, s->hash);
	bind_text(st, 5, s->source);
	bind_u64(st, 6, s->time_ns);
	bind_u64(st, 7, s->seq);
	bind_u64(st, 8, s->total_bytes);
	bind_u64(st, 9, s->allocations);
	bind_u64(st, 10, s->record_count);
	sqlite3_bind_int(st, 11, s->has_reachability);
	bind_u64(st, 12, s->unreachable_bytes);
	bind_u64(st, 13, s->unreachable_count);
	bind_u64(st, 14, s->sample_interval);
	bind_u64(st, 15, s->estimated_bytes);
	bind_u64(st, 16, s->estimated_unreachable_bytes);
	if (step_done(q, st, "cannot write a snapshot", err))
		return -1;
	q->snapshots++;
	return 0;
}

static int sq_put_stacks(struct sto_backend *b, const struct leaksnap_store_stack *v, size_t n,
			 struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	sqlite3_stmt *st = q->ins[STO_STACKS];
	for (size_t i = 0; i < n; i++) {
		size_t bytes = (size_t)v[i].frame_count * 8;
		if (kit_grow((void **)&q->blob, &q->blob_cap, bytes ? bytes : 1, 1))
			return kit_error(err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
		for (uint32_t f = 0; f < v[i].frame_count; f++)
			kit_store_le(q->blob + 8 * f, 8, v[i].frames[f]);
		bind_u64(st, 1, v[i].id);
		sqlite3_bind_int64(st, 2, v[i].frame_count);
		sqlite3_bind_blob(st, 3, q->blob, (int)bytes, SQLITE_STATIC);
		if (step_done(q, st, "cannot write a stack", err))
			return -1;
	}
	return 0;
}

static int sq_put_frames(struct sto_backend *b, const struct leaksnap_store_frame *v, size_t n,
			 struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	sqlite3_stmt *st = q->ins[STO_FRAMES], *sy = q->ins[STO_SYMBOLS];
	for (size_t i = 0; i < n; i++) {
		bind_u64(st, 1, v[i].id);
		bind_text(st, 2, v[i].module);
		bind_text(st, 3, v[i].build_id);
		bind_u64(st, 4, v[i].rel_pc);
		if (step_done(q, st, "cannot write a frame", err))
			return -1;
		if (sqlite3_changes(q->db) == 0)
			continue; /* stored before, symbols and all */
		for (size_t k = 0; k < v[i].symbol_count; k++) {
			const struct leaksnap_store_symbol *y = &v[i].symbols[k];
			bind_u64(sy, 1, v[i].id);
			sqlite3_bind_int64(sy, 2, (sqlite3_int64)k);
			bind_text(sy, 3, y->function);
			bind_text(sy, 4, y->file);
			sqlite3_bind_int64(sy, 5, y->line);
			sqlite3_bind_int64(sy, 6, y->column);
			sqlite3_bind_int(sy, 7, y->inlined);
			if (step_done(q, sy, "cannot write a symbol", err))
				return -1;
		}
	}
	return 0;
}

static int sq_put_records(struct sto_backend *b, const struct leaksnap_store_record *v, size_t n,
			  struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	sqlite3_stmt *st = q->ins[STO_RECORDS];
	for (size_t i = 0; i < n; i++) {
		bind_u64(st, 1, v[i].snapshot_id);
		bind_u64(st, 2, v[i].index);
		bind_u64(st, 3, v[i].stack_id);
		bind_u64(st, 4, v[i].size);
		bind_u64(st, 5, v[i].count);
		bind_u64(st, 6, v[i].unreachable);
		sqlite3_bind_int(st, 7, v[i].zygote);
		if (step_done(q, st, "cannot write a record", err))
			return -1;
	}
	return 0;
}

/* The run's rows of another pair go: one transaction, so nobody sees the
 * run without its growth. */
static int sq_put_growth(struct sto_backend *b, const struct leaksnap_store_growth *v, size_t n,
			 struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	if (n == 0)
		return 0;
	sqlite3_stmt *del = NULL;
	int rc = sqlite3_prepare_v2(q->db,
				    "DELETE FROM growth WHERE run_id = ?1 AND "
				    "(first_snapshot != ?2 OR last_snapshot != ?3)",
				    -1, &del, NULL);
	if (rc != SQLITE_OK)
		return fail_rc(q, rc, "cannot write the growth of a run", err);
	bind_u64(del, 1, v[0].run_id);
	bind_u64(del, 2, v[0].first_snapshot);
	bind_u64(del, 3, v[0].last_snapshot);
	rc = step_done(q, del, "cannot write the growth of a run", err);
	sqlite3_finalize(del);
	if (rc)
		return -1;
	sqlite3_stmt *st = q->ins[STO_GROWTH];
	for (size_t i = 0; i < n; i++) {
		bind_u64(st, 1, v[i].run_id);
		bind_u64(st, 2, v[i].first_snapshot);
		bind_u64(st, 3, v[i].last_snapshot);
		bind_u64(st, 4, v[i].stack_id);
		sqlite3_bind_int64(st, 5, v[i].bytes);
		sqlite3_bind_int64(st, 6, v[i].count);
		if (step_done(q, st, "cannot write the growth of a run", err))
			return -1;
	}
	return 0;
}

/* Reading ----------------------------------------------------------------------- */

/* Rows of @sql (its ?1 bound to @id when @bind) one by one to @row; stops
 * at the first non-zero return of @row, returned. */
static int each_row(struct sq *q, const char *sql, bool bind, uint64_t id,
		    int (*row)(struct sq *q, sqlite3_stmt *st, void *ctx), void *ctx,
		    struct leaksnap_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail_rc(q, rc, "cannot read the store", err);
	if (bind)
		bind_u64(st, 1, id);
	int ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = row(q, st, ctx)) != 0)
			break;
	if (ret == 0 && rc != SQLITE_DONE)
		ret = fail_rc(q, rc, "cannot read the store", err);
	sqlite3_finalize(st);
	return ret;
}

/* Rows of the prepared statement @st (its ?1 bound to @id), as each_row;
 * @st reset after. */
static int each_prepared(struct sq *q, sqlite3_stmt *st, uint64_t id,
			 int (*row)(struct sq *q, sqlite3_stmt *st, void *ctx), void *ctx,
			 struct leaksnap_error *err)
{
	bind_u64(st, 1, id);
	int rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((ret = row(q, st, ctx)) != 0)
			break;
	if (ret == 0 && rc != SQLITE_DONE)
		ret = fail_rc(q, rc, "cannot read the store", err);
	sqlite3_reset(st);
	return ret;
}

struct visit {
	void *fn;
	void *arg;
	struct leaksnap_error *err;
};

#define COMPLETE "ingest_id IN (SELECT ingest_id FROM ingests)"

struct labels {
	struct leaksnap_store_label *v;
	size_t n, cap;
};

static int label_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	struct labels *l = ctx;
	if (kit_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -1;
	char *k = strdup(col_text(st, 0)), *v = strdup(col_text(st, 1));
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	l->v[l->n++] = (struct leaksnap_store_label){k, v};
	return 0;
}

static int run_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	struct visit *vi = ctx;
	struct leaksnap_store_run r = {.id = col_u64(st, 0), .pid = sqlite3_column_int64(st, 1),
				       .start = col_text(st, 2), .exe = col_text(st, 3),
				       .build_id = col_text(st, 4), .cmdline = col_text(st, 5)};
	struct labels l = {NULL, 0, 0};
	int ret = each_prepared(q, q->labels_of, r.id, label_row, &l, vi->err);
	if (ret < 0 && vi->err->code == LEAKSNAP_OK)
		kit_error(vi->err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	if (ret == 0) {
		r.labels = l.v;
		r.label_count = l.n;
		ret = ((leaksnap_store_run_fn)vi->fn)(vi->arg, &r);
	}
	for (size_t i = 0; i < l.n; i++) {
		free((char *)(uintptr_t)l.v[i].key);
		free((char *)(uintptr_t)l.v[i].value);
	}
	free(l.v);
	return ret;
}

static int sq_runs(struct sto_backend *b, leaksnap_store_run_fn fn, void *arg,
		   struct leaksnap_error *err)
{
	struct visit vi = {(void *)fn, arg, err};
	return each_row((struct sq *)b,
			"SELECT r.run_id, r.pid, r.process_start, r.exe, r.build_id, r.cmdline "
			"FROM runs r JOIN (SELECT run_id, min(time_ns) AS t FROM snapshots "
			"WHERE " COMPLETE " GROUP BY run_id) f ON f.run_id = r.run_id "
			"ORDER BY f.t, r.run_id",
			false, 0, run_row, &vi, err);
}

static int snapshot_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	struct visit *vi = ctx;
	struct leaksnap_store_snapshot s = {.id = col_u64(st, 0), .run_id = col_u64(st, 1)};
	snprintf(s.hash, sizeof(s.hash), "%s", col_text(st, 2));
	s.source = col_text(st, 3);
	s.time_ns = col_u64(st, 4);
	s.seq = col_u64(st, 5);
	s.total_bytes = col_u64(st, 6);
	s.allocations = col_u64(st, 7);
	s.record_count = col_u64(st, 8);
	s.has_reachability = sqlite3_column_int(st, 9) != 0;
	s.unreachable_bytes = col_u64(st, 10);
	s.unreachable_count = col_u64(st, 11);
	s.sample_interval = col_u64(st, 12);
	s.estimated_bytes = col_u64(st, 13);
	s.estimated_unreachable_bytes = col_u64(st, 14);
	return ((leaksnap_store_snapshot_fn)vi->fn)(vi->arg, &s);
}

static int sq_snapshots(struct sto_backend *b, uint64_t run_id, bool with_current,
			leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err)
{
	struct sq *q = (struct sq *)b;
	struct visit vi = {(void *)fn, arg, err};
	char sql[512];
	char cur[64] = "";
	if (with_current && q->in_run)
		snprintf(cur, sizeof(cur), " OR ingest_id = %lld", (long long)q->ingest_id);
	snprintf(sql, sizeof(sql),
		 "SELECT snapshot_id, run_id, content_hash, source, time_ns, seq, total_bytes, "
		 "allocations, record_count, has_reachability, unreachable_bytes, "
		 "unreachable_count, %s "
		 "FROM snapshots WHERE %s(" COMPLETE "%s)",
		 sto_snapshot_v3_columns(b->version), run_id ? "run_id = ?1 AND " : "", cur);
	return each_row(q, sql, run_id != 0, run_id, snapshot_row, &vi, err);
}

static int record_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	struct visit *vi = ctx;
	struct leaksnap_store_record r = {col_u64(st, 0), col_u64(st, 1), col_u64(st, 2),
					  col_u64(st, 3), col_u64(st, 4), col_u64(st, 5),
					  sqlite3_column_int(st, 6) != 0};
	return ((leaksnap_store_record_fn)vi->fn)(vi->arg, &r);
}

static int sq_records(struct sto_backend *b, uint64_t snapshot_id, leaksnap_store_record_fn fn,
		      void *arg, struct leaksnap_error *err)
{
	struct visit vi = {(void *)fn, arg, err};
	return each_row((struct sq *)b,
			"SELECT snapshot_id, idx, stack_id, size, count, unreachable, zygote "
			"FROM records WHERE snapshot_id = ?1 ORDER BY idx",
			true, snapshot_id, record_row, &vi, err);
}

static int stack_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	struct visit *vi = ctx;
	int bytes = sqlite3_column_bytes(st, 2);
	const uint8_t *p = sqlite3_column_blob(st, 2);
	uint32_t n = (uint32_t)(bytes / 8);
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	if (!ids)
		return kit_error(vi->err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		ids[i] = kit_load_le(p + 8 * i, 8);
	struct leaksnap_store_stack s = {col_u64(st, 0), ids, n};
	int ret = ((leaksnap_store_stack_fn)vi->fn)(vi->arg, &s);
	free(ids);
	return ret;
}

/* Rows of the statement @sql for each of the @n ids at @ids (bound to ?1),
 * the statement prepared once. */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int each_id(struct sq *q, const char *sql, const uint64_t *ids, size_t n,
		   int (*row)(struct sq *q, sqlite3_stmt *st, void *ctx), void *ctx,
		   struct leaksnap_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail_rc(q, rc, "cannot read the store", err);
	/* in key order (the ids as SQLite's signed integers): each lookup
	 * near the one before, in pages just read */
	int64_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted) {
		sqlite3_finalize(st);
		return kit_error(err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = (int64_t)ids[i];
	if (n > 1)
		qsort(sorted, n, sizeof(*sorted), cmp_i64);
	/* one read transaction for them all (else each statement takes and
	 * drops the file's shared lock and looks at the log again: a fifth
	 * of history's time); within a run's, that one */
	bool own = sqlite3_get_autocommit(q->db) != 0 &&
		   sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	int ret = 0;
	for (size_t i = 0; i < n && ret == 0; i++) {
		sqlite3_bind_int64(st, 1, sorted[i]);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if ((ret = row(q, st, ctx)) != 0)
				break;
		if (ret == 0 && rc != SQLITE_DONE)
			ret = fail_rc(q, rc, "cannot read the store", err);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (own)
		sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL);
	free(sorted);
	return ret;
}

static int sq_stacks(struct sto_backend *b, const uint64_t *ids, size_t n,
		     leaksnap_store_stack_fn fn, void *arg, struct leaksnap_error *err)
{
	struct visit vi = {(void *)fn, arg, err};
	return each_id((struct sq *)b,
		       "SELECT stack_id, frame_count, frame_ids FROM stacks WHERE stack_id = ?1", ids,
		       n, stack_row, &vi, err);
}

struct symbols {
	struct leaksnap_store_symbol *v;
	size_t n, cap;
};

static int symbol_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	struct symbols *y = ctx;
	if (kit_grow((void **)&y->v, &y->cap, y->n + 1, sizeof(*y->v)))
		return -1;
	char *fn = strdup(col_text(st, 0)), *file = strdup(col_text(st, 1));
	if (!fn || !file) {
		free(fn);
		free(file);
		return -1;
	}
	y->v[y->n++] = (struct leaksnap_store_symbol){fn, file, (uint32_t)sqlite3_column_int64(st, 2),
						      (uint32_t)sqlite3_column_int64(st, 3),
						      sqlite3_column_int(st, 4) != 0};
	return 0;
}

static int frame_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	struct visit *vi = ctx;
	struct leaksnap_store_frame f = {col_u64(st, 0), col_text(st, 1), col_text(st, 2),
					 col_u64(st, 3), NULL, 0};
	struct symbols y = {NULL, 0, 0};
	int ret = each_prepared(q, q->symbols_of, f.id, symbol_row, &y, vi->err);
	if (ret < 0 && vi->err->code == LEAKSNAP_OK)
		kit_error(vi->err, LEAKSNAP_ERR_NOMEM, q->path, "out of memory");
	if (ret == 0) {
		f.symbols = y.v;
		f.symbol_count = y.n;
		ret = ((leaksnap_store_frame_fn)vi->fn)(vi->arg, &f);
	}
	for (size_t i = 0; i < y.n; i++) {
		free((char *)(uintptr_t)y.v[i].function);
		free((char *)(uintptr_t)y.v[i].file);
	}
	free(y.v);
	return ret;
}

static int sq_frames(struct sto_backend *b, const uint64_t *ids, size_t n,
		     leaksnap_store_frame_fn fn, void *arg, struct leaksnap_error *err)
{
	struct visit vi = {(void *)fn, arg, err};
	return each_id((struct sq *)b,
		       "SELECT frame_id, module, build_id, rel_pc FROM frames WHERE frame_id = ?1",
		       ids, n, frame_row, &vi, err);
}

static int growth_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	struct visit *vi = ctx;
	struct leaksnap_store_growth g = {col_u64(st, 0), col_u64(st, 1), col_u64(st, 2),
					  col_u64(st, 3), sqlite3_column_int64(st, 4),
					  sqlite3_column_int64(st, 5)};
	return ((leaksnap_store_growth_fn)vi->fn)(vi->arg, &g);
}

static int sq_growth(struct sto_backend *b, leaksnap_store_growth_fn fn, void *arg,
		     struct leaksnap_error *err)
{
	struct visit vi = {(void *)fn, arg, err};
	return each_row((struct sq *)b,
			"SELECT run_id, first_snapshot, last_snapshot, stack_id, bytes, count "
			"FROM growth",
			false, 0, growth_row, &vi, err);
}

static int count_row(struct sq *q, sqlite3_stmt *st, void *ctx)
{
	(void)q;
	*(uint64_t *)ctx = col_u64(st, 0);
	return 0;
}

static int sq_row_count(struct sto_backend *b, const struct sto_table *t, uint64_t *n,
			struct leaksnap_error *err)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", t->name); /* the schema's name */
	*n = 0;
	return each_row((struct sq *)b, sql, false, 0, count_row, n, err);
}

static const struct sto_ops sq_ops = {
	sq_close, sq_run_begin, sq_run_commit, sq_run_abort, sq_has_snapshot, sq_frames_known,
	sq_put_snapshot, sq_put_stacks, sq_put_frames, sq_put_records, sq_runs, sq_snapshots,
	sq_records, sq_stacks, sq_frames, sq_put_growth, sq_growth, sq_row_count,
};
