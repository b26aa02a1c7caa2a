/* Unit tests for store/ over ClickHouse, below the command, on a
 * throw-away server (tests/clickhouse-server.sh; skipped, saying why, when
 * clickhouse-server is not installed): the schema made in an empty
 * database; the refusals (no server, no such database, another database,
 * a newer schema, a read-only user writing -- who may still read); hostile
 * labels, run fields, sources, module paths and symbol names read back
 * byte for byte; the same dump twice adds nothing; a write not completed
 * (its rows sent, no marker) is never seen, and the dump stores whole
 * afterwards; a snapshot written by two complete writes is read once,
 * records and all; the labels of a complete run are not written again. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

static char dir[64];
static char http[64];      /* http://127.0.0.1:PORT */
static char host[64];      /* 127.0.0.1:PORT */
static bool up;
static char why_not[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/leaksnap-test-ch.XXXXXX");
	assert_non_null(mkdtemp(dir));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "sh tests/clickhouse-server.sh start '%s/server' 2>'%s/why'",
		 dir, dir);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(http, sizeof(http), p))
		http[0] = '\0';
	int st = pclose(p);
	if (st == 0 && strncmp(http, "http://", 7) == 0) {
		http[strcspn(http, "\n")] = '\0';
		snprintf(host, sizeof(host), "%s", http + 7);
		up = true;
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "%s/why", dir);
	FILE *f = fopen(cmd, "r");
	if (!f || !fgets(why_not, sizeof(why_not), f))
		snprintf(why_not, sizeof(why_not), "the server did not start");
	if (f)
		fclose(f);
	why_not[strcspn(why_not, "\n")] = '\0';
	/* not installed (77): skipped; installed but not started: a failure */
	return WIFEXITED(st) && WEXITSTATUS(st) == 77 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[256];
	if (up) {
		snprintf(cmd, sizeof(cmd), "sh tests/clickhouse-server.sh stop '%s/server'", dir);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void need_server(void)
{
	if (!up) {
		print_message("skipped: %s\n", why_not);
		skip();
	}
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	char *out = arg;
	size_t have = strlen(out), add = size * n;
	if (have + add >= 4096)
		add = 4095 - have;
	memcpy(out + have, p, add);
	out[have + add] = '\0';
	return size * n;
}

/* Raw SQL on the server (in database @db, or none), as another program
 * would: its answer (TabSeparated) in a static buffer. */
static const char *sql(const char *db, const char *text)
{
	static char out[4096];
	out[0] = '\0';
	CURL *c = curl_easy_init();
	assert_non_null(c);
	char url[256];
	snprintf(url, sizeof(url), "%s/%s%s", http, db ? "?database=" : "", db ? db : "");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (status != 200)
		fail_msg("%s: %s", text, out);
	return out;
}

static uint64_t sql_u64(const char *db, const char *text)
{
	return strtoull(sql(db, text), NULL, 10);
}

/* A new empty database @name: its URL. */
static const char *database(const char *name)
{
	static char url[128];
	char q[128];
	snprintf(q, sizeof(q), "DROP DATABASE IF EXISTS %s", name);
	sql(NULL, q);
	snprintf(q, sizeof(q), "CREATE DATABASE %s", name);
	sql(NULL, q);
	snprintf(url, sizeof(url), "clickhouse://%s/%s", host, name);
	return url;
}

static struct leaksnap_store *open_ok(const char *url)
{
	struct leaksnap_error err;
	struct leaksnap_store *s = leaksnap_store_open(url, NULL, &err);
	if (!s)
		fail_msg("open %s: %s", url, err.text);
	return s;
}

static void expect_refused(const char *url, bool no_create, int code, const char *text)
{
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_store_open_opts, o, .no_create = no_create);
	assert_null(leaksnap_store_open(url, &o, &err));
	assert_string_equal(err.source, url);
	assert_string_equal(err.text, text);
	assert_int_equal(err.code, code);
}

static uint64_t rows(struct leaksnap_store *s, const char *table)
{
	struct leaksnap_error err;
	uint64_t n = 99;
	assert_int_equal(leaksnap_store_row_count(s, table, &n, &err), 0);
	return n;
}

