/* A diff's growth as a profile (leakdiff --pprof): the suspects' growth
 * (growth_objects/count, growth_space/bytes), one sample per growing stack
 * of a suspect, from leaksnap_diff_foreach_growing_stack_delta().
 *
 * A diff frame is (module, offset in its file) with the PC it was captured
 * at in the latest snapshot that had it; its location's address is the
 * call (pc - 1, when the frames were looked up there), as pprof's own converters write
 * return addresses, and its mapping is the range of its module at that
 * load address (one mapping per module and load bias, from the page of the
 * lowest address the profile uses to the highest), so that address - start
 * + offset is the frame's offset in the file, as pprof computes it. */
#include <stdlib.h>
#include <string.h>

#include <leaksnap/export.h>

#include "internal.h"

struct module_map {
	const char *module;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t bias; /* pc - rel_pc */
	uint64_t id;
};

struct growth {
	struct leaksnap_export_pprof *p;
	struct module_map *maps;
	size_t nmaps, capmaps;
	uint64_t *ids;
	size_t capids;
	bool adjust;  /* addresses are the calls: pc - 1 */
	bool failed; /* the profile's error is set */
};

/* The mapping of frame @f, covering @addr (its PC or the call before it)
 * and the start of @addr's page, as a maps line would (pprof matches a
 * mapping's file offset against the file's segments). */
static uint64_t mapping_of(struct growth *g, const struct leaksnap_diff_frame *f, uint64_t addr)
{
	uint64_t bias = f->pc - f->rel_pc, page = addr & ~(uint64_t)0xfff;
	if (addr - bias < addr - page) /* (a file offset below the page: no page start) */
		page = addr;
	for (size_t i = 0; i < g->nmaps; i++) {
		struct module_map *m = &g->maps[i];
		if (m->bias == bias && strcmp(m->module, f->module) == 0 &&
		    m->build_id_len == f->build_id_len &&
		    (!f->build_id_len || memcmp(m->build_id, f->build_id, f->build_id_len) == 0)) {
			leaksnap_export_pprof_mapping_cover(g->p, m->id, addr);
			leaksnap_export_pprof_mapping_cover(g->p, m->id, page);
			return m->id;
		}
	}
	if (g->nmaps == g->capmaps) {
		size_t n = g->capmaps ? g->capmaps * 2 : 16;
		struct module_map *q = realloc(g->maps, n * sizeof(*q));
		if (!q)
			return 0;
		g->maps = q;
		g->capmaps = n;
	}
	uint64_t id = leaksnap_export_pprof_mapping(g->p, page, addr + 1, page - bias, f->module,
						    f->build_id, f->build_id_len,
						    f->sym_module && f->sym_module->file);
	if (id)
		g->maps[g->nmaps++] = (struct module_map){f->module, f->build_id, f->build_id_len,
							  bias, id};
	return id;
}

static int growth_stack(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
			uint64_t bytes, int64_t count_delta)
{
	struct growth *g = arg;
	if (n + 1 > g->capids) {
		uint64_t *q = realloc(g->ids, (n + 1) * sizeof(*q));
		if (!q)
			return -1; /* out of memory */
		g->ids = q;
		g->capids = n + 1;
	}
	/* frames come outermost first; a sample lists its leaf first */
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_diff_frame *f = frames[n - 1 - i];
		uint64_t key = (uint64_t)(uintptr_t)f,
			 id = leaksnap_export_pprof_location_find(g->p, key);
		if (!id) {
			uint64_t addr = g->adjust && f->pc ? f->pc - 1 : f->pc;
			uint64_t mid = f->module ? mapping_of(g, f, addr) : 0;
			id = f->module && !mid
				     ? 0
				     : leaksnap_export_pprof_location(g->p, key, mid, addr, f->sym,
								      f->sym_count);
		}
		if (!id) {
			g->failed = true;
			return -1;
		}
		g->ids[i] = id;
	}
	size_t nids = n;
	if (nids == 0 && !(g->ids[nids++] = leaksnap_export_pprof_no_frames(g->p))) {
		g->failed = true;
		return -1;
	}
	int64_t values[2] = {count_delta, bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes};
	if (leaksnap_export_pprof_sample(g->p, g->ids, nids, values, 2, NULL, 0)) {
		g->failed = true;
		return -1;
	}
	return 0;
}

static int header(struct leaksnap_export_pprof *p, struct leaksnap_diff *d)
{
	size_t n = leaksnap_diff_snapshot_count(d);
	const struct leaksnap_diff_snapshot *first = leaksnap_diff_snapshot(d, 0),
					    *last = leaksnap_diff_snapshot(d, n - 1);
	if (last->has_time) {
		int64_t t = last->time_ns > INT64_MAX ? INT64_MAX : (int64_t)last->time_ns;
		int64_t span = first->has_time && first->time_ns <= last->time_ns
				       ? (int64_t)(last->time_ns - first->time_ns)
				       : 0;
		leaksnap_export_pprof_time(p, t, span);
	}
	if (leaksnap_export_pprof_sample_type(p, "growth_objects", "count") ||
	    leaksnap_export_pprof_sample_type(p, "growth_space", "bytes") ||
	    leaksnap_export_pprof_default_sample_type(p, "growth_space") ||
	    leaksnap_export_pprof_period(p, "space", "bytes", 1))
		return -1;
	/* the program's mapping first, as pprof takes the first for the main
	 * binary (the last snapshot's: the program that grew) */
	if (last->exe && leaksnap_export_pprof_main_file(p, last->exe))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i);
		size_t len = strlen(s->file) + 64;
		char *line = malloc(len);
		if (!line)
			return -1;
		if (s->pid >= 0)
			snprintf(line, len, "snapshot %zu: %s (pid %lld)", i + 1, s->file,
				 (long long)s->pid);
		else
			snprintf(line, len, "snapshot %zu: %s", i + 1, s->file);
		int rc = leaksnap_export_pprof_comment(p, line);
		free(line);
		if (rc)
			return -1;
	}
	if (leaksnap_diff_sample_interval(d)) {
		char line[128];
		snprintf(line, sizeof(line),
			 "values are estimated from sampled snapshots (sample_interval=%llu)",
			 (unsigned long long)leaksnap_diff_sample_interval(d));
		if (leaksnap_export_pprof_comment(p, line))
			return -1;
	}
	return 0;
}

int leaksnap_export_pprof_diff(FILE *out, struct leaksnap_diff *d, bool adjust,
			       struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct growth g = {.p = leaksnap_export_pprof_new(out, LEAKSNAP_EXPORT_PPROF_DIFF_COMMENT, err),
			   .adjust = adjust};
	int rc = 0;
	if (!g.p) {
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	} else if (header(g.p, d)) {
		rc = leaksnap_export_pprof_error(g.p, err);
	} else if (leaksnap_diff_foreach_growing_stack_delta(d, growth_stack, &g, err) != 0) {
		/* the diff's error, or the profile's, or out of memory here */
		if (g.failed)
			rc = leaksnap_export_pprof_error(g.p, err);
		else if (err && err->code == LEAKSNAP_OK)
			rc = kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
		else
			rc = -1;
	} else if (leaksnap_export_pprof_finish(g.p)) {
		rc = leaksnap_export_pprof_error(g.p, err);
	}
	leaksnap_export_pprof_free(g.p);
	free(g.maps);
	free(g.ids);
	return rc;
}
