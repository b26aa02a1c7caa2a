/* Unit tests for store/ over SQLite, below the command: the schema made
 * in a new file (its tables as the description says, version 1); a store
 * of a newer version, a file that is not a store, another database, a
 * directory refused with their errors; the same dump twice adds nothing;
 * a run abandoned leaves nothing; frames symbolized once, the second
 * snapshot of a run asking only for its new frames; hostile labels, module
 * paths and symbol names (quotes, newlines, SQL, bytes that are not
 * UTF-8) stored and read back byte for byte; the DDL generated for both
 * engines is the one docs/store.md shows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/leaksnap-test-store.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char *path_in(const char *name)
{
	static char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* Raw SQL on the file, as another program would. */
static void sql(const char *file, const char *text)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
	char *msg = NULL;
	int rc = sqlite3_exec(db, text, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fail_msg("%s: %s", text, msg ? msg : "?");
	sqlite3_close(db);
}

static int64_t sql_int(const char *file, const char *text)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, text, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static struct leaksnap_store *open_ok(const char *file)
{
	struct leaksnap_error err;
	struct leaksnap_store *s = leaksnap_store_open(file, NULL, &err);
	if (!s)
		fail_msg("open %s: %s", file, err.text);
	return s;
}

static uint64_t rows(struct leaksnap_store *s, const char *table)
{
	struct leaksnap_error err;
	uint64_t n = 99;
	assert_int_equal(leaksnap_store_row_count(s, table, &n, &err), 0);
	return n;
}

/* Two records, their stacks sharing a frame; the maps name @module (a
 * second library, libbar, holds the other frames). */
static struct leaksnap_snapshot *snapshot(const char *module, unsigned variant)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "Android Native Heap Dump v1.2\n\nTotal memory: %u\nAllocation records: 2\n"
		 "Backtrace size: 4\n\n"
		 "z 0  sz     4096  num    %u  bt 7f0000001234 7f0000002345 7f0000010010\n"
		 "z 1  sz      100  num    2  bt 7f0000001%03x\n"
		 "MAPS\n"
		 "7f0000000000-7f0000001000 r--p 00000000 fd:01 1234 %s\n"
		 "7f0000001000-7f0000003000 r-xp 00001000 fd:01 1234 %s\n"
		 "7f0000010000-7f0000011000 r-xp 00000000 fd:01 99 /system/lib64/libbar.so\n"
		 "END\n",
		 4096 * (3 + variant) + 200, 3 + variant, 0x300 + variant, module, module);
	struct leaksnap_error err;
	struct leaksnap_snapshot *s =
		leaksnap_snapshot_open_memory(text, strlen(text), "mem.txt", NULL, &err);
	if (!s)
		fail_msg("snapshot: %s", err.text);
	return s;
}

/* A resolver standing in for resolve/: names each frame after its
 * rel_pc, with a hostile name when asked, counting its calls. */
struct fake {
	unsigned calls;
	const char *function; /* NULL: "fn_REL" */
	struct leaksnap_sym_frame frames[2];
	char name[64];
};

static int fake_resolve(void *arg, const struct leaksnap_maps_location *loc,
			struct leaksnap_resolved *out)
{
	struct fake *f = arg;
	f->calls++;
	snprintf(f->name, sizeof(f->name), "fn_%" PRIx64, loc->rel_pc);
	memset(f->frames, 0, sizeof(f->frames));
	f->frames[0].function = f->function ? f->function : f->name;
	f->frames[0].file = "src/a.c";
	f->frames[0].line = 12;
	f->frames[0].column = 3;
	f->frames[0].inlined = true;
	f->frames[1].function = "outer";
	f->frames[1].file = f->function ? f->function : "src/b.c";
	f->frames[1].line = 40;
	*out = (struct leaksnap_resolved){NULL, f->frames, 2};
	return 0;
}

/* Store @snap in a run of its own with @labels; returns what was added. */
static struct leaksnap_store_added store_one(struct leaksnap_store *s,
					     const struct leaksnap_snapshot *snap,
					     const struct leaksnap_store_label *labels, size_t n,
					     struct fake *fake, bool commit)
{
	struct leaksnap_error err;
	size_t len;
	const char *text = leaksnap_snapshot_maps(snap, &len, NULL, NULL);
	struct leaksnap_maps *maps = leaksnap_maps_parse(text, len, "mem.txt", 1, 0, &err);
	if (!maps)
		fail_msg("maps: %s", err.text);
	struct leaksnap_store_run run;
	leaksnap_store_run_of(snap, maps, labels, n, &run);
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	LEAKSNAP_OPTS(leaksnap_store_add_opts, o, .resolve = fake_resolve, .resolve_arg = fake);
	struct leaksnap_store_added added;
	if (leaksnap_store_add_snapshot(s, snap, maps, "dumps/a.txt", &o, &added, &err) != 0)
		fail_msg("add: %s", err.text);
	if (commit)
		assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	else
		leaksnap_store_run_abort(s);
	leaksnap_maps_free(maps);
	return added;
}

