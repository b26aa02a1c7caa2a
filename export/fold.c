/* Flame-graph folding: a stack's frames unfolded into their inline levels,
 * outermost first, written as folded text lines (leakdiff --folded) or
 * kept as the flame data of the HTML report (frames shared by a key, each
 * level a frame object as --json writes it). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/export.h>

#include "internal.h"

size_t leaksnap_export_fold_levels(const struct leaksnap_resolved *r)
{
	return r->frame_count ? r->frame_count : 1;
}

const struct leaksnap_sym_frame *leaksnap_export_fold_level(const struct leaksnap_resolved *r,
							    size_t i)
{
	/* the symbolizer answers innermost first: callers come first here */
	return i < r->frame_count ? &r->frames[r->frame_count - 1 - i] : NULL;
}

struct leaksnap_export_frame leaksnap_export_frame_of_diff(const struct leaksnap_diff_frame *f)
{
	return (struct leaksnap_export_frame){(uint64_t)(uintptr_t)f, f->pc, f->module, f->rel_pc,
					      {f->sym_module, f->sym, f->sym_count}};
}

bool leaksnap_export_diff_stack_cut(const struct leaksnap_diff *d, size_t frames)
{
	for (size_t i = 0; frames && i < leaksnap_diff_snapshot_count(d); i++) {
		unsigned slots = leaksnap_diff_snapshot(d, i)->backtrace_size;
		if (slots && frames >= slots)
			return true;
	}
	return false;
}

/* Folded lines ------------------------------------------------------------------------- */

static void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		putc(*s == ';' ? ',' : *s == '\n' ? ' ' : *s, out);
}

int leaksnap_export_folded_line(FILE *out, const struct leaksnap_export_frame *frames, size_t n,
				uint64_t bytes)
{
	bool sep = false;
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_export_frame *f = &frames[i];
		for (size_t l = 0; l < leaksnap_export_fold_levels(&f->r); l++) {
			const struct leaksnap_sym_frame *s = leaksnap_export_fold_level(&f->r, l);
			if (sep)
				putc(';', out);
			sep = true;
			if (s && s->function) {
				folded_name(out, s->function);
			} else if (s) {
				fputs("??", out);
			} else if (f->module) {
				const char *base = strrchr(f->module, '/');
				folded_name(out, base ? base + 1 : f->module);
				fprintf(out, "+0x%llx", (unsigned long long)f->rel_pc);
			} else {
				fprintf(out, "0x%llx", (unsigned long long)f->pc);
			}
		}
	}
	fprintf(out, "%s%llu\n", sep ? " " : "(no frames) ", (unsigned long long)bytes);
	return ferror(out) ? -1 : 0;
}

struct folded_arg {
	const struct leaksnap_diff *d;
	FILE *out;
	struct leaksnap_export_frame *frames;
	size_t cap;
	bool nomem;
};

/* Room for @n frames in a->frames. */
static int frames_room(struct folded_arg *a, size_t n)
{
	if (n <= a->cap)
		return 0;
	struct leaksnap_export_frame *q = realloc(a->frames, n * sizeof(*q));
	if (!q) {
		a->nomem = true;
		return -1;
	}
	a->frames = q;
	a->cap = n;
	return 0;
}

