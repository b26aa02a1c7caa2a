/* leaksnap diff: the JSON document (--json, and the data of the HTML page). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/export.h>

#include "diff_cli.h"

static json_t *json_series(const uint64_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, kit_json_u64(v[i]));
	return a;
}

/* Unreachable bytes or counts per snapshot: null where the snapshot does
 * not say which blocks are unreachable. */
static json_t *json_unreachable(struct leaksnap_diff *d, const uint64_t *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < leaksnap_diff_snapshot_count(d); i++)
		json_array_append_new(a, v && leaksnap_diff_snapshot(d, i)->has_reachability
						 ? kit_json_u64(v[i])
						 : json_null());
	return a;
}

static json_t *json_group(struct leaksnap_diff *d, const struct leaksnap_diff_group *g, size_t rank)
{
	struct leaksnap_error err;
	if (!g) {
		cli_fail("diff", "out of memory");
		return NULL;
	}
	if (leaksnap_diff_symbolize_group(d, g, &err) != 0) {
		cli_fail_error(&err);
		return NULL;
	}
	size_t n = leaksnap_diff_snapshot_count(d);
	json_t *frames = json_array();
	for (size_t i = 0; i < g->frame_count; i++) {
		const struct leaksnap_diff_frame *f = g->frames[i];
		struct leaksnap_export_frame ef = leaksnap_export_frame_of_diff(f);
		leaksnap_export_json_frames(frames, &ef);
	}
	json_t *o = json_object();
	if (rank)
		json_object_set_new(o, "rank", json_integer((json_int_t)rank));
	json_object_set_new(o, "bytes_delta", json_integer(g->bytes_delta));
	json_object_set_new(o, "count_delta", json_integer(g->count_delta));
	json_object_set_new(o, "bytes", json_series(g->bytes, n));
	json_object_set_new(o, "counts", json_series(g->counts, n));
	if (g->sampled_bytes) {
		/* a sampled diff: the figures above are the estimates; the
		 * blocks sampled beside them */
		json_object_set_new(o, "estimated_bytes", json_series(g->bytes, n));
		json_object_set_new(o, "estimated_count", json_series(g->counts, n));
		json_object_set_new(o, "sampled_bytes", json_series(g->sampled_bytes, n));
		json_object_set_new(o, "sampled_counts", json_series(g->sampled_counts, n));
	}
	json_object_set_new(o, "new", json_boolean(g->is_new));
	json_object_set_new(o, "score", json_real(g->score));
	json_object_set_new(o, "trend", json_string(leaksnap_diff_trend_name(g->trend)));
	json_object_set_new(o, "grew_intervals", json_integer(g->grew));
	json_object_set_new(o, "shrank_intervals", json_integer(g->shrank));
	json_object_set_new(o, "stacks", json_integer((json_int_t)g->stack_count));
	json_object_set_new(o, "definite", json_boolean(g->definite));
	json_object_set_new(o, "unreachable_bytes", json_unreachable(d, g->unreachable_bytes));
	json_object_set_new(o, "unreachable_counts", json_unreachable(d, g->unreachable_counts));
	if (g->sampled_bytes) {
		/* the unreachable figures above are estimates too: the same
		 * beside them under their estimated_ names, the sampled blocks
		 * beside those */
		json_object_set_new(o, "estimated_unreachable_bytes",
				    json_unreachable(d, g->unreachable_bytes));
		json_object_set_new(o, "estimated_unreachable_counts",
				    json_unreachable(d, g->unreachable_counts));
		json_object_set_new(o, "sampled_unreachable_bytes",
				    g->sampled_unreachable_bytes
					    ? json_unreachable(d, g->sampled_unreachable_bytes)
					    : json_null());
		json_object_set_new(o, "sampled_unreachable_counts",
				    g->sampled_unreachable_counts
					    ? json_unreachable(d, g->sampled_unreachable_counts)
					    : json_null());
	}
	if (g->module)
		json_object_set_new(o, "module", kit_json_text(g->module));
	/* the site's index in frames[], which has one element per inline level */
	size_t site = g->site_level;
	for (size_t i = 0; i < g->site && i < g->frame_count; i++)
		site += g->frames[i]->sym_count ? g->frames[i]->sym_count : 1;
	json_object_set_new(o, "site", g->site < g->frame_count ? json_integer((json_int_t)site)
								 : json_null());
	json_object_set_new(o, "truncated",
			    json_boolean(leaksnap_export_diff_stack_cut(d, g->frame_count)));
	json_object_set_new(o, "frames", frames);
	return o;
}

/* Which list of groups. */
enum list { LIST_SUSPECTS, LIST_STOPPED, LIST_UNREACHABLE };