static void test_schema_created(void **state)
{
	(void)state;
	const char *file = path_in("new.db");
	struct leaksnap_store *s = open_ok(file);
	assert_int_equal(leaksnap_store_schema_version(s), LEAKSNAP_STORE_SCHEMA_VERSION);
	assert_int_equal(leaksnap_store_engine(s), LEAKSNAP_STORE_SQLITE);
	static const char *const tables[] = {"store_info", "runs", "run_labels", "snapshots",
					     "stacks", "frames", "symbols", "records", "growth", "ingests"};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		assert_int_equal(rows(s, tables[i]), strcmp(tables[i], "store_info") == 0);
	struct leaksnap_error err;
	uint64_t n;
	assert_int_equal(leaksnap_store_row_count(s, "x; DROP TABLE runs", &n, &err), -1);
	assert_string_equal(err.text, "no table 'x; DROP TABLE runs' in the schema");
	leaksnap_store_close(s);
	assert_int_equal(sql_int(file, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 10);
	assert_int_equal(sql_int(file, "PRAGMA user_version"), 3);
	assert_int_equal(sql_int(file, "PRAGMA page_size"), 65536);
	assert_int_equal(sql_int(file, "SELECT value FROM store_info WHERE name = 'schema_version'"), 3);
	/* a WAL store, opened again as it is */
	assert_int_equal(sql_int(file, "PRAGMA journal_mode = WAL") >= 0, 1);
	s = open_ok(file);
	assert_int_equal(rows(s, "store_info"), 1);
	leaksnap_store_close(s);
}

static void expect_refused(const char *file, int code, const char *text)
{
	struct leaksnap_error err;
	assert_null(leaksnap_store_open(file, NULL, &err));
	assert_int_equal(err.code, code);
	assert_string_equal(err.source, file);
	assert_string_equal(err.text, text);
}

static void test_refused(void **state)
{
	(void)state;
	const char *file = path_in("newer.db");
	leaksnap_store_close(open_ok(file));
	sql(file, "UPDATE store_info SET value = '4' WHERE name = 'schema_version'");
	expect_refused(file, LEAKSNAP_ERR_VERSION,
		       "schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it");
	char text[128];
	snprintf(text, sizeof(text), "%s", path_in("text.db"));
	FILE *f = fopen(text, "w");
	assert_non_null(f);
	fputs("Android Native Heap Dump v1.2\n\nthis is no database at all, but it is long\n", f);
	fclose(f);
	expect_refused(text, LEAKSNAP_ERR_FORMAT, "not a leaksnap store (not a SQLite database)");
	const char *other = path_in("other.db");
	sql(other, "CREATE TABLE t (x INTEGER)");
	expect_refused(other, LEAKSNAP_ERR_FORMAT,
		       "not a leaksnap store (a SQLite database without its tables)");
	expect_refused(dir, LEAKSNAP_ERR_IO, "is a directory, not a store");
	expect_refused("/proc/leaksnap-no-store.db", LEAKSNAP_ERR_IO,
		       "cannot create the store: No such file or directory");
	char missing[128];
	snprintf(missing, sizeof(missing), "%s/no/such/dir.db", dir);
	expect_refused(missing, LEAKSNAP_ERR_IO, "cannot create the store: No such file or directory");
	struct stat sb;
	if (stat("/sys/kernel", &sb) == 0) /* (sysfs: no file is made there, even by root) */
		expect_refused("/sys/kernel/leaksnap.db", LEAKSNAP_ERR_IO,
			       "cannot create the store: Permission denied");
	if (getuid() != 0) {
		const char *ro = path_in("ro.db");
		leaksnap_store_close(open_ok(ro));
		assert_int_equal(chmod(ro, 0444), 0);
		expect_refused(ro, LEAKSNAP_ERR_IO, "cannot write the store: Permission denied");
	}
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_store_open_opts, existing, .no_create = true);
	const char *absent = path_in("absent.db");
	assert_null(leaksnap_store_open(absent, &existing, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_string_equal(err.text, "No such file or directory");
	assert_int_equal(access(absent, F_OK), -1);
	/* (the ClickHouse backend's own refusals: test_store_ch.c) */
	assert_null(leaksnap_store_open("clickhouse://127.0.0.1:1/db", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_string_equal(err.text, "cannot reach the server: Connection refused");
	assert_null(leaksnap_store_open("clickhouse://127.0.0.1/", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
}

static void test_same_dump_twice(void **state)
{
	(void)state;
	struct leaksnap_store *s = open_ok(path_in("twice.db"));
	struct leaksnap_snapshot *snap = snapshot("/system/lib64/libfoo.so", 0);
	struct fake fake = {0};
	struct leaksnap_store_added a = store_one(s, snap, NULL, 0, &fake, true);
	assert_false(a.duplicate);
	assert_int_equal(a.records, 2);
	assert_int_equal(a.stacks, 2);
	assert_int_equal(a.new_frames, 4);
	assert_int_equal(fake.calls, 4);
	static const char *const tables[] = {"runs", "snapshots", "stacks", "frames", "symbols",
					     "records", "ingests", "run_labels"};
	static const uint64_t want[] = {1, 1, 2, 4, 8, 2, 1, 0};
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(rows(s, tables[i]), want[i]);
	struct leaksnap_store_added b = store_one(s, snap, NULL, 0, &fake, true);
	assert_true(b.duplicate);
	assert_int_equal(b.snapshot_id, a.snapshot_id);
	assert_int_equal(fake.calls, 4);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(rows(s, tables[i]), want[i]);
	/* another snapshot of the same frames but one: only that one is new */
	struct leaksnap_snapshot *other = snapshot("/system/lib64/libfoo.so", 1);
	struct leaksnap_store_added c = store_one(s, other, NULL, 0, &fake, true);
	assert_false(c.duplicate);
	assert_int_equal(c.new_frames, 1);
	assert_int_equal(fake.calls, 5);
	assert_int_equal(rows(s, "stacks"), 3);
	assert_int_equal(rows(s, "records"), 4);
	leaksnap_snapshot_close(other);
	leaksnap_snapshot_close(snap);
	leaksnap_store_close(s);
}

static void test_abort_leaves_nothing(void **state)
{
	(void)state;
	struct leaksnap_store *s = open_ok(path_in("abort.db"));
	struct leaksnap_snapshot *snap = snapshot("/system/lib64/libfoo.so", 0);
	struct fake fake = {0};
	struct leaksnap_store_label l = {"build", "1"};
	store_one(s, snap, &l, 1, &fake, false);
	static const char *const tables[] = {"runs", "run_labels", "snapshots", "stacks",
					     "frames", "symbols", "records", "ingests"};
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(rows(s, tables[i]), 0);
	/* and closing in the middle of a run is an abort too */
	struct leaksnap_error err;
	struct leaksnap_store_run run;
	leaksnap_store_run_of(snap, NULL, NULL, 0, &run);
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), -1);
	assert_string_equal(err.text, "a run is already begun");
	leaksnap_store_close(s);
	s = open_ok(path_in("abort.db"));
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(rows(s, tables[i]), 0);
	struct leaksnap_store_record r = {0};
	assert_int_equal(leaksnap_store_put_records(s, &r, 1, &err), -1);
	assert_string_equal(err.text, "no run begun");
	leaksnap_snapshot_close(snap);
	leaksnap_store_close(s);
}

/* Reading back ------------------------------------------------------------- */

static const char hostile[] = "it's \"quoted\"\nnext line'); DROP TABLE runs; --\t\xff\xfe\x80 end";
static const char hostile_path[] = "/data/app/x'; DROP TABLE frames;--\"\xff\xfe/lib o.so";

struct seen {
	unsigned runs, frames;
	char labels[8][2][128];
	size_t nlabels;
	char function[128], file[128], module[128];
};

static int on_run(void *arg, const struct leaksnap_store_run *run)
{
	struct seen *x = arg;
	x->runs++;
	x->nlabels = run->label_count;
	for (size_t i = 0; i < run->label_count && i < 8; i++) {
		snprintf(x->labels[i][0], 128, "%s", run->labels[i].key);
		snprintf(x->labels[i][1], 128, "%s", run->labels[i].value);
	}
	return 0;
}

static int on_frame(void *arg, const struct leaksnap_store_frame *f)
{
	struct seen *x = arg;
	x->frames++;
	assert_int_equal(f->symbol_count, 2);
	snprintf(x->function, sizeof(x->function), "%s", f->symbols[0].function);
	snprintf(x->file, sizeof(x->file), "%s", f->symbols[1].file);
	snprintf(x->module, sizeof(x->module), "%s", f->module);
	assert_true(f->symbols[0].inlined);
	assert_false(f->symbols[1].inlined);
	assert_int_equal(f->symbols[0].line, 12);
	assert_int_equal(f->symbols[0].column, 3);
	return 0;
}

struct ids {
	uint64_t snapshot, stack, frame;
	unsigned records;
};

static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct ids *i = arg;
	i->snapshot = s->id;
	assert_string_equal(s->source, "dumps/a.txt");
	assert_int_equal(s->total_bytes, 3 * 4096 + 200);
	assert_int_equal(s->allocations, 5);
	assert_int_equal(s->record_count, 2);
	assert_false(s->has_reachability);
	return 0;
}

static int on_record(void *arg, const struct leaksnap_store_record *r)
{
	struct ids *i = arg;
	if (i->records++ == 0) {
		i->stack = r->stack_id;
		assert_int_equal(r->size, 4096);
		assert_int_equal(r->count, 3);
		assert_false(r->zygote);
	} else {
		assert_int_equal(r->size, 100);
		assert_int_equal(r->count, 2);
		assert_true(r->zygote);
	}
	assert_int_equal(r->index, i->records - 1);
	return 0;
}

static int on_stack(void *arg, const struct leaksnap_store_stack *st)
{
	struct ids *i = arg;
	assert_int_equal(st->frame_count, 3);
	i->frame = st->frames[0];
	return 0;
}

static void test_hostile_strings(void **state)
{
	(void)state;
	struct leaksnap_store *s = open_ok(path_in("hostile.db"));
	struct leaksnap_snapshot *snap = snapshot(hostile_path, 0);
	struct fake fake = {0, hostile, {{0}}, {0}};
	struct leaksnap_store_label labels[] = {
		{"test", hostile}, {"build", "'); DELETE FROM records; --"}, {"device", ""}};
	store_one(s, snap, labels, 3, &fake, true);
	struct leaksnap_error err;
	struct seen x = {0};
	assert_int_equal(leaksnap_store_runs(s, on_run, &x, &err), 0);
	assert_int_equal(x.runs, 1);
	assert_int_equal(x.nlabels, 3);
	assert_string_equal(x.labels[0][0], "build");
	assert_string_equal(x.labels[0][1], "'); DELETE FROM records; --");
	assert_string_equal(x.labels[1][0], "device");
	assert_string_equal(x.labels[1][1], "");
	assert_string_equal(x.labels[2][0], "test");
	assert_memory_equal(x.labels[2][1], hostile, sizeof(hostile));
	/* the first record's innermost frame: in the hostile module */
	struct leaksnap_store_run run;
	leaksnap_store_run_of(snap, NULL, NULL, 0, &run);
	struct ids ids = {0};
	assert_int_equal(leaksnap_store_snapshots(s, run.id, on_snapshot, &ids, &err), 0);
	assert_int_equal(leaksnap_store_records(s, ids.snapshot, on_record, &ids, &err), 0);
	assert_int_equal(ids.records, 2);
	assert_int_equal(leaksnap_store_stacks(s, &ids.stack, 1, on_stack, &ids, &err), 0);
	assert_int_equal(leaksnap_store_frames(s, &ids.frame, 1, on_frame, &x, &err), 0);
	assert_int_equal(x.frames, 1);
	assert_memory_equal(x.module, hostile_path, sizeof(hostile_path));
	assert_memory_equal(x.function, hostile, sizeof(hostile));
	assert_memory_equal(x.file, hostile, sizeof(hostile));
	/* every table is still there, with its rows */
	assert_int_equal(rows(s, "runs"), 1);
	assert_int_equal(rows(s, "records"), 2);
	assert_int_equal(rows(s, "frames"), 4);
	leaksnap_snapshot_close(snap);
	leaksnap_store_close(s);
}

/* History ------------------------------------------------------------------------ */

/* Frame @id named @fn (in module m.so at @id). */
static void put_frame(struct leaksnap_store *s, uint64_t id, const char *fn)
{
	struct leaksnap_error err;
	struct leaksnap_store_symbol y = {fn, "x.c", 1, 1, false};
	struct leaksnap_store_frame f = {id, "/lib/m.so", "", id, &y, 1};
	assert_int_equal(leaksnap_store_put_frames(s, &f, 1, &err), 0);
}

/* A run of two snapshots (times @t, @t + 1): stacks @a (bytes @a0 then
 * @a1), @b (0 then @b1). */
static void put_run(struct leaksnap_store *s, uint64_t run_id, const char *build, const char *test,
		    uint64_t t, uint64_t a, uint64_t a0, uint64_t a1, uint64_t b, uint64_t b1)
{
	struct leaksnap_error err;
	struct leaksnap_store_label labels[] = {{"build", build}, {"test", test}};
	struct leaksnap_store_run run = {.id = run_id, .pid = 1, .start = "", .exe = "/bin/x",
					 .build_id = "", .cmdline = "", .labels = labels,
					 .label_count = 2};
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	for (uint64_t k = 0; k < 2; k++) {
		struct leaksnap_store_snapshot snap = {.id = run_id * 10 + k, .run_id = run_id,
						       .source = "d", .time_ns = t + k,
						       .total_bytes = k ? a1 + b1 : a0};
		assert_int_equal(leaksnap_store_put_snapshot(s, &snap, &err), 0);
		struct leaksnap_store_record r[2] = {{snap.id, 0, a, k ? a1 : a0, 1, 0, false},
						     {snap.id, 1, b, b1, 1, 0, false}};
		assert_int_equal(leaksnap_store_put_records(s, r, k ? 2 : 1, &err), 0);
	}
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
}

static void expect_chain(const struct leaksnap_store_suspect *x, const char *want, int64_t growth,
			 bool is_new)
{
	char got[256] = "";
	for (size_t i = 0; i < x->chain_len; i++) {
		strcat(got, i ? " < " : "");
		strcat(got, x->chain[i]);
	}
	assert_string_equal(got, want);
	assert_int_equal(x->growth, growth);
	assert_int_equal(x->is_new, is_new);
}

static void test_history(void **state)
{
	(void)state;
	struct leaksnap_store *s = open_ok(path_in("history.db"));
	struct leaksnap_error err;
	struct leaksnap_store_run r0 = {.id = 99, .pid = 1, .start = "", .exe = "", .build_id = "",
					.cmdline = ""};
	assert_int_equal(leaksnap_store_run_begin(s, &r0, &err), 0);
	put_frame(s, 1, "malloc");
	put_frame(s, 2, "leak_a");
	put_frame(s, 3, "main");
	put_frame(s, 4, "leak_b");
	put_frame(s, 5, "operator new(unsigned long)");
	put_frame(s, 6, "leak_c");
	static const uint64_t x[] = {1, 2, 3}, y[] = {4, 3}, z[] = {5, 6, 3};
	struct leaksnap_store_stack st[] = {{100, x, 3}, {200, y, 2}, {300, z, 3}};
	assert_int_equal(leaksnap_store_put_stacks(s, st, 3, &err), 0);
	leaksnap_store_run_abort(s); /* (a run with no snapshot: nothing stays) */
	assert_int_equal(rows(s, "frames"), 0);
	assert_int_equal(leaksnap_store_run_begin(s, &r0, &err), 0);
	for (uint64_t i = 1; i <= 6; i++)
		put_frame(s, i, (const char *[]){"", "malloc", "leak_a", "main", "leak_b",
						 "operator new(unsigned long)", "leak_c"}[i]);
	assert_int_equal(leaksnap_store_put_stacks(s, st, 3, &err), 0);
	struct leaksnap_store_snapshot none = {.id = 5, .run_id = 99, .source = "d", .time_ns = 1};
	assert_int_equal(leaksnap_store_put_snapshot(s, &none, &err), 0); /* build "": a row */
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	put_run(s, 1, "1", "t", 10, 100, 100, 300, 200, 50);
	put_run(s, 2, "2", "u", 20, 100, 100, 100, 300, 500);

	struct leaksnap_store_history *h = leaksnap_store_history_new(s, NULL, &err);
	assert_non_null(h);
	assert_int_equal(leaksnap_store_history_count(h), 3);
	const struct leaksnap_store_history_row *r = leaksnap_store_history_row(h, 0);
	assert_string_equal(r->key, "");
	assert_int_equal(r->suspect_count, 0);
	r = leaksnap_store_history_row(h, 1);
	assert_string_equal(r->key, "1");
	assert_int_equal(r->runs, 1);
	assert_int_equal(r->first_time_ns, 10);
	assert_int_equal(r->memory, 350);
	assert_int_equal(r->growth, 250);
	assert_int_equal(r->suspect_count, 2);
	expect_chain(&r->suspects[0], "leak_a < main", 200, true); /* (malloc passed over) */
	expect_chain(&r->suspects[1], "leak_b < main", 50, true);
	r = leaksnap_store_history_row(h, 2);
	assert_string_equal(r->key, "2");
	assert_int_equal(r->growth, 500);
	assert_int_equal(r->suspect_count, 1);
	expect_chain(&r->suspects[0], "leak_c < main", 500, true);
	assert_int_equal(r->gone_count, 2);
	expect_chain(&r->gone[0], "leak_a < main", 200, false);
	expect_chain(&r->gone[1], "leak_b < main", 50, false);
	assert_null(leaksnap_store_history_row(h, 3));
	leaksnap_store_history_free(h);

	/* --where test=t, --last 1, --by test */
	struct leaksnap_store_label w = {"test", "t"};
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o1, .where = &w, .where_count = 1);
	h = leaksnap_store_history_new(s, &o1, &err);
	assert_int_equal(leaksnap_store_history_count(h), 1);
	assert_string_equal(leaksnap_store_history_row(h, 0)->key, "1");
	leaksnap_store_history_free(h);
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o2, .last = 1, .suspects = 1);
	h = leaksnap_store_history_new(s, &o2, &err);
	assert_int_equal(leaksnap_store_history_count(h), 1);
	r = leaksnap_store_history_row(h, 0);
	assert_string_equal(r->key, "2");
	assert_int_equal(r->gone_count, 1); /* the row before's one suspect */
	expect_chain(&r->gone[0], "leak_a < main", 200, false);
	leaksnap_store_history_free(h);
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o3, .by = "test");
	h = leaksnap_store_history_new(s, &o3, &err);
	assert_int_equal(leaksnap_store_history_count(h), 3);
	assert_string_equal(leaksnap_store_history_row(h, 1)->key, "t");
	assert_string_equal(leaksnap_store_history_row(h, 2)->key, "u");
	leaksnap_store_history_free(h);

	/* the series' points, and the suspects' whole stacks */
	put_run(s, 3, "2", "t", 30, 100, 0, 40, 200, 7);
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o4, .series = "test", .stacks = true);
	h = leaksnap_store_history_new(s, &o4, &err);
	assert_non_null(h);
	r = leaksnap_store_history_row(h, 2);
	assert_int_equal(r->runs, 2);
	assert_int_equal(r->last_time_ns, 31);
	assert_int_equal(r->point_count, 2);
	assert_string_equal(r->points[0].value, "t");
	assert_int_equal(r->points[0].runs, 1);
	assert_int_equal(r->points[0].memory, 47);
	assert_int_equal(r->points[0].growth, 47);
	assert_string_equal(r->points[1].value, "u");
	assert_int_equal(r->points[1].memory, 600);
	assert_int_equal(r->suspect_count, 3);
	expect_chain(&r->suspects[0], "leak_c < main", 500, true);
	assert_int_equal(r->suspects[0].stack_id, 300);
	assert_int_equal(r->suspects[0].frame_count, 3);
	assert_int_equal(r->suspects[0].frames[0].id, 5);
	assert_string_equal(r->suspects[0].frames[0].symbols[0].function,
			    "operator new(unsigned long)");
	assert_string_equal(r->suspects[0].frames[2].module, "/lib/m.so");
	expect_chain(&r->suspects[1], "leak_a < main", 40, false);
	expect_chain(&r->suspects[2], "leak_b < main", 7, false);
	assert_int_equal(r->gone_count, 0);
	leaksnap_store_history_free(h);

	/* a snapshot after run 3's last: its growth is from the first to it */
	struct leaksnap_store_label lb[] = {{"build", "2"}, {"test", "t"}};
	struct leaksnap_store_run r3 = {.id = 3, .pid = 1, .start = "", .exe = "/bin/x",
					.build_id = "", .cmdline = "", .labels = lb, .label_count = 2};
	assert_int_equal(leaksnap_store_run_begin(s, &r3, &err), 0);
	struct leaksnap_store_snapshot later = {.id = 77, .run_id = 3, .source = "d", .time_ns = 32,
						.total_bytes = 10};
	assert_int_equal(leaksnap_store_put_snapshot(s, &later, &err), 0);
	struct leaksnap_store_record lr = {77, 0, 100, 10, 1, 0, false};
	assert_int_equal(leaksnap_store_put_records(s, &lr, 1, &err), 0);
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	h = leaksnap_store_history_new(s, &o4, &err);
	r = leaksnap_store_history_row(h, 2);
	assert_int_equal(r->points[0].memory, 10);
	assert_int_equal(r->suspect_count, 2);
	expect_chain(&r->suspects[0], "leak_c < main", 500, true);
	expect_chain(&r->suspects[1], "leak_a < main", 10, false);
	leaksnap_store_history_free(h);
	uint64_t n;
	assert_int_equal(leaksnap_store_row_count(s, "growth", &n, &err), 0);
	assert_int_equal(n, 4); /* run 1: a, b; run 2: b; run 3: a (its old pair's two gone) */
	leaksnap_store_close(s);
}


