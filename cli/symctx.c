/* leaksnap CLI: symbolizing the frames of a snapshot.  Each distinct
 * (module, rel_pc) is looked up once; modules are located with the dump's
 * build IDs (metadata "build_id=<hex> <path>"). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct cache_entry {
	const struct sym_module *module; /* NULL: empty slot */
	uint64_t rel_pc;
	struct sym_frame *frames;
	size_t frame_count;
};

struct cli_symctx {
	struct symbolizer *sym;
	bool adjust;
	const char *const *dirs;
	struct cache_entry *cache;
	size_t cache_count, cache_mask;
	const struct snapshot *snap;       /* its metadata has the build IDs */
	const struct maps *maps;           /* its maps (a debug-only file's layout) */
	const struct sym_module **modules; /* in the order first used */
	size_t module_count, module_cap;
	int status;                        /* EXIT_ERROR once a file was bad */
	bool tty;                          /* stderr is a terminal: progress */
	bool progress_shown;
	double started, last_progress;
};

unsigned cli_sym_jobs(void)
{
	const char *env = getenv("LEAKSNAP_JOBS");
	uint64_t v;
	if (env && *env && cli_parse_uint(env, 0, 64, &v))
		return (unsigned)v;
	long n = 0;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n <= 1 ? 1 : n >= 4 ? 4 : (unsigned)n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct cli_symctx *cli_symctx_new(const struct snapshot *s, const struct maps *maps,
				  const char *const *dirs, size_t ndirs, bool adjust)
{
	struct cli_symctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->adjust = adjust;
	c->tty = isatty(2) == 1;
	c->started = now_s();
	struct sym_options so = {.demangle = true, .symbol_dirs = dirs, .symbol_dir_count = ndirs,
				 .symbol_extent = true, .jobs = cli_sym_jobs()};
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	c->sym = symbolizer_new(&so, &err);
	if (c->sym)
		symbolizer_set_pointer_size(c->sym, snapshot_pointer_size_known(s));
	c->snap = s;
	c->maps = maps;
	if (!c->sym) {
		cli_symctx_free(c);
		return NULL;
	}
	return c;
}

/* Progress on a terminal, once symbolizing has taken more than a second:
 * one line, rewritten in place, erased at the end. */
void cli_symctx_progress(struct cli_symctx *c, size_t done, size_t total)
{
	if (!c->tty)
		return;
	double t = now_s();
	if (t - c->started < 1.0 || t - c->last_progress < 0.25)
		return;
	c->last_progress = t;
	c->progress_shown = true;
	fprintf(stderr, "\rleaksnap: symbolizing: %zu of %zu records, %zu modules, %zu addresses",
		done, total, c->module_count, c->cache_count);
	fflush(stderr);
}

void cli_symctx_progress_end(struct cli_symctx *c)
{
	if (c && c->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		c->progress_shown = false;
	}
}

void cli_symctx_free(struct cli_symctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->cache && i <= c->cache_mask; i++)
		free(c->cache[i].frames);
	free(c->cache);
	free(c->modules);
	symbolizer_free(c->sym);
	free(c);
}

int cli_symctx_status(const struct cli_symctx *c)
{
	return c->status;
}

size_t cli_symctx_module_count(const struct cli_symctx *c)
{
	return c->module_count;
}

const struct sym_module *cli_symctx_module(const struct cli_symctx *c, size_t i)
{
	return c->modules[i];
}

/* A module whose file is debug-only, with no file of its own here, takes
 * its layout from the maps (the mappings of @mm). */
