/* leaksnap resolve: frames of a snapshot to symbolized frames.  Each
 * distinct (module, rel_pc) is looked up once; modules are located with
 * the dump's build IDs, and a module found only as a debug-only file takes
 * its layout from the process's mappings. */
#include <stdlib.h>
#include <string.h>

#include "kit.h"
#include "kit_table.h"
#include <leaksnap/resolve.h>

/* One cached answer: the frames of (module, rel_pc), copied. */
struct answer {
	size_t frame_count;
	struct leaksnap_sym_frame frames[];
};

struct leaksnap_resolver {
	struct leaksnap_symbolizer *sym;
	bool return_addresses;
	bool failed;                       /* a problem was reported */
	unsigned jobs;
	leaksnap_resolve_warn_fn warn;
	void *warn_arg;
	leaksnap_resolve_module_fn no_symbols;
	void *no_symbols_arg;
	struct kit_table answers;          /* (module, rel_pc) -> struct answer * */
	struct kit_table seen;             /* module -> itself: modules met */
	struct kit_table hinted;           /* module -> itself: no_symbols said */
	const struct leaksnap_sym_module **modules; /* in the order first met */
	size_t module_count, module_cap;
};

static void problem(struct leaksnap_resolver *r, const struct leaksnap_error *e)
{
	r->failed = true;
	if (r->warn)
		r->warn(r->warn_arg, e);
}

static int nomem(struct leaksnap_error *err)
{
	return kit_error(err, LEAKSNAP_ERR_NOMEM, "symbolize", "out of memory");
}

struct leaksnap_resolver *leaksnap_resolver_new(const struct leaksnap_resolver_opts *opts,
						struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_resolver_opts o;
	if (kit_opts(&o, sizeof(o), opts, "leaksnap_resolver_opts", err) != 0)
		return NULL;
	struct leaksnap_resolver *r = calloc(1, sizeof(*r));
	if (!r) {
		nomem(err);
		return NULL;
	}
	r->return_addresses = o.return_addresses;
	r->jobs = o.jobs;
	r->warn = o.warn;
	r->warn_arg = o.warn_arg;
	r->no_symbols = o.no_symbols;
	r->no_symbols_arg = o.no_symbols_arg;
	LEAKSNAP_OPTS(leaksnap_sym_options, so, .demangle = true, .symbol_dirs = o.symbol_dirs,
		      .symbol_dir_count = o.symbol_dir_count, .symbol_extent = true,
		      .jobs = o.jobs, .debuginfod = o.debuginfod);
	r->sym = leaksnap_symbolizer_new(&so, err);
	if (!r->sym) {
		free(r);
		return NULL;
	}
	if (o.pointer_size)
		leaksnap_symbolizer_set_pointer_size(r->sym, o.pointer_size);
	return r;
}

void leaksnap_resolver_free(struct leaksnap_resolver *r)
{
	if (!r)
		return;
	kit_table_free(&r->answers, true);
	kit_table_free(&r->seen, false);
	kit_table_free(&r->hinted, false);
	free(r->modules);
	leaksnap_symbolizer_free(r->sym);
	free(r);
}

struct leaksnap_symbolizer *leaksnap_resolver_symbolizer(struct leaksnap_resolver *r)
{
	return r->sym;
}

void leaksnap_resolver_set_warn(struct leaksnap_resolver *r, leaksnap_resolve_warn_fn warn,
				void *arg, leaksnap_resolve_warn_fn *old_warn, void **old_arg)
{
	if (old_warn)
		*old_warn = r->warn;
	if (old_arg)
		*old_arg = r->warn_arg;
	r->warn = warn;
	r->warn_arg = arg;
}

bool leaksnap_resolver_failed(const struct leaksnap_resolver *r)
{
	return r->failed;
}

size_t leaksnap_resolver_module_count(const struct leaksnap_resolver *r)
{
	return r->module_count;
}

