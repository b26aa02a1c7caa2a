/* leaksnap store: the ClickHouse backend, over the server's HTTP
 * interface (ch_http.c).  No transactions: a write is seen once its last
 * row, the completion marker (ingests), is there, and readers keep only
 * the rows of complete ingests.  A row may be there twice (written by a
 * write that was killed, and again by the next; or by two writers of one
 * run at once): the rows of one key are the same, and every read keeps
 * each key once.
 *
 * Rows are sent in big INSERT bodies, on threads of their own (two bodies
 * at once: the server writes each on a core) while the next are made: TabSeparated for the tables with text (every string
 * escaped by ch_codec.c), RowBinary for the tables of numbers alone
 * (records, stacks, growth: nothing to escape, and a third of the bytes).
 * Each body is one block on the server, written whole or not at all, and
 * holds rows in key order (a stack's body ends where the ids turn back),
 * which spares the server a sort.  A frame's symbols are sent before it:
 * a frame seen means its symbols are there. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ch_internal.h"

/* The sender ----------------------------------------------------------------------- */

static void *sender_main(void *arg)
{
	struct ch *c = ((struct worker *)arg)->c;
	struct ch_http *h = &c->snd.h[((struct worker *)arg)->i];
	struct sender *s = &c->snd;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->n == 0 && !s->quit)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->n == 0)
			break;
		struct job j = s->q[s->head];
		s->head = (s->head + 1) % CH_QUEUE;
		s->n--;
		s->busy++;
		bool failed = s->failed;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		struct leaksnap_error e;
		leaksnap_error_clear(&e);
		int rc = failed ? 0
				: ch_http_query(h, &c->t, c->insert[j.table], j.body.p, j.body.n,
						NULL, 0, "cannot write the store", &e);
		pthread_mutex_lock(&s->mu);
		if (s->npool < CH_POOL && j.body.cap >= CH_BODY_BYTES / 2 &&
		    j.body.cap <= 2 * (size_t)CH_BODY_BYTES) {
			j.body.n = 0;
			s->pool[s->npool++] = j.body;
		} else {
			chbuf_free(&j.body);
		}
		if (rc && !s->failed) {
			s->failed = true;
			s->err = e;
		}
		s->busy--;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static int sender_start(struct ch *c, struct leaksnap_error *err)
{
	struct sender *s = &c->snd;
	for (; s->started < CH_SENDERS; s->started++) {
		size_t i = s->started;
		if (ch_http_init(&s->h[i], &c->t, err))
			return -1;
		c->workers[i] = (struct worker){c, i};
		if (pthread_create(&s->thread[i], NULL, sender_main, &c->workers[i]) != 0) {
			ch_http_free(&s->h[i]);
			return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "cannot start a thread");
		}
	}
	return 0;
}

/* Table @table's rows to the sender (waiting for room): -1 with @err
 * when it failed before. */
