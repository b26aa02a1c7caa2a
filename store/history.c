/* leaksnap store: the history of the runs stored -- one row per build (or
 * per value of another label, or per run), oldest first: memory at the
 * last snapshot, growth within the runs, definite (unreachable) bytes
 * (estimates where the runs were sampled: what the store keeps), and
 * the suspects: the stacks that grew, matched across builds by their
 * symbolized function chain (offsets change from build to build), the
 * first frames outside allocation wrappers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/diff.h>

#include "kit_table.h"
#include "store_internal.h"

#define CHAIN_MAX 3

/* The distinct sampling intervals of some snapshots, ascending (0: not
 * sampled). */
struct intervals {
	uint64_t *v;
	size_t n, cap;
};

static int intervals_add(struct intervals *x, uint64_t interval)
{
	size_t i = 0;
	while (i < x->n && x->v[i] < interval)
		i++;
	if (i < x->n && x->v[i] == interval)
		return 0;
	if (kit_grow((void **)&x->v, &x->cap, x->n + 1, sizeof(*x->v)))
		return -1;
	memmove(x->v + i + 1, x->v + i, (x->n - i) * sizeof(*x->v));
	x->v[i] = interval;
	x->n++;
	return 0;
}

/* A suspect as kept: its chain (strings owned) and its key. */
struct chain {
	char *key;                 /* the functions joined by '\n' */
	char *names[CHAIN_MAX];
	size_t n;
};

/* A chain's growth in a row, and its stack that grew most. */
struct cgrowth {
	int64_t bytes;
	uint64_t best_stack;
	int64_t best_bytes;
};

struct row {
	struct leaksnap_store_history_row pub;
	char *key;
	struct leaksnap_store_suspect *sus, *gone;
	struct chain *chains;      /* growth per distinct chain, all of them */
	struct cgrowth *growth;
	size_t nchains, capchains, capgrowth;
	struct kit_table chain_of; /* hash of key -> index + 1 */
	struct leaksnap_store_history_point *points;
	size_t npoints, cappoints;
	struct intervals intervals; /* of its runs' snapshots */
};

/* A stack as history needs it: its frame ids, and its chain once known. */
struct hstack {
	uint64_t *frames;
	uint32_t n;
	uint32_t looked;           /* frames whose names were fetched */
	struct chain chain;
	bool done;
};

/* A frame's function names, innermost first (owned), and with the option
 * stacks the whole frame. */
struct fnames {
	struct leaksnap_store_frame frame;
	struct leaksnap_store_symbol *symbols;
	size_t n;
	char *names[];
};

struct leaksnap_store_history {
	struct row *rows;
	size_t nrows, caprows;
	size_t first;              /* the first row shown (--last) */
	struct kit_table frames;   /* frame id -> struct fnames * */
	struct kit_table stacks;   /* stack id -> struct hstack * */
	struct leaksnap_store_frame **suspect_frames; /* per suspect with stacks (owned) */
	size_t nsf, capsf;
};

/* Runs ------------------------------------------------------------------------- */

/* A run's figures: estimates where its snapshots are sampled (the stored
 * estimated_bytes and estimated_unreachable_bytes, the totals themselves
 * when not sampled). */
struct hrun {
	uint64_t id;
	char *key, *series;
	uint64_t first_time, last_time, memory, definite;
	int64_t growth;
	size_t snaps;
	size_t row;
	struct intervals intervals; /* of its snapshots */
};

struct collect {
	const struct leaksnap_store_history_opts *o;
	struct hrun *runs;
	size_t n, cap;
	struct kit_table at;       /* run id -> index + 1 */
	bool nomem;
};

static const char *label_of(const struct leaksnap_store_run *run, const char *key)
{
	for (size_t i = 0; i < run->label_count; i++)
		if (strcmp(run->labels[i].key, key) == 0)
			return run->labels[i].value;
	return NULL;
}