const struct leaksnap_sym_module *leaksnap_resolver_module(const struct leaksnap_resolver *r,
							   size_t i)
{
	return i < r->module_count ? r->modules[i] : NULL;
}

size_t leaksnap_resolver_address_count(const struct leaksnap_resolver *r)
{
	return r->answers.count;
}

/* Where a module's mappings come from when its layout is wanted: an array
 * the caller has, or the module of a parsed maps. */
struct mappings {
	const struct leaksnap_sym_mapping *v;
	size_t n;
	const struct leaksnap_maps *maps;
	const struct leaksnap_maps_module *mm;
};

/* A module whose file is debug-only, with no file of its own here, takes
 * its layout from the process's mappings.  -1: out of memory. */
static int take_layout(struct leaksnap_resolver *r, const struct leaksnap_sym_module *m,
		       const char *path, const struct mappings *src, struct leaksnap_error *err)
{
	if (!m->file || m->layout != LEAKSNAP_SYM_LAYOUT_NONE || strcmp(m->path, path) != 0)
		return 0;
	const struct leaksnap_sym_mapping *v = src->v;
	size_t n = src->n;
	struct leaksnap_sym_mapping *built = NULL;
	if (src->maps) {
		n = src->mm->mapping_count;
		built = malloc((n ? n : 1) * sizeof(*built));
		if (!built) {
			struct leaksnap_error e;
			leaksnap_error_clear(&e);
			kit_error(&e, LEAKSNAP_ERR_NOMEM, m->path, "out of memory");
			problem(r, &e);
			return 0;
		}
		for (size_t i = 0; i < n; i++) {
			const struct leaksnap_maps_mapping *x = leaksnap_maps_mapping(
				src->maps, src->mm->first_mapping + i);
			built[i] = (struct leaksnap_sym_mapping){x->start, x->end, x->offset,
								 x->perms[2] == 'x'};
		}
		v = built;
	} else if (!v) {
		return 0;
	}
	struct leaksnap_error e;
	leaksnap_error_clear(&e);
	int rc = 0;
	if (leaksnap_sym_module_set_mappings(r->sym, m, v, n, &e) != 0) {
		if (e.code == LEAKSNAP_ERR_NOMEM && !src->maps)
			rc = nomem(err);
		else
			problem(r, &e);
	}
	free(built);
	return rc;
}

/* Note @m as met: the first time, report why a candidate file could not
 * be read, and give it its layout.  -1: out of memory. */
static int meet(struct leaksnap_resolver *r, const struct leaksnap_sym_module *m, const char *path,
		const struct mappings *src, struct leaksnap_error *err)
{
	void **slot = kit_table_slot(&r->seen, kit_key(m), 0);
	if (!slot)
		return nomem(err);
	if (*slot)
		return 0;
	if (kit_grow((void **)&r->modules, &r->module_cap, r->module_count + 1,
		     sizeof(*r->modules)) != 0)
		return nomem(err);
	*slot = (void *)r; /* any non-NULL value: met */
	r->modules[r->module_count++] = m;
	if (m->error) {
		struct leaksnap_error e;
		leaksnap_error_clear(&e);
		kit_error(&e, LEAKSNAP_ERR_FORMAT, m->error_file, "%s", m->error);
		problem(r, &e);
	}
	return take_layout(r, m, path, src, err);
}

static const struct leaksnap_sym_module *module_at(struct leaksnap_resolver *r, const char *path,
					  const uint8_t *build_id, size_t build_id_len,
					  const struct mappings *src, uint64_t *rel_pc,
					  struct leaksnap_error *err)
{
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module_at(
		r->sym, path, build_id_len ? build_id : NULL, build_id_len, rel_pc, err);
	if (!m || meet(r, m, path, src, err) != 0)
		return NULL;
	return m;
}

