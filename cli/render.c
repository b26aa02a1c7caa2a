/* leaksnap CLI: how a symbolized frame is printed, shared by symbolize and
 * diff. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static void print_source(const struct sym_frame *f)
{
	if (f->from_symtab)
		printf("  %s+0x%llx", f->function, (unsigned long long)f->symbol_offset);
	else
		printf("  %s", f->function ? f->function : "??");
	if (f->file && *f->file) {
		printf("  %s:%u", f->file, f->line);
		if (f->column)
			printf(":%u", f->column);
	}
}

void cli_print_symbols(const struct leaksnap_resolved *r)
{
	cli_print_symbols_marked(r, SIZE_MAX);
}

void cli_print_symbols_marked(const struct leaksnap_resolved *r, size_t mark)
{
	if (!r->module->file) {
		printf("  (%s)\n", cli_no_file_note(r->module));
		return;
	}
	if (r->module->layout == SYM_LAYOUT_NONE) {
		printf("  (debug-only symbol file, no layout)\n");
		return;
	}
	if (r->frame_count == 0) {
		printf("  ??\n");
		return;
	}
	print_source(&r->frames[0]);
	printf("\n");
	for (size_t i = 1; i < r->frame_count; i++) {
		printf(i == mark ? "      > inlined into" : "        inlined into");
		print_source(&r->frames[i]);
		printf("\n");
	}
}

void cli_json_frames(json_t *frames, uint64_t pc, const char *module, uint64_t rel_pc,
		     const struct leaksnap_resolved *r)
{
	size_t n = r->frame_count ? r->frame_count : 1;
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f = r->frame_count ? &r->frames[i] : NULL;
		json_t *fn = NULL;
		if (f && f->function && f->from_symtab) {
			char *t;
			if (asprintf(&t, "%s+0x%llx", f->function,
				     (unsigned long long)f->symbol_offset) >= 0) {
				fn = cli_json_text(t);
				free(t);
			}
		} else if (f && f->function) {
			fn = cli_json_text(f->function);
		}
		json_t *o = json_pack("{s:o, s:o, s:o}", "pc", cli_json_addr(pc), "module",
				      cli_json_str_or_null(module), "rel_pc",
				      module ? cli_json_addr(rel_pc) : json_null());
		json_object_set_new(o, "function", fn ? fn : json_null());
		json_object_set_new(o, "file", f ? cli_json_str_or_null(f->file) : json_null());
		json_object_set_new(o, "line", f && f->line ? json_integer(f->line) : json_null());
		json_object_set_new(o, "column", f && f->column ? json_integer(f->column) : json_null());
		json_object_set_new(o, "inlined", json_boolean(f && f->inlined));
		json_object_set_new(o, "symbol_file", r->module ? cli_json_str_or_null(r->module->file_path)
								: json_null());
		json_object_set_new(o, "build_id_status",
				    r->module ? json_string(sym_build_id_status_name(r->module->status))
					      : json_null());
		json_array_append_new(frames, o);
	}
}

void cli_json_print_sym_module(FILE *out, const struct sym_module *m, bool first)
{
	fprintf(out, "%s\n    ", first ? "" : ",");
	cli_json_print(out, json_pack("{s:o, s:o, s:s, s:o, s:o}", "module", cli_json_text(m->path), "symbol_file",
					 cli_json_str_or_null(m->file_path), "build_id_status",
					 sym_build_id_status_name(m->status), "error",
					 cli_json_str_or_null(m->error), "layout",
					 cli_json_str_or_null(sym_layout_name(m->layout))));
}

const char *cli_no_file_note(const struct sym_module *m)
{
	if (m->status != SYM_BUILD_ID_MISMATCH)
		return "no symbol file";
	if (m->wrong_class == 32)
		return "ELF class mismatch: only 32-bit files, for a 64-bit process";
	if (m->wrong_class == 64)
		return "ELF class mismatch: only 64-bit files, for a 32-bit process";
	return "build-id mismatch";
}

const char *cli_layout_note(const struct sym_module *m)
{
	if (!m->file)
		return m->wrong_class ? ", ELF class mismatch" : "";
	switch (m->layout) {
	case SYM_LAYOUT_FILE: return "";
	case SYM_LAYOUT_HOST: return ", debug-only: layout from the module's own file";
	case SYM_LAYOUT_MAPS: return ", debug-only: layout from the maps";
	case SYM_LAYOUT_NONE: break;
	}
	return ", debug-only: no layout";
}
