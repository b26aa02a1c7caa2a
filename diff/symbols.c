/* leaksnap diff: symbolizing frames, allocation sites and suppression matches. */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

/* Symbols ------------------------------------------------------------------------- */

static void warn(struct leaksnap_diff *d, const struct leaksnap_error *e)
{
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	leaksnap_error_format(e, buf, sizeof(buf));
	for (size_t i = 0; i < d->nwarnings; i++)
		if (!strcmp(d->warnings[i], buf))
			return;
	char *w = strdup(buf);
	if (!w || kit_grow((void **)&d->warnings, &d->warn_cap, d->nwarnings + 1,
		       sizeof(*d->warnings)) != 0) {
		free(w);
		return; /* a lost warning is better than a lost report */
	}
	d->warnings[d->nwarnings++] = w;
}

static void note_symmod(struct leaksnap_diff *d, struct dmodule *m,
			const struct leaksnap_sym_module *sm)
{
	if (m->last_sym == sm)
		return;
	m->last_sym = sm;
	for (size_t i = 0; i < d->nsymmods; i++)
		if (d->symmods[i] == sm)
			return;
	if (kit_grow((void **)&d->symmods, &d->symmod_cap, d->nsymmods + 1, sizeof(*d->symmods)) !=
	    0)
		return;
	d->symmods[d->nsymmods++] = sm;
}

/* The resolver's problems, while this diff resolves: among its warnings. */
static void resolver_problem(void *arg, const struct leaksnap_error *e)
{
	warn(arg, e);
}

/* Symbolize canonical frame @f (once).  -1: out of memory. */
int lsd_frame_symbols(struct leaksnap_diff *d, uint32_t f, struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (fi->have & HAVE_SYMBOLS)
		return 0;
	fi->have |= HAVE_SYMBOLS;
	const struct dframe *fr = &d->frames[f];
	if ((!d->o.resolver && !d->o.symbols) || fr->module == NONE)
		return 0;
	struct dmodule *m = &d->mods[d->mods[fr->module].canon];
	uint64_t rel = fr->addr;
	if (d->o.symbols) { /* the caller's answers */
		struct leaksnap_resolved r = {0};
		if (d->o.symbols(d->o.symbols_arg, m->path, m->build_id, m->build_id_len, rel, &r,
				 err) != 0)
			return -1;
		if (r.module)
			note_symmod(d, m, r.module);
		fi->view.sym_module = r.module;
		fi->view.sym = r.frames;
		fi->view.sym_count = r.frame_count;
		return 0;
	}
	/* while this diff resolves, the resolver's problems are its warnings
	 * (the caller's callback is back as soon as it returns) */
	leaksnap_resolve_warn_fn caller_warn;
	void *caller_arg;
	leaksnap_resolver_set_warn(d->o.resolver, resolver_problem, d, &caller_warn, &caller_arg);
	const struct leaksnap_sym_module *sm = leaksnap_resolve_module(
		d->o.resolver, m->path, m->build_id, m->build_id_len, m->maps, m->nmaps, &rel, err);
	struct leaksnap_resolved r = {0};
	int rc = sm ? leaksnap_resolve_frame(d->o.resolver, sm, rel, &r, err) : -1;
	leaksnap_resolver_set_warn(d->o.resolver, caller_warn, caller_arg, NULL, NULL);
	if (!sm)
		return -1;
	note_symmod(d, m, sm);
	fi->view.sym_module = sm;
	if (rc != 0)
		return -1;
	fi->view.sym = r.frames;
	fi->view.sym_count = r.frame_count;
	return 0;
}

/* Allocation wrappers: the frames a site is looked for beyond. */
static const char *const wrapper_functions[] = {
	"^malloc$", "^calloc$", "^realloc$", "^reallocarray$", "^free$", "^memalign$",
	"^posix_memalign$", "^aligned_alloc$", "^valloc$", "^pvalloc$", "^strdup$",
	"^strndup$", "^__libc_*", "^je_*", "^scudo::", "^operator new", "^operator delete",
	"^std::", "^__gnu_cxx::", "^__cxxabiv1::", "^__cxa_", "^__libcpp_",
};
static const char *const wrapper_modules[] = {
	"/libc.so$", "/libc.so.*", "/libc++.so$", "/libc++.so.*", "/libc++_shared.so$",
	"/libstdc++.so$", "/libstdc++.so.*", "/libleakhook.so$", "/libc_malloc_debug.so$",
	"/libc_malloc_hooks.so$", "/ld-linux*.so*", "/ld-android.so$", "/linker$", "/linker64$",
	"/libjemalloc.so*", "/libtcmalloc*.so*", "/libscudo*.so$",
};

static bool matches_any(const char *const *pats, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (leaksnap_diff_pattern_match(pats[i], s))
			return true;
	return false;
}