/* New and gone by whether a chain grew at all, not by the top suspects:
 * build 1 grows A 1000, B 900, C 800, D 700; build 2 A 1000, B 900, C 800,
 * D 850.  D (4th, then 3rd) is not new; C (3rd, then 4th) is not gone. */
static void put_growing(struct leaksnap_store *s, uint64_t run_id, const char *build,
			uint64_t t, const uint64_t *grow)
{
	struct leaksnap_error err;
	struct leaksnap_store_label labels[] = {{"build", build}};
	struct leaksnap_store_run run = {.id = run_id, .pid = 1, .start = "", .exe = "/bin/y",
					 .build_id = "", .cmdline = "", .labels = labels,
					 .label_count = 1};
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	for (uint64_t k = 0; k < 2; k++) {
		struct leaksnap_store_snapshot snap = {.id = run_id * 10 + k, .run_id = run_id,
						       .source = "d", .time_ns = t + k};
		assert_int_equal(leaksnap_store_put_snapshot(s, &snap, &err), 0);
		for (uint64_t i = 0; i < 4; i++) {
			struct leaksnap_store_record r = {snap.id, i, 1000 + i, k ? grow[i] : 0, 1, 0,
							  false};
			assert_int_equal(leaksnap_store_put_records(s, &r, 1, &err), 0);
		}
	}
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
}