/* Two records, their stacks sharing a frame (as test_store.c's). */
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

struct fake {
	unsigned calls;
	const char *function;
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

enum end { COMMIT, ABORT, KILLED };

static int count_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	(void)s;
	++*(unsigned *)arg;
	return 0;
}

/* Store @snap (as @source) in a run with @labels, ended as @how: KILLED
 * sends every row but the marker, as a store killed before its commit. */
static struct leaksnap_store_added store_one(struct leaksnap_store *s,
					     const struct leaksnap_snapshot *snap,
					     const struct leaksnap_store_label *labels, size_t n,
					     const char *source, struct fake *fake, enum end how)
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
	if (leaksnap_store_add_snapshot(s, snap, maps, source, &o, &added, &err) != 0)
		fail_msg("add: %s", err.text);
	if (how == COMMIT) {
		if (leaksnap_store_run_commit(s, &err) != 0)
			fail_msg("commit: %s", err.text);
	} else {
		unsigned seen = 0;
		if (how == KILLED) /* (what a commit sends before its marker) */
			assert_int_equal(s->b->ops->snapshots(s->b, 0, true, count_snapshot, &seen,
							      &err),
					 0);
		leaksnap_store_run_abort(s);
	}
	leaksnap_maps_free(maps);
	return added;
}

static void test_schema_created(void **state)
{
	(void)state;
	need_server();
	const char *url = database("fresh");
	expect_refused(url, true, LEAKSNAP_ERR_FORMAT, "not a leaksnap store (empty)");
	struct leaksnap_store *s = open_ok(url);
	assert_int_equal(leaksnap_store_engine(s), LEAKSNAP_STORE_CLICKHOUSE);
	assert_int_equal(leaksnap_store_schema_version(s), LEAKSNAP_STORE_SCHEMA_VERSION);
	static const char *const tables[] = {"store_info", "runs", "run_labels", "snapshots",
					     "stacks", "frames", "symbols", "records", "growth", "ingests"};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		assert_int_equal(rows(s, tables[i]), strcmp(tables[i], "store_info") == 0);
	leaksnap_store_close(s);
	assert_string_equal(sql("fresh", "SELECT name, engine FROM system.tables WHERE database = "
					 "'fresh' ORDER BY name"),
			    "frames\tReplacingMergeTree\ngrowth\tReplacingMergeTree\n"
			    "ingests\tMergeTree\nrecords\tReplacingMergeTree\n"
			    "run_labels\tReplacingMergeTree\nruns\tReplacingMergeTree\n"
			    "snapshots\tReplacingMergeTree\nstacks\tReplacingMergeTree\n"
			    "store_info\tReplacingMergeTree\nsymbols\tReplacingMergeTree\n");
	assert_string_equal(sql("fresh", "SELECT * FROM store_info"), "schema_version\t3\n");
	/* opened again (and by a reader) as it is */
	leaksnap_store_close(open_ok(url));
	LEAKSNAP_OPTS(leaksnap_store_open_opts, ro, .no_create = true);
	struct leaksnap_error err;
	s = leaksnap_store_open(url, &ro, &err);
	assert_non_null(s);
	leaksnap_store_close(s);
	assert_string_equal(sql("fresh", "SELECT count() FROM store_info"), "1\n");
}