static int submit(struct ch *c, int table, struct leaksnap_error *err)
{
	struct chbuf *b = &c->buf[table];
	if (b->nomem)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	if (b->n == 0)
		return 0;
	if (sender_start(c, err))
		return -1;
	struct sender *s = &c->snd;
	pthread_mutex_lock(&s->mu);
	while (s->n == CH_QUEUE && !s->failed)
		pthread_cond_wait(&s->cv, &s->mu);
	int rc = 0;
	if (s->failed) {
		*err = s->err;
		rc = -1;
	} else {
		s->q[(s->head + s->n) % CH_QUEUE] = (struct job){table, *b};
		s->n++;
		*b = s->npool ? s->pool[--s->npool] : (struct chbuf){0};
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int drain(struct ch *c, struct leaksnap_error *err);

/* The frames: once their symbols are written (two bodies may be written
 * at once, in any order). */
static int submit_frames(struct ch *c, struct leaksnap_error *err)
{
	if (c->buf[STO_FRAMES].n == 0)
		return 0;
	return submit(c, STO_SYMBOLS, err) || drain(c, err) || submit(c, STO_FRAMES, err) ? -1 : 0;
}

/* Every body sent and answered: 0, or -1 with the sender's first error. */
static int drain(struct ch *c, struct leaksnap_error *err)
{
	struct sender *s = &c->snd;
	if (!s->started)
		return 0;
	pthread_mutex_lock(&s->mu);
	while (s->n || s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	int rc = 0;
	if (s->failed) {
		if (err)
			*err = s->err;
		rc = -1;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* The rows of the run so far sent (a frame's symbols before it), and
 * written. */
int ch_sync_rows(struct ch *c, struct leaksnap_error *err)
{
	static const int order[] = {STO_STACKS, STO_RECORDS, STO_GROWTH, STO_SNAPSHOTS,
				    STO_SYMBOLS};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (submit(c, order[i], err))
			return -1;
	return submit_frames(c, err) || drain(c, err) ? -1 : 0;
}

/* A row added to @table: its body sent when big enough. */
static int row_added(struct ch *c, int table, struct leaksnap_error *err)
{
	if (c->buf[table].n < CH_BODY_BYTES)
		return c->buf[table].nomem ? kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name,
						       "out of memory")
					   : 0;
	return table == STO_FRAMES ? submit_frames(c, err) : submit(c, table, err);
}

/* Before a row keyed @key of a table sent in key order: a big body whose
 * keys would turn back is sent first (the server sorts a body whose rows
 * are not in order; small ones, of many snapshots, are better sent
 * together: each body is a part on the server, to be merged). */
static int key_order(struct ch *c, int table, uint64_t key, struct leaksnap_error *err)
{
	int rc = 0;
	if (c->buf[table].n >= CH_SORTED_BYTES && key < c->last_key[table])
		rc = submit(c, table, err);
	c->last_key[table] = key;
	return rc;
}

/* Queries ------------------------------------------------------------------------------ */

/* The rows of a TabSeparated answer in c->h.resp, each to @row with its
 * @nf fields (exactly). */
static int each_tsv(struct ch *c, int nf, int (*row)(struct ch *c, char **f, void *ctx),
		    void *ctx, struct leaksnap_error *err)
{
	char *p = c->h.resp.p, *end = p ? p + c->h.resp.n : NULL;
	char *f[16];
	int n, rc;
	while (p && (n = ch_tsv_row(&p, end, f, nf)) != 0) {
		if (n != nf)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
					 "the server's answer cannot be read (not rows of %d "
					 "TabSeparated column%s)", nf, nf == 1 ? "" : "s");
		if ((rc = row(c, f, ctx)) != 0)
			return rc;
	}
	return 0;
}

int ch_select_tsv(struct ch *c, const char *sql, const uint64_t *ids, size_t nids, int nf,
		      int (*row)(struct ch *c, char **f, void *ctx), void *ctx,
		      struct leaksnap_error *err)
{
	if (ch_http_query(&c->h, &c->t, sql, NULL, 0, ids, nids, "cannot read the store", err))
		return -1;
	return each_tsv(c, nf, row, ctx, err);
}

int ch_bad_value(struct ch *c, struct leaksnap_error *err)
{
	return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
			 "not a leaksnap store (a value of the wrong type)");
}

static int one_u64(struct ch *c, char **f, void *ctx)
{
	(void)c;
	return ch_parse_u64(f[0], ctx) ? 0 : 1;
}

/* A count (or any one number) the query answers. */
int ch_query_u64(struct ch *c, const char *sql, const uint64_t *ids, size_t nids,
		     uint64_t *v, struct leaksnap_error *err)
{
	*v = 0;
	int rc = ch_select_tsv(c, sql, ids, nids, 1, one_u64, v, err);
	return rc > 0 ? ch_bad_value(c, err) : rc;
}

/* Opening ------------------------------------------------------------------------------- */

static void ch_close(struct sto_backend *b)
{
	struct ch *c = (struct ch *)b;
	struct sender *s = &c->snd;
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->quit = true;
		s->failed = true; /* (what is queued is dropped) */
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		for (size_t i = 0; i < s->started; i++) {
			pthread_join(s->thread[i], NULL);
			ch_http_free(&s->h[i]);
		}
		for (size_t i = 0; i < s->n; i++)
			chbuf_free(&s->q[(s->head + i) % CH_QUEUE].body);
		for (size_t i = 0; i < s->npool; i++)
			chbuf_free(&s->pool[i]);
	}
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	ch_http_free(&c->h);
	for (size_t i = 0; i < STO_TABLE_COUNT; i++) {
		chbuf_free(&c->buf[i]);
		free(c->insert[i]);
	}
	kit_table_free(&c->frames_put, false);
	free(c->snaps);
	free(c->t.base);
	ch_url_free(&c->t.url);
	free((char *)(uintptr_t)c->t.name);
	free(c);
}

/* The database's tables: how many, how many of the schema's, store_info. */
struct tables {
	bool info;
	size_t n, ours;
};

static int table_row(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct tables *t = ctx;
	t->n++;
	if (strcmp(f[0], sto_tables[STO_INFO].name) == 0)
		t->info = true;
	if (sto_table_named(f[0]))
		t->ours++;
	return 0;
}

static int version_row(struct ch *c, char **f, void *ctx)
{
	(void)c;
	unsigned *v = ctx;
	char *end;
	unsigned long x = strtoul(f[0], &end, 10);
	if (*end || x == 0 || x > 1000000)
		return 1;
	if (x > *v)
		*v = (unsigned)x;
	return 0;
}

static int create_schema(struct ch *c, struct leaksnap_error *err)
{
	size_t n = leaksnap_store_ddl(LEAKSNAP_STORE_CLICKHOUSE, c->t.url.database, NULL, NULL, 0);
	char *ddl = malloc(n + 1);
	if (!ddl)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	leaksnap_store_ddl(LEAKSNAP_STORE_CLICKHOUSE, c->t.url.database, NULL, ddl, n + 1);
	int rc = 0;
	for (char *st = ddl, *semi; rc == 0 && (semi = strstr(st, ";\n")) != NULL; st = semi + 2) {
		*semi = '\0';
		rc = ch_http_query(&c->h, &c->t, st, NULL, 0, NULL, 0, "cannot create the store", err);
	}
	free(ddl);
	if (rc)
		return -1;
	char row[64];
	snprintf(row, sizeof(row), "schema_version\t%d\n", LEAKSNAP_STORE_SCHEMA_VERSION);
	return ch_http_query(&c->h, &c->t, c->insert[STO_INFO], row, strlen(row), NULL, 0,
			     "cannot create the store", err);
}

static int read_only(struct ch *c, bool *ro, struct leaksnap_error *err)
{
	uint64_t v = 0;
	if (ch_query_u64(c, "SELECT toUInt64(value) FROM system.settings WHERE name = 'readonly' "
			 "FORMAT TabSeparated",
		      NULL, 0, &v, err))
		return -1;
	*ro = v != 0;
	return 0;
}

/* Whether @table of the store has @column (the schema's own names: nothing
 * of a user's in the SQL). */
static int has_column(struct ch *c, const char *table, const char *column, bool *has,
		      struct leaksnap_error *err)
{
	char sql[512];
	uint64_t n = 0;
	snprintf(sql, sizeof(sql),
		 "SELECT count() FROM system.columns WHERE database = currentDatabase() AND "
		 "table = '%s' AND name = '%s' FORMAT TabSeparated",
		 table, column);
	if (ch_query_u64(c, sql, NULL, 0, &n, err))
		return -1;
	*has = n != 0;
	return 0;
}

/* A store of version @from taken to this one, step by step: each step's
 * columns that a table lacks added (ALTER TABLE ... ADD COLUMN, with the
 * default an old row reads as), then the version row.  ClickHouse has no
 * transactions: a step cut short is done again, adding only what is still
 * missing, and the version says the new one only once every column is
 * there.  Others may upgrade the same store at the same time (18.16 has
 * no ADD COLUMN IF NOT EXISTS): an ALTER that fails is fine when the
 * column is there after it, added by another; the version row written by
 * each is the same row (store_info keeps one per name, and the version
 * read is the highest).  Only one who may write upgrades: the caller
 * lets a user who may only read read a store of version 2 as it is. */
static int upgrade(struct ch *c, unsigned from, struct leaksnap_error *err)
{
	for (unsigned v = from; v < LEAKSNAP_STORE_SCHEMA_VERSION; v++) {
		const struct sto_ch_added *a = sto_clickhouse_added(v);
		if (!a)
			return kit_error(err, LEAKSNAP_ERR_VERSION, c->t.name,
					 "schema version %u cannot be upgraded", v);
		for (; a->table; a++) {
			char sql[512];
			bool has;
			if (has_column(c, a->table, a->column, &has, err))
				return -1;
			if (has)
				continue;
			snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", a->table,
				 a->column, a->type);
			struct leaksnap_error alter;
			if (ch_http_query(&c->h, &c->t, sql, NULL, 0, NULL, 0,
					  "cannot upgrade the store", &alter) == 0)
				continue;
			if (has_column(c, a->table, a->column, &has, err))
				return -1;
			if (!has) {
				*err = alter;
				return -1;
			}
		}
	}
	char row[64];
	snprintf(row, sizeof(row), "schema_version\t%d\n", LEAKSNAP_STORE_SCHEMA_VERSION);
	return ch_http_query(&c->h, &c->t, c->insert[STO_INFO], row, strlen(row), NULL, 0,
			     "cannot upgrade the store", err);
}

/* The schema: made when the database has none of it (unless @no_create),
 * refused when newer or when the database holds something else. */
static int check_schema(struct ch *c, bool no_create, struct leaksnap_error *err)
{
	struct tables t = {0};
	if (ch_select_tsv(c, "SELECT name FROM system.tables WHERE database = currentDatabase() "
			  "FORMAT TabSeparated",
		       NULL, 0, 1, table_row, &t, err))
		return -1;
	if (t.n && !t.info)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
				 "not a leaksnap store (a database without its tables)");
	unsigned v = 0;
	if (t.info) {
		int rc = ch_select_tsv(c, "SELECT value FROM store_info WHERE name = 'schema_version' "
				       "FORMAT TabSeparated",
				    NULL, 0, 1, version_row, &v, err);
		if (rc > 0)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
					 "not a leaksnap store (no schema version)");
		if (rc)
			return -1;
	}
	if (v > LEAKSNAP_STORE_SCHEMA_VERSION)
		return kit_error(err, LEAKSNAP_ERR_VERSION, c->t.name,
				 "schema version %u is newer than this leaksnap's (%d): "
				 "a newer leaksnap wrote it",
				 v, LEAKSNAP_STORE_SCHEMA_VERSION);
	if (v && v < LEAKSNAP_STORE_SCHEMA_VERSION) {
		/* A user who may only read cannot upgrade: a store of version
		 * 2 (3 only added columns) is read as it is, an older one is
		 * refused. */
		bool ro;
		if (read_only(c, &ro, err))
			return -1;
		if (ro && (!no_create || v < 2))
			return kit_error(err, LEAKSNAP_ERR_VERSION, c->t.name,
					 "schema version %u is older than this leaksnap's (%d), and "
					 "only one who may write the store can upgrade it "
					 "('leaksnap store' upgrades it)",
					 v, LEAKSNAP_STORE_SCHEMA_VERSION);
		if (!ro) {
			if (upgrade(c, v, err))
				return -1;
			v = LEAKSNAP_STORE_SCHEMA_VERSION;
		}
	}
	if (no_create) {
		if (t.n == 0)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
					 "not a leaksnap store (empty)");
		if (v == 0)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, c->t.name,
					 "not a leaksnap store (no schema version)");
		c->base.version = v;
		return 0;
	}
	/* a writer: one that may write, with every table there (a store
	 * made at the same time by another writer too) */
	bool ro;
	if (read_only(c, &ro, err))
		return -1;
	if (ro)
		return kit_error(err, LEAKSNAP_ERR_IO, c->t.name,
				 "read-only: cannot write the store (the user may only read)");
	if ((v == 0 || t.ours < STO_TABLE_COUNT) && create_schema(c, err))
		return -1;
	c->base.version = LEAKSNAP_STORE_SCHEMA_VERSION;
	return 0;
}