static int on_run(void *arg, const struct leaksnap_store_run *run)
{
	struct collect *c = arg;
	for (size_t i = 0; i < c->o->where_count; i++) {
		const char *v = label_of(run, c->o->where[i].key);
		if (!v || strcmp(v, c->o->where[i].value) != 0)
			return 0;
	}
	char hex[17];
	const char *key;
	if (strcmp(c->o->by, "run") == 0) {
		snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)run->id);
		key = hex;
	} else {
		key = label_of(run, c->o->by);
		key = key ? key : "";
	}
	const char *series = c->o->series ? label_of(run, c->o->series) : NULL;
	void **slot = kit_table_slot(&c->at, run->id, 0);
	if (!slot || kit_grow((void **)&c->runs, &c->cap, c->n + 1, sizeof(*c->runs)))
		goto nomem;
	struct hrun *r = &c->runs[c->n];
	*r = (struct hrun){.id = run->id};
	if (!(r->key = strdup(key)) || !(r->series = strdup(series ? series : ""))) {
		free(r->key);
		goto nomem;
	}
	*slot = (void *)(uintptr_t)(++c->n);
	return 0;
nomem:
	c->nomem = true;
	return 1;
}

/* In capture order: the first and last of each run selected. */
static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct collect *c = arg;
	void **slot = kit_table_find(&c->at, s->run_id, 0);
	if (!slot)
		return 0;
	struct hrun *r = &c->runs[(uintptr_t)*slot - 1];
	if (r->snaps++ == 0) {
		r->first_time = s->time_ns;
		r->growth = -(int64_t)s->estimated_bytes;
	}
	r->last_time = s->time_ns;
	r->memory = s->estimated_bytes;
	r->definite = s->estimated_unreachable_bytes;
	if (intervals_add(&r->intervals, s->sample_interval)) {
		c->nomem = true;
		return 1;
	}
	return 0;
}

/* Chains ------------------------------------------------------------------------- */

static void fnames_free(struct fnames *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		free(x->names[i]);
	for (size_t i = 0; x->symbols && i < x->frame.symbol_count; i++) {
		free((char *)(uintptr_t)x->symbols[i].function);
		free((char *)(uintptr_t)x->symbols[i].file);
	}
	free(x->symbols);
	free((char *)(uintptr_t)x->frame.module);
	free((char *)(uintptr_t)x->frame.build_id);
	free(x);
}

/* A frame's names: its functions, or for a frame nothing is known of,
 * the module's file name and the offset. */
static struct fnames *names_of(const struct leaksnap_store_frame *f, bool whole)
{
	size_t n = f->symbol_count ? f->symbol_count : 1;
	struct fnames *x = calloc(1, sizeof(*x) + n * sizeof(x->names[0]));
	if (!x)
		return NULL;
	x->frame = (struct leaksnap_store_frame){f->id, strdup(f->module), strdup(f->build_id),
						 f->rel_pc, NULL, 0};
	bool ok = x->frame.module && x->frame.build_id;
	if (whole && f->symbol_count) {
		x->symbols = calloc(f->symbol_count, sizeof(*x->symbols));
		ok = ok && x->symbols;
		for (size_t i = 0; ok && i < f->symbol_count; i++) {
			x->symbols[i] = f->symbols[i];
			x->symbols[i].function = strdup(f->symbols[i].function);
			x->symbols[i].file = strdup(f->symbols[i].file);
			x->frame.symbol_count = i + 1;
			ok = x->symbols[i].function && x->symbols[i].file;
		}
		x->frame.symbols = x->symbols;
	}
	for (size_t i = 0; ok && i < f->symbol_count; i++)
		ok = (x->names[x->n++] = strdup(f->symbols[i].function)) != NULL;
	if (ok && (f->symbol_count == 0 || !*f->symbols[0].function)) {
		char buf[256];
		const char *base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		snprintf(buf, sizeof(buf), "%s+0x%llx", *base ? base : "?",
			 (unsigned long long)f->rel_pc);
		if (x->n)
			free(x->names[0]);
		x->n = x->n ? x->n : 1;
		ok = (x->names[0] = strdup(buf)) != NULL;
	}
	if (!ok) {
		fnames_free(x);
		return NULL;
	}
	return x;
}

struct fetch {
	struct leaksnap_store_history *h;
	bool whole, nomem;
};

static int on_frame(void *arg, const struct leaksnap_store_frame *f)
{
	struct fetch *c = arg;
	void **slot = kit_table_slot(&c->h->frames, f->id, 0);
	if (!slot) {
		c->nomem = true;
		return 1;
	}
	if (*slot && (!c->whole || ((struct fnames *)*slot)->symbols ||
		      !((struct fnames *)*slot)->frame.symbol_count == !f->symbol_count))
		return 0;
	struct fnames *x = names_of(f, c->whole);
	if (!x) {
		c->nomem = true;
		return 1;
	}
	fnames_free(*slot);
	*slot = x;
	return 0;
}

