/* leaksnap diff: unifying modules and frames across snapshots, grouping
 * stacks (by stack, site, function or module) and suppressing them. */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

/* Which modules are one: the same build ID whatever the path; a module
 * without a build ID joins the single build recorded for its path.
 * Returns whether any two modules were made one. */
int lsd_unify_modules(struct leaksnap_diff *d, bool *merged)
{
	*merged = false;
	size_t n = d->mod_count;
	if (n == 0)
		return 0;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *byid = lsd_slots_new(cap), *bypath = lsd_slots_new(cap);
	if (!byid || !bypath) {
		free(byid);
		free(bypath);
		return -1;
	}
	/* 1: the same build ID */
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		if (!m->build_id_len)
			continue;
		size_t k = lsd_module_hash("", m->build_id, m->build_id_len) & (cap - 1);
		for (uint32_t e; (e = byid[k]) != NONE; k = (k + 1) & (cap - 1))
			if (d->mods[e].build_id_len == m->build_id_len &&
			    !memcmp(d->mods[e].build_id, m->build_id, m->build_id_len))
				break;
		if (byid[k] == NONE)
			byid[k] = (uint32_t)i;
		m->canon = byid[k];
	}
	/* 2: per path, the single build (NONE - 1: several) */
	uint32_t *build_of = malloc(cap * sizeof(*build_of));
	if (!build_of) {
		free(byid);
		free(bypath);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		size_t k = lsd_module_hash(m->path, NULL, 0) & (cap - 1);
		for (uint32_t e; (e = bypath[k]) != NONE; k = (k + 1) & (cap - 1))
			if (!strcmp(d->mods[e].path, m->path))
				break;
		if (bypath[k] == NONE) {
			bypath[k] = (uint32_t)i;
			build_of[k] = NONE;
		}
		if (m->build_id_len) {
			if (build_of[k] == NONE)
				build_of[k] = m->canon;
			else if (build_of[k] != m->canon)
				build_of[k] = NONE - 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		if (m->build_id_len)
			continue;
		size_t k = lsd_module_hash(m->path, NULL, 0) & (cap - 1);
		while (strcmp(d->mods[bypath[k]].path, m->path))
			k = (k + 1) & (cap - 1);
		if (build_of[k] < NONE - 1)
			m->canon = build_of[k];
	}
	for (size_t i = 0; i < n; i++)
		if (d->mods[i].canon != i)
			*merged = true;
	free(byid);
	free(bypath);
	free(build_of);
	return 0;
}

/* Frames of unified modules at the same offset are one frame. */
int lsd_unify_frames(struct leaksnap_diff *d)
{
	size_t cap = 16;
	while (cap < 2 * d->frame_count)
		cap *= 2;
	uint32_t *slots = lsd_slots_new(cap);
	if (!slots)
		return -1;
	for (size_t i = 0; i < d->frame_count; i++) {
		struct dframe *f = &d->frames[i];
		uint32_t cm = f->module == NONE ? NONE : d->mods[f->module].canon;
		size_t k = lsd_frame_hash(cm, f->addr) & (cap - 1);
		for (uint32_t e; (e = slots[k]) != NONE; k = (k + 1) & (cap - 1)) {
			const struct dframe *g = &d->frames[e];
			if (g->addr == f->addr &&
			    (g->module == NONE ? NONE : d->mods[g->module].canon) == cm)
				break;
		}
		if (slots[k] == NONE)
			slots[k] = (uint32_t)i;
		f->canon = slots[k];
		if (f->canon != i)
			d->frames[f->canon].pc = f->pc; /* shown as the latest capture */
	}
	free(slots);
	return 0;
}

/* The id of string @str in the names table. */
static int name_id(struct leaksnap_diff *d, const char *str, uint32_t *id)
{
	size_t bytes = strlen(str), words = bytes / 4 + 1;
	if (words > 0x7fffffffu)
		return -1;
	uint32_t *w = calloc(words, sizeof(*w));
	bool added;
	if (!w)
		return -1;
	memcpy(w, str, bytes);
	int rc = lsd_seqtab_intern(&d->names, w, (uint32_t)words, 0, id, &added);
	free(w);
	return rc != 0 || *id >= UNKNOWN_NAME ? -1 : 0;
}

/* Function-name ids of canonical frame @f's levels from @from outward,
 * appended to @key. */
static int append_names(struct leaksnap_diff *d, uint32_t f, uint32_t from, uint32_t **key,
			size_t *len, size_t *cap, struct leaksnap_error *err)
{
	if (lsd_frame_symbols(d, f, err) != 0)
		return -1;
	const struct frame_info *fi = &d->info[f];
	size_t levels = fi->view.sym_count;
	for (size_t l = from; l < levels || (levels == 0 && l == from); l++) {
		uint32_t id = UNKNOWN_NAME | f;
		const char *fn = levels ? fi->view.sym[l].function : NULL;
		if (fn && name_id(d, fn, &id) != 0)
			return -1;
		if (kit_grow((void **)key, cap, *len + 1, sizeof(**key)) != 0)
			return -1;
		(*key)[(*len)++] = id;
	}
	return 0;
}

