/* leaksnap store: reading a ClickHouse store -- rows of complete ingests
 * only, each key once (a row written twice, by a write that was killed
 * and by the next, or by two writers of one run, is the same row):
 * answers ordered by key and repeats skipped, or a table of keys seen.
 * Tables of numbers are read as RowBinary as the bytes arrive, those with
 * text as TabSeparated, unescaped by ch_codec.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_internal.h"

struct visit {
	void *fn;
	void *arg;
	struct leaksnap_error *err;
	uint64_t last;             /* the key of the row before (rows in key order) */
	bool any;
	int bad;                   /* a row could not be read */
};

/* Runs: their rows and labels, each (run, key) once, of runs with a
 * complete ingest; two writes of a run that raced with other labels: the
 * first value in byte order. */
struct runrow {
	uint64_t id;
	int64_t pid;
	char *s[4];
	size_t label0, nlabels;
};

struct runlist {
	struct runrow *v;
	size_t n, cap;
	struct leaksnap_store_label *labels;
	uint64_t *label_run;
	size_t nl, capl, capr;
	bool nomem;
};

static int run_tsv(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct runlist *l = ctx;
	uint64_t id;
	int64_t pid;
	if (!ch_parse_u64(f[0], &id) || !ch_parse_i64(f[1], &pid))
		return 1;
	if (l->n && l->v[l->n - 1].id == id)
		return 0;
	if (kit_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
		l->nomem = true;
		return 2;
	}
	struct runrow *r = &l->v[l->n];
	*r = (struct runrow){.id = id, .pid = pid};
	l->n++;
	for (int i = 0; i < 4; i++)
		if (!(r->s[i] = strdup(f[2 + i]))) {
			l->nomem = true;
			return 2;
		}
	return 0;
}

static int label_tsv(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct runlist *l = ctx;
	uint64_t id;
	if (!ch_parse_u64(f[0], &id))
		return 1;
	if (l->nl && l->label_run[l->nl - 1] == id && strcmp(l->labels[l->nl - 1].key, f[1]) == 0)
		return 0; /* (the first value of a key) */
	if (kit_grow((void **)&l->labels, &l->capl, l->nl + 1, sizeof(*l->labels)) ||
	    kit_grow((void **)&l->label_run, &l->capr, l->nl + 1, sizeof(*l->label_run))) {
		l->nomem = true;
		return 2;
	}
	char *k = strdup(f[1]), *v = strdup(f[2]);
	if (!k || !v) {
		free(k);
		free(v);
		l->nomem = true;
		return 2;
	}
	l->labels[l->nl] = (struct leaksnap_store_label){k, v};
	l->label_run[l->nl++] = id;
	return 0;
}

int ch_runs(struct sto_backend *b, leaksnap_store_run_fn fn, void *arg,
		   struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct runlist l = {0};
	int rc = ch_select_tsv(c, "SELECT run_id, pid, process_start, exe, build_id, cmdline FROM runs "
			       "WHERE run_id IN (SELECT run_id FROM ingests) ORDER BY run_id "
			       "FORMAT TabSeparated",
			    NULL, 0, 6, run_tsv, &l, err);
	if (rc == 0)
		rc = ch_select_tsv(c, "SELECT run_id, name, value FROM run_labels "
				   "WHERE run_id IN (SELECT run_id FROM ingests) "
				   "ORDER BY run_id, name, value FORMAT TabSeparated",
				NULL, 0, 3, label_tsv, &l, err);
	if (l.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	else if (rc > 0)
		rc = ch_bad_value(c, err);
	size_t at = 0;
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		const struct runrow *r = &l.v[i];
		while (at < l.nl && l.label_run[at] < r->id)
			at++;
		size_t end = at;
		while (end < l.nl && l.label_run[end] == r->id)
			end++;
		struct leaksnap_store_run run = {.id = r->id, .pid = r->pid, .start = r->s[0],
						 .exe = r->s[1], .build_id = r->s[2],
						 .cmdline = r->s[3], .labels = l.labels + at,
						 .label_count = end - at};
		rc = fn(arg, &run);
		at = end;
	}
	for (size_t i = 0; i < l.n; i++)
		for (int k = 0; k < 4; k++)
			free(l.v[i].s[k]);
	for (size_t i = 0; i < l.nl; i++) {
		free((char *)(uintptr_t)l.labels[i].key);
		free((char *)(uintptr_t)l.labels[i].value);
	}
	free(l.v);
	free(l.labels);
	free(l.label_run);
	return rc;
}

