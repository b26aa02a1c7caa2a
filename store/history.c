/* leaksnap store: the history of the runs stored -- one row per build (or
 * per value of another label, or per run), oldest first: memory at the
 * last snapshot, growth within the runs, definite (unreachable) bytes, and
 * the suspects: the stacks that grew, matched across builds by their
 * symbolized function chain (offsets change from build to build), the
 * first frames outside allocation wrappers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_table.h"
#include "store_internal.h"

#define CHAIN_MAX 3

/* A suspect as kept: its chain (strings owned) and its key. */
struct chain {
	char *key;                 /* the functions joined by '\n' */
	char *names[CHAIN_MAX];
	size_t n;
};

struct row {
	struct leaksnap_store_history_row pub;
	char *key;
	struct leaksnap_store_suspect *sus, *gone;
	struct chain *chains;      /* growth per distinct chain, all of them */
	int64_t *growth;
	size_t nchains, capchains, capgrowth;
	struct kit_table chain_of; /* hash of key -> index + 1 */
};

struct leaksnap_store_history {
	struct row *rows;
	size_t nrows, caprows;
	size_t first;              /* the first row shown (--last) */
	struct kit_table frames;   /* frame id -> struct fnames * */
};

/* A frame's function names, innermost first (owned). */
struct fnames {
	size_t n;
	char *names[];
};

/* Runs ------------------------------------------------------------------------- */

struct hrun {
	uint64_t id;
	char *key;
	uint64_t first_time, first_snap, last_snap, memory, definite;
	int64_t growth;
	size_t snaps;
};

struct collect {
	const struct leaksnap_store_history_opts *o;
	struct hrun *runs;
	size_t n, cap;
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
	if (kit_grow((void **)&c->runs, &c->cap, c->n + 1, sizeof(*c->runs)) ||
	    !(c->runs[c->n].key = strdup(key))) {
		c->nomem = true;
		return 1;
	}
	struct hrun *r = &c->runs[c->n++];
	*r = (struct hrun){run->id, r->key, 0, 0, 0, 0, 0, 0, 0};
	return 0;
}

static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct hrun *r = arg;
	if (r->snaps++ == 0) {
		r->first_time = s->time_ns;
		r->first_snap = s->id;
		r->growth = -(int64_t)s->total_bytes;
	}
	r->last_snap = s->id;
	r->memory = s->total_bytes;
	r->definite = s->unreachable_bytes;
	return 0;
}

/* Stacks of a run: bytes at its first and last snapshot ------------------------ */

struct sums {
	struct kit_table at;       /* stack id -> index + 1 */
	uint64_t *ids;
	int64_t *delta;
	size_t n, capids, capdelta;
	int sign;
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
		if (kit_grow((void **)&s->ids, &s->capids, s->n + 1, sizeof(*s->ids)) ||
		    kit_grow((void **)&s->delta, &s->capdelta, s->n + 1, sizeof(*s->delta))) {
			s->nomem = true;
			return 1;
		}
		s->ids[s->n] = rec->stack_id;
		s->delta[s->n] = 0;
		*slot = (void *)(uintptr_t)(++s->n);
	}
	s->delta[(uintptr_t)*slot - 1] += s->sign * (int64_t)(rec->size * rec->count);
	return 0;
}

/* Chains ------------------------------------------------------------------------- */

/* Allocation functions and the wrappers around them: a chain starts past
 * them. */
static bool wrapper(const char *fn)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "memalign", "valloc",
		"pvalloc", "posix_memalign", "aligned_alloc", "strdup", "strndup", "__libc_malloc",
		"__libc_calloc", "__libc_realloc", "__libc_memalign", "operator new",
		"operator new[]", "operator new(unsigned long)", "operator new[](unsigned long)",
		"operator new(unsigned int)", "operator new[](unsigned int)", NULL};
	for (size_t i = 0; names[i]; i++)
		if (strcmp(fn, names[i]) == 0)
			return true;
	return strncmp(fn, "operator new(", 13) == 0 || strncmp(fn, "operator new[](", 15) == 0 ||
	       strncmp(fn, "hook_", 5) == 0 || strncmp(fn, "leaksnap_", 9) == 0;
}

struct fctx {
	struct fnames *out;
};

static int on_frame(void *arg, const struct leaksnap_store_frame *f)
{
	struct fctx *c = arg;
	size_t n = f->symbol_count ? f->symbol_count : 1;
	struct fnames *x = calloc(1, sizeof(*x) + n * sizeof(x->names[0]));
	if (!x)
		return 1;
	for (size_t i = 0; i < f->symbol_count; i++)
		x->names[x->n++] = strdup(f->symbols[i].function);
	if (f->symbol_count == 0 || !*f->symbols[0].function) {
		/* unknown: the module's file name and the offset */
		char buf[256];
		const char *base = strrchr(f->module, '/');
		base = base ? base + 1 : f->module;
		snprintf(buf, sizeof(buf), "%s+0x%llx", *base ? base : "?",
			 (unsigned long long)f->rel_pc);
		if (x->n)
			free(x->names[0]);
		x->names[0] = strdup(buf);
		x->n = x->n ? x->n : 1;
	}
	for (size_t i = 0; i < x->n; i++)
		if (!x->names[i]) {
			for (size_t k = 0; k < x->n; k++)
				free(x->names[k]);
			free(x);
			return 1;
		}
	c->out = x;
	return 0;
}