/* Whether stack @s is suppressed (counted in the hits).  -1: out of memory. */
static int stack_suppressed(struct leaksnap_diff *d, uint32_t s, bool *out,
			    struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t supp = NONE, k;
	for (uint32_t i = 0; i < SEQ_LEN(st); i++) {
		if (lsd_frame_suppression(d, d->frames[ids[i]].canon, &k, err) != 0)
			return -1;
		if (k < supp)
			supp = k;
	}
	*out = supp != NONE;
	if (*out) {
		lsd_suppressions_hit(d->o.suppressions, supp, 1);
		d->suppressed++;
	}
	return 0;
}

/* The key of stack @s's group into *@key (length *@klen). */
static int group_key(struct leaksnap_diff *d, uint32_t s, uint32_t **key, size_t *key_cap,
		     size_t *klen, struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st), level = 0;
	size_t site = 0;
	*klen = 0;
	if (d->o.by != LEAKSNAP_DIFF_BY_STACK && lsd_stack_site(d, s, &site, &level, err) != 0)
		return -1;
	if (kit_grow((void **)key, key_cap, len + 1, sizeof(**key)) != 0)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	switch (d->o.by) {
	case LEAKSNAP_DIFF_BY_STACK:
		for (uint32_t i = 0; i < len; i++)
			(*key)[(*klen)++] = d->frames[ids[i]].canon;
		break;
	case LEAKSNAP_DIFF_BY_SITE:
		if (len)
			(*key)[(*klen)++] = d->frames[ids[site < len ? site : 0]].canon;
		break;
	case LEAKSNAP_DIFF_BY_MODULE: /* by path: two builds of a library are one library */
		if (len) {
			const struct dframe *f = &d->frames[ids[site < len ? site : 0]];
			uint32_t id = NONE;
			if (f->module != NONE &&
			    name_id(d, d->mods[d->mods[f->module].canon].path, &id) != 0)
				return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
			(*key)[(*klen)++] = id;
		}
		break;
	case LEAKSNAP_DIFF_BY_FUNCTION:
		if (site == len) /* all wrappers: the whole stack */
			site = level = 0;
		for (size_t i = site; i < len; i++)
			if (append_names(d, d->frames[ids[i]].canon, i == site ? level : 0, key,
					 klen, key_cap, err) != 0)
				return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		break;
	}
	return 0;
}

/* Add stack @s's sums (@stride of them, in @acc) to stack @g's; zero @s's. */
static void move_sums(uint64_t *acc, uint32_t g, size_t s, size_t stride)
{
	uint64_t *to = acc + (size_t)g * stride, *from = acc + s * stride;
	for (size_t i = 0; i < stride; i++) {
		to[i] = sat_add(to[i], from[i]);
		from[i] = 0;
	}
}

/* Whether a stack of bytes @a (one total a snapshot, [0, last]) shows its
 * group better than the one of bytes @r: it grew more from the first
 * snapshot to the last (or shrank less), or as much and holds more now. */
static bool better_face(const uint64_t *a, const uint64_t *r, size_t last)
{
	bool up_a = a[last] >= a[0], up_r = r[last] >= r[0];
	if (up_a != up_r)
		return up_a;
	uint64_t da = up_a ? a[last] - a[0] : a[0] - a[last];
	uint64_t dr = up_r ? r[last] - r[0] : r[0] - r[last];
	if (da != dr)
		return up_a ? da > dr : da < dr;
	return a[last] > r[last];
}