static int snapshot_tsv(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct visit *vi = ctx;
	struct leaksnap_store_snapshot s = {0};
	uint64_t u[11];
	if (!ch_parse_u64(f[0], &s.id) || !ch_parse_u64(f[1], &s.run_id))
		return vi->bad = 1;
	for (int i = 0; i < 11; i++)
		if (!ch_parse_u64(f[4 + i], &u[i]))
			return vi->bad = 1;
	if (vi->any && vi->last == s.id)
		return 0; /* (stored by two writes) */
	vi->any = true;
	vi->last = s.id;
	snprintf(s.hash, sizeof(s.hash), "%s", f[2]);
	s.source = f[3];
	s.time_ns = u[0];
	s.seq = u[1];
	s.total_bytes = u[2];
	s.allocations = u[3];
	s.record_count = u[4];
	s.has_reachability = u[5] != 0;
	s.unreachable_bytes = u[6];
	s.unreachable_count = u[7];
	s.sample_interval = u[8];
	s.estimated_bytes = u[9];
	s.estimated_unreachable_bytes = u[10];
	return ((leaksnap_store_snapshot_fn)vi->fn)(vi->arg, &s);
}

int ch_snapshots(struct sto_backend *b, uint64_t run_id, bool with_current,
			leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	char sql[640], cur[64] = "", run[64] = "";
	if (with_current && c->in_run) {
		if (ch_sync_rows(c, err))
			return -1;
		snprintf(cur, sizeof(cur), " OR ingest_id = %llu", (unsigned long long)c->ingest_id);
	}
	if (run_id)
		snprintf(run, sizeof(run), "run_id = %llu AND ", (unsigned long long)run_id);
	snprintf(sql, sizeof(sql),
		 "SELECT snapshot_id, run_id, content_hash, source, time_ns, seq, total_bytes, "
		 "allocations, record_count, has_reachability, unreachable_bytes, "
		 "unreachable_count, %s "
		 "FROM snapshots WHERE %s(" COMPLETE "%s) ORDER BY snapshot_id "
		 "FORMAT TabSeparated",
		 sto_snapshot_v3_columns(b->version), run, cur);
	struct visit vi = {(void *)fn, arg, err, 0, false, 0};
	int rc = ch_select_tsv(c, sql, NULL, 0, 15, snapshot_tsv, &vi, err);
	return vi.bad ? ch_bad_value(c, err) : rc;
}

/* RowBinary rows as they come */

static int record_rb(void *ctx, const char **p, const char *end)
{
	struct visit *vi = ctx;
	while (end - *p >= 49) {
		uint64_t u[7];
		for (int i = 0; i < 6; i++)
			ch_rb_get(p, end, 8, &u[i]);
		ch_rb_get(p, end, 1, &u[6]);
		if (vi->any && vi->last == u[1])
			continue; /* (written twice) */
		vi->any = true;
		vi->last = u[1];
		struct leaksnap_store_record r = {u[0], u[1], u[2], u[3], u[4], u[5], u[6] != 0};
		int rc = ((leaksnap_store_record_fn)vi->fn)(vi->arg, &r);
		if (rc)
			return rc;
	}
	return 0;
}

int ch_records(struct sto_backend *b, uint64_t snapshot_id, leaksnap_store_record_fn fn,
		      void *arg, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	if (c->in_run && ch_sync_rows(c, err))
		return -1;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT snapshot_id, idx, stack_id, size, count, unreachable, zygote FROM records "
		 "WHERE snapshot_id = %llu ORDER BY idx FORMAT RowBinary",
		 (unsigned long long)snapshot_id);
	struct visit vi = {(void *)fn, arg, err, 0, false, 0};
	return ch_http_stream(&c->h, &c->t, sql, NULL, 0, record_rb, &vi, "cannot read the store",
			      err);
}

struct stackvisit {
	struct visit vi;
	struct kit_table seen;
	uint64_t *ids;
	size_t cap;
	bool nomem;
};