static int folded_stack(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
			uint64_t bytes)
{
	struct folded_arg *a = arg;
	if (frames_room(a, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		a->frames[i] = leaksnap_export_frame_of_diff(frames[i]);
	if (leaksnap_export_diff_stack_cut(a->d, n))
		fputs(LEAKSNAP_EXPORT_TRUNCATED ";", a->out);
	return leaksnap_export_folded_line(a->out, a->frames, n, bytes) ? 1 : 0;
}

int leaksnap_export_folded_diff(FILE *out, struct leaksnap_diff *d, struct leaksnap_error *err)
{
	struct folded_arg a = {d, out, NULL, 0, false};
	int rc = leaksnap_diff_foreach_growing_stack(d, folded_stack, &a, err);
	free(a.frames);
	if (rc == -1 && a.nomem)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	return rc;
}

/* Frame objects ------------------------------------------------------------------------ */

int leaksnap_export_json_frames(json_t *frames, const struct leaksnap_export_frame *f)
{
	const struct leaksnap_resolved *r = &f->r;
	size_t n = leaksnap_export_fold_levels(r);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_sym_frame *s = r->frame_count ? &r->frames[i] : NULL;
		json_t *fn = NULL;
		if (s && s->function && s->from_symtab) {
			char *t;
			if (asprintf(&t, "%s+0x%llx", s->function,
				     (unsigned long long)s->symbol_offset) >= 0) {
				fn = kit_json_text(t);
				free(t);
			}
		} else if (s && s->function) {
			fn = kit_json_text(s->function);
		}
		json_t *o = json_pack("{s:o, s:o, s:o}", "pc", kit_json_addr(f->pc), "module",
				      kit_json_text(f->module), "rel_pc",
				      f->module ? kit_json_addr(f->rel_pc) : json_null());
		json_object_set_new(o, "function", fn ? fn : json_null());
		json_object_set_new(o, "file", s ? kit_json_text(s->file) : json_null());
		json_object_set_new(o, "line", s && s->line ? json_integer(s->line) : json_null());
		json_object_set_new(o, "column",
				    s && s->column ? json_integer(s->column) : json_null());
		json_object_set_new(o, "inlined", json_boolean(s && s->inlined));
		json_object_set_new(o, "symbol_file",
				    r->module ? kit_json_text(r->module->file_path) : json_null());
		json_object_set_new(o, "build_id_status",
				    r->module ? json_string(leaksnap_sym_build_id_status_name(
							r->module->status))
					      : json_null());
		if (json_array_append_new(frames, o))
			rc = -1;
	}
	return rc;
}

/* Flame data ---------------------------------------------------------------------------- */

struct leaksnap_export_flame {
	json_t *frames, *index, *stacks, *cur;
	uint64_t total;
};

struct leaksnap_export_flame *leaksnap_export_flame_new(void)
{
	struct leaksnap_export_flame *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->frames = json_array();
	fl->index = json_object();
	fl->stacks = json_array();
	if (!fl->frames || !fl->index || !fl->stacks) {
		leaksnap_export_flame_free(fl);
		return NULL;
	}
	return fl;
}

void leaksnap_export_flame_free(struct leaksnap_export_flame *fl)
{
	if (!fl)
		return;
	json_decref(fl->frames);
	json_decref(fl->index);
	json_decref(fl->stacks);
	free(fl);
}

/* The JSON number of @v: an integer; a decimal string from 2^63. */
static json_t *json_u64(uint64_t v)
{
	if (v > (uint64_t)INT64_MAX) {
		char digits[24];
		snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
		return json_string(digits);
	}
	return json_integer((json_int_t)v);
}

int leaksnap_export_flame_stack(struct leaksnap_export_flame *fl, uint64_t bytes,
				struct leaksnap_error *err)
{
	fl->cur = json_array();
	json_t *st = json_pack("[o, o]", json_u64(bytes), fl->cur);
	if (!fl->cur || !st || json_array_append_new(fl->stacks, st))
		return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	fl->total += bytes;
	return 0;
}

int leaksnap_export_flame_frame(struct leaksnap_export_flame *fl,
				const struct leaksnap_export_frame *f, struct leaksnap_error *err)
{
	char k[24];
	snprintf(k, sizeof(k), "%" PRIx64, f->key);
	json_t *first = json_object_get(fl->index, k);
	size_t levels;
	if (first) {
		levels = leaksnap_export_fold_levels(&f->r);
	} else {
		json_t *tmp = json_array();
		if (!tmp)
			return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
		leaksnap_export_json_frames(tmp, f);
		levels = json_array_size(tmp);
		first = json_integer((json_int_t)json_array_size(fl->frames));
		/* innermost level first in --json; the caller's level goes first here */
		for (size_t i = levels; i-- > 0;)
			json_array_append(fl->frames, json_array_get(tmp, i));
		json_decref(tmp);
		if (!first || json_object_set_new(fl->index, k, first))
			return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	}
	json_int_t id = json_integer_value(first);
	for (size_t i = 0; i < levels; i++)
		if (json_array_append_new(fl->cur, json_integer(id + (json_int_t)i)))
			return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	return 0;
}

int leaksnap_export_flame_truncated(struct leaksnap_export_flame *fl, struct leaksnap_error *err)
{
	/* one frame object, shared by every such stack (its key is no
	 * frame's: theirs are hexadecimal) */
	json_t *id = json_object_get(fl->index, "truncated");
	if (!id) {
		json_t *o = json_pack("{s:n, s:n, s:n, s:s, s:n, s:n, s:n, s:b, s:n, s:n, s:b}", "pc",
				      "module", "rel_pc", "function", LEAKSNAP_EXPORT_TRUNCATED,
				      "file", "line", "column", "inlined", 0, "symbol_file",
				      "build_id_status", "truncated", 1);
		id = json_integer((json_int_t)json_array_size(fl->frames));
		if (!o || !id || json_array_append_new(fl->frames, o) ||
		    json_object_set_new(fl->index, "truncated", id))
			return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	}
	if (json_array_append_new(fl->cur, json_integer(json_integer_value(id))))
		return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	return 0;
}

struct flame_arg {
	const struct leaksnap_diff *d;
	struct leaksnap_export_flame *fl;
	struct leaksnap_error own; /* out of memory here */
};

static int flame_stack(void *arg, const struct leaksnap_diff_frame *const *frames, size_t n,
		       uint64_t bytes)
{
	struct flame_arg *a = arg;
	if (leaksnap_export_flame_stack(a->fl, bytes, &a->own))
		return -1;
	if (leaksnap_export_diff_stack_cut(a->d, n) &&
	    leaksnap_export_flame_truncated(a->fl, &a->own))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct leaksnap_export_frame f = leaksnap_export_frame_of_diff(frames[i]);
		if (leaksnap_export_flame_frame(a->fl, &f, &a->own))
			return -1;
	}
	return 0;
}

