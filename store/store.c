/* leaksnap store: opening a store on its engine, and the interface every
 * engine implements, checked once here (a run begun before a put, one run
 * at a time). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kit_table.h"
#include "store_internal.h"


enum leaksnap_store_engine leaksnap_store_engine_of(const char *target)
{
	return strncasecmp(target, "clickhouse://", 13) == 0 ? LEAKSNAP_STORE_CLICKHOUSE
							      : LEAKSNAP_STORE_SQLITE;
}

struct leaksnap_store *leaksnap_store_open(const char *target,
					   const struct leaksnap_store_open_opts *opts,
					   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_store_open_opts o;
	if (kit_opts(&o, sizeof(o), opts, "leaksnap_store_open_opts", err) != 0)
		return NULL;
	if (!*target) {
		kit_error(err, LEAKSNAP_ERR_USAGE, target, "no store named");
		return NULL;
	}
	struct leaksnap_store *s = calloc(1, sizeof(*s));
	if (!s) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, target, "out of memory");
		return NULL;
	}
	s->b = leaksnap_store_engine_of(target) == LEAKSNAP_STORE_CLICKHOUSE
		       ? sto_clickhouse_open(target, &o, err)
		       : sto_sqlite_open(target, &o, err);
	if (!s->b) {
		free(s);
		return NULL;
	}
	return s;
}

void leaksnap_store_close(struct leaksnap_store *s)
{
	if (!s)
		return;
	s->b->ops->close(s->b);
	free(s);
}

enum leaksnap_store_engine leaksnap_store_engine(const struct leaksnap_store *s)
{
	return s->b->engine;
}

unsigned leaksnap_store_schema_version(const struct leaksnap_store *s)
{
	return s->b->version;
}

static int no_run(struct leaksnap_store *s, bool want, struct leaksnap_error *err)
{
	if (s->in_run == want)
		return 0;
	return kit_error(err, LEAKSNAP_ERR_USAGE, s->b->name,
			 want ? "no run begun" : "a run is already begun");
}

int leaksnap_store_run_begin(struct leaksnap_store *s, const struct leaksnap_store_run *run,
			     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (no_run(s, false, err))
		return -1;
	uint64_t ingest_id = 0;
	if (getrandom(&ingest_id, sizeof(ingest_id), 0) != (ssize_t)sizeof(ingest_id)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ingest_id = kit_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
				      (uint64_t)getpid() << 17);
	}
	if (s->b->ops->run_begin(s->b, run, ingest_id, err)) {
		s->b->ops->run_abort(s->b);
		return -1;
	}
	s->in_run = true;
	s->run_id = run->id;
	s->run_snapshots = 0;
	return 0;
}

int leaksnap_store_run_commit(struct leaksnap_store *s, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (no_run(s, true, err))
		return -1;
	if (s->run_snapshots && sto_run_growth(s->b, s->run_id, err)) {
		leaksnap_store_run_abort(s);
		return -1;
	}
	s->in_run = false;
	return s->b->ops->run_commit(s->b, err);
}

void leaksnap_store_run_abort(struct leaksnap_store *s)
{
	if (!s || !s->in_run)
		return;
	s->in_run = false;
	s->b->ops->run_abort(s->b);
}

int leaksnap_store_has_snapshot(struct leaksnap_store *s, uint64_t id, bool *has,
				struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->has_snapshot(s->b, id, has, err);
}

int leaksnap_store_frames_known(struct leaksnap_store *s, const uint64_t *ids, size_t n,
				bool *known, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->frames_known(s->b, ids, n, known, err);
}

int leaksnap_store_put_snapshot(struct leaksnap_store *s, const struct leaksnap_store_snapshot *snap,
				struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_store_snapshot row = *snap;
	if (!row.sample_interval) { /* (not sampled: the estimates are the totals) */
		row.estimated_bytes = row.total_bytes;
		row.estimated_unreachable_bytes = row.unreachable_bytes;
	}
	if (no_run(s, true, err) || s->b->ops->put_snapshot(s->b, &row, err))
		return -1;
	s->run_snapshots++;
	return 0;
}

int leaksnap_store_put_stacks(struct leaksnap_store *s, const struct leaksnap_store_stack *v,
			      size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_stacks(s->b, v, n, err);
}

