/* leaksnap store: what grew within each run.  When a run is written, the
 * stacks whose bytes at its last snapshot exceed those at its first are
 * kept (the growth table), so that a history of many runs never reads
 * their records.  A row names the pair of snapshots it was computed from;
 * a run's rows of any other pair than its first and last now are stale
 * (a later write added a snapshot before the first or after the last),
 * and readers skip them. */
#include <stdlib.h>
#include <string.h>

#include "kit_table.h"
#include "store_internal.h"

/* The first and last snapshot of a run, in capture order. */
struct ends {
	struct leaksnap_store_snapshot first, last;
	size_t n;
};

static int on_end(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct ends *e = arg;
	struct leaksnap_store_snapshot k = *s;
	k.source = NULL;
	if (e->n == 0 || sto_cmp_capture(&k, &e->first) < 0)
		e->first = k;
	if (e->n == 0 || sto_cmp_capture(&k, &e->last) > 0)
		e->last = k;
	e->n++;
	return 0;
}

/* Bytes and allocations per stack: last minus first.  A sampled
 * snapshot's records count sampled blocks: each record's figures are its
 * estimates (leaksnap_sample_estimate(), rounded per record as every
 * reader does), so a stack's growth is what leakdiff finds for it. */
struct sums {
	struct kit_table at;       /* stack id -> index + 1 */
	struct leaksnap_store_growth *v;
	size_t n, cap;
	int sign;
	uint64_t interval;         /* of the snapshot whose records are read */
	bool nomem;
};

static int on_record(void *arg, const struct leaksnap_store_record *rec)
{
	struct sums *s = arg;
	void **slot = kit_table_slot(&s->at, rec->stack_id, 0);
	if (!slot) {
		s->nomem = true;
		return 1;
	}
	if (!*slot) {
		if (kit_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
			s->nomem = true;
			return 1;
		}
		s->v[s->n] = (struct leaksnap_store_growth){.stack_id = rec->stack_id};
		*slot = (void *)(uintptr_t)(++s->n);
	}
	struct leaksnap_store_growth *g = &s->v[(uintptr_t)*slot - 1];
	uint64_t bytes = rec->size * rec->count, count = rec->count;
	if (s->interval)
		leaksnap_sample_estimate(rec->size, rec->count, s->interval, &bytes, &count);
	g->bytes += s->sign * (int64_t)bytes;
	g->count += s->sign * (int64_t)count;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct leaksnap_store_growth *x = a, *y = b;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

int sto_run_pair(struct sto_backend *b, uint64_t run_id, bool with_current,
		 struct leaksnap_store_snapshot *first, struct leaksnap_store_snapshot *last,
		 size_t *n, struct leaksnap_error *err)
{
	struct ends e = {0};
	if (b->ops->snapshots(b, run_id, with_current, on_end, &e, err))
		return -1;
	*first = e.first;
	*last = e.last;
	*n = e.n;
	return 0;
}

int sto_pair_growth(struct sto_backend *b, uint64_t run_id,
		    const struct leaksnap_store_snapshot *first,
		    const struct leaksnap_store_snapshot *last, struct leaksnap_error *err)
{
	struct sums sums = {.sign = -1, .interval = first->sample_interval};
	int rc = b->ops->records(b, first->id, on_record, &sums, err);
	sums.sign = 1;
	sums.interval = last->sample_interval;
	if (rc == 0 && !sums.nomem)
		rc = b->ops->records(b, last->id, on_record, &sums, err);
	if (sums.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, b->name, "out of memory");
	size_t w = 0;
	for (size_t i = 0; i < sums.n; i++) {
		if (sums.v[i].bytes > 0) {
			sums.v[w] = sums.v[i];
			sums.v[w].run_id = run_id;
			sums.v[w].first_snapshot = first->id;
			sums.v[w].last_snapshot = last->id;
			w++;
		}
	}
	if (rc == 0) {
		if (w > 1)
			qsort(sums.v, w, sizeof(*sums.v), cmp_stack);
		rc = b->ops->put_growth(b, sums.v, w, err);
	}
	kit_table_free(&sums.at, false);
	free(sums.v);
	return rc;
}

int sto_run_growth(struct sto_backend *b, uint64_t run_id, struct leaksnap_error *err)
{
	struct ends was = {0}, now = {0};
	if (b->ops->snapshots(b, run_id, false, on_end, &was, err) ||
	    b->ops->snapshots(b, run_id, true, on_end, &now, err))
		return -1;
	if (now.n < 2 ||
	    (was.n >= 2 && was.first.id == now.first.id && was.last.id == now.last.id))
		return 0; /* one snapshot, or the pair stored before */
	return sto_pair_growth(b, run_id, &now.first, &now.last, err);
}

/* Reading: the rows of each run's pair now ------------------------------------ */

struct pairs {
	struct kit_table ends;     /* run id -> struct ends * */
	bool nomem;
};

static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct pairs *p = arg;
	void **slot = kit_table_slot(&p->ends, s->run_id, 0);
	if (!slot || (!*slot && !(*slot = calloc(1, sizeof(struct ends))))) {
		p->nomem = true;
		return 1;
	}
	return on_end(*slot, s);
}

struct filter {
	struct pairs *p;
	struct kit_table seen;     /* (run id, stack id), when rows repeat */
	bool repeat;
	leaksnap_store_growth_fn fn;
	void *arg;
	bool nomem;
};

static int on_growth(void *arg, const struct leaksnap_store_growth *g)
{
	struct filter *f = arg;
	void **e = kit_table_find(&f->p->ends, g->run_id, 0);
	const struct ends *x = e ? *e : NULL;
	if (!x || x->n < 2 || x->first.id != g->first_snapshot || x->last.id != g->last_snapshot)
		return 0; /* stale, or of a run not complete */
	if (!f->repeat)
		return f->fn(f->arg, g);
	void **slot = kit_table_slot(&f->seen, g->run_id, g->stack_id);
	if (!slot) {
		f->nomem = true;
		return 1;
	}
	if (*slot)
		return 0; /* written twice (ClickHouse) */
	*slot = (void *)1;
	return f->fn(f->arg, g);
}

int leaksnap_store_growth(struct leaksnap_store *s, leaksnap_store_growth_fn fn, void *arg,
			  struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct pairs p = {0};
	struct filter f = {&p, {0}, s->b->rows_repeat, fn, arg, false};
	int rc = s->b->ops->snapshots(s->b, 0, false, on_snapshot, &p, err);
	if (rc == 0 && !p.nomem)
		rc = s->b->ops->growth(s->b, on_growth, &f, err);
	if (p.nomem || f.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, s->b->name, "out of memory");
	kit_table_free(&p.ends, true);
	kit_table_free(&f.seen, false);
	return rc;
}