/* The names of the @n frames at @ids not known yet, fetched at once
 * (@whole: with their symbols, for the suspects' stacks). */
static int fetch_frames(struct leaksnap_store_history *h, struct leaksnap_store *s,
			uint64_t *ids, size_t n, bool whole, struct leaksnap_error *err)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		void **slot = kit_table_find(&h->frames, ids[i], 0);
		if (!slot || (whole && !((struct fnames *)*slot)->symbols))
			ids[w++] = ids[i];
	}
	struct fetch c = {h, whole, false};
	if (w && leaksnap_store_frames(s, ids, w, on_frame, &c, err) != 0 && !c.nomem)
		return -1;
	if (c.nomem)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
	for (size_t i = 0; i < w; i++) { /* a frame the store lacks: unknown */
		void **slot = kit_table_slot(&h->frames, ids[i], 0);
		if (!slot)
			return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
		if (!*slot) {
			struct leaksnap_store_frame none = {ids[i], "", "", 0, NULL, 0};
			if (!(*slot = names_of(&none, false)))
				return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
			free(((struct fnames *)*slot)->names[0]);
			if (!(((struct fnames *)*slot)->names[0] = strdup("?")))
				return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
		}
	}
	return 0;
}

static int on_stack(void *arg, const struct leaksnap_store_stack *st)
{
	struct fetch *c = arg;
	void **slot = kit_table_find(&c->h->stacks, st->id, 0);
	if (!slot || *slot)
		return 0;
	struct hstack *x = calloc(1, sizeof(*x));
	if (!x || !(x->frames = malloc((st->frame_count ? st->frame_count : 1) * sizeof(uint64_t)))) {
		free(x);
		c->nomem = true;
		return 1;
	}
	if (st->frame_count)
		memcpy(x->frames, st->frames, st->frame_count * sizeof(uint64_t));
	x->n = st->frame_count;
	*slot = x;
	return 0;
}

/* Extend stack @x's chain with its frames' names, from where it stopped. */
static int chain_more(struct leaksnap_store_history *h, struct hstack *x)
{
	struct chain *ch = &x->chain;
	for (; x->looked < x->n && ch->n < CHAIN_MAX; x->looked++) {
		void **slot = kit_table_find(&h->frames, x->frames[x->looked], 0);
		if (!slot)
			return 0; /* not fetched yet */
		const struct fnames *f = *slot;
		for (size_t i = 0; i < f->n && ch->n < CHAIN_MAX; i++)
			if (!leaksnap_diff_is_wrapper(f->names[i], f->frame.module) &&
			    !(ch->names[ch->n++] = strdup(f->names[i])))
				return -1;
	}
	if (ch->n < CHAIN_MAX && x->looked < x->n)
		return 0;
	size_t len = 1;
	for (size_t i = 0; i < ch->n; i++)
		len += strlen(ch->names[i]) + 1;
	if (!(ch->key = malloc(len)))
		return -1;
	ch->key[0] = '\0';
	for (size_t i = 0; i < ch->n; i++) {
		strcat(ch->key, ch->names[i]);
		strcat(ch->key, "\n");
	}
	x->done = true;
	return 0;
}

static void chain_free(struct chain *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->key);
}

static int chain_copy(struct chain *to, const struct chain *from)
{
	*to = (struct chain){NULL, {NULL}, 0};
	for (size_t i = 0; i < from->n; i++)
		if (!(to->names[to->n++] = strdup(from->names[i])))
			goto fail;
	if ((to->key = strdup(from->key)))
		return 0;
fail:
	chain_free(to);
	return -1;
}

/* The chains of every stack in h->stacks: their frames fetched a few at a
 * time, only as deep as the chains need. */
static int resolve_chains(struct leaksnap_store_history *h, struct leaksnap_store *s,
			  struct leaksnap_error *err)
{
	uint64_t *ids = NULL;
	size_t cap = 0, step = 4;
	int rc = 0;
	for (;;) {
		size_t n = 0;
		for (size_t i = 0; i <= h->stacks.mask && h->stacks.e; i++) {
			struct hstack *x = h->stacks.e[i].used ? h->stacks.e[i].v : NULL;
			if (!x || x->done)
				continue;
			for (uint32_t f = x->looked; f < x->n && f < x->looked + step; f++) {
				if (kit_grow((void **)&ids, &cap, n + 1, sizeof(*ids)))
					goto nomem;
				ids[n++] = x->frames[f];
			}
		}
		if ((rc = fetch_frames(h, s, ids, n, false, err)))
			break;
		bool more = false;
		for (size_t i = 0; i <= h->stacks.mask && h->stacks.e; i++) {
			struct hstack *x = h->stacks.e[i].used ? h->stacks.e[i].v : NULL;
			if (!x || x->done)
				continue;
			if (chain_more(h, x))
				goto nomem;
			more |= !x->done;
		}
		if (!more)
			break;
		step *= 4;
	}
	free(ids);
	return rc;
nomem:
	free(ids);
	return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
}