static const struct sto_ops ch_ops;

/* "INSERT INTO table (columns) FORMAT F" of each table. */
static int make_inserts(struct ch *c)
{
	for (int i = 0; i < STO_TABLE_COUNT; i++) {
		const struct sto_table *t = &sto_tables[i];
		struct chbuf b = {0};
		chbuf_str(&b, "INSERT INTO ");
		chbuf_str(&b, t->name);
		chbuf_str(&b, " (");
		for (size_t k = 0; k < t->ncols; k++) {
			if (k)
				chbuf_str(&b, ", ");
			chbuf_str(&b, t->cols[k].name);
		}
		chbuf_str(&b, ch_binary(i) ? ") FORMAT RowBinary" : ") FORMAT TabSeparated");
		if (b.nomem)
			return -1;
		c->insert[i] = b.p;
	}
	return 0;
}

struct sto_backend *sto_clickhouse_open(const char *url, const struct leaksnap_store_open_opts *o,
					struct leaksnap_error *err)
{
	struct ch *c = calloc(1, sizeof(*c));
	char *name = ch_url_redacted(url); /* (errors name it, and go to logs) */
	if (!c || !name) {
		free(c);
		free(name);
		kit_error(err, LEAKSNAP_ERR_NOMEM, url, "out of memory");
		return NULL;
	}
	c->t.name = name;
	c->base = (struct sto_backend){&ch_ops, LEAKSNAP_STORE_CLICKHOUSE, 0, name, true};
	pthread_mutex_init(&c->snd.mu, NULL);
	pthread_cond_init(&c->snd.cv, NULL);
	const char *why = NULL;
	if (!ch_url_parse(url, &c->t.url, &why)) {
		kit_error(err, LEAKSNAP_ERR_USAGE, name, "%s", why);
		goto fail;
	}
	struct chbuf base = {0};
	char port[16];
	snprintf(port, sizeof(port), ":%u", c->t.url.port);
	chbuf_str(&base, "http://");
	chbuf_str(&base, c->t.url.host);
	chbuf_str(&base, port);
	chbuf_str(&base, "/?database=");
	chbuf_str(&base, c->t.url.database); /* (letters, digits and '_') */
	c->t.base = base.p;
	if (base.nomem || make_inserts(c)) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, name, "out of memory");
		goto fail;
	}
	if (ch_http_init(&c->h, &c->t, err) || check_schema(c, o->no_create, err))
		goto fail;
	return &c->base;