static void test_refused(void **state)
{
	(void)state;
	need_server();
	expect_refused("clickhouse://127.0.0.1:1/x", false, LEAKSNAP_ERR_IO,
		       "cannot reach the server: Connection refused");
	char url[128];
	snprintf(url, sizeof(url), "clickhouse://%s/no_such_db", host);
	expect_refused(url, false, LEAKSNAP_ERR_IO, "no database 'no_such_db' on the server");
	expect_refused(url, true, LEAKSNAP_ERR_IO, "no database 'no_such_db' on the server");
	snprintf(url, sizeof(url), "clickhouse://%s/a;b", host);
	expect_refused(url, false, LEAKSNAP_ERR_USAGE,
		       "a DATABASE name is letters, digits and '_', not starting with a digit");
	snprintf(url, sizeof(url), "%s", database("other"));
	sql("other", "CREATE TABLE t (x UInt8) ENGINE = Memory");
	expect_refused(url, false, LEAKSNAP_ERR_FORMAT,
		       "not a leaksnap store (a database without its tables)");
	snprintf(url, sizeof(url), "%s", database("newer"));
	leaksnap_store_close(open_ok(url));
	sql("newer", "INSERT INTO store_info VALUES ('schema_version', '4')");
	expect_refused(url, false, LEAKSNAP_ERR_VERSION,
		       "schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it");
	expect_refused(url, true, LEAKSNAP_ERR_VERSION,
		       "schema version 4 is newer than this leaksnap's (3): a newer leaksnap wrote it");
	/* a user who may only read: refused as a writer, served as a reader */
	database("ro");
	snprintf(url, sizeof(url), "clickhouse://reader@%s/ro", host);
	expect_refused(url, false, LEAKSNAP_ERR_IO,
		       "read-only: cannot write the store (the user may only read)");
	char writer[128];
	snprintf(writer, sizeof(writer), "clickhouse://%s/ro", host);
	leaksnap_store_close(open_ok(writer));
	expect_refused(url, false, LEAKSNAP_ERR_IO,
		       "read-only: cannot write the store (the user may only read)");
	LEAKSNAP_OPTS(leaksnap_store_open_opts, ro, .no_create = true);
	struct leaksnap_error err;
	struct leaksnap_store *s = leaksnap_store_open(url, &ro, &err);
	if (!s)
		fail_msg("reader: %s", err.text);
	assert_int_equal(rows(s, "runs"), 0);
	leaksnap_store_close(s);
	snprintf(url, sizeof(url), "clickhouse://nobody@%s/ro", host);
	expect_refused(url, false, LEAKSNAP_ERR_IO, "cannot log in: Unknown user nobody");
	/* a password is not said in errors */
	snprintf(url, sizeof(url), "clickhouse://default:s3cret@%s/ro", host);
	assert_null(leaksnap_store_open(url, NULL, &err));
	snprintf(writer, sizeof(writer), "clickhouse://default:***@%s/ro", host);
	assert_string_equal(err.source, writer);
	assert_null(strstr(err.text, "s3cret"));
	assert_null(leaksnap_store_open("clickhouse://u:s3cret@127.0.0.1:1/x", NULL, &err));
	assert_string_equal(err.source, "clickhouse://u:***@127.0.0.1:1/x");
	assert_string_equal(err.text, "cannot reach the server: Connection refused");
}

static const char hostile[] = "it's \"quoted\"\nnext line'); DROP TABLE runs; --\t\xff\xfe\x80 \\N\\ end";
static const char hostile_path[] = "/data/app/x'; DROP TABLE frames;--\"\\\xff\xfe/lib o.so";

struct seen {
	unsigned runs, frames, snapshots, records;
	char labels[8][2][128];
	size_t nlabels;
	char function[128], file[128], module[128], source[128], exe[128];
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
	snprintf(x->exe, sizeof(x->exe), "%s", run->exe);
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
	assert_int_equal(f->symbols[1].line, 40);
	return 0;
}

struct ids {
	uint64_t snapshot, stack, frame;
	unsigned snapshots, records;
	char source[128];
};

static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct ids *i = arg;
	i->snapshots++;
	i->snapshot = s->id;
	snprintf(i->source, sizeof(i->source), "%s", s->source);
	assert_int_equal(s->total_bytes, 3 * 4096 + 200);
	assert_int_equal(s->allocations, 5);
	assert_int_equal(s->record_count, 2);
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

/* What a store holds, read back: @ids filled. */
static void read_back(struct leaksnap_store *s, struct ids *ids)
{
	struct leaksnap_error err;
	memset(ids, 0, sizeof(*ids));
	assert_int_equal(leaksnap_store_snapshots(s, 0, on_snapshot, ids, &err), 0);
	if (ids->snapshots == 0)
		return;
	assert_int_equal(leaksnap_store_records(s, ids->snapshot, on_record, ids, &err), 0);
	assert_int_equal(ids->records, 2);
	uint64_t twice[2] = {ids->stack, ids->stack};
	assert_int_equal(leaksnap_store_stacks(s, twice, 2, on_stack, ids, &err), 0);
}