const struct leaksnap_sym_module *leaksnap_resolve_module(
	struct leaksnap_resolver *r, const char *path, const uint8_t *build_id, size_t build_id_len,
	const struct leaksnap_sym_mapping *mappings, size_t count, uint64_t *rel_pc,
	struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct mappings src = {mappings, count, NULL, NULL};
	return module_at(r, path, build_id, build_id_len, &src, rel_pc, err);
}

/* The first frame of stripped module @m left unknown: said (once per
 * module).  -1: out of memory. */
static int hint_once(struct leaksnap_resolver *r, const struct leaksnap_sym_module *m,
		     struct leaksnap_error *err)
{
	void **slot = kit_table_slot(&r->hinted, kit_key(m), 0);
	if (!slot)
		return nomem(err);
	if (!*slot) {
		*slot = (void *)r; /* any non-NULL value: said */
		r->no_symbols(r->no_symbols_arg, m);
	}
	return 0;
}

/* leaksnap_resolve_frame() for a record already cleared. */
static int frame_answer(struct leaksnap_resolver *r, const struct leaksnap_sym_module *m,
			uint64_t rel_pc, struct leaksnap_resolved *out, struct leaksnap_error *err)
{
	memset(out, 0, sizeof(*out));
	out->module = m;
	if (!m || !m->file)
		return 0;
	void **slot = kit_table_slot(&r->answers, kit_key(m), rel_pc);
	if (!slot)
		return nomem(err);
	struct answer *a = *slot;
	if (!a) {
		struct leaksnap_sym_result res;
		struct leaksnap_error e;
		leaksnap_error_clear(&e);
		if (leaksnap_sym_module_lookup(m, rel_pc, r->return_addresses, &res, &e) != 0) {
			problem(r, &e);
			res.frame_count = 0;
		}
		a = malloc(sizeof(*a) + res.frame_count * sizeof(a->frames[0]));
		if (!a)
			return nomem(err);
		a->frame_count = res.frame_count;
		if (res.frame_count)
			memcpy(a->frames, res.frames, res.frame_count * sizeof(a->frames[0]));
		*slot = a;
		if (!a->frame_count && m->no_symbols && r->no_symbols &&
		    hint_once(r, m, err) != 0)
			return -1;
	}
	out->frames = a->frame_count ? a->frames : NULL;
	out->frame_count = a->frame_count;
	return 0;
}

int leaksnap_resolve_frame(struct leaksnap_resolver *r, const struct leaksnap_sym_module *m,
			   uint64_t rel_pc, struct leaksnap_resolved *out,
			   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return frame_answer(r, m, rel_pc, out, err);
}

/* The module of a snapshot's frame in @mm, located with the build ID the
 * dump recorded for it. */
static const struct leaksnap_sym_module *snapshot_module(struct leaksnap_resolver *r,
							 const struct leaksnap_snapshot *s,
							 const struct leaksnap_maps *maps,
							 const struct leaksnap_maps_module *mm,
							 uint64_t *rel_pc,
							 struct leaksnap_error *err)
{
	uint8_t id[64];
	size_t len = leaksnap_maps_module_build_id(maps, mm, s, id, sizeof(id));
	struct mappings src = {NULL, 0, maps, mm};
	return module_at(r, mm->path, id, len, &src, rel_pc, err);
}

/* The same for a prefetch: the module is located and given its layout,
 * but not yet met (modules are listed, and their problems said, in the
 * order frames are resolved). */
static const struct leaksnap_sym_module *prefetch_module(struct leaksnap_resolver *r,
							 const struct leaksnap_snapshot *s,
							 const struct leaksnap_maps *maps,
							 const struct leaksnap_maps_module *mm,
							 uint64_t *rel_pc)
{
	uint8_t id[64];
	size_t len = leaksnap_maps_module_build_id(maps, mm, s, id, sizeof(id));
	struct leaksnap_error err;
	leaksnap_error_clear(&err); /* (out of memory is said when the frame is resolved) */
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module_at(
		r->sym, mm->path, len ? id : NULL, len, rel_pc, &err);
	struct mappings src = {NULL, 0, maps, mm};
	if (m)
		take_layout(r, m, mm->path, &src, &err);
	return m;
}