static void test_new_and_gone(void **state)
{
	(void)state;
	struct leaksnap_store *s = open_ok(path_in("newgone.db"));
	struct leaksnap_error err;
	struct leaksnap_store_run r0 = {.id = 7, .pid = 1, .start = "", .exe = "", .build_id = "",
					.cmdline = ""};
	assert_int_equal(leaksnap_store_run_begin(s, &r0, &err), 0);
	static const char *const fn[] = {"fa", "fb", "fc", "fd"};
	static uint64_t f[4][2];
	struct leaksnap_store_stack st[4];
	for (uint64_t i = 0; i < 4; i++) {
		put_frame(s, 50 + i, fn[i]);
		put_frame(s, 60, "libc_thing"); /* (in /lib/m.so: no wrapper) */
		f[i][0] = 50 + i;
		f[i][1] = 60;
		st[i] = (struct leaksnap_store_stack){1000 + i, f[i], 2};
	}
	assert_int_equal(leaksnap_store_put_stacks(s, st, 4, &err), 0);
	struct leaksnap_store_snapshot none = {.id = 3, .run_id = 7, .source = "d", .time_ns = 1};
	assert_int_equal(leaksnap_store_put_snapshot(s, &none, &err), 0);
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	put_growing(s, 1, "1", 10, (const uint64_t[]){1000, 900, 800, 700});
	put_growing(s, 2, "2", 20, (const uint64_t[]){1000, 900, 800, 850});
	struct leaksnap_store_label w = {"build", "1"};
	struct leaksnap_store_history *h = leaksnap_store_history_new(s, NULL, &err);
	assert_non_null(h);
	const struct leaksnap_store_history_row *r = leaksnap_store_history_row(h, 1);
	assert_string_equal(r->key, "1");
	expect_chain(&r->suspects[0], "fa < libc_thing", 1000, true);
	expect_chain(&r->suspects[2], "fc < libc_thing", 800, true);
	r = leaksnap_store_history_row(h, 2);
	expect_chain(&r->suspects[0], "fa < libc_thing", 1000, false);
	expect_chain(&r->suspects[1], "fb < libc_thing", 900, false);
	expect_chain(&r->suspects[2], "fd < libc_thing", 850, false); /* grew before: not new */
	assert_int_equal(r->gone_count, 0);                           /* C still grows */
	leaksnap_store_history_free(h);
	/* the first row of all: nothing is new */
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o, .where = &w, .where_count = 1);
	h = leaksnap_store_history_new(s, &o, &err);
	assert_int_equal(leaksnap_store_history_count(h), 1);
	r = leaksnap_store_history_row(h, 0);
	expect_chain(&r->suspects[0], "fa < libc_thing", 1000, false);
	assert_null(leaksnap_store_history_before(h));
	leaksnap_store_history_free(h);
	/* --last 1: the row before is still there to compare with */
	LEAKSNAP_OPTS(leaksnap_store_history_opts, o2, .last = 1);
	h = leaksnap_store_history_new(s, &o2, &err);
	assert_string_equal(leaksnap_store_history_before(h)->key, "1");
	leaksnap_store_history_free(h);
	/* a run stored again with another label keeps its first labels */
	struct leaksnap_store_label more[] = {{"build", "1"}, {"device", "pixel"}};
	struct leaksnap_store_run again = {.id = 1, .pid = 1, .start = "", .exe = "/bin/y",
					   .build_id = "", .cmdline = "", .labels = more,
					   .label_count = 2};
	assert_int_equal(leaksnap_store_run_begin(s, &again, &err), 0);
	struct leaksnap_store_snapshot later = {.id = 99, .run_id = 1, .source = "d", .time_ns = 12};
	assert_int_equal(leaksnap_store_put_snapshot(s, &later, &err), 0);
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	uint64_t n;
	assert_int_equal(leaksnap_store_row_count(s, "run_labels", &n, &err), 0);
	assert_int_equal(n, 2); /* build=1, build=2: no device */
	leaksnap_store_close(s);
}

