/* leaksnap diff: scoring and ranking the groups, and their public view.
 * leaksnap_diff_rank() unifies modules (a build ID names one module whatever its
 * path; a module without one joins the only build of its path), groups the
 * stacks, and scores the groups.  The arithmetic of the score is in
 * docs/diff.md. */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

int lsd_cmp_suspect(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->definite != y->definite) /* definite leaks first, whatever the score */
		return x->definite ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->bytes_delta != y->bytes_delta)
		return x->bytes_delta > y->bytes_delta ? -1 : 1;
	if (x->count_delta != y->count_delta)
		return x->count_delta > y->count_delta ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int cmp_unreach(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->unreachable != y->unreachable)
		return x->unreachable > y->unreachable ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int cmp_stopped(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->bytes_delta != y->bytes_delta)
		return x->bytes_delta > y->bytes_delta ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* Candidates are put in rank order lazily: the first ORDER_PREFIX by a
 * selection (all a --top report needs), the rest by a sort only when one of
 * them is asked for.  Every comparison is a total order (the group id breaks
 * ties), so the order is the same as one full sort's. */
#define ORDER_PREFIX 64

static void heap_down(struct cand *h, size_t n, size_t i, int (*cmp)(const void *, const void *))
{
	for (;;) { /* max-heap in rank order: the root is the weakest kept */
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct cand t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

void lsd_order_cands(struct cand *c, size_t n, size_t *ordered, size_t need,
			int (*cmp)(const void *, const void *))
{
	if (need > n)
		need = n;
	if (need <= *ordered)
		return;
	if (*ordered > 0 || need > ORDER_PREFIX || n <= ORDER_PREFIX) {
		/* everything after the prefix is ranked below it */
		qsort(c + *ordered, n - *ordered, sizeof(*c), cmp);
		*ordered = n;
		return;
	}
	/* The ORDER_PREFIX best: keep them in a heap, moved to the front. */
	size_t k = ORDER_PREFIX;
	for (size_t i = k / 2; i-- > 0;)
		heap_down(c, k, i, cmp);
	for (size_t i = k; i < n; i++) {
		if (cmp(&c[i], &c[0]) < 0) {
			struct cand t = c[0];
			c[0] = c[i];
			c[i] = t;
			heap_down(c, k, 0, cmp);
		}
	}
	qsort(c, k, sizeof(*c), cmp);
	*ordered = k;
}

/* How group @g's bytes moved (into @p's delta, trend and score fields). */
static void score_group(const struct leaksnap_diff *d, uint32_t g, struct leaksnap_diff_group *p)
{
	size_t n = d->n, last = n - 1;
	const uint64_t *b = d->gacc + (size_t)g * 2 * n, *c = b + n;
	p->bytes = b;
	p->counts = c;
	p->bytes_delta = sat_delta(b[last], b[0]);
	p->count_delta = sat_delta(c[last], c[0]);
	p->is_new = b[0] == 0 && c[0] == 0;
	p->grew = p->shrank = 0;
	for (size_t k = 1; k < n; k++) {
		if (b[k] > b[k - 1])
			p->grew++;
		else if (b[k] < b[k - 1])
			p->shrank++;
	}
	/* A series that ends with an exit or crash dump: that dump is taken
	 * when the program stops working, so its interval is judged only when
	 * something grew in it; otherwise the last interval is the one before
	 * it (a leak that grew until the end is not a cache that stopped). */
	bool ends = n > 2 && d->snaps[last].ends_run;
	if (n == 2)
		p->trend = LEAKSNAP_DIFF_TREND_GREW;
	else if (p->grew == last)
		p->trend = LEAKSNAP_DIFF_TREND_STEADY;
	else if (b[last] > b[last - 1] || (ends && b[last - 1] > b[last - 2]))
		p->trend = LEAKSNAP_DIFF_TREND_GROWING;
	else
		p->trend = LEAKSNAP_DIFF_TREND_STOPPED;
	double weight = p->grew > p->shrank ? (double)(p->grew - p->shrank) / (double)last : 0.0;
	p->score = p->bytes_delta > 0 ? (double)p->bytes_delta * weight : 0.0;
	p->unreachable_bytes = d->guacc ? d->guacc + (size_t)g * 2 * n : NULL;
	p->unreachable_counts = p->unreachable_bytes ? p->unreachable_bytes + n : NULL;
	p->definite = p->unreachable_bytes && p->unreachable_bytes[last] > 0;
	p->sampled_bytes = d->gsacc ? d->gsacc + (size_t)g * 4 * n : NULL;
	p->sampled_counts = p->sampled_bytes ? p->sampled_bytes + n : NULL;
	p->sampled_unreachable_bytes = p->sampled_bytes && p->unreachable_bytes
					       ? p->sampled_bytes + 2 * n : NULL;
	p->sampled_unreachable_counts = p->sampled_unreachable_bytes
						? p->sampled_unreachable_bytes + n : NULL;
}

/* Where group @g goes: suspects (it grew by min_bytes and still grows or
 * holds unreachable bytes), stopped (a reachable cache), the one-off leaks
 * (it did not grow but holds unreachable bytes), or nowhere. */
enum place { PLACE_NONE, PLACE_SUSPECT, PLACE_STOPPED, PLACE_UNREACH };

static enum place place_group(const struct leaksnap_diff *d, const struct leaksnap_diff_group *p)
{
	bool grew = p->bytes_delta > 0 && (uint64_t)p->bytes_delta >= d->o.min_bytes;
	if (!grew)
		return p->definite ? PLACE_UNREACH : PLACE_NONE;
	return p->trend == LEAKSNAP_DIFF_TREND_STOPPED && !p->definite ? PLACE_STOPPED
								       : PLACE_SUSPECT;
}

int leaksnap_diff_rank(struct leaksnap_diff *d, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (d->ranked)
		return 0;
	if (d->added != d->n)
		return kit_error(err, LEAKSNAP_ERR_USAGE, "diff", "%zu of %zu snapshots added",
				 d->added, d->n);
	d->ranked = true;
	bool android = false;
	for (size_t i = 0; i < d->n; i++)
		android |= d->snaps[i].android;
	d->include_zygote = d->o.zygote == LEAKSNAP_DIFF_ZYGOTE_INCLUDE ||
			    (d->o.zygote == LEAKSNAP_DIFF_ZYGOTE_AUTO && !android);
	for (size_t i = 0; i < d->n; i++) {
		struct leaksnap_diff_snapshot *s = &d->snaps[i];
		s->bytes = d->app[i][0];
		s->count = d->app[i][1];
		if (d->include_zygote) {
			s->bytes = sat_add(s->bytes, d->zyg[i][0]);
			s->count = sat_add(s->count, d->zyg[i][1]);
		} else {
			s->left_out_bytes = d->zyg[i][0];
			s->left_out_count = d->zyg[i][1];
		}
	}
	free(d->pcs); /* the adding is over */
	d->pcs = NULL;

	bool merged;
	if (lsd_unify_modules(d, &merged) != 0 || (merged && lsd_unify_frames(d) != 0))
		goto nomem;
	d->info = calloc(d->frame_count ? d->frame_count : 1, sizeof(*d->info));
	if (!d->info)
		goto nomem;
	for (size_t i = 0; i < d->frame_count; i++) {
		const struct dframe *f = &d->frames[i];
		if (f->canon != i)
			continue;
		struct leaksnap_diff_frame *v = &d->info[i].view;
		v->rel_pc = f->addr;
		v->pc = f->pc;
		if (f->module != NONE) {
			const struct dmodule *m = &d->mods[d->mods[f->module].canon];
			v->module = m->path;
			v->build_id = m->build_id_len ? m->build_id : NULL;
			v->build_id_len = m->build_id_len;
		}
	}
	lsd_suppressions_reset(d->o.suppressions);
	if (lsd_group_stacks(d, merged, err) != 0)
		return -1;

	/* Score: growing groups (and grown ones holding unreachable bytes)
	 * are suspects, stopped ones caches; the unreachable bytes of what
	 * was compared are summed per snapshot. */
	size_t count[4] = {0}, n = d->n, last = n - 1;
	for (size_t g = 0; g < d->group_count; g++) {
		if (!d->nstacks[g])
			continue;
		struct leaksnap_diff_group p;
		score_group(d, (uint32_t)g, &p);
		count[place_group(d, &p)]++;
		for (size_t i = 0; p.unreachable_bytes && i < n; i++) {
			struct leaksnap_diff_snapshot *s = &d->snaps[i];
			s->unreachable_bytes = sat_add(s->unreachable_bytes,
						       p.unreachable_bytes[i]);
			s->unreachable_count = sat_add(s->unreachable_count,
						       p.unreachable_counts[i]);
		}
		for (size_t i = 0; p.sampled_bytes && i < n; i++) {
			struct leaksnap_diff_snapshot *s = &d->snaps[i];
			s->sampled_bytes = sat_add(s->sampled_bytes, p.sampled_bytes[i]);
			s->sampled_count = sat_add(s->sampled_count, p.sampled_counts[i]);
			if (p.sampled_unreachable_bytes) {
				s->sampled_unreachable_bytes = sat_add(
					s->sampled_unreachable_bytes, p.sampled_unreachable_bytes[i]);
				s->sampled_unreachable_count = sat_add(
					s->sampled_unreachable_count, p.sampled_unreachable_counts[i]);
			}
		}
	}
	size_t ns = count[PLACE_SUSPECT], nc = count[PLACE_STOPPED], nu = count[PLACE_UNREACH];
	d->suspects = malloc((ns ? ns : 1) * sizeof(*d->suspects));
	d->stopped = malloc((nc ? nc : 1) * sizeof(*d->stopped));
	d->unreach = malloc((nu ? nu : 1) * sizeof(*d->unreach));
	d->pub_suspects = calloc(ns ? ns : 1, sizeof(*d->pub_suspects));
	d->pub_stopped = calloc(nc ? nc : 1, sizeof(*d->pub_stopped));
	d->pub_unreach = calloc(nu ? nu : 1, sizeof(*d->pub_unreach));
	if (!d->suspects || !d->stopped || !d->unreach || !d->pub_suspects || !d->pub_stopped ||
	    !d->pub_unreach)
		goto nomem;
	for (size_t g = 0; g < d->group_count; g++) {
		if (!d->nstacks[g])
			continue;
		struct leaksnap_diff_group p;
		score_group(d, (uint32_t)g, &p);
		struct cand c = {(uint32_t)g, p.trend, p.score, p.bytes_delta, p.count_delta,
				 p.unreachable_bytes ? p.unreachable_bytes[last] : 0, p.definite};
		switch (place_group(d, &p)) {
		case PLACE_NONE:
			continue;
		case PLACE_STOPPED:
			d->stopped[d->nstopped++] = c;
			continue;
		case PLACE_UNREACH:
			d->unreach[d->nunreach++] = c;
			continue;
		case PLACE_SUSPECT:
			break;
		}
		d->suspects[d->nsuspects++] = c;
		d->ndefinite += c.definite;
		if (__builtin_add_overflow(d->suspect_bytes, c.bytes_delta, &d->suspect_bytes))
			d->suspect_bytes = INT64_MAX;
		if (__builtin_add_overflow(d->suspect_count, c.count_delta, &d->suspect_count))
			d->suspect_count = INT64_MAX;
	}
	return 0;
nomem:
	return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
}

/* The API's view of candidate @c, made once into *@slot.  NULL: out of
 * memory (or a symbol lookup failed that way). */
static const struct leaksnap_diff_group *materialize(struct leaksnap_diff *d, const struct cand *c,
					    struct group_priv **slot)
{
	if (*slot)
		return &(*slot)->pub;
	struct group_priv *gp = calloc(1, sizeof(*gp));
	if (!gp)
		return NULL;
	uint32_t g = c->group, rep = d->rep[g];
	const struct seq *st = &d->stacks.ents[rep];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st);
	gp->frames = malloc((len ? len : 1) * sizeof(*gp->frames));
	if (!gp->frames) {
		free(gp);
		return NULL;
	}
	for (uint32_t k = 0; k < len; k++)
		gp->frames[k] = &d->info[d->frames[ids[k]].canon].view;
	score_group(d, g, &gp->pub);
	gp->pub.stack_count = d->nstacks[g];
	gp->pub.frames = gp->frames;
	gp->pub.frame_count = len;
	gp->pub.site = SIZE_MAX;
	gp->rep_stack = rep;
	if (d->o.by == LEAKSNAP_DIFF_BY_MODULE && len) {
		struct leaksnap_error e;
		size_t site;
		uint32_t level;
		leaksnap_error_clear(&e);
		if (lsd_stack_site(d, rep, &site, &level, &e) != 0) {
			free(gp->frames);
			free(gp);
			return NULL;
		}
		gp->pub.module = gp->frames[site < len ? site : 0]->module;
	}
	void **own = kit_table_slot(&d->views, kit_key(&gp->pub), 0);
	if (!own) {
		free(gp->frames);
		free(gp);
		return NULL;
	}
	*own = gp;
	*slot = gp;
	return &gp->pub;
}

size_t leaksnap_diff_suspect_count(const struct leaksnap_diff *d) { return d->nsuspects; }
const struct leaksnap_diff_group *leaksnap_diff_suspect(struct leaksnap_diff *d, size_t i)
{
	if (i >= d->nsuspects)
		return NULL;
	lsd_order_cands(d->suspects, d->nsuspects, &d->suspects_ordered, i + 1, lsd_cmp_suspect);
	return materialize(d, &d->suspects[i], &d->pub_suspects[i]);
}
size_t leaksnap_diff_stopped_count(const struct leaksnap_diff *d) { return d->nstopped; }
size_t leaksnap_diff_definite_count(const struct leaksnap_diff *d) { return d->ndefinite; }
size_t leaksnap_diff_unreachable_count(const struct leaksnap_diff *d) { return d->nunreach; }
const struct leaksnap_diff_group *leaksnap_diff_unreachable(struct leaksnap_diff *d, size_t i)
{
	if (i >= d->nunreach)
		return NULL;
	lsd_order_cands(d->unreach, d->nunreach, &d->unreach_ordered, i + 1, cmp_unreach);
	return materialize(d, &d->unreach[i], &d->pub_unreach[i]);
}
const struct leaksnap_diff_group *leaksnap_diff_stopped(struct leaksnap_diff *d, size_t i)
{
	if (i >= d->nstopped)
		return NULL;
	lsd_order_cands(d->stopped, d->nstopped, &d->stopped_ordered, i + 1, cmp_stopped);
	return materialize(d, &d->stopped[i], &d->pub_stopped[i]);
}