int leaksnap_resolve_pc(struct leaksnap_resolver *r, const struct leaksnap_snapshot *s,
			const struct leaksnap_maps *maps, const struct leaksnap_maps_location *loc,
			struct leaksnap_resolved *out, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (!loc->module)
		return 0;
	uint64_t rel_pc = loc->rel_pc;
	const struct leaksnap_sym_module *m = snapshot_module(r, s, maps, loc->module, &rel_pc,
							      err);
	if (!m)
		return -1;
	return frame_answer(r, m, rel_pc, out, err);
}

/* Prefetching: the rel_pcs of each module, handed to the symbolizer
 * together. */
struct hint {
	const struct leaksnap_sym_module *module;
	uint64_t *pcs;
	size_t count, cap;
};

static struct hint *hint_for(struct hint **h, size_t *nh, size_t *caph,
			     const struct leaksnap_sym_module *m)
{
	size_t j = 0;
	while (j < *nh && (*h)[j].module != m)
		j++;
	if (j == *nh) {
		if (kit_grow((void **)h, caph, *nh + 1, sizeof(**h)) != 0)
			return NULL;
		(*h)[(*nh)++] = (struct hint){m, NULL, 0, 0};
	}
	return &(*h)[j];
}

static bool is_apk(const char *path)
{
	size_t pl = strlen(path);
	return pl >= 4 && strcmp(path + pl - 4, ".apk") == 0;
}

void leaksnap_resolve_prefetch(struct leaksnap_resolver *r, const struct leaksnap_snapshot *s,
			       const struct leaksnap_maps *maps, const size_t *records,
			       size_t count)
{
	if (!maps || r->jobs < 2)
		return;
	struct hint *h = NULL;
	size_t nh = 0, caph = 0;
	uint64_t seen[4096] = {0}; /* PCs met lately: stacks share most */
	struct {
		const struct leaksnap_maps_module *mm;
		const struct leaksnap_sym_module *m;
	} known[64]; /* modules located (not APKs: their libraries vary by offset) */
	size_t nknown = 0;
	for (size_t i = 0; i < count; i++) {
		const struct leaksnap_snapshot_record *rec = leaksnap_snapshot_record(s,
										      records[i]);
		for (uint32_t k = 0; rec && k < rec->frame_count; k++) {
			uint64_t pc = rec->frames[k];
			size_t at = (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 52);
			if (seen[at] == pc + 1)
				continue;
			seen[at] = pc + 1;
			struct leaksnap_maps_location loc;
			if (!leaksnap_maps_locate(maps, pc, &loc) || !loc.module)
				continue;
			uint64_t rel_pc = loc.rel_pc;
			const struct leaksnap_sym_module *m = NULL;
			for (size_t b = 0; b < nknown && !m; b++)
				if (known[b].mm == loc.module)
					m = known[b].m;
			if (!m) {
				m = prefetch_module(r, s, maps, loc.module, &rel_pc);
				if (m && nknown < sizeof(known) / sizeof(known[0]) &&
				    !is_apk(loc.module->path)) {
					known[nknown].mm = loc.module;
					known[nknown++].m = m;
				}
			}
			if (!m || !m->file)
				continue;
			struct hint *x = hint_for(&h, &nh, &caph, m);
			if (!x ||
			    kit_grow((void **)&x->pcs, &x->cap, x->count + 1, sizeof(*x->pcs)) != 0)
				goto out;
			x->pcs[x->count++] = rel_pc;
		}
	}
out:
	for (size_t j = 0; j < nh; j++) {
		leaksnap_sym_module_prefetch(h[j].module, h[j].pcs, h[j].count,
					     r->return_addresses);
		free(h[j].pcs);
	}
	free(h);
}