static void test_hostile_strings(void **state)
{
	(void)state;
	need_server();
	struct leaksnap_store *s = open_ok(database("hostile"));
	struct leaksnap_snapshot *snap = snapshot(hostile_path, 0);
	struct fake fake = {0, hostile, {{0}}, {0}};
	struct leaksnap_store_label labels[] = {
		{"test", hostile}, {"build", "'); DELETE FROM records; --"}, {"device", ""}};
	store_one(s, snap, labels, 3, hostile, &fake, COMMIT);
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
	assert_string_equal(x.labels[2][1], hostile);
	struct ids ids;
	read_back(s, &ids);
	assert_int_equal(ids.snapshots, 1);
	assert_string_equal(ids.source, hostile);
	uint64_t frame = ids.frame;
	assert_int_equal(leaksnap_store_frames(s, &frame, 1, on_frame, &x, &err), 0);
	assert_int_equal(x.frames, 1);
	assert_string_equal(x.function, hostile);
	assert_string_equal(x.file, hostile);
	assert_string_equal(x.module, hostile_path);
	/* as the server holds them: the bytes themselves */
	char want[512] = "", q[256];
	for (const unsigned char *c = (const unsigned char *)hostile; *c; c++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%02X", *c);
	strcat(want, "\n");
	snprintf(q, sizeof(q), "SELECT hex(value) FROM run_labels WHERE name = 'test'");
	assert_string_equal(sql("hostile", q), want);
	assert_string_equal(sql("hostile", "SELECT hex(source) FROM snapshots"), want);
	assert_string_equal(sql("hostile", "SELECT count() FROM runs"), "1\n");
	leaksnap_snapshot_close(snap);
	leaksnap_store_close(s);
}

static const char *const tables[] = {"runs", "run_labels", "snapshots", "stacks", "frames",
				     "symbols", "records", "ingests"};

/* Every table's rows as the server holds them (not merged), one line. */
static const char *raw_counts(const char *db)
{
	static char out[256];
	out[0] = '\0';
	for (size_t i = 0; i < 8; i++) {
		char q[128];
		snprintf(q, sizeof(q), "SELECT count() FROM %s", tables[i]);
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s=%" PRIu64 " ", tables[i],
			 sql_u64(db, q));
	}
	return out;
}

static void test_same_dump_twice(void **state)
{
	(void)state;
	need_server();
	const char *url = database("twice");
	struct leaksnap_store *s = open_ok(url);
	struct leaksnap_snapshot *snap = snapshot("/system/lib64/libfoo.so", 0);
	struct fake fake = {0};
	struct leaksnap_store_label l = {"build", "1"};
	struct leaksnap_store_added a = store_one(s, snap, &l, 1, "a.txt", &fake, COMMIT);
	assert_false(a.duplicate);
	assert_int_equal(a.records, 2);
	assert_int_equal(a.new_frames, 4);
	assert_int_equal(fake.calls, 4);
	assert_string_equal(raw_counts("twice"), "runs=1 run_labels=1 snapshots=1 stacks=2 frames=4 "
						 "symbols=8 records=2 ingests=1 ");
	struct leaksnap_store_added b = store_one(s, snap, &l, 1, "a.txt", &fake, COMMIT);
	assert_true(b.duplicate);
	assert_int_equal(fake.calls, 4);
	assert_string_equal(raw_counts("twice"), "runs=1 run_labels=1 snapshots=1 stacks=2 frames=4 "
						 "symbols=8 records=2 ingests=1 ");
	/* from another process */
	leaksnap_store_close(s);
	s = open_ok(url);
	b = store_one(s, snap, &l, 1, "a.txt", &fake, COMMIT);
	assert_true(b.duplicate);
	assert_string_equal(raw_counts("twice"), "runs=1 run_labels=1 snapshots=1 stacks=2 frames=4 "
						 "symbols=8 records=2 ingests=1 ");
	leaksnap_store_close(s);
	leaksnap_snapshot_close(snap);
}