static void layout_from_maps(struct cli_symctx *c, const struct sym_module *m,
			     const struct maps_module *mm)
{
	if (!m->file || m->layout != SYM_LAYOUT_NONE || !c->maps || strcmp(m->path, mm->path) != 0)
		return;
	struct sym_mapping *v = malloc((mm->mapping_count ? mm->mapping_count : 1) * sizeof(*v));
	if (!v) {
		cli_symctx_progress_end(c);
		cli_fail(m->path, "out of memory");
		c->status = EXIT_ERROR;
		return;
	}
	for (size_t i = 0; i < mm->mapping_count; i++) {
		const struct maps_mapping *x = maps_mapping(c->maps, mm->first_mapping + i);
		v[i] = (struct sym_mapping){x->start, x->end, x->offset, x->perms[2] == 'x'};
	}
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	if (sym_module_set_mappings(m, v, mm->mapping_count, &err) != 0) {
		cli_symctx_progress_end(c);
		cli_fail_error(&err);
		c->status = EXIT_ERROR;
	}
	free(v);
}

/* The module of a frame at *@rel_pc in @mm (an APK's library: *@rel_pc
 * becomes the offset in it). */
static const struct sym_module *module_of(struct cli_symctx *c, const struct maps_module *mm,
					  uint64_t *rel_pc)
{
	const char *path = mm->path;
	uint8_t id[64];
	size_t len = maps_module_build_id(c->maps, mm, c->snap, id, sizeof(id));
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	const struct sym_module *m = symbolizer_module_at(c->sym, path, len ? id : NULL, len,
							  rel_pc, &err);
	if (!m) {
		cli_symctx_progress_end(c);
		cli_fail_error(&err);
		c->status = EXIT_ERROR;
		return NULL;
	}
	for (size_t i = 0; i < c->module_count; i++)
		if (c->modules[i] == m)
			return m;
	if (c->module_count == c->module_cap) {
		size_t n = c->module_cap ? c->module_cap * 2 : 16;
		const struct sym_module **p = realloc(c->modules, n * sizeof(*p));
		if (!p)
			return m;
		c->modules = p;
		c->module_cap = n;
	}
	c->modules[c->module_count++] = m;
	if (m->error) {
		cli_symctx_progress_end(c);
		cli_fail(m->error_file, "%s", m->error);
		c->status = EXIT_ERROR;
	}
	layout_from_maps(c, m, mm);
	return m;
}

static size_t slot(const struct cli_symctx *c, const struct sym_module *m, uint64_t rel_pc)
{
	uint64_t h = ((uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ULL) ^ (rel_pc * 0xc2b2ae3d27d4eb4fULL);
	size_t i = (size_t)(h >> 20) & c->cache_mask;
	while (c->cache[i].module && (c->cache[i].module != m || c->cache[i].rel_pc != rel_pc))
		i = (i + 1) & c->cache_mask;
	return i;
}

static int cache_grow(struct cli_symctx *c)
{
	size_t cap = c->cache ? (c->cache_mask + 1) * 2 : 1024;
	struct cache_entry *old = c->cache;
	size_t old_cap = old ? c->cache_mask + 1 : 0;
	c->cache = calloc(cap, sizeof(*c->cache));
	if (!c->cache) {
		c->cache = old;
		return -1;
	}
	c->cache_mask = cap - 1;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].module)
			c->cache[slot(c, old[i].module, old[i].rel_pc)] = old[i];
	free(old);
	return 0;
}

/* The frames of modules already hinted, per module: rel_pcs to hand to
 * sym_module_prefetch together. */
struct hint {
	const struct sym_module *module;
	uint64_t *pcs;
	size_t count, cap;
};