/* Group the compared stacks: group_of, rep, nstacks, gacc and guacc. */
int lsd_group_stacks(struct leaksnap_diff *d, bool merged, struct leaksnap_error *err)
{
	size_t nst = d->stacks.count, n = d->n, stride = 2 * n, last = n - 1;
	d->group_of = malloc((nst ? nst : 1) * sizeof(*d->group_of));
	d->rep = malloc((nst ? nst : 1) * sizeof(*d->rep));
	d->nstacks = calloc(nst ? nst : 1, sizeof(*d->nstacks));
	if (!d->group_of || !d->rep || !d->nstacks)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	/* Whole stacks of unmerged modules: a group is a stack (an included
	 * zygote stack joins the app stack with the same frames). */
	bool by_stack = d->o.by == LEAKSNAP_DIFF_BY_STACK && !merged;
	uint32_t *key = NULL;
	size_t key_cap = 0, klen, gacc_cap = 0, guacc_cap = 0, gsacc_cap = 0;
	if (by_stack) {
		d->gacc = d->acc;
		d->guacc = d->uacc;
		d->gsacc = d->sacc;
	}
	for (size_t s = 0; s < nst; s++) {
		d->group_of[s] = NONE;
		const struct seq *st = &d->stacks.ents[s];
		if (!d->include_zygote && SEQ_SALT(st))
			continue;
		if (d->o.suppressions) {
			bool supp;
			if (stack_suppressed(d, (uint32_t)s, &supp, err) != 0)
				goto fail;
			if (supp) { /* not compared: out of the snapshots' totals too */
				const uint64_t *a = d->acc + s * stride;
				for (size_t i = 0; i < n; i++) {
					struct leaksnap_diff_snapshot *sn = &d->snaps[i];
					sn->bytes -= a[i] < sn->bytes ? a[i] : sn->bytes;
					sn->count -= a[n + i] < sn->count ? a[n + i] : sn->count;
				}
				continue;
			}
		}
		uint32_t g = (uint32_t)s;
		if (by_stack) {
			if (SEQ_SALT(st)) { /* join the app stack of the same frames, if any */
				const uint32_t *ids = d->stacks.pool + st->off;
				uint32_t h = lsd_seq_hash(ids, SEQ_LEN(st), 0);
				size_t k = h & d->stacks.mask;
				for (uint64_t e; (e = d->stacks.slots[k]) != SLOT_EMPTY;
				     k = (k + 1) & d->stacks.mask) {
					const struct seq *o = &d->stacks.ents[SLOT_ID(e)];
					if (e >> 32 == h && o->len == SEQ_LEN(st) &&
					    !memcmp(d->stacks.pool + o->off, ids,
						    SEQ_LEN(st) * sizeof(*ids))) {
						g = SLOT_ID(e);
						break;
					}
				}
			}
			if (g != s) {
				move_sums(d->acc, g, s, stride);
				if (d->uacc)
					move_sums(d->uacc, g, s, stride);
				if (d->sacc)
					move_sums(d->sacc, g, s, 2 * stride);
			}
			if (d->nstacks[g]++ == 0)
				d->rep[g] = g;
		} else {
			bool added;
			if (group_key(d, (uint32_t)s, &key, &key_cap, &klen, err) != 0)
				goto fail;
			if (lsd_seqtab_intern(&d->keys, key, (uint32_t)klen, 0, &g, &added) != 0)
				goto nomem;
			if (added) {
				if (kit_grow((void **)&d->gacc, &gacc_cap, ((size_t)g + 1) * stride,
					 sizeof(*d->gacc)) != 0)
					goto nomem;
				memset(d->gacc + (size_t)g * stride, 0, stride * sizeof(*d->gacc));
				if (d->uacc) {
					if (kit_grow((void **)&d->guacc, &guacc_cap,
						     ((size_t)g + 1) * stride,
						     sizeof(*d->guacc)) != 0)
						goto nomem;
					memset(d->guacc + (size_t)g * stride, 0,
					       stride * sizeof(*d->guacc));
				}
				if (d->sacc) {
					if (kit_grow((void **)&d->gsacc, &gsacc_cap,
						     ((size_t)g + 1) * 2 * stride,
						     sizeof(*d->gsacc)) != 0)
						goto nomem;
					memset(d->gsacc + (size_t)g * 2 * stride, 0,
					       2 * stride * sizeof(*d->gsacc));
				}
				d->rep[g] = (uint32_t)s;
			}
			if (d->sacc) {
				uint64_t *sto = d->gsacc + (size_t)g * 2 * stride;
				const uint64_t *sfrom = d->sacc + s * 2 * stride;
				for (size_t i = 0; i < 2 * stride; i++)
					sto[i] = sat_add(sto[i], sfrom[i]);
			}
			if (d->uacc) {
				uint64_t *uto = d->guacc + (size_t)g * stride;
				const uint64_t *ufrom = d->uacc + s * stride;
				for (size_t i = 0; i < stride; i++)
					uto[i] = sat_add(uto[i], ufrom[i]);
			}
			uint64_t *to = d->gacc + (size_t)g * stride;
			const uint64_t *from = d->acc + s * stride;
			for (size_t i = 0; i < stride; i++)
				to[i] = sat_add(to[i], from[i]);
			d->nstacks[g]++;
			if (better_face(from, d->acc + (size_t)d->rep[g] * stride, last))
				d->rep[g] = (uint32_t)s;
		}
		if ((size_t)g + 1 > d->group_count)
			d->group_count = (size_t)g + 1;
		d->group_of[s] = g;
	}
	free(key);
	return 0;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
fail:
	free(key);
	return -1;
}