static size_t slurp(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "rb");
	assert_non_null(f);
	size_t n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

/* A reader may read a store it cannot write; a file that is not a store
 * is left as it was. */
static void test_readers(void **state)
{
	(void)state;
	char file[128], other[128], empty[128];
	snprintf(file, sizeof(file), "%s", path_in("ro.db"));
	snprintf(other, sizeof(other), "%s", path_in("someones.db"));
	snprintf(empty, sizeof(empty), "%s", path_in("empty.db"));
	struct leaksnap_store *s = open_ok(file);
	put_run(s, 1, "1", "t", 10, 100, 100, 300, 200, 50);
	leaksnap_store_close(s);
	assert_int_equal(chmod(file, 0444), 0);
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_store_open_opts, ro, .no_create = true);
	if (geteuid() != 0) { /* (root writes anyway) */
		s = leaksnap_store_open(file, &ro, &err);
		assert_non_null(s);
		struct leaksnap_store_history *h = leaksnap_store_history_new(s, NULL, &err);
		assert_non_null(h);
		assert_int_equal(leaksnap_store_history_count(h), 1);
		leaksnap_store_history_free(h);
		leaksnap_store_close(s);
	}
	assert_int_equal(chmod(file, 0644), 0);
	/* someone's database, and an empty file: refused, unchanged */
	sql(other, "CREATE TABLE t (x); INSERT INTO t VALUES (1)");
	static char before[1 << 16], now[1 << 16];
	size_t nb = slurp(other, before, sizeof(before));
	assert_null(leaksnap_store_open(other, &ro, &err));
	assert_string_equal(err.text, "not a leaksnap store (a SQLite database without its tables)");
	assert_null(leaksnap_store_open(other, NULL, &err));
	assert_string_equal(err.text, "not a leaksnap store (a SQLite database without its tables)");
	assert_int_equal(slurp(other, now, sizeof(now)), nb); /* (not even made a WAL file) */
	assert_memory_equal(before, now, nb);
	struct stat after;
	FILE *f = fopen(empty, "w");
	assert_non_null(f);
	fclose(f);
	assert_null(leaksnap_store_open(empty, &ro, &err));
	assert_string_equal(err.text, "not a leaksnap store (empty)");
	assert_int_equal(stat(empty, &after), 0);
	assert_int_equal(after.st_size, 0);
}