static const struct fnames *frame_names(struct leaksnap_store_history *h, struct leaksnap_store *s,
					uint64_t id, struct leaksnap_error *err)
{
	void **slot = kit_table_slot(&h->frames, id, 0);
	if (!slot)
		return NULL;
	if (!*slot) {
		struct fctx c = {NULL};
		if (leaksnap_store_frame(s, id, on_frame, &c, err) != 0)
			return NULL;
		if (!c.out) { /* (a frame the store lacks: unknown) */
			c.out = calloc(1, sizeof(*c.out) + sizeof(c.out->names[0]));
			if (!c.out || !(c.out->names[0] = strdup("?"))) {
				free(c.out);
				return NULL;
			}
			c.out->n = 1;
		}
		*slot = c.out;
	}
	return *slot;
}

struct sctx {
	struct leaksnap_store_history *h;
	struct leaksnap_store *s;
	struct leaksnap_error *err;
	struct chain *out;
	bool failed;
};

static int on_stack(void *arg, const struct leaksnap_store_stack *st)
{
	struct sctx *c = arg;
	struct chain *ch = c->out;
	for (uint32_t f = 0; f < st->frame_count && ch->n < CHAIN_MAX; f++) {
		const struct fnames *x = frame_names(c->h, c->s, st->frames[f], c->err);
		if (!x) {
			c->failed = true;
			return 1;
		}
		for (size_t i = 0; i < x->n && ch->n < CHAIN_MAX; i++)
			if (!wrapper(x->names[i]) && !(ch->names[ch->n++] = strdup(x->names[i]))) {
				c->failed = true;
				return 1;
			}
	}
	size_t len = 1;
	for (size_t i = 0; i < ch->n; i++)
		len += strlen(ch->names[i]) + 1;
	if (!(ch->key = malloc(len))) {
		c->failed = true;
		return 1;
	}
	ch->key[0] = '\0';
	for (size_t i = 0; i < ch->n; i++) {
		strcat(ch->key, ch->names[i]);
		strcat(ch->key, "\n");
	}
	return 0;
}

static void chain_free(struct chain *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->key);
}

/* Add @growth to @row's chain of stack @stack. */
static int add_growth(struct leaksnap_store_history *h, struct leaksnap_store *s, struct row *row,
		      uint64_t stack, int64_t growth, struct leaksnap_error *err)
{
	struct chain ch = {0};
	struct sctx c = {h, s, err, &ch, false};
	if (leaksnap_store_stack(s, stack, on_stack, &c, err) != 0 || c.failed || !ch.key) {
		chain_free(&ch);
		return err->code ? -1 : kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
	}
	void **slot = kit_table_slot(&row->chain_of, sto_hash_text(STO_HASH_START, ch.key), 0);
	if (!slot)
		goto nomem;
	if (*slot) {
		row->growth[(uintptr_t)*slot - 1] += growth;
		chain_free(&ch);
		return 0;
	}
	if (kit_grow((void **)&row->chains, &row->capchains, row->nchains + 1, sizeof(ch)) ||
	    kit_grow((void **)&row->growth, &row->capgrowth, row->nchains + 1, sizeof(int64_t)))
		goto nomem;
	row->chains[row->nchains] = ch;
	row->growth[row->nchains] = growth;
	*slot = (void *)(uintptr_t)(++row->nchains);
	return 0;
nomem:
	chain_free(&ch);
	return kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
}

/* The stacks that grew between run @r's first and last snapshot, into
 * @row's chains. */
static int run_suspects(struct leaksnap_store_history *h, struct leaksnap_store *s,
			const struct hrun *r, struct row *row, struct leaksnap_error *err)
{
	if (r->snaps < 2)
		return 0;
	struct sums sums = {.sign = -1};
	int rc = leaksnap_store_records(s, r->first_snap, on_record, &sums, err);
	sums.sign = 1;
	if (rc == 0 && !sums.nomem)
		rc = leaksnap_store_records(s, r->last_snap, on_record, &sums, err);
	if (sums.nomem)
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
	for (size_t i = 0; rc == 0 && i < sums.n; i++)
		if (sums.delta[i] > 0)
			rc = add_growth(h, s, row, sums.ids[i], sums.delta[i], err);
	kit_table_free(&sums.at, false);
	free(sums.ids);
	free(sums.delta);
	return rc;
}

/* Rows --------------------------------------------------------------------------- */