int leaksnap_export_flame_diff(struct leaksnap_export_flame *fl, struct leaksnap_diff *d,
			       size_t max, uint64_t *rest_bytes, uint64_t *rest_stacks,
			       struct leaksnap_error *err)
{
	struct flame_arg a = {.d = d, .fl = fl};
	leaksnap_error_clear(&a.own);
	size_t nrest = 0;
	int rc = leaksnap_diff_foreach_top_growing_stack(d, max, flame_stack, &a, rest_bytes,
							 &nrest, err);
	if (rest_stacks)
		*rest_stacks = nrest;
	if (rc && a.own.code != LEAKSNAP_OK) {
		if (err)
			*err = a.own;
		return -1;
	}
	return rc ? -1 : 0;
}

int leaksnap_export_flame_write(const struct leaksnap_export_flame *fl, FILE *out,
				const char *what, uint64_t rest_bytes, uint64_t rest_stacks)
{
	fprintf(out, "{\"what\": \"%s\", \"total\": %" PRIu64 ", \"rest_bytes\": %" PRIu64
		     ", \"rest_stacks\": %" PRIu64 ",\n\"frames\": [",
		what, fl->total + rest_bytes, rest_bytes, rest_stacks);
	for (size_t i = 0; i < json_array_size(fl->frames); i++) {
		fputs(i ? ",\n" : "\n", out);
		json_dumpf(json_array_get(fl->frames, i), out, JSON_COMPACT);
	}
	fputs("],\n\"stacks\": [", out);
	for (size_t i = 0; i < json_array_size(fl->stacks); i++) {
		fputs(i ? ",\n" : "\n", out);
		json_dumpf(json_array_get(fl->stacks, i), out, JSON_COMPACT);
	}
	fputs("]}\n", out);
	return ferror(out) ? -1 : 0;
}