/* Store @file made one of schema version 2: without the sampling columns
 * version 3 added. */
static void to_v2(const char *file)
{
	sql(file, "ALTER TABLE snapshots DROP COLUMN sample_interval; "
		  "ALTER TABLE snapshots DROP COLUMN estimated_bytes; "
		  "ALTER TABLE snapshots DROP COLUMN estimated_unreachable_bytes; "
		  "UPDATE store_info SET value = '2' WHERE name = 'schema_version'; "
		  "PRAGMA user_version = 2");
}

/* A store of schema version 1 (no growth table) is upgraded when opened:
 * the growth computed from the records, the same rows as a new store's. */
static void test_upgrade_from_1(void **state)
{
	(void)state;
	const char *file = path_in("v1.db");
	struct leaksnap_store *s = open_ok(file);
	put_run(s, 1, "1", "t", 10, 100, 100, 300, 200, 50);
	put_run(s, 2, "2", "u", 20, 100, 100, 100, 300, 500);
	leaksnap_store_close(s);
	const char *q = "SELECT group_concat(run_id || ':' || first_snapshot || ':' || "
			"last_snapshot || ':' || stack_id || ':' || bytes || ':' || count, ' ') "
			"FROM (SELECT * FROM growth ORDER BY run_id, stack_id)";
	char before[256];
	{
		sqlite3 *db;
		assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		snprintf(before, sizeof(before), "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	assert_string_equal(before, "1:10:11:100:200:0 1:10:11:200:50:1 2:20:21:300:500:1");
	to_v2(file);
	sql(file, "DROP TABLE growth; UPDATE store_info SET value = '1' WHERE name = "
		  "'schema_version'; PRAGMA user_version = 1");
	assert_int_equal(sql_int(file, "SELECT count(*) FROM sqlite_master WHERE name = 'growth'"), 0);
	s = open_ok(file);
	assert_int_equal(leaksnap_store_schema_version(s), 3);
	leaksnap_store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), before);
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(sql_int(file, "PRAGMA user_version"), 3);
}