fail:
	ch_close(&c->base);
	return NULL;
}

/* Writing -------------------------------------------------------------------------------- */

static int ch_run_begin(struct sto_backend *b, const struct leaksnap_store_run *run,
			uint64_t ingest_id, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	char sql[128];
	uint64_t n = 0;
	snprintf(sql, sizeof(sql), "SELECT count() FROM ingests WHERE run_id = %llu "
				   "FORMAT TabSeparated", (unsigned long long)run->id);
	if (ch_query_u64(c, sql, NULL, 0, &n, err))
		return -1;
	c->in_run = true;
	c->run_stored = n != 0; /* its row and labels as they were */
	c->run_id = run->id;
	c->ingest_id = ingest_id;
	c->snapshots = 0;
	c->nsnaps = 0;
	for (int i = 0; i < STO_TABLE_COUNT; i++) {
		c->buf[i].n = 0;
		c->last_key[i] = 0;
	}
	if (c->run_stored)
		return 0;
	/* (sent with the marker, at the commit) */
	struct chbuf *r = &c->buf[STO_RUNS];
	ch_tsv_u64(r, run->id);
	ch_tsv_end(r, false);
	ch_tsv_i64(r, run->pid);
	ch_tsv_end(r, false);
	ch_tsv_text(r, run->start ? run->start : "");
	ch_tsv_end(r, false);
	ch_tsv_text(r, run->exe ? run->exe : "");
	ch_tsv_end(r, false);
	ch_tsv_text(r, run->build_id ? run->build_id : "");
	ch_tsv_end(r, false);
	ch_tsv_text(r, run->cmdline ? run->cmdline : "");
	ch_tsv_end(r, true);
	struct chbuf *l = &c->buf[STO_LABELS];
	for (size_t i = 0; i < run->label_count; i++) {
		ch_tsv_u64(l, run->id);
		ch_tsv_end(l, false);
		ch_tsv_text(l, run->labels[i].key);
		ch_tsv_end(l, false);
		ch_tsv_text(l, run->labels[i].value);
		ch_tsv_end(l, true);
	}
	if (r->nomem || l->nomem)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	return 0;
}