bool leaksnap_diff_is_wrapper(const char *function, const char *module)
{
	return (module && *module &&
		matches_any(wrapper_modules, sizeof(wrapper_modules) / sizeof(*wrapper_modules),
			    module)) ||
	       matches_any(wrapper_functions, sizeof(wrapper_functions) / sizeof(*wrapper_functions),
			   function);
}

static bool module_is_wrapper(struct leaksnap_diff *d, uint32_t mi)
{
	struct dmodule *m = &d->mods[mi];
	if (m->wrapper < 0)
		m->wrapper = matches_any(wrapper_modules,
					 sizeof(wrapper_modules) / sizeof(*wrapper_modules),
					 m->path) ||
			     matches_any(d->o.skip, d->o.skip_count, m->path);
	return m->wrapper > 0;
}

static bool function_is_wrapper(const struct leaksnap_diff *d, const char *fn)
{
	return matches_any(wrapper_functions,
			   sizeof(wrapper_functions) / sizeof(*wrapper_functions), fn) ||
	       matches_any(d->o.skip, d->o.skip_count, fn);
}

/* The first level (innermost first) of canonical frame @f that is not an
 * allocation wrapper; NONE when all are. */
static int frame_site(struct leaksnap_diff *d, uint32_t f, uint32_t *level,
		      struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (!(fi->have & HAVE_SITE)) {
		if (lsd_frame_symbols(d, f, err) != 0)
			return -1;
		fi->have |= HAVE_SITE;
		const struct dframe *fr = &d->frames[f];
		fi->site_level = NONE;
		if (fr->module == NONE || !module_is_wrapper(d, d->mods[fr->module].canon)) {
			if (fi->view.sym_count == 0)
				fi->site_level = 0;
			for (size_t l = 0; l < fi->view.sym_count; l++)
				if (!function_is_wrapper(d, fi->view.sym[l].function)) {
					fi->site_level = (uint32_t)l;
					break;
				}
		}
	}
	*level = fi->site_level;
	return 0;
}

/* The first suppression matching a level of canonical frame @f. */
int lsd_frame_suppression(struct leaksnap_diff *d, uint32_t f, uint32_t *supp,
			     struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (!(fi->have & HAVE_SUPP)) {
		if (lsd_frame_symbols(d, f, err) != 0)
			return -1;
		fi->have |= HAVE_SUPP;
		const struct leaksnap_diff_suppressions *s = d->o.suppressions;
		const struct dframe *fr = &d->frames[f];
		size_t best = SIZE_MAX, k;
		for (size_t l = 0; l < fi->view.sym_count; l++) {
			const struct leaksnap_sym_frame *sf = &fi->view.sym[l];
			if ((k = lsd_suppressions_find(s, sf->function)) < best)
				best = k;
			if ((k = lsd_suppressions_find(s, sf->file)) < best)
				best = k;
		}
		if (fr->module != NONE &&
		    (k = lsd_suppressions_find(s, d->mods[fr->module].path)) < best)
			best = k;
		fi->supp = best == SIZE_MAX ? NONE : (uint32_t)best;
	}
	*supp = fi->supp;
	return 0;
}

/* The site of stack @s: the index of its first frame outside the wrappers
 * and that frame's level, or the stack's length when all are wrappers. */
int lsd_stack_site(struct leaksnap_diff *d, uint32_t s, size_t *frame, uint32_t *level,
		      struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	for (size_t i = 0; i < SEQ_LEN(st); i++) {
		uint32_t f = d->frames[ids[i]].canon;
		if (frame_site(d, f, level, err) != 0)
			return -1;
		if (*level != NONE) {
			*frame = i;
			return 0;
		}
	}
	*frame = SEQ_LEN(st);
	*level = NONE;
	return 0;
}

/* The diff's own (writable) view behind @group, or NULL when @group is
 * not one of its views (found by its address alone: nothing of a foreign
 * pointer is read). */
static struct group_priv *own_view(struct leaksnap_diff *d, const struct leaksnap_diff_group *group)
{
	void **slot = kit_table_find(&d->views, kit_key(group), 0);
	return slot ? *slot : NULL;
}

int leaksnap_diff_symbolize_group(struct leaksnap_diff *d, const struct leaksnap_diff_group *group,
			 struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!d->ranked || !group)
		return 0;
	struct group_priv *g = own_view(d, group);
	if (!g)
		return kit_error(err, LEAKSNAP_ERR_USAGE, "diff", "not a group of this diff");
	for (size_t i = 0; i < group->frame_count; i++) {
		uint32_t f = (uint32_t)(((const char *)group->frames[i] - (const char *)d->info) /
					sizeof(*d->info));
		if (lsd_frame_symbols(d, f, err) != 0)
			return -1;
	}
	size_t site;
	uint32_t level;
	if (lsd_stack_site(d, g->rep_stack, &site, &level, err) != 0)
		return -1;
	g->pub.site = site;
	g->pub.site_level = site < group->frame_count && level != NONE ? level : 0;
	return 0;
}