void cli_symctx_prefetch(struct cli_symctx *c, const struct maps *maps,
			 const struct snapshot *s, const size_t *records, size_t count)
{
	if (!maps || cli_sym_jobs() < 2)
		return;
	struct hint *h = NULL;
	size_t nh = 0, caph = 0;
	uint64_t seen[4096] = {0}; /* PCs met lately: stacks share most */
	struct {
		const struct maps_module *mm;
		const struct sym_module *m;
	} known[64]; /* modules located (not APKs: their libraries vary by offset) */
	size_t nknown = 0;
	for (size_t i = 0; i < count; i++) {
		const struct snapshot_record *r = snapshot_record(s, records[i]);
		for (uint32_t k = 0; r && k < r->frame_count; k++) {
			uint64_t pc = r->frames[k];
			size_t slot = (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 52);
			if (seen[slot] == pc + 1)
				continue;
			seen[slot] = pc + 1;
			struct maps_location loc;
			if (!maps_locate(maps, pc, &loc) || !loc.module)
				continue;
			uint64_t rel_pc = loc.rel_pc;
			const struct sym_module *m = NULL;
			for (size_t b = 0; b < nknown && !m; b++)
				if (known[b].mm == loc.module)
					m = known[b].m;
			if (!m) {
				uint8_t id[64];
				size_t len = maps_module_build_id(maps, loc.module, s, id, sizeof(id));
				/* (errors are said when the frame is resolved) */
				struct leaksnap_error err;
				leaksnap_error_clear(&err);
				m = symbolizer_module_at(c->sym, loc.module->path, len ? id : NULL, len,
							 &rel_pc, &err);
				if (m)
					layout_from_maps(c, m, loc.module);
				size_t pl = strlen(loc.module->path);
				if (m && nknown < sizeof(known) / sizeof(known[0]) &&
				    !(pl >= 4 && strcmp(loc.module->path + pl - 4, ".apk") == 0)) {
					known[nknown].mm = loc.module;
					known[nknown++].m = m;
				}
			}
			if (!m || !m->file)
				continue;
			size_t j = 0;
			while (j < nh && h[j].module != m)
				j++;
			if (j == nh) {
				if (nh == caph) {
					size_t n = caph ? caph * 2 : 8;
					struct hint *p = realloc(h, n * sizeof(*p));
					if (!p)
						goto out;
					h = p;
					caph = n;
				}
				h[nh++] = (struct hint){m, NULL, 0, 0};
			}
			if (h[j].count == h[j].cap) {
				size_t n = h[j].cap ? h[j].cap * 2 : 256;
				uint64_t *p = realloc(h[j].pcs, n * sizeof(*p));
				if (!p)
					goto out;
				h[j].pcs = p;
				h[j].cap = n;
			}
			h[j].pcs[h[j].count++] = rel_pc;
		}
	}
out:
	for (size_t j = 0; j < nh; j++) {
		sym_module_prefetch(h[j].module, h[j].pcs, h[j].count, c->adjust);
		free(h[j].pcs);
	}
	free(h);
}

int cli_symctx_resolve(struct cli_symctx *c, const struct maps_location *loc,
		       struct leaksnap_resolved *out)
{
	memset(out, 0, sizeof(*out));
	if (!loc->module)
		return 0;
	uint64_t rel_pc = loc->rel_pc;
	const struct sym_module *m = module_of(c, loc->module, &rel_pc);
	if (!m)
		return -1;
	out->module = m;
	if (!m->file)
		return 0;
	if ((c->cache_count + 1) * 2 > (c->cache ? c->cache_mask + 1 : 0) && cache_grow(c) != 0)
		return cli_fail("symbolize", "out of memory"), -1;
	size_t i = slot(c, m, rel_pc);
	struct cache_entry *e = &c->cache[i];
	if (!e->module) {
		struct sym_result r;
		struct leaksnap_error err;
		leaksnap_error_clear(&err);
		if (sym_module_lookup(m, rel_pc, c->adjust, &r, &err) != 0) {
			cli_symctx_progress_end(c);
			cli_fail_error(&err);
			c->status = EXIT_ERROR;
			r.frame_count = 0;
		}
		e->frames = r.frame_count ? malloc(r.frame_count * sizeof(*e->frames)) : NULL;
		if (r.frame_count && !e->frames)
			return cli_fail("symbolize", "out of memory"), -1;
		if (r.frame_count)
			memcpy(e->frames, r.frames, r.frame_count * sizeof(*e->frames));
		e->frame_count = r.frame_count;
		e->module = m;
		e->rel_pc = rel_pc;
		c->cache_count++;
	}
	out->frames = e->frames;
	out->frame_count = e->frame_count;
	return 0;
}