/* Nothing more of the run is sent (what was is never seen: no marker). */
static void ch_run_abort(struct sto_backend *b)
{
	struct ch *c = (struct ch *)b;
	if (!c->in_run)
		return;
	c->in_run = false;
	for (int i = 0; i < STO_TABLE_COUNT; i++)
		chbuf_free(&c->buf[i]);
	drain(c, NULL);
	/* (frames sent meanwhile may not be there: asked again from now) */
	kit_table_free(&c->frames_put, false);
	struct sender *s = &c->snd;
	pthread_mutex_lock(&s->mu);
	s->failed = false;
	pthread_mutex_unlock(&s->mu);
}

/* After a marker: the growth of the run's first and last complete
 * snapshots now, unless rows of that pair are there.  Other writes of the
 * run may have completed meanwhile (no transaction kept them out), and
 * what store.c computed before the marker was for the run as it saw it
 * then; whichever marker comes last sees every other here.  (Rows of a
 * pair depend on its two snapshots alone: any write's are the same.) */
static int pair_growth(struct ch *c, struct leaksnap_error *err)
{
	struct leaksnap_store_snapshot first, last;
	uint64_t rows = 0;
	size_t n;
	if (sto_run_pair(&c->base, c->run_id, false, &first, &last, &n, err))
		return -1;
	if (n < 2)
		return 0;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT count() FROM growth WHERE run_id = %llu AND first_snapshot = %llu AND "
		 "last_snapshot = %llu FORMAT TabSeparated",
		 (unsigned long long)c->run_id, (unsigned long long)first.id,
		 (unsigned long long)last.id);
	if (ch_query_u64(c, sql, NULL, 0, &rows, err))
		return -1;
	int rc = rows ? 0 : sto_pair_growth(&c->base, c->run_id, &first, &last, err) || ch_sync_rows(c, err);
	for (int i = 0; i < STO_TABLE_COUNT; i++)
		chbuf_free(&c->buf[i]);
	return rc ? -1 : 0;
}