static int stack_rb(void *ctx, const char **p, const char *end)
{
	struct stackvisit *sv = ctx;
	for (;;) {
		const char *q = *p;
		uint64_t id, n;
		if (!ch_rb_get(&q, end, 8, &id) || !ch_rb_len(&q, end, &n))
			return 0;
		if (n > (1u << 20)) {
			sv->vi.bad = 1;
			return -1;
		}
		if ((size_t)(end - q) < 8 * n)
			return 0;
		void **slot = kit_table_slot(&sv->seen, id, 0);
		if (!slot || kit_grow((void **)&sv->ids, &sv->cap, n ? n : 1, sizeof(*sv->ids))) {
			sv->nomem = true;
			return -1;
		}
		for (uint64_t i = 0; i < n; i++)
			ch_rb_get(&q, end, 8, &sv->ids[i]);
		*p = q;
		if (*slot)
			continue; /* (written twice) */
		*slot = (void *)1;
		struct leaksnap_store_stack s = {id, sv->ids, (uint32_t)n};
		int rc = ((leaksnap_store_stack_fn)sv->vi.fn)(sv->vi.arg, &s);
		if (rc)
			return rc;
	}
}

int ch_stacks(struct sto_backend *b, const uint64_t *ids, size_t n,
		     leaksnap_store_stack_fn fn, void *arg, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	if (n == 0)
		return 0;
	struct stackvisit sv = {{(void *)fn, arg, err, 0, false, 0}, {0}, NULL, 0, false};
	int rc = ch_http_stream(&c->h, &c->t,
				"SELECT stack_id, frame_ids FROM stacks WHERE stack_id IN ids "
				"FORMAT RowBinary",
				ids, n, stack_rb, &sv, "cannot read the store", err);
	if (sv.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	else if (sv.vi.bad)
		rc = ch_bad_value(c, err);
	kit_table_free(&sv.seen, false);
	free(sv.ids);
	return rc;
}

/* Frames: theirs, then their symbols, joined here. */
struct sym {
	uint64_t frame;
	uint32_t depth;
	struct leaksnap_store_symbol s;
};

struct framelist {
	struct leaksnap_store_frame *v;
	char **strs;               /* module, build_id of each */
	size_t n, cap, caps;
	struct sym *sy;
	char **sstrs;
	size_t nsy, capsy, capss;
	bool nomem;
};

static int frame_tsv(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct framelist *l = ctx;
	uint64_t id, pc;
	if (!ch_parse_u64(f[0], &id) || !ch_parse_u64(f[3], &pc))
		return 1;
	if (l->n && l->v[l->n - 1].id == id)
		return 0;
	if (kit_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)) ||
	    kit_grow((void **)&l->strs, &l->caps, 2 * (l->n + 1), sizeof(*l->strs))) {
		l->nomem = true;
		return 2;
	}
	char *m = strdup(f[1]), *bid = strdup(f[2]);
	l->strs[2 * l->n] = m;
	l->strs[2 * l->n + 1] = bid;
	l->v[l->n++] = (struct leaksnap_store_frame){id, m ? m : "", bid ? bid : "", pc, NULL, 0};
	if (!m || !bid) {
		l->nomem = true;
		return 2;
	}
	return 0;
}

static int symbol_tsv(struct ch *c, char **f, void *ctx)
{
	(void)c;
	struct framelist *l = ctx;
	uint64_t id, depth, line, col, inl;
	if (!ch_parse_u64(f[0], &id) || !ch_parse_u64(f[1], &depth) || !ch_parse_u64(f[4], &line) ||
	    !ch_parse_u64(f[5], &col) || !ch_parse_u64(f[6], &inl))
		return 1;
	if (l->nsy && l->sy[l->nsy - 1].frame == id && l->sy[l->nsy - 1].depth == depth)
		return 0; /* (written twice) */
	if (kit_grow((void **)&l->sy, &l->capsy, l->nsy + 1, sizeof(*l->sy)) ||
	    kit_grow((void **)&l->sstrs, &l->capss, 2 * (l->nsy + 1), sizeof(*l->sstrs))) {
		l->nomem = true;
		return 2;
	}
	char *fn = strdup(f[2]), *file = strdup(f[3]);
	l->sstrs[2 * l->nsy] = fn;
	l->sstrs[2 * l->nsy + 1] = file;
	l->sy[l->nsy++] = (struct sym){id, (uint32_t)depth,
				       {fn ? fn : "", file ? file : "", (uint32_t)line,
					(uint32_t)col, inl != 0}};
	if (!fn || !file) {
		l->nomem = true;
		return 2;
	}
	return 0;
}

