/* A snapshot as a heap profile of the live allocations (inuse_objects/count,
 * inuse_space/bytes), one sample per record, one location per distinct PC
 * with the maps line it falls in as its mapping, its frames resolved by the
 * caller (`leaksnap convert --to pprof`). */
#include <stdlib.h>
#include <string.h>

#include <leaksnap/export.h>

#include "internal.h"

/* @path as the rewrite rules write it (the first rule whose prefix starts
 * it), in @buf when rewritten; counted in the rule's @matched when @count. */
static const char *rewritten(const char *path, const struct leaksnap_export_pprof_snapshot_opts *o,
			     char **buf, bool count)
{
	for (size_t i = 0; path && i < o->rewrite_count; i++) {
		struct leaksnap_snapshot_rewrite *r = &o->rewrites[i];
		size_t ol = strlen(r->old_prefix);
		if (strncmp(path, r->old_prefix, ol) != 0)
			continue;
		if (count)
			r->matched++;
		size_t nl = strlen(r->new_prefix), rest = strlen(path + ol);
		free(*buf);
		*buf = malloc(nl + rest + 1);
		if (!*buf)
			return NULL;
		memcpy(*buf, r->new_prefix, nl);
		memcpy(*buf + nl, path + ol, rest + 1);
		return *buf;
	}
	return path;
}

static int header(struct leaksnap_export_pprof *p, const struct leaksnap_snapshot *s,
		  const struct leaksnap_export_pprof_snapshot_opts *o)
{
	uint64_t t;
	if (leaksnap_snapshot_time_ns(s, &t))
		leaksnap_export_pprof_time(p, t > INT64_MAX ? INT64_MAX : (int64_t)t, 0);
	if (leaksnap_export_pprof_sample_type(p, "inuse_objects", "count") ||
	    leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes") ||
	    leaksnap_export_pprof_default_sample_type(p, "inuse_space") ||
	    leaksnap_export_pprof_period(p, "space", "bytes",
					 leaksnap_snapshot_sample_interval(s)
						 ? (int64_t)leaksnap_snapshot_sample_interval(s)
						 : 1))
		return -1;
	char line[128];
	if (leaksnap_snapshot_sample_interval(s)) {
		/* the values are the estimates; the sampled counts are labels */
		snprintf(line, sizeof(line),
			 "values are estimated from a sampled snapshot (sample_interval=%llu); "
			 "label sampled_count: the blocks sampled",
			 (unsigned long long)leaksnap_snapshot_sample_interval(s));
		if (leaksnap_export_pprof_comment(p, line))
			return -1;
	}
	const char *version = leaksnap_snapshot_version(s);
	snprintf(line, sizeof(line), "format=%s%s%s",
		 leaksnap_snapshot_format_name(leaksnap_snapshot_format(s)), version ? " " : "",
		 version ? version : "");
	size_t sl = strlen(leaksnap_snapshot_source(s)) + 8;
	char *source = malloc(sl);
	if (!source)
		return -1;
	snprintf(source, sl, "source=%s", leaksnap_snapshot_source(s));
	int rc = leaksnap_export_pprof_comment(p, source);
	free(source);
	if (rc || leaksnap_export_pprof_comment(p, line))
		return -1;
	if (leaksnap_snapshot_pid(s) >= 0) {
		snprintf(line, sizeof(line), "pid=%lld", (long long)leaksnap_snapshot_pid(s));
		if (leaksnap_export_pprof_comment(p, line))
			return -1;
	}
	/* the command line, when the dump has it (other metadata: leaksnap show) */
	const char *cmdline = leaksnap_snapshot_meta_get(s, "cmdline");
	if (cmdline) {
		size_t n = strlen(cmdline) + 9;
		char *kv = malloc(n);
		if (!kv)
			return -1;
		snprintf(kv, n, "cmdline=%s", cmdline);
		rc = leaksnap_export_pprof_comment(p, kv);
		free(kv);
		if (rc)
			return -1;
	}
	char *buf = NULL;
	const char *exe = rewritten(leaksnap_snapshot_meta_get(s, "exe"), o, &buf, false);
	rc = exe ? leaksnap_export_pprof_main_file(p, exe) : 0;
	free(buf);
	return rc;
}

struct builder {
	struct leaksnap_export_pprof *p;
	const struct leaksnap_snapshot *s;
	const struct leaksnap_maps *maps;
	const struct leaksnap_export_pprof_snapshot_opts *o;
	int resolve_rc; /* what the resolve callback returned when it failed */
	uint64_t *map_ids; /* per maps line: its mapping's id, 0: none yet */
	char *buf;
};

/* The location of @pc (added when new): 0 when out of memory (the
 * profile's error), UINT64_MAX when the resolve callback failed
 * (b->resolve_rc). */
static uint64_t location(struct builder *b, uint64_t pc)
{
	uint64_t id = leaksnap_export_pprof_location_find(b->p, pc);
	if (id)
		return id;
	struct leaksnap_maps_location loc = {0};
	struct leaksnap_resolved r = {0};
	uint64_t mid = 0;
	if (leaksnap_maps_locate(b->maps, pc, &loc)) {
		if (b->o->resolve && loc.module &&
		    (b->resolve_rc = b->o->resolve(b->o->arg, &loc, &r)) != 0)
			return UINT64_MAX;
		size_t i = (size_t)(loc.mapping - leaksnap_maps_mapping(b->maps, 0));
		if (!b->map_ids[i]) {
			const struct leaksnap_maps_mapping *m = loc.mapping;
			uint8_t bid[64];
			size_t bl = !m->path ? 0
				    : m->unloaded
					    ? leaksnap_snapshot_unloaded_build_id(
						      b->s, m->path, m->inode, bid, sizeof(bid))
					    : leaksnap_snapshot_build_id(b->s, m->path, bid,
									 sizeof(bid));
			const char *file = rewritten(m->path, b->o, &b->buf, false);
			if (!file)
				return 0;
			b->map_ids[i] = leaksnap_export_pprof_mapping(
				b->p, m->start, m->end, m->offset, file, bl ? bid : NULL, bl,
				r.module && r.module->file);
			if (!b->map_ids[i])
				return 0;
		}
		mid = b->map_ids[i];
	}
	/* the call (pc - 1), as pprof's own converters write return addresses
	 * and as the frame was looked up, unless the caller says not */
	uint64_t addr = b->o->adjust && pc && (!loc.mapping || pc > loc.mapping->start) ? pc - 1
											      : pc;
	return leaksnap_export_pprof_location(b->p, pc, mid, addr, r.frames, r.frame_count);
}