static int ch_run_commit(struct sto_backend *b, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	if (c->snapshots == 0) { /* nothing new: not even the run's row */
		ch_run_abort(b);
		return 0;
	}
	if (ch_sync_rows(c, err))
		goto fail;
	/* the run's row and labels, unless another write completed it */
	if (!c->run_stored) {
		char sql[128];
		uint64_t n = 0;
		snprintf(sql, sizeof(sql), "SELECT count() FROM ingests WHERE run_id = %llu "
					   "FORMAT TabSeparated", (unsigned long long)c->run_id);
		if (ch_query_u64(c, sql, NULL, 0, &n, err))
			goto fail;
		if (n == 0 && (submit(c, STO_RUNS, err) || submit(c, STO_LABELS, err) ||
			       drain(c, err)))
			goto fail;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct chbuf m = {0};
	ch_tsv_u64(&m, c->ingest_id);
	ch_tsv_end(&m, false);
	ch_tsv_u64(&m, c->run_id);
	ch_tsv_end(&m, false);
	ch_tsv_u64(&m, c->snapshots);
	ch_tsv_end(&m, false);
	ch_tsv_u64(&m, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	ch_tsv_end(&m, true);
	int rc = m.nomem ? kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory")
			 : ch_http_query(&c->h, &c->t, c->insert[STO_INGESTS], m.p, m.n, NULL, 0,
					 "cannot write the completion marker", err);
	chbuf_free(&m);
	if (rc)
		goto fail;
	c->in_run = false;
	for (int i = 0; i < STO_TABLE_COUNT; i++)
		chbuf_free(&c->buf[i]);
	/* The run is visible now, with the growth this write computed: a
	 * failure of the check that follows is said, not a failed write. */
	if (pair_growth(c, err) && err) {
		char text[LEAKSNAP_ERROR_TEXT_MAX];
		snprintf(text, sizeof(text), "%s", err->text);
		int code = err->code;
		leaksnap_error_clear(err);
		kit_error(err, code, c->t.name,
			  "stored, but the growth of the run was not checked against other "
			  "writes of it: %s", text);
	}
	return 0;
fail:
	ch_run_abort(b);
	return -1;
}

static int ch_has_snapshot(struct sto_backend *b, uint64_t id, bool *has,
			   struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	for (size_t i = 0; c->in_run && i < c->nsnaps; i++)
		if (c->snaps[i] == id) {
			*has = true;
			return 0;
		}
	/* (only snapshots of complete ingests: one a killed write left is
	 * stored again) */
	char sql[200];
	snprintf(sql, sizeof(sql),
		 "SELECT count() FROM snapshots WHERE snapshot_id = %llu AND " COMPLETE
		 " FORMAT TabSeparated",
		 (unsigned long long)id);
	uint64_t n = 0;
	if (ch_query_u64(c, sql, NULL, 0, &n, err))
		return -1;
	*has = n != 0;
	return 0;
}

struct known {
	struct kit_table at;       /* frame id -> index + 1 */
	bool *known;
};

static int known_row(struct ch *c, char **f, void *ctx)
{
	struct known *k = ctx;
	uint64_t id;
	if (!ch_parse_u64(f[0], &id))
		return 1;
	void **slot = kit_table_find(&k->at, id, 0);
	(void)c;
	if (slot)
		k->known[(uintptr_t)*slot - 1] = true;
	return 0;
}

static int ch_frames_known(struct sto_backend *b, const uint64_t *ids, size_t n, bool *known,
			   struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct known k = {{0}, known};
	uint64_t *ask = malloc((n ? n : 1) * sizeof(*ask));
	size_t nask = 0;
	int rc = -1;
	if (!ask)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		known[i] = kit_table_find(&c->frames_put, ids[i], 0) != NULL;
		if (known[i])
			continue;
		void **slot = kit_table_slot(&k.at, ids[i], 0);
		if (!slot)
			goto nomem;
		if (!*slot) {
			*slot = (void *)(uintptr_t)(i + 1);
			ask[nask++] = ids[i];
		}
	}
	rc = 0;
	if (nask) {
		rc = ch_select_tsv(c, "SELECT DISTINCT frame_id FROM frames WHERE frame_id IN ids "
				   "FORMAT TabSeparated",
				ask, nask, 1, known_row, &k, err);
		if (rc > 0)
			rc = ch_bad_value(c, err);
	}
	/* an id asked twice: as its first */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		void **slot = kit_table_find(&k.at, ids[i], 0);
		if (slot)
			known[i] = known[(uintptr_t)*slot - 1];
	}
	goto out;
nomem:
	rc = kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
out:
	kit_table_free(&k.at, false);
	free(ask);
	return rc;
}