/* The growth rows and snapshots of a store, as text. */
static char *store_text(const char *file)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(file, &db), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(
		sqlite3_prepare_v2(
			db,
			"SELECT (SELECT group_concat(x, ' ') FROM (SELECT run_id || ':' || "
			"first_snapshot || ':' || last_snapshot || ':' || stack_id || ':' || bytes || "
			"':' || count AS x FROM growth ORDER BY run_id, stack_id)) || ' | ' || "
			"(SELECT group_concat(x, ' ') FROM (SELECT snapshot_id || ':' || total_bytes || "
			"':' || unreachable_bytes AS x FROM snapshots ORDER BY snapshot_id))",
			-1, &st, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	char *t = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return t;
}

/* A store of schema version 2 (no sampling columns) is upgraded when
 * opened, in one transaction: every snapshot's interval 0 and its
 * estimates its totals; the growth rows as they were; history the same.
 * A step that fails leaves the store at version 2 as it was. */
static void test_upgrade_from_2(void **state)
{
	(void)state;
	const char *file = path_in("v2.db");
	struct leaksnap_store *s = open_ok(file);
	put_run(s, 1, "1", "t", 10, 100, 100, 300, 200, 50);
	put_run(s, 2, "2", "u", 20, 100, 100, 100, 300, 500);
	leaksnap_store_close(s);
	char *before = store_text(file);
	assert_string_equal(before, "1:10:11:100:200:0 1:10:11:200:50:1 2:20:21:300:500:1 | "
				    "10:100:0 11:350:0 20:100:0 21:600:0");
	to_v2(file);
	assert_int_equal(sql_int(file, "SELECT count(*) FROM pragma_table_info('snapshots') "
				       "WHERE name = 'sample_interval'"), 0);
	/* a failed step: nothing of it stays */
	sql(file, "ALTER TABLE snapshots ADD COLUMN estimated_unreachable_bytes INTEGER");
	struct leaksnap_error err;
	assert_null(leaksnap_store_open(file, NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_non_null(strstr(err.text, "cannot upgrade the store"));
	assert_int_equal(sql_int(file, "PRAGMA user_version"), 2);
	assert_int_equal(sql_int(file, "SELECT value FROM store_info WHERE name = 'schema_version'"), 2);
	assert_int_equal(sql_int(file, "SELECT count(*) FROM pragma_table_info('snapshots') "
				       "WHERE name IN ('sample_interval', 'estimated_bytes')"), 0);
	sql(file, "ALTER TABLE snapshots DROP COLUMN estimated_unreachable_bytes");
	s = open_ok(file);
	assert_int_equal(leaksnap_store_schema_version(s), 3);
	struct leaksnap_store_history *h = leaksnap_store_history_new(s, NULL, &err);
	assert_non_null(h);
	const struct leaksnap_store_history_row *r = leaksnap_store_history_row(h, 0);
	assert_int_equal(r->memory, 350);
	assert_int_equal(r->growth, 250);
	assert_int_equal(r->interval_count, 1);
	assert_int_equal(r->intervals[0], 0);
	leaksnap_store_history_free(h);
	leaksnap_store_close(s);
	assert_int_equal(sql_int(file, "PRAGMA user_version"), 3);
	assert_int_equal(sql_int(file, "SELECT value FROM store_info WHERE name = 'schema_version'"), 3);
	assert_int_equal(sql_int(file, "SELECT count(*) FROM snapshots WHERE sample_interval != 0 "
				       "OR estimated_bytes != total_bytes OR "
				       "estimated_unreachable_bytes != unreachable_bytes"), 0);
	assert_int_equal(sql_int(file, "SELECT count(*) FROM snapshots"), 4);
	char *after = store_text(file);
	assert_string_equal(after, before);
	free(before);
	free(after);
}

/* A sampled run (interval 4096): its growth rows estimated from its
 * records (a 64-byte block sampled stands for 1 / (1 - e^(-64/4096)) =
 * 64.5 blocks; a block of the interval or more for itself), history's
 * figures the snapshots' estimates; a build of runs at two intervals says
 * both. */
static void put_sampled(struct leaksnap_store *s, uint64_t run_id, const char *build, uint64_t t,
			const uint64_t interval[2], uint64_t c0, uint64_t c1)
{
	struct leaksnap_error err;
	struct leaksnap_store_label labels[] = {{"build", build}};
	struct leaksnap_store_run run = {.id = run_id, .pid = 1, .start = "", .exe = "/bin/s",
					 .build_id = "", .cmdline = "", .labels = labels,
					 .label_count = 1};
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	for (uint64_t k = 0; k < 2; k++) {
		uint64_t n = k ? c1 : c0;
		struct leaksnap_store_snapshot snap = {
			.id = run_id * 10 + k, .run_id = run_id, .source = "d", .time_ns = t + k,
			.total_bytes = 64 * n + 8192, .sample_interval = interval[k],
			.estimated_bytes = 1000 * run_id + k, .estimated_unreachable_bytes = 7 + k};
		assert_int_equal(leaksnap_store_put_snapshot(s, &snap, &err), 0);
		struct leaksnap_store_record r[2] = {{snap.id, 0, 500, 64, n, 0, false},
						     {snap.id, 1, 600, 8192, 1, 0, false}};
		assert_int_equal(leaksnap_store_put_records(s, r, 2, &err), 0);
	}
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
}

static int64_t growth_of(const char *file, uint64_t run_id, uint64_t stack, const char *col)
{
	char q[256];
	snprintf(q, sizeof(q), "SELECT coalesce((SELECT %s FROM growth WHERE run_id = %llu AND "
			       "stack_id = %llu), -1)",
		 col, (unsigned long long)run_id, (unsigned long long)stack);
	return sql_int(file, q);
}

static void test_sampled(void **state)
{
	(void)state;
	const char *file = path_in("sampled.db");
	struct leaksnap_store *s = open_ok(file);
	put_sampled(s, 1, "1", 10, (const uint64_t[]){4096, 4096}, 2, 10);
	put_sampled(s, 2, "2", 20, (const uint64_t[]){4096, 4096}, 2, 3);
	put_sampled(s, 3, "2", 30, (const uint64_t[]){65536, 65536}, 2, 3);
	put_sampled(s, 4, "3", 40, (const uint64_t[]){0, 4096}, 2, 2);
	/* 8 blocks of 64 sampled more: 8 x 64.50 blocks, 33024.67 bytes */
	assert_int_equal(growth_of(file, 1, 500, "bytes"), 33025);
	assert_int_equal(growth_of(file, 1, 500, "count"), 516);
	assert_int_equal(growth_of(file, 1, 600, "bytes"), -1); /* (the same: no row) */
	assert_int_equal(growth_of(file, 2, 500, "bytes"), 4128); /* 64.5 x 64 */
	assert_int_equal(growth_of(file, 3, 500, "bytes"), 65568); /* 1024.5 x 64 */
	/* unsampled first, sampled last: 2 blocks, then 2 x 64.50 */
	assert_int_equal(growth_of(file, 4, 500, "bytes"), 8256 - 128);
	assert_int_equal(sql_int(file, "SELECT sample_interval FROM snapshots WHERE snapshot_id = 41"),
			 4096);
	struct leaksnap_error err;
	struct leaksnap_store_history *h = leaksnap_store_history_new(s, NULL, &err);
	assert_non_null(h);
	assert_int_equal(leaksnap_store_history_count(h), 3);
	const struct leaksnap_store_history_row *r = leaksnap_store_history_row(h, 0);
	assert_int_equal(r->memory, 1001); /* the estimates stored, not the totals */
	assert_int_equal(r->growth, 1);
	assert_int_equal(r->definite, 8);
	assert_int_equal(r->interval_count, 1);
	assert_int_equal(r->intervals[0], 4096);
	assert_int_equal(r->suspects[0].growth, 33025);
	r = leaksnap_store_history_row(h, 1);
	assert_int_equal(r->memory, 2001 + 3001);
	assert_int_equal(r->interval_count, 2);
	assert_int_equal(r->intervals[0], 4096);
	assert_int_equal(r->intervals[1], 65536);
	assert_int_equal(r->suspects[0].growth, 4128 + 65568);
	r = leaksnap_store_history_row(h, 2);
	assert_int_equal(r->interval_count, 2);
	assert_int_equal(r->intervals[0], 0);
	assert_int_equal(r->intervals[1], 4096);
	/* not sampled: the estimates stored are the totals, whatever was given */
	assert_int_equal(sql_int(file, "SELECT estimated_bytes FROM snapshots WHERE snapshot_id = 40"),
			 64 * 2 + 8192);
	leaksnap_store_history_free(h);
	leaksnap_store_close(s);
}

/* The DDL -------------------------------------------------------------------- */

/* The text of docs/store.md between "<!-- NAME -->" and
 * "<!-- /NAME -->", without the ```sql fence of a DDL block. */
static char *doc_block(const char *doc, const char *name)
{
	char open[64], close[64];
	snprintf(open, sizeof(open), "<!-- %s -->\n", name);
	snprintf(close, sizeof(close), "<!-- /%s -->", name);
	const char *p = strstr(doc, open);
	if (!p)
		fail_msg("docs/store.md has no %s block", name);
	p += strlen(open);
	if (strncmp(p, "```sql\n", 7) == 0)
		p += 7;
	const char *end = strstr(p, close);
	assert_non_null(end);
	if (end - p >= 4 && strncmp(end - 4, "```\n", 4) == 0)
		end -= 4;
	return strndup(p, (size_t)(end - p));
}

static char *generated(const char *name)
{
	enum leaksnap_store_engine e = strcmp(name, "ddl-sqlite") == 0 ? LEAKSNAP_STORE_SQLITE
									: LEAKSNAP_STORE_CLICKHOUSE;
	const char *cluster = strcmp(name, "ddl-distributed") == 0 ? "leaksnap_cluster" : NULL;
	bool columns = strcmp(name, "columns") == 0;
	size_t n = columns ? sto_doc_columns(NULL, 0) : leaksnap_store_ddl(e, "leaksnap", cluster, NULL, 0);
	char *buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(columns ? sto_doc_columns(buf, n + 1)
				 : leaksnap_store_ddl(e, "leaksnap", cluster, buf, n + 1),
			 n);
	return buf;
}

static void test_ddl_documented(void **state)
{
	(void)state;
	FILE *f = fopen("docs/store.md", "r");
	assert_non_null(f);
	static char doc[1 << 17];
	size_t n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	static const char *const blocks[] = {"columns", "ddl-sqlite", "ddl-clickhouse",
					     "ddl-distributed"};
	for (size_t i = 0; i < 4; i++) {
		char *want = generated(blocks[i]), *got = doc_block(doc, blocks[i]);
		if (strcmp(got, want) != 0)
			fail_msg("docs/store.md, block %s differs from the schema's; generated:\n%s",
				 blocks[i], want);
		free(got);
		free(want);
	}
	/* a short buffer: cut, NUL-terminated, the length needed returned */
	char small[16];
	size_t need = leaksnap_store_ddl(LEAKSNAP_STORE_SQLITE, NULL, NULL, small, sizeof(small));
	assert_true(need > sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema_created),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_same_dump_twice),
		cmocka_unit_test(test_abort_leaves_nothing),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_upgrade_from_1),
		cmocka_unit_test(test_upgrade_from_2),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_new_and_gone),
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_ddl_documented),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
