/* leaksnap history: its outputs -- the table, the JSON document and the
 * HTML page (report/'s, kind "history": memory curves across builds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/export.h>

#include "cli.h"
#include "history.h"
#include "report.h"

/* Text ------------------------------------------------------------------------------ */

static void print_chain(const struct leaksnap_store_suspect *x)
{
	for (size_t i = 0; i < x->chain_len; i++)
		printf("%s%s", i ? " < " : "", x->chain[i]);
	printf("\n");
}

bool history_sampled(const struct leaksnap_store_history_row *r)
{
	return r->interval_count && r->intervals[r->interval_count - 1] != 0;
}

/* " (sampled every 4096 bytes: estimates)", or for a row of several
 * intervals " (mixed sampling: not sampled, every 4096, 65536 bytes;
 * each run's estimates summed)"; "" when not sampled. */
static void print_sampling(const struct leaksnap_store_history_row *r)
{
	if (!history_sampled(r))
		return;
	if (r->interval_count == 1) {
		printf(" (sampled every %llu bytes: estimates)", (unsigned long long)r->intervals[0]);
		return;
	}
	printf(" (mixed sampling:");
	bool every = false;
	for (size_t i = 0; i < r->interval_count; i++) {
		if (r->intervals[i] == 0) {
			printf(" not sampled,");
			continue;
		}
		printf("%s %llu", every ? "," : " every", (unsigned long long)r->intervals[i]);
		every = true;
	}
	printf(" bytes; each run's estimates summed)");
}

void history_text(const struct leaksnap_store_history *h, const struct history_cli *c)
{
	for (size_t i = 0; i < leaksnap_store_history_count(h); i++) {
		const struct leaksnap_store_history_row *r = leaksnap_store_history_row(h, i);
		char t[64] = "time unknown";
		if (r->first_time_ns)
			cli_format_time(r->first_time_ns, t, sizeof(t));
		/* a sampled row's figures are estimates, marked */
		const char *e = history_sampled(r) ? cli_approx() : "";
		printf("%s %s: %zu run%s from %s: memory %s%llu bytes, growth %s%+lld, definite %s%llu",
		       c->by, *r->key ? r->key : "(none)", r->runs, r->runs == 1 ? "" : "s", t, e,
		       (unsigned long long)r->memory, e, (long long)r->growth, e,
		       (unsigned long long)r->definite);
		print_sampling(r);
		printf("\n");
		for (size_t k = 0; k < r->suspect_count; k++) {
			char num[32];
			snprintf(num, sizeof(num), "%+lld", (long long)r->suspects[k].growth);
			/* (the mark is one column wide, whatever its bytes) */
			int pad = 12 - (int)strlen(num) - (*e ? 1 : 0);
			printf("  %-4s %*s%s%s  ", r->suspects[k].is_new ? "new" : "", pad > 0 ? pad : 0,
			       "", e, num);
			print_chain(&r->suspects[k]);
		}
		for (size_t k = 0; k < r->gone_count; k++) {
			printf("  gone %12s  ", "");
			print_chain(&r->gone[k]);
		}
	}
}

/* JSON -------------------------------------------------------------------------------- */

static json_t *json_hex(uint64_t v)
{
	char hex[17];
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)v);
	return json_string(hex);
}

/* A stored frame's levels, innermost first, as the frame objects of
 * leakdiff's --json (export's): module, rel_pc, function, file, line,
 * column, inlined; "pc" only for a frame in no module (its rel_pc is the
 * PC), and the module's build ID.  -1: out of memory. */
static int json_frame(json_t *out, const struct leaksnap_store_frame *f)
{
	size_t n = f->symbol_count;
	struct leaksnap_sym_frame *sym = n ? calloc(n, sizeof(*sym)) : NULL;
	if (n && !sym)
		return -1;
	for (size_t i = 0; i < n; i++)
		sym[i] = (struct leaksnap_sym_frame){
			.function = *f->symbols[i].function ? f->symbols[i].function : NULL,
			.file = *f->symbols[i].file ? f->symbols[i].file : NULL,
			.line = f->symbols[i].line,
			.column = f->symbols[i].column,
			.inlined = f->symbols[i].inlined};
	bool mapped = *f->module != '\0';
	struct leaksnap_export_frame ef = {f->id, mapped ? 0 : f->rel_pc, mapped ? f->module : NULL,
					   f->rel_pc, {NULL, sym, n}};
	size_t first = json_array_size(out);
	int rc = leaksnap_export_json_frames(out, &ef);
	for (size_t i = first; rc == 0 && i < json_array_size(out); i++) {
		json_t *o = json_array_get(out, i);
		/* (the PC of a module's frame is not stored) */
		if (mapped && json_object_set_new(o, "pc", json_null()))
			rc = -1;
		if (json_object_set_new(o, "build_id", *f->build_id ? json_string(f->build_id)
								    : json_null()))
			rc = -1;
		json_object_del(o, "symbol_file");
		json_object_del(o, "build_id_status");
	}
	free(sym);
	return rc;
}