static int ch_put_snapshot(struct sto_backend *b, const struct leaksnap_store_snapshot *s,
			   struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	if (kit_grow((void **)&c->snaps, &c->capsnaps, c->nsnaps + 1, sizeof(*c->snaps)))
		return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	struct chbuf *o = &c->buf[STO_SNAPSHOTS];
	const uint64_t u[] = {s->id, s->run_id, c->ingest_id};
	for (size_t i = 0; i < 3; i++) {
		ch_tsv_u64(o, u[i]);
		ch_tsv_end(o, false);
	}
	ch_tsv_text(o, s->hash);
	ch_tsv_end(o, false);
	ch_tsv_text(o, s->source ? s->source : "");
	ch_tsv_end(o, false);
	const uint64_t v[] = {s->time_ns, s->seq, s->total_bytes, s->allocations, s->record_count,
			      s->has_reachability, s->unreachable_bytes, s->unreachable_count,
			      s->sample_interval, s->estimated_bytes, s->estimated_unreachable_bytes};
	size_t nv = sizeof(v) / sizeof(v[0]);
	for (size_t i = 0; i < nv; i++) {
		ch_tsv_u64(o, v[i]);
		ch_tsv_end(o, i + 1 == nv);
	}
	if (o->nomem)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	c->snaps[c->nsnaps++] = s->id;
	c->snapshots++;
	return 0;
}