int leaksnap_store_put_frames(struct leaksnap_store *s, const struct leaksnap_store_frame *v,
			      size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_frames(s->b, v, n, err);
}

int leaksnap_store_put_records(struct leaksnap_store *s, const struct leaksnap_store_record *v,
			       size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_records(s->b, v, n, err);
}

/* Snapshots, kept to be sorted ------------------------------------------------- */

/* A snapshot as kept here: its strings copied. */
struct kept {
	struct leaksnap_store_snapshot s;
	char *source;
};

struct keep {
	struct kept *v;
	size_t n, cap;
	bool nomem;
};

static int keep_snapshot(void *arg, const struct leaksnap_store_snapshot *snap)
{
	struct keep *k = arg;
	if (kit_grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)) ||
	    !(k->v[k->n].source = strdup(snap->source))) {
		k->nomem = true;
		return 1;
	}
	k->v[k->n].s = *snap;
	k->v[k->n].s.source = k->v[k->n].source;
	k->n++;
	return 0;
}

static void keep_free(struct keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].source);
	free(k->v);
}

int sto_cmp_capture(const struct leaksnap_store_snapshot *x,
		    const struct leaksnap_store_snapshot *y)
{
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_capture(const void *a, const void *b)
{
	return sto_cmp_capture(a, b);
}

/* The snapshots of @run_id (0: all), each once, in capture order, into @k. */
static int sorted_snapshots(struct leaksnap_store *s, uint64_t run_id, bool with_current,
			    struct keep *k, struct leaksnap_error *err)
{
	*k = (struct keep){NULL, 0, 0, false};
	int rc = s->b->ops->snapshots(s->b, run_id, with_current, keep_snapshot, k, err);
	if (k->nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, s->b->name, "out of memory");
	if (rc) {
		keep_free(k);
		return -1;
	}
	if (k->n > 1)
		qsort(k->v, k->n, sizeof(*k->v), cmp_capture);
	size_t w = 0; /* each id once (one written twice on ClickHouse) */
	for (size_t i = 0; i < k->n; i++) {
		if (w && k->v[w - 1].s.id == k->v[i].s.id) {
			free(k->v[i].source);
			continue;
		}
		k->v[w++] = k->v[i];
	}
	k->n = w;
	return 0;
}

/* Runs ------------------------------------------------------------------------------ */

struct run_order {
	uint64_t id, first_time;
};

struct runs_visit {
	const struct run_order *order;
	size_t n;
	struct kept_run {
		size_t at;      /* its place */
		struct leaksnap_store_run r;
		char *strs[5];  /* start, exe, build_id, cmdline; labels' below */
		struct leaksnap_store_label *labels;
	} *v;
	size_t nv;
	struct kit_table at;    /* run id -> its place + 1 */
	bool nomem;
};

static int cmp_run_order(const void *a, const void *b)
{
	const struct run_order *x = a, *y = b;
	if (x->first_time != y->first_time)
		return x->first_time < y->first_time ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_kept_run(const void *a, const void *b)
{
	const struct kept_run *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

static void kept_run_free(struct kept_run *k)
{
	for (size_t i = 0; i < 5; i++)
		free(k->strs[i]);
	for (size_t i = 0; k->labels && i < k->r.label_count; i++) {
		free((char *)(uintptr_t)k->labels[i].key);
		free((char *)(uintptr_t)k->labels[i].value);
	}
	free(k->labels);
}

static int keep_run(void *arg, const struct leaksnap_store_run *run)
{
	struct runs_visit *v = arg;
	void **slot = kit_table_slot(&v->at, run->id, 0);
	if (!slot) {
		v->nomem = true;
		return 1;
	}
	uintptr_t taken = (uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1);
	if (!*slot || ((uintptr_t)*slot & taken) || v->nv == v->n)
		return 0; /* no snapshot seen (written meanwhile), or said twice */
	size_t at = (uintptr_t)*slot - 1;
	*slot = (void *)((uintptr_t)*slot | taken);
	struct kept_run *k = &v->v[v->nv];
	memset(k, 0, sizeof(*k));
	k->at = at;
	k->r = *run;
	const char *src[4] = {run->start, run->exe, run->build_id, run->cmdline};
	for (size_t i = 0; i < 4; i++)
		if (!(k->strs[i] = strdup(src[i] ? src[i] : "")))
			goto nomem;
	k->r.start = k->strs[0];
	k->r.exe = k->strs[1];
	k->r.build_id = k->strs[2];
	k->r.cmdline = k->strs[3];
	k->r.label_count = 0;
	k->labels = calloc(run->label_count ? run->label_count : 1, sizeof(*k->labels));
	if (!k->labels)
		goto nomem;
	for (size_t i = 0; i < run->label_count; i++) {
		char *kk = strdup(run->labels[i].key), *vv = strdup(run->labels[i].value);
		if (!kk || !vv) {
			free(kk);
			free(vv);
			goto nomem;
		}
		k->labels[k->r.label_count++] = (struct leaksnap_store_label){kk, vv};
	}
	k->r.labels = k->labels;
	v->nv++;
	return 0;
nomem:
	kept_run_free(k);
	v->nomem = true;
	return 1;
}

int leaksnap_store_runs(struct leaksnap_store *s, leaksnap_store_run_fn fn, void *arg,
			struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct keep k;
	if (sorted_snapshots(s, 0, false, &k, err))
		return -1;
	/* each run's first capture time */
	struct run_order *order = calloc(k.n ? k.n : 1, sizeof(*order));
	size_t n = 0;
	int rc = -1;
	struct runs_visit v = {0};
	if (!order)
		goto nomem;
	for (size_t i = 0; i < k.n; i++) { /* (in capture order: the first is the run's first) */
		void **slot = kit_table_slot(&v.at, k.v[i].s.run_id, 0);
		if (!slot)
			goto nomem;
		if (!*slot) {
			order[n++] = (struct run_order){k.v[i].s.run_id, k.v[i].s.time_ns};
			*slot = (void *)1;
		}
	}
	if (n > 1)
		qsort(order, n, sizeof(*order), cmp_run_order);
	for (size_t i = 0; i < n; i++)
		*kit_table_find(&v.at, order[i].id, 0) = (void *)(uintptr_t)(i + 1);
	v.order = order;
	v.n = n;
	if (!(v.v = calloc(n ? n : 1, sizeof(*v.v))))
		goto nomem;
	rc = s->b->ops->runs(s->b, keep_run, &v, err);
	if (v.nomem)
		goto nomem;
	if (rc)
		goto out;
	if (v.nv > 1)
		qsort(v.v, v.nv, sizeof(*v.v), cmp_kept_run);
	for (size_t i = 0; i < v.nv && rc == 0; i++)
		rc = fn(arg, &v.v[i].r);
	goto out;
nomem:
	rc = kit_error(err, LEAKSNAP_ERR_NOMEM, s->b->name, "out of memory");
out:
	for (size_t i = 0; i < v.nv; i++)
		kept_run_free(&v.v[i]);
	free(v.v);
	kit_table_free(&v.at, false);
	free(order);
	keep_free(&k);
	return rc;
}

int leaksnap_store_snapshots(struct leaksnap_store *s, uint64_t run_id,
			     leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct keep k;
	if (sorted_snapshots(s, run_id, false, &k, err))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < k.n && rc == 0; i++)
		rc = fn(arg, &k.v[i].s);
	keep_free(&k);
	return rc;
}

int leaksnap_store_records(struct leaksnap_store *s, uint64_t snapshot_id,
			   leaksnap_store_record_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->records(s->b, snapshot_id, fn, arg, err);
}

int leaksnap_store_stacks(struct leaksnap_store *s, const uint64_t *ids, size_t n,
			  leaksnap_store_stack_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->stacks(s->b, ids, n, fn, arg, err);
}

int leaksnap_store_frames(struct leaksnap_store *s, const uint64_t *ids, size_t n,
			  leaksnap_store_frame_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->frames(s->b, ids, n, fn, arg, err);
}

int leaksnap_store_row_count(struct leaksnap_store *s, const char *table, uint64_t *n,
			     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	const struct sto_table *t = sto_table_named(table);
	if (!t)
		return kit_error(err, LEAKSNAP_ERR_USAGE, s->b->name, "no table '%s' in the schema",
				 table);
	return s->b->ops->row_count(s->b, t, n, err);
}