static json_t *json_suspect(const struct leaksnap_store_suspect *x, bool gone, bool sampled,
			    bool frames)
{
	json_t *chain = json_array();
	for (size_t i = 0; i < x->chain_len; i++)
		json_array_append_new(chain, kit_json_text(x->chain[i]));
	json_t *o = json_pack("{s:o, s:I}", "chain", chain, "growth", (json_int_t)x->growth);
	if (!o)
		return NULL;
	if (sampled) /* (as leakdiff's: the figure is an estimate, said twice) */
		json_object_set_new(o, "estimated_growth", json_integer((json_int_t)x->growth));
	if (!gone)
		json_object_set_new(o, "new", json_boolean(x->is_new));
	json_object_set_new(o, "stack_id", json_hex(x->stack_id));
	if (frames) {
		json_t *a = json_array();
		for (size_t i = 0; a && i < x->frame_count; i++)
			if (json_frame(a, &x->frames[i])) {
				json_decref(a);
				a = NULL;
			}
		if (!a || json_object_set_new(o, "frames", a)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *json_row(const struct leaksnap_store_history_row *r, const struct history_cli *c,
			bool frames)
{
	json_t *sus = json_array(), *gone = json_array();
	bool sampled = history_sampled(r);
	for (size_t k = 0; sus && k < r->suspect_count; k++)
		json_array_append_new(sus, json_suspect(&r->suspects[k], false, sampled, frames));
	for (size_t k = 0; gone && k < r->gone_count; k++)
		json_array_append_new(gone, json_suspect(&r->gone[k], true, sampled, frames));
	json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o}", "key",
			      kit_json_text(r->key), "runs", kit_json_u64(r->runs), "first_time_ns",
			      kit_json_u64(r->first_time_ns), "last_time_ns",
			      kit_json_u64(r->last_time_ns), "memory", kit_json_u64(r->memory),
			      "growth", (json_int_t)r->growth, "definite", kit_json_u64(r->definite),
			      "suspects", sus, "gone", gone);
	if (o && sampled) {
		/* a sampled row, as leakdiff says a sampled diff: its interval
		 * (null when its runs have several, listed), and its figures,
		 * estimates, under their estimated_ names too */
		json_object_set_new(o, "sample_interval", r->interval_count == 1
								  ? kit_json_u64(r->intervals[0])
								  : json_null());
		if (r->interval_count > 1) {
			json_t *a = json_array();
			for (size_t k = 0; a && k < r->interval_count; k++)
				json_array_append_new(a, kit_json_u64(r->intervals[k]));
			json_object_set_new(o, "sample_intervals", a);
		}
		json_object_set_new(o, "estimated_memory", kit_json_u64(r->memory));
		json_object_set_new(o, "estimated_growth", json_integer((json_int_t)r->growth));
		json_object_set_new(o, "estimated_definite", kit_json_u64(r->definite));
	}
	if (o && c->series) {
		json_t *pts = json_array();
		for (size_t k = 0; pts && k < r->point_count; k++) {
			const struct leaksnap_store_history_point *p = &r->points[k];
			json_t *po = json_pack("{s:o, s:o, s:o, s:I, s:o}", "value",
					       kit_json_text(p->value), "runs", kit_json_u64(p->runs),
					       "memory", kit_json_u64(p->memory), "growth",
					       (json_int_t)p->growth, "definite",
					       kit_json_u64(p->definite));
			if (po && sampled) { /* (the row's figures, point by point) */
				json_object_set_new(po, "estimated_memory", kit_json_u64(p->memory));
				json_object_set_new(po, "estimated_growth",
						    json_integer((json_int_t)p->growth));
				json_object_set_new(po, "estimated_definite",
						    kit_json_u64(p->definite));
			}
			json_array_append_new(pts, po);
		}
		json_object_set_new(o, "points", pts);
	}
	return o;
}

int history_json(FILE *out, const struct leaksnap_store_history *h, const struct history_cli *c,
		 bool frames)
{
	struct kit_json j;
	kit_json_begin(&j, out);
	kit_json_key(&j, "by");
	kit_json_value(&j, kit_json_text(c->by));
	if (c->series) {
		kit_json_key(&j, "series");
		kit_json_value(&j, kit_json_text(c->series));
	}
	kit_json_key(&j, "rows");
	kit_json_list_begin(&j);
	for (size_t i = 0; i < leaksnap_store_history_count(h); i++) {
		json_t *row = json_row(leaksnap_store_history_row(h, i), c, frames);
		if (!row)
			return cli_fail("history", "out of memory");
		kit_json_list_item(&j, row);
	}
	kit_json_list_end(&j);
	kit_json_end(&j);
	return 0;
}

/* The page ------------------------------------------------------------------------------ */

struct page_arg {
	const struct leaksnap_store_history *h;
	const struct history_cli *c;
};

static int page_json(FILE *out, void *arg)
{
	struct page_arg *a = arg;
	return history_json(out, a->h, a->c, true) ? EXIT_ERROR : 0;
}

int history_html(const struct leaksnap_store_history *h, const struct history_cli *c)
{
	struct page_arg a = {h, c};
	struct report_page page = {"history", "leaksnap history", NULL, page_json, NULL, &a,
				   cli_full_names()};
	return cli_report_page(c->html, &page, c->html);
}