static int ch_put_stacks(struct sto_backend *b, const struct leaksnap_store_stack *v, size_t n,
			 struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct chbuf *o = &c->buf[STO_STACKS];
	for (size_t i = 0; i < n; i++) {
		if (key_order(c, STO_STACKS, v[i].id, err))
			return -1;
		ch_rb_u64(o, v[i].id);
		ch_rb_u32(o, v[i].frame_count);
		ch_rb_ids(o, v[i].frames, v[i].frame_count);
		if (row_added(c, STO_STACKS, err))
			return -1;
	}
	return 0;
}

static int ch_put_frames(struct sto_backend *b, const struct leaksnap_store_frame *v, size_t n,
			 struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct chbuf *o = &c->buf[STO_FRAMES], *y = &c->buf[STO_SYMBOLS];
	for (size_t i = 0; i < n; i++) {
		void **slot = kit_table_slot(&c->frames_put, v[i].id, 0);
		if (!slot)
			return kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
		if (*slot)
			continue; /* sent before, symbols and all */
		*slot = (void *)1;
		for (size_t k = 0; k < v[i].symbol_count; k++) {
			const struct leaksnap_store_symbol *s = &v[i].symbols[k];
			ch_tsv_u64(y, v[i].id);
			ch_tsv_end(y, false);
			ch_tsv_u64(y, k);
			ch_tsv_end(y, false);
			ch_tsv_text(y, s->function ? s->function : "");
			ch_tsv_end(y, false);
			ch_tsv_text(y, s->file ? s->file : "");
			ch_tsv_end(y, false);
			ch_tsv_u64(y, s->line);
			ch_tsv_end(y, false);
			ch_tsv_u64(y, s->column);
			ch_tsv_end(y, false);
			ch_tsv_u64(y, s->inlined);
			ch_tsv_end(y, true);
		}
		ch_tsv_u64(o, v[i].id);
		ch_tsv_end(o, false);
		ch_tsv_text(o, v[i].module ? v[i].module : "");
		ch_tsv_end(o, false);
		ch_tsv_text(o, v[i].build_id ? v[i].build_id : "");
		ch_tsv_end(o, false);
		ch_tsv_u64(o, v[i].rel_pc);
		ch_tsv_end(o, true);
		if (row_added(c, STO_SYMBOLS, err) || row_added(c, STO_FRAMES, err))
			return -1;
	}
	return 0;
}

static int ch_put_records(struct sto_backend *b, const struct leaksnap_store_record *v, size_t n,
			  struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct chbuf *o = &c->buf[STO_RECORDS];
	for (size_t i = 0; i < n; i++) {
		/* (one snapshot's records come in index order) */
		if (key_order(c, STO_RECORDS, v[i].index, err))
			return -1;
		ch_rb_u64(o, v[i].snapshot_id);
		ch_rb_u64(o, v[i].index);
		ch_rb_u64(o, v[i].stack_id);
		ch_rb_u64(o, v[i].size);
		ch_rb_u64(o, v[i].count);
		ch_rb_u64(o, v[i].unreachable);
		ch_rb_u8(o, v[i].zygote);
		if (row_added(c, STO_RECORDS, err))
			return -1;
	}
	return 0;
}

static int ch_put_growth(struct sto_backend *b, const struct leaksnap_store_growth *v, size_t n,
			 struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct chbuf *o = &c->buf[STO_GROWTH];
	for (size_t i = 0; i < n; i++) {
		if (key_order(c, STO_GROWTH, v[i].stack_id, err))
			return -1;
		ch_rb_u64(o, v[i].run_id);
		ch_rb_u64(o, v[i].first_snapshot);
		ch_rb_u64(o, v[i].last_snapshot);
		ch_rb_u64(o, v[i].stack_id);
		ch_rb_u64(o, (uint64_t)v[i].bytes);
		ch_rb_u64(o, (uint64_t)v[i].count);
	}
	/* (a pair's rows in one body, seen whole or not at all: no flush
	 * before the commit's) */
	return o->nomem ? kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory") : 0;
}

static const struct sto_ops ch_ops = {
	ch_close, ch_run_begin, ch_run_commit, ch_run_abort, ch_has_snapshot, ch_frames_known,
	ch_put_snapshot, ch_put_stacks, ch_put_frames, ch_put_records, ch_runs, ch_snapshots,
	ch_records, ch_stacks, ch_frames, ch_put_growth, ch_growth, ch_row_count,
};