static struct row *row_for(struct leaksnap_store_history *h, const struct hrun *r)
{
	for (size_t i = 0; i < h->nrows; i++)
		if (strcmp(h->rows[i].key, r->key) == 0)
			return &h->rows[i];
	if (kit_grow((void **)&h->rows, &h->caprows, h->nrows + 1, sizeof(*h->rows)))
		return NULL;
	struct row *row = &h->rows[h->nrows];
	memset(row, 0, sizeof(*row));
	if (!(row->key = strdup(r->key)))
		return NULL;
	h->nrows++;
	row->pub.first_time_ns = r->first_time;
	return row;
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
			if (!taken[i] && (best == row->nchains || row->growth[i] > row->growth[best] ||
					  (row->growth[i] == row->growth[best] &&
					   strcmp(row->chains[i].key, row->chains[best].key) < 0)))
				best = i;
		if (best == row->nchains)
			break;
		taken[best] = true;
		row->sus[n++] = (struct leaksnap_store_suspect){
			(const char *const *)row->chains[best].names, row->chains[best].n,
			row->growth[best], true};
	}
	free(taken);
	row->pub.suspects = row->sus;
	row->pub.suspect_count = n;
	return 0;
}

static bool same_chain(const struct leaksnap_store_suspect *a, const struct leaksnap_store_suspect *b)
{
	if (a->chain_len != b->chain_len)
		return false;
	for (size_t i = 0; i < a->chain_len; i++)
		if (strcmp(a->chain[i], b->chain[i]) != 0)
			return false;
	return true;
}

/* New since the row before, and the row before's gone. */
static int compare_rows(struct row *prev, struct row *row)
{
	const struct leaksnap_store_history_row *p = &prev->pub, *r = &row->pub;
	for (size_t i = 0; i < r->suspect_count; i++)
		for (size_t k = 0; k < p->suspect_count; k++)
			if (same_chain(&r->suspects[i], &p->suspects[k]))
				row->sus[i].is_new = false;
	row->gone = calloc(p->suspect_count ? p->suspect_count : 1, sizeof(*row->gone));
	if (!row->gone)
		return -1;
	for (size_t k = 0; k < p->suspect_count; k++) {
		bool here = false;
		for (size_t i = 0; i < r->suspect_count && !here; i++)
			here = same_chain(&r->suspects[i], &p->suspects[k]);
		if (!here) {
			row->gone[row->pub.gone_count] = p->suspects[k];
			row->gone[row->pub.gone_count++].is_new = false;
		}
	}
	row->pub.gone = row->gone;
	return 0;
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
	struct collect c = {&o, NULL, 0, 0, false};
	if (!h)
		goto nomem;
	if (leaksnap_store_runs(s, on_run, &c, err) != 0 && !c.nomem)
		goto fail;
	if (c.nomem)
		goto nomem;
	for (size_t i = 0; i < c.n; i++)
		if (leaksnap_store_snapshots(s, c.runs[i].id, on_snapshot, &c.runs[i], err) != 0)
			goto fail;
	for (size_t i = 0; i < c.n; i++) {
		struct hrun *r = &c.runs[i];
		r->growth += (int64_t)r->memory;
		struct row *row = row_for(h, r);
		if (!row)
			goto nomem;
		row->pub.runs++;
		row->pub.memory += r->memory;
		row->pub.growth += r->growth;
		row->pub.definite += r->definite;
		if (run_suspects(h, s, r, row, err))
			goto fail;
	}
	for (size_t i = 0; i < h->nrows; i++) {
		h->rows[i].pub.key = h->rows[i].key;
		if (pick_suspects(&h->rows[i], o.suspects) ||
		    (i && compare_rows(&h->rows[i - 1], &h->rows[i])))
			goto nomem;
	}
	if (o.last && o.last < h->nrows)
		h->first = h->nrows - o.last; /* the newest N */
	for (size_t i = 0; i < c.n; i++)
		free(c.runs[i].key);
	free(c.runs);
	return h;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, "history", "out of memory");
fail:
	for (size_t i = 0; i < c.n; i++)
		free(c.runs[i].key);
	free(c.runs);
	leaksnap_store_history_free(h);
	return NULL;
}

static void row_free(struct row *row)
{
	for (size_t i = 0; i < row->nchains; i++)
		chain_free(&row->chains[i]);
	free(row->chains);
	free(row->growth);
	free(row->sus);
	free(row->gone);
	free(row->key);
	kit_table_free(&row->chain_of, false);
}

void leaksnap_store_history_free(struct leaksnap_store_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nrows; i++)
		row_free(&h->rows[i]);
	free(h->rows);
	for (size_t i = 0; i <= h->frames.mask && h->frames.e; i++) {
		struct fnames *x = h->frames.e[i].used ? h->frames.e[i].v : NULL;
		for (size_t k = 0; x && k < x->n; k++)
			free(x->names[k]);
		free(x);
	}
	kit_table_free(&h->frames, false);
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