/* Growth -------------------------------------------------------------------------- */

struct grow {
	struct leaksnap_store_history *h;
	struct collect *c;
	struct kit_table at;       /* (row, stack) -> index + 1 */
	struct rs {
		size_t row;
		uint64_t stack;
		int64_t bytes;
	} *v;
	size_t n, cap;
	bool nomem;
};

static int on_growth(void *arg, const struct leaksnap_store_growth *g)
{
	struct grow *w = arg;
	void **slot = kit_table_find(&w->c->at, g->run_id, 0);
	if (!slot)
		return 0; /* a run not selected */
	const struct hrun *r = &w->c->runs[(uintptr_t)*slot - 1];
	void **at = kit_table_slot(&w->at, r->row, g->stack_id);
	void **st = kit_table_slot(&w->h->stacks, g->stack_id, 0);
	if (!at || !st)
		goto nomem;
	if (!*at) {
		if (kit_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
			goto nomem;
		w->v[w->n] = (struct rs){r->row, g->stack_id, 0};
		*at = (void *)(uintptr_t)(++w->n);
	}
	w->v[(uintptr_t)*at - 1].bytes += g->bytes;
	return 0;
nomem:
	w->nomem = true;
	return 1;
}

/* Add @bytes of stack @x to @row's chain of it. */
static int add_growth(struct row *row, uint64_t stack, const struct hstack *x, int64_t bytes)
{
	void **slot = kit_table_slot(&row->chain_of, sto_hash_text(STO_HASH_START, x->chain.key), 0);
	if (!slot)
		return -1;
	if (!*slot) {
		if (kit_grow((void **)&row->chains, &row->capchains, row->nchains + 1,
			     sizeof(*row->chains)) ||
		    kit_grow((void **)&row->growth, &row->capgrowth, row->nchains + 1,
			     sizeof(*row->growth)) ||
		    chain_copy(&row->chains[row->nchains], &x->chain))
			return -1;
		row->growth[row->nchains] = (struct cgrowth){0, stack, bytes};
		*slot = (void *)(uintptr_t)(++row->nchains);
	}
	struct cgrowth *g = &row->growth[(uintptr_t)*slot - 1];
	g->bytes += bytes;
	if (bytes > g->best_bytes || (bytes == g->best_bytes && stack < g->best_stack)) {
		g->best_bytes = bytes;
		g->best_stack = stack;
	}
	return 0;
}

static int cmp_rs(const void *a, const void *b)
{
	const struct rs *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The stacks that grew within the selected runs, by row, into the rows'
 * chains. */
static int suspects_of_growth(struct leaksnap_store_history *h, struct leaksnap_store *s,
			      struct collect *c, struct leaksnap_error *err)
{
	struct grow w = {h, c, {0}, NULL, 0, 0, false};
	int rc = leaksnap_store_growth(s, on_growth, &w, err);
	uint64_t *ids = NULL;
	size_t nids = 0;
	if (w.nomem)
		goto nomem;
	if (rc)
		goto out;
	if (!(ids = malloc((h->stacks.count ? h->stacks.count : 1) * sizeof(*ids))))
		goto nomem;
	for (size_t i = 0; i <= h->stacks.mask && h->stacks.e; i++)
		if (h->stacks.e[i].used && !h->stacks.e[i].v)
			ids[nids++] = h->stacks.e[i].a;
	struct fetch f = {h, false, false};
	if (nids && leaksnap_store_stacks(s, ids, nids, on_stack, &f, err) != 0 && !f.nomem)
		goto fail;
	if (f.nomem)
		goto nomem;
	if (resolve_chains(h, s, err))
		goto fail;
	if (w.n > 1)
		qsort(w.v, w.n, sizeof(*w.v), cmp_rs); /* (the same sums in any engine's order) */
	for (size_t i = 0; i < w.n; i++) {
		void **slot = kit_table_find(&h->stacks, w.v[i].stack, 0);
		const struct hstack *x = slot ? *slot : NULL;
		if (!x) {
			/* a stack the store lacks: its chain is unknown */
			static char q[] = "?", qk[] = "?\n";
			static struct hstack unknown = {NULL, 0, 0, {qk, {q}, 1}, true};
			x = &unknown;
		}
		if (add_growth(&h->rows[w.v[i].row], w.v[i].stack, x, w.v[i].bytes))
			goto nomem;
	}
	rc = 0;
	goto out;
nomem:
	rc = kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
	goto out;
fail:
	rc = -1;
out:
	free(ids);
	free(w.v);
	kit_table_free(&w.at, false);
	return rc;
}

/* Rows --------------------------------------------------------------------------- */

static struct row *row_for(struct leaksnap_store_history *h, struct kit_table *rows,
			   const struct hrun *r, size_t *index)
{
	void **slot = kit_table_slot(rows, sto_hash_text(STO_HASH_START, r->key), 0);
	if (!slot)
		return NULL;
	for (uintptr_t i = (uintptr_t)*slot; i; i = 0) /* (a hash match is checked) */
		if (strcmp(h->rows[i - 1].key, r->key) == 0) {
			*index = i - 1;
			return &h->rows[i - 1];
		}
	if (*slot) { /* two keys of one hash: search */
		for (size_t i = 0; i < h->nrows; i++)
			if (strcmp(h->rows[i].key, r->key) == 0) {
				*index = i;
				return &h->rows[i];
			}
	}
	if (kit_grow((void **)&h->rows, &h->caprows, h->nrows + 1, sizeof(*h->rows)))
		return NULL;
	struct row *row = &h->rows[h->nrows];
	memset(row, 0, sizeof(*row));
	if (!(row->key = strdup(r->key)))
		return NULL;
	if (!*slot)
		*slot = (void *)(uintptr_t)(h->nrows + 1);
	*index = h->nrows++;
	row->pub.first_time_ns = r->first_time;
	return row;
}

static int add_point(struct row *row, const struct hrun *r)
{
	size_t i = 0;
	while (i < row->npoints && strcmp(row->points[i].value, r->series) != 0)
		i++;
	if (i == row->npoints) {
		if (kit_grow((void **)&row->points, &row->cappoints, row->npoints + 1,
			     sizeof(*row->points)))
			return -1;
		row->points[i] = (struct leaksnap_store_history_point){strdup(r->series), 0, 0, 0, 0};
		if (!row->points[i].value)
			return -1;
		row->npoints++;
	}
	struct leaksnap_store_history_point *p = &row->points[i];
	p->runs++;
	p->memory += r->memory;
	p->growth += r->growth;
	p->definite += r->definite;
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct leaksnap_store_history_point *x = a, *y = b;
	return strcmp(x->value, y->value);
}

/* The row's suspects: the @top chains that grew most (ties by name). */
static int pick_suspects(struct row *row, size_t top)
{
	size_t n = 0;
	row->sus = calloc(top ? top : 1, sizeof(*row->sus));
	if (!row->sus)
		return -1;
	bool *taken = calloc(row->nchains ? row->nchains : 1, sizeof(*taken));
	if (!taken)
		return -1;
	while (n < top) {
		size_t best = row->nchains;
		for (size_t i = 0; i < row->nchains; i++)
			if (!taken[i] &&
			    (best == row->nchains || row->growth[i].bytes > row->growth[best].bytes ||
			     (row->growth[i].bytes == row->growth[best].bytes &&
			      strcmp(row->chains[i].key, row->chains[best].key) < 0)))
				best = i;
		if (best == row->nchains)
			break;
		taken[best] = true;
		row->sus[n++] = (struct leaksnap_store_suspect){
			(const char *const *)row->chains[best].names, row->chains[best].n,
			row->growth[best].bytes, true, row->growth[best].best_stack, NULL, 0};
	}
	free(taken);
	row->pub.suspects = row->sus;
	row->pub.suspect_count = n;
	return 0;
}

/* Whether @row has growth for the chain of @x at all (shown or not). */
static bool grew_in(const struct row *row, const struct leaksnap_store_suspect *x)
{
	size_t len = 1;
	for (size_t i = 0; i < x->chain_len; i++)
		len += strlen(x->chain[i]) + 1;
	char *key = malloc(len);
	if (!key)
		return false;
	key[0] = '\0';
	for (size_t i = 0; i < x->chain_len; i++) {
		strcat(key, x->chain[i]);
		strcat(key, "\n");
	}
	void **slot = kit_table_find(&row->chain_of, sto_hash_text(STO_HASH_START, key), 0);
	bool here = false;
	if (slot) /* (a hash match: the keys compared) */
		for (size_t i = 0; i < row->nchains && !here; i++)
			here = strcmp(row->chains[i].key, key) == 0;
	free(key);
	return here;
}

/* New: a suspect whose chain did not grow at all in the row before (not
 * merely one that was not among its top suspects); gone: a suspect of the
 * row before whose chain does not grow here at all. */
static int compare_rows(struct row *prev, struct row *row)
{
	const struct leaksnap_store_history_row *p = &prev->pub, *r = &row->pub;
	for (size_t i = 0; i < r->suspect_count; i++)
		row->sus[i].is_new = !grew_in(prev, &r->suspects[i]);
	row->gone = calloc(p->suspect_count ? p->suspect_count : 1, sizeof(*row->gone));
	if (!row->gone)
		return -1;
	for (size_t k = 0; k < p->suspect_count; k++)
		if (!grew_in(row, &p->suspects[k])) {
			row->gone[row->pub.gone_count] = p->suspects[k];
			row->gone[row->pub.gone_count++].is_new = false;
		}
	row->pub.gone = row->gone;
	return 0;
}

/* The suspects' whole stacks (the option stacks): their frames fetched at
 * once, then each suspect's array. */
static int suspect_stacks(struct leaksnap_store_history *h, struct leaksnap_store *s,
			  struct leaksnap_error *err)
{
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	for (size_t r = 0; r < h->nrows; r++)
		for (size_t i = 0; i < h->rows[r].pub.suspect_count; i++) {
			void **slot = kit_table_find(&h->stacks, h->rows[r].sus[i].stack_id, 0);
			const struct hstack *x = slot ? *slot : NULL;
			for (uint32_t f = 0; x && f < x->n; f++) {
				if (kit_grow((void **)&ids, &cap, n + 1, sizeof(*ids))) {
					free(ids);
					return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
				}
				ids[n++] = x->frames[f];
			}
		}
	int rc = fetch_frames(h, s, ids, n, true, err);
	free(ids);
	for (size_t r = 0; rc == 0 && r < h->nrows; r++)
		for (size_t i = 0; rc == 0 && i < h->rows[r].pub.suspect_count; i++) {
			struct leaksnap_store_suspect *sus = &h->rows[r].sus[i];
			void **slot = kit_table_find(&h->stacks, sus->stack_id, 0);
			const struct hstack *x = slot ? *slot : NULL;
			if (!x || x->n == 0)
				continue;
			struct leaksnap_store_frame *v = calloc(x->n, sizeof(*v));
			if (!v || kit_grow((void **)&h->suspect_frames, &h->capsf, h->nsf + 1,
					   sizeof(*h->suspect_frames))) {
				free(v);
				rc = kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
				break;
			}
			h->suspect_frames[h->nsf++] = v;
			for (uint32_t f = 0; f < x->n; f++)
				v[f] = ((struct fnames *)*kit_table_find(&h->frames, x->frames[f], 0))->frame;
			sus->frames = v;
			sus->frame_count = x->n;
		}
	/* the gone ones are copies of the row before's: their frames too */
	for (size_t r = 1; rc == 0 && r < h->nrows; r++)
		for (size_t k = 0; k < h->rows[r].pub.gone_count; k++)
			for (size_t i = 0; i < h->rows[r - 1].pub.suspect_count; i++)
				if (h->rows[r].gone[k].stack_id == h->rows[r - 1].sus[i].stack_id) {
					h->rows[r].gone[k].frames = h->rows[r - 1].sus[i].frames;
					h->rows[r].gone[k].frame_count = h->rows[r - 1].sus[i].frame_count;
				}
	return rc;
}

struct leaksnap_store_history *leaksnap_store_history_new(
	struct leaksnap_store *s, const struct leaksnap_store_history_opts *opts,
	struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_store_history_opts o;
	if (kit_opts(&o, sizeof(o), opts, "leaksnap_store_history_opts", err) != 0)
		return NULL;
	o.by = o.by ? o.by : "build";
	o.suspects = o.suspects ? o.suspects : 3;
	struct leaksnap_store_history *h = calloc(1, sizeof(*h));
	struct collect c = {&o, NULL, 0, 0, {0}, false};
	struct kit_table rows = {0};
	if (!h)
		goto nomem;
	if (leaksnap_store_runs(s, on_run, &c, err) != 0 && !c.nomem)
		goto fail;
	if (c.nomem)
		goto nomem;
	if (leaksnap_store_snapshots(s, 0, on_snapshot, &c, err) != 0 && !c.nomem)
		goto fail;
	if (c.nomem)
		goto nomem;
	for (size_t i = 0; i < c.n; i++) {
		struct hrun *r = &c.runs[i];
		r->growth += (int64_t)r->memory;
		struct row *row = row_for(h, &rows, r, &r->row);
		if (!row)
			goto nomem;
		row->pub.runs++;
		row->pub.memory += r->memory;
		row->pub.growth += r->growth;
		row->pub.definite += r->definite;
		if (r->last_time > row->pub.last_time_ns)
			row->pub.last_time_ns = r->last_time;
		if (o.series && add_point(row, r))
			goto nomem;
		for (size_t k = 0; k < r->intervals.n; k++)
			if (intervals_add(&row->intervals, r->intervals.v[k]))
				goto nomem;
	}
	if (suspects_of_growth(h, s, &c, err))
		goto fail;
	for (size_t i = 0; i < h->nrows; i++) {
		struct row *row = &h->rows[i];
		row->pub.key = row->key;
		if (row->npoints > 1)
			qsort(row->points, row->npoints, sizeof(*row->points), cmp_point);
		row->pub.points = row->points;
		row->pub.point_count = row->npoints;
		row->pub.intervals = row->intervals.v;
		row->pub.interval_count = row->intervals.n;
		if (pick_suspects(row, o.suspects) || (i && compare_rows(&h->rows[i - 1], row)))
			goto nomem;
		for (size_t k = 0; i == 0 && k < row->pub.suspect_count; k++)
			row->sus[k].is_new = false; /* (no row before: nothing is new) */
	}
	if (o.stacks && suspect_stacks(h, s, err))
		goto fail;
	if (o.last && o.last < h->nrows)
		h->first = h->nrows - o.last; /* the newest N */
	goto done;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
fail:
	leaksnap_store_history_free(h);
	h = NULL;
done:
	for (size_t i = 0; i < c.n; i++) {
		free(c.runs[i].key);
		free(c.runs[i].series);
		free(c.runs[i].intervals.v);
	}
	free(c.runs);
	kit_table_free(&c.at, false);
	kit_table_free(&rows, false);
	return h;
}

static void row_free(struct row *row)
{
	for (size_t i = 0; i < row->nchains; i++)
		chain_free(&row->chains[i]);
	for (size_t i = 0; i < row->npoints; i++)
		free((char *)(uintptr_t)row->points[i].value);
	free(row->points);
	free(row->chains);
	free(row->growth);
	free(row->sus);
	free(row->gone);
	free(row->key);
	free(row->intervals.v);
	kit_table_free(&row->chain_of, false);
}

void leaksnap_store_history_free(struct leaksnap_store_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nrows; i++)
		row_free(&h->rows[i]);
	free(h->rows);
	for (size_t i = 0; i <= h->frames.mask && h->frames.e; i++)
		if (h->frames.e[i].used)
			fnames_free(h->frames.e[i].v);
	kit_table_free(&h->frames, false);
	for (size_t i = 0; i <= h->stacks.mask && h->stacks.e; i++) {
		struct hstack *x = h->stacks.e[i].used ? h->stacks.e[i].v : NULL;
		if (x) {
			chain_free(&x->chain);
			free(x->frames);
			free(x);
		}
	}
	kit_table_free(&h->stacks, false);
	for (size_t i = 0; i < h->nsf; i++)
		free(h->suspect_frames[i]);
	free(h->suspect_frames);
	free(h);
}

size_t leaksnap_store_history_count(const struct leaksnap_store_history *h)
{
	return h->nrows - h->first;
}

const struct leaksnap_store_history_row *leaksnap_store_history_row(
	const struct leaksnap_store_history *h, size_t i)
{
	return i < h->nrows - h->first ? &h->rows[h->first + i].pub : NULL;
}

const struct leaksnap_store_history_row *leaksnap_store_history_before(
	const struct leaksnap_store_history *h)
{
	return h->first ? &h->rows[h->first - 1].pub : NULL;
}