int ch_frames(struct sto_backend *b, const uint64_t *ids, size_t n,
		     leaksnap_store_frame_fn fn, void *arg, struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	if (n == 0)
		return 0;
	struct framelist l = {0};
	struct leaksnap_store_symbol *syms = NULL;
	size_t capsyms = 0;
	int rc = ch_select_tsv(c, "SELECT frame_id, module, build_id, rel_pc FROM frames "
			       "WHERE frame_id IN ids ORDER BY frame_id FORMAT TabSeparated",
			    ids, n, 4, frame_tsv, &l, err);
	if (rc == 0)
		rc = ch_select_tsv(c, "SELECT frame_id, depth, function, file, line, col, inlined "
				   "FROM symbols WHERE frame_id IN ids ORDER BY frame_id, depth "
				   "FORMAT TabSeparated",
				ids, n, 7, symbol_tsv, &l, err);
	if (l.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
	else if (rc > 0)
		rc = ch_bad_value(c, err);
	size_t at = 0;
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		struct leaksnap_store_frame f = l.v[i];
		while (at < l.nsy && l.sy[at].frame < f.id)
			at++;
		size_t k = 0;
		for (; at + k < l.nsy && l.sy[at + k].frame == f.id; k++) {
			if (kit_grow((void **)&syms, &capsyms, k + 1, sizeof(*syms))) {
				rc = kit_error(err, LEAKSNAP_ERR_NOMEM, c->t.name, "out of memory");
				break;
			}
			syms[k] = l.sy[at + k].s;
		}
		if (rc)
			break;
		f.symbols = k ? syms : NULL;
		f.symbol_count = k;
		rc = fn(arg, &f);
	}
	for (size_t i = 0; i < 2 * l.n; i++)
		free(l.strs[i]);
	for (size_t i = 0; i < 2 * l.nsy; i++)
		free(l.sstrs[i]);
	free(l.v);
	free(l.strs);
	free(l.sy);
	free(l.sstrs);
	free(syms);
	return rc;
}

static int growth_rb(void *ctx, const char **p, const char *end)
{
	struct visit *vi = ctx;
	while (end - *p >= 48) {
		uint64_t u[6];
		for (int i = 0; i < 6; i++)
			ch_rb_get(p, end, 8, &u[i]);
		struct leaksnap_store_growth g = {u[0], u[1], u[2], u[3], (int64_t)u[4], (int64_t)u[5]};
		int rc = ((leaksnap_store_growth_fn)vi->fn)(vi->arg, &g);
		if (rc)
			return rc;
	}
	return 0;
}

/* (every row, of every pair and of runs not complete: growth.c keeps the
 * current pair of complete runs, each (run, stack) once) */
int ch_growth(struct sto_backend *b, leaksnap_store_growth_fn fn, void *arg,
		     struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	struct visit vi = {(void *)fn, arg, err, 0, false, 0};
	return ch_http_stream(&c->h, &c->t,
			      "SELECT run_id, first_snapshot, last_snapshot, stack_id, bytes, count "
			      "FROM growth FORMAT RowBinary",
			      NULL, 0, growth_rb, &vi, "cannot read the store", err);
}

/* Rows as the table holds them once merged: each key once (rows only
 * added: every one). */
int ch_row_count(struct sto_backend *b, const struct sto_table *t, uint64_t *n,
			struct leaksnap_error *err)
{
	struct ch *c = (struct ch *)b;
	char sql[256]; /* (the schema's names) */
	if (t->dedup == STO_ONCE)
		snprintf(sql, sizeof(sql), "SELECT uniqExact(%s) FROM %s FORMAT TabSeparated",
			 t->key, t->name);
	else
		snprintf(sql, sizeof(sql), "SELECT count() FROM %s FORMAT TabSeparated", t->name);
	return ch_query_u64(c, sql, NULL, 0, n, err);
}