/* A write killed before its marker: nothing of it seen, the dump stored
 * whole by the next (its rows there twice, read once); another snapshot
 * of the run, with other labels, keeps the labels it had. */
static void test_killed_write(void **state)
{
	(void)state;
	need_server();
	const char *url = database("killed");
	struct leaksnap_store *s = open_ok(url);
	struct leaksnap_snapshot *snap = snapshot("/system/lib64/libfoo.so", 0);
	struct fake fake = {0};
	struct leaksnap_store_label l1 = {"build", "1"}, l2 = {"build", "2"};
	store_one(s, snap, &l1, 1, "a.txt", &fake, KILLED);
	assert_string_equal(raw_counts("killed"), "runs=0 run_labels=0 snapshots=1 stacks=2 frames=4 "
						  "symbols=8 records=2 ingests=0 ");
	struct ids ids;
	read_back(s, &ids);
	assert_int_equal(ids.snapshots, 0);
	struct seen x = {0};
	struct leaksnap_error err;
	assert_int_equal(leaksnap_store_runs(s, on_run, &x, &err), 0);
	assert_int_equal(x.runs, 0);
	leaksnap_store_close(s);
	/* the next store, another process: the dump is not "already stored" */
	s = open_ok(url);
	fake.calls = 0;
	struct leaksnap_store_added a = store_one(s, snap, &l2, 1, "a.txt", &fake, COMMIT);
	assert_false(a.duplicate);
	assert_int_equal(a.new_frames, 0); /* (frames are there, symbols and all) */
	assert_int_equal(fake.calls, 0);
	assert_string_equal(raw_counts("killed"), "runs=1 run_labels=1 snapshots=2 stacks=4 frames=4 "
						  "symbols=8 records=4 ingests=1 ");
	read_back(s, &ids);
	assert_int_equal(ids.snapshots, 1);
	assert_int_equal(ids.records, 2);
	memset(&x, 0, sizeof(x));
	assert_int_equal(leaksnap_store_runs(s, on_run, &x, &err), 0);
	assert_int_equal(x.runs, 1);
	assert_string_equal(x.labels[0][1], "2");
	/* the same snapshot by a second complete write (two stores racing):
	 * read once, records and all */
	struct leaksnap_store_run run;
	leaksnap_store_run_of(snap, NULL, &l1, 1, &run);
	assert_int_equal(leaksnap_store_run_begin(s, &run, &err), 0);
	struct leaksnap_store_snapshot row = {.id = ids.snapshot, .run_id = run.id,
					      .source = "a.txt", .total_bytes = 3 * 4096 + 200,
					      .allocations = 5, .record_count = 2};
	struct leaksnap_store_record r[2] = {{ids.snapshot, 0, ids.stack, 4096, 3, 0, false},
					     {ids.snapshot, 1, ids.stack, 100, 2, 0, true}};
	assert_int_equal(leaksnap_store_put_snapshot(s, &row, &err), 0);
	assert_int_equal(leaksnap_store_put_records(s, r, 2, &err), 0);
	assert_int_equal(leaksnap_store_run_commit(s, &err), 0);
	assert_string_equal(raw_counts("killed"), "runs=1 run_labels=1 snapshots=3 stacks=4 frames=4 "
						  "symbols=8 records=6 ingests=2 ");
	read_back(s, &ids);
	assert_int_equal(ids.snapshots, 1);
	assert_int_equal(ids.records, 2);
	memset(&x, 0, sizeof(x));
	assert_int_equal(leaksnap_store_runs(s, on_run, &x, &err), 0);
	assert_int_equal(x.runs, 1);
	assert_int_equal(x.nlabels, 1);
	assert_string_equal(x.labels[0][1], "2"); /* (not written again) */
	leaksnap_snapshot_close(snap);
	leaksnap_store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schema_created),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_same_dump_twice),
		cmocka_unit_test(test_killed_write),
	};
	curl_global_init(CURL_GLOBAL_DEFAULT);
	int rc = cmocka_run_group_tests(tests, setup, teardown);
	curl_global_cleanup();
	return rc;
}