static int build(struct builder *b)
{
	const struct leaksnap_snapshot *s = b->s;
	size_t n = leaksnap_snapshot_record_count(s);
	uint64_t *ids = malloc((leaksnap_snapshot_backtrace_size(s) + 1) * sizeof(*ids));
	if (!ids)
		return -1;
	int rc = 0;
	bool reach = leaksnap_snapshot_has_reachability(s);
	uint32_t cap = leaksnap_snapshot_backtrace_size(s) + 1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		if (r->frame_count > cap) { /* (a text dump's B is its longest stack) */
			uint64_t *more = realloc(ids, r->frame_count * sizeof(*ids));
			if (!more) {
				rc = -1;
				break;
			}
			ids = more;
			cap = r->frame_count;
		}
		for (uint32_t k = 0; k < r->frame_count && rc == 0; k++) {
			ids[k] = location(b, r->frames[k]);
			rc = ids[k] == 0 ? -1 : ids[k] == UINT64_MAX ? -2 : 0;
		}
		if (rc)
			break;
		uint32_t nids = r->frame_count;
		if (nids == 0) {
			ids[nids++] = leaksnap_export_pprof_no_frames(b->p);
			if (!ids[0]) {
				rc = -1;
				break;
			}
		}
		int64_t values[2] = {
			r->count > INT64_MAX ? INT64_MAX : (int64_t)r->count,
			r->size && r->count > INT64_MAX / r->size ? INT64_MAX
								  : (int64_t)(r->size * r->count)};
		bool sampled = leaksnap_snapshot_sample_interval(s) != 0;
		if (sampled) {
			uint64_t eb, ec;
			leaksnap_snapshot_record_estimate(s, r, &eb, &ec, NULL, NULL);
			values[0] = ec > INT64_MAX ? INT64_MAX : (int64_t)ec;
			values[1] = eb > INT64_MAX ? INT64_MAX : (int64_t)eb;
		}
		struct leaksnap_export_pprof_label labels[4] = {
			{"bytes", NULL, r->size > INT64_MAX ? INT64_MAX : (int64_t)r->size,
			 "bytes"},
		};
		size_t nl = 1;
		if (r->zygote)
			labels[nl++] = (struct leaksnap_export_pprof_label){"zygote", "true", 0,
									    NULL};
		if (reach) /* how many of the sample's blocks no pointer reached */
			labels[nl++] = (struct leaksnap_export_pprof_label){"unreachable", NULL,
							    (int64_t)r->unreachable, "count"};
		if (sampled)
			labels[nl++] = (struct leaksnap_export_pprof_label){
				"sampled_count", NULL,
				r->count > INT64_MAX ? INT64_MAX : (int64_t)r->count, "count"};
		rc = leaksnap_export_pprof_sample(b->p, ids, nids, values, 2, labels, nl);
		if (b->o->progress)
			b->o->progress(b->o->arg, i, n);
	}
	free(ids);
	return rc;
}

int leaksnap_export_pprof_snapshot(FILE *out, const struct leaksnap_snapshot *s,
				   const struct leaksnap_maps *maps,
				   const struct leaksnap_export_pprof_snapshot_opts *opts,
				   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_export_pprof_snapshot_opts known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_export_pprof_snapshot_opts", err) != 0)
		return -1;
	const struct leaksnap_export_pprof_snapshot_opts *o = &known;
	/* the rewrite rules count the maps paths they match */
	char *buf = NULL;
	for (size_t i = 0; i < leaksnap_maps_mapping_count(maps); i++)
		if (leaksnap_maps_mapping(maps, i)->path &&
		    !rewritten(leaksnap_maps_mapping(maps, i)->path, o, &buf, true)) {
			free(buf);
			return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
		}
	free(buf);
	struct builder b = {.s = s, .maps = maps, .o = o};
	b.map_ids = calloc(leaksnap_maps_mapping_count(maps) + 1, sizeof(*b.map_ids));
	b.p = leaksnap_export_pprof_new(out, LEAKSNAP_EXPORT_PPROF_SNAPSHOT_COMMENT, err);
	int rc = 0;
	if (!b.map_ids || !b.p) {
		rc = kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	} else if (header(b.p, s, o) != 0) {
		rc = leaksnap_export_pprof_error(b.p, err);
	} else {
		int br = build(&b);
		if (br == -2 && b.resolve_rc > 0)
			rc = b.resolve_rc; /* the callback's own failure, said */
		else if (br == -2)
			rc = kit_error(err, LEAKSNAP_ERR_USAGE, NULL,
				       "the resolve callback returned %d (not a positive value)",
				       b.resolve_rc);
		else if (br != 0 || leaksnap_export_pprof_finish(b.p) != 0)
			rc = leaksnap_export_pprof_error(b.p, err);
	}
	leaksnap_export_pprof_free(b.p);
	free(b.map_ids);
	free(b.buf);
	return rc;
}