static int json_list(struct kit_json *j, struct leaksnap_diff *d, enum list list, size_t count)
{
	kit_json_list_begin(j);
	for (size_t i = 0; i < count; i++) {
		json_t *g = list == LIST_SUSPECTS
				    ? json_group(d, leaksnap_diff_suspect(d, i), i + 1)
			    : list == LIST_STOPPED
				    ? json_group(d, leaksnap_diff_stopped(d, i), 0)
				    : json_group(d, leaksnap_diff_unreachable(d, i), 0);
		if (!g)
			return -1; /* said */
		kit_json_list_item(j, g);
	}
	kit_json_list_end(j);
	return 0;
}

int cli_diff_json(FILE *out, struct leaksnap_diff *d, const struct diff_cli *c)
{
	size_t n = leaksnap_diff_snapshot_count(d);
	struct kit_json j;
	kit_json_begin(&j, out);
	kit_json_key(&j, "by");
	kit_json_value(&j, json_string(leaksnap_diff_by_name(c->o.by)));
	kit_json_key(&j, "zygote_included");
	kit_json_value(&j, json_boolean(leaksnap_diff_zygote_included(d)));
	if (leaksnap_diff_sample_interval(d)) {
		/* sampled snapshots: every byte and count figure is an estimate */
		kit_json_key(&j, "sample_interval");
		kit_json_value(&j, kit_json_u64(leaksnap_diff_sample_interval(d)));
	}
	kit_json_key(&j, "snapshots");
	kit_json_list_begin(&j);
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i);
		json_t *o = json_pack(
			"{s:o, s:o, s:i, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "file",
			kit_json_text(s->file), "pid",
			s->pid >= 0 ? json_integer(s->pid) : json_null(), "pointer_size",
			(int)s->pointer_size, "android", s->android, "total_memory",
			kit_json_u64(s->total_memory), "allocation_count",
			kit_json_u64(s->allocation_count), "bytes", kit_json_u64(s->bytes), "count",
			kit_json_u64(s->count), "left_out_bytes", kit_json_u64(s->left_out_bytes),
			"left_out_count", kit_json_u64(s->left_out_count));
		char tbuf[64];
		if (s->has_time)
			cli_format_time(s->time_ns, tbuf, sizeof(tbuf));
		json_object_set_new(o, "time_ns",
				    s->has_time ? kit_json_u64(s->time_ns) : json_null());
		json_object_set_new(o, "time", s->has_time ? json_string(tbuf) : json_null());
		bool r = s->has_reachability;
		json_object_set_new(o, "unreachable_bytes",
				    r ? kit_json_u64(s->unreachable_bytes) : json_null());
		json_object_set_new(o, "unreachable_count",
				    r ? kit_json_u64(s->unreachable_count) : json_null());
		if (leaksnap_diff_sample_interval(d)) {
			json_object_set_new(o, "estimated_bytes", kit_json_u64(s->bytes));
			json_object_set_new(o, "estimated_count", kit_json_u64(s->count));
			json_object_set_new(o, "sampled_bytes", kit_json_u64(s->sampled_bytes));
			json_object_set_new(o, "sampled_count", kit_json_u64(s->sampled_count));
			json_object_set_new(o, "estimated_unreachable_bytes",
					    r ? kit_json_u64(s->unreachable_bytes) : json_null());
			json_object_set_new(o, "estimated_unreachable_count",
					    r ? kit_json_u64(s->unreachable_count) : json_null());
			json_object_set_new(o, "sampled_unreachable_bytes",
					    r ? kit_json_u64(s->sampled_unreachable_bytes)
					      : json_null());
			json_object_set_new(o, "sampled_unreachable_count",
					    r ? kit_json_u64(s->sampled_unreachable_count)
					      : json_null());
		}
		kit_json_list_item(&j, o);
	}
	kit_json_list_end(&j);
	const struct leaksnap_diff_snapshot *a = leaksnap_diff_snapshot(d, 0),
					    *b = leaksnap_diff_snapshot(d, n - 1);
	bool sampled = leaksnap_diff_sample_interval(d) != 0;
	json_int_t bytes_delta = (json_int_t)((int64_t)b->bytes - (int64_t)a->bytes);
	json_int_t count_delta = (json_int_t)((int64_t)b->count - (int64_t)a->count);
	json_t *totals = json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "bytes_delta", bytes_delta, "count_delta",
		count_delta, "suspects", (json_int_t)leaksnap_diff_suspect_count(d),
		"suspects_bytes_delta", (json_int_t)leaksnap_diff_suspects_bytes(d),
		"suspects_count_delta", (json_int_t)leaksnap_diff_suspects_count(d), "stopped",
		(json_int_t)leaksnap_diff_stopped_count(d), "suppressed_stacks",
		(json_int_t)leaksnap_diff_suppressed_records(d));
	if (totals && sampled) {
		/* the figures above are estimates: the same under their
		 * estimated_ names, and the sampled blocks' growth beside them */
		json_object_set_new(totals, "estimated_bytes_delta", json_integer(bytes_delta));
		json_object_set_new(totals, "estimated_count_delta", json_integer(count_delta));
		json_object_set_new(totals, "estimated_suspects_bytes_delta",
				    json_integer(leaksnap_diff_suspects_bytes(d)));
		json_object_set_new(totals, "estimated_suspects_count_delta",
				    json_integer(leaksnap_diff_suspects_count(d)));
		json_object_set_new(totals, "sampled_bytes_delta",
				    json_integer((json_int_t)((int64_t)b->sampled_bytes -
							      (int64_t)a->sampled_bytes)));
		json_object_set_new(totals, "sampled_count_delta",
				    json_integer((json_int_t)((int64_t)b->sampled_count -
							      (int64_t)a->sampled_count)));
	}
	kit_json_key(&j, "totals");
	kit_json_value(&j, totals);
	/* what the last snapshot proves: null when it does not say */
	json_t *reach = b->has_reachability
				? json_pack("{s:o, s:o, s:I, s:I}", "unreachable_bytes",
					    kit_json_u64(b->unreachable_bytes), "unreachable_count",
					    kit_json_u64(b->unreachable_count), "definite",
					    (json_int_t)leaksnap_diff_definite_count(d), "one_off",
					    (json_int_t)leaksnap_diff_unreachable_count(d))
				: json_null();
	if (b->has_reachability && reach && sampled) {
		/* counts of sampled blocks, with their estimates beside them */
		json_object_set_new(reach, "estimated_unreachable_bytes",
				    kit_json_u64(b->unreachable_bytes));
		json_object_set_new(reach, "estimated_unreachable_count",
				    kit_json_u64(b->unreachable_count));
		json_object_set_new(reach, "sampled_unreachable_bytes",
				    kit_json_u64(b->sampled_unreachable_bytes));
		json_object_set_new(reach, "sampled_unreachable_count",
				    kit_json_u64(b->sampled_unreachable_count));
	}
	kit_json_key(&j, "reachability");
	kit_json_value(&j, reach);
	size_t ns = leaksnap_diff_suspect_count(d), nc = leaksnap_diff_stopped_count(d);
	size_t nu = leaksnap_diff_unreachable_count(d);
	kit_json_key(&j, "suspects");
	if (json_list(&j, d, LIST_SUSPECTS, c->top && c->top < ns ? (size_t)c->top : ns))
		return -1;
	kit_json_key(&j, "stopped");
	if (json_list(&j, d, LIST_STOPPED, c->top && c->top < nc ? (size_t)c->top : nc))
		return -1;
	kit_json_key(&j, "unreachable");
	if (json_list(&j, d, LIST_UNREACHABLE, c->top && c->top < nu ? (size_t)c->top : nu))
		return -1;
	if (c->o.suppressions) {
		kit_json_key(&j, "suppressions");
		json_t *arr = json_array();
		for (size_t i = 0; i < leaksnap_diff_suppressions_count(c->o.suppressions); i++)
			json_array_append_new(
				arr, json_pack("{s:o, s:o}", "pattern",
					       kit_json_text(leaksnap_diff_suppressions_pattern(
						       c->o.suppressions, i)),
					       "stacks",
					       kit_json_u64(leaksnap_diff_suppressions_hits(
						       c->o.suppressions, i))));
		kit_json_value(&j, arr);
	}
	if (c->o.resolver) {
		kit_json_key(&j, "symbols");
		size_t nm = leaksnap_diff_symbol_module_count(d);
		kit_json_list_begin(&j);
		for (size_t i = 0; i < nm; i++)
			kit_json_list_item(&j,
					   cli_json_sym_module(leaksnap_diff_symbol_module(d, i)));
		kit_json_list_end(&j);
	}
	/* last: what was said while the document was written counts too (the
	 * diff's problems with symbol files are said once it is out) */
	size_t nw = leaksnap_diff_warning_count(d);
	const char **dw = nw ? calloc(nw, sizeof(*dw)) : NULL;
	for (size_t i = 0; dw && i < nw; i++)
		dw[i] = leaksnap_diff_warning(d, i);
	kit_json_key(&j, "warnings");
	kit_json_value(&j, cli_warnings_json(NULL, dw, dw ? nw : 0));
	free(dw);
	kit_json_end(&j);
	return 0;
}
