/* leaksnap CLI: how a symbolized frame is printed, shared by symbolize and
 * diff, and the report page and the exports' errors, shared by both too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kit_names.h"
#include "report.h"

/* Names --------------------------------------------------------------------- */

static bool full_names;

void cli_set_full_names(bool on)
{
	full_names = on;
}

bool cli_full_names(void)
{
	return full_names;
}

const char *cli_ellipsis(void)
{
	static const char *e;
	if (!e) {
		/* the locale's character set as POSIX picks the locale (LC_ALL,
		 * LC_CTYPE, LANG: the first set), read from its name: no
		 * setlocale(), which is not safe while the symbolizer's threads
		 * run */
		const char *loc = getenv("LC_ALL");
		if (!loc || !*loc)
			loc = getenv("LC_CTYPE");
		if (!loc || !*loc)
			loc = getenv("LANG");
		bool utf8 = loc && (strcasestr(loc, "UTF-8") || strcasestr(loc, "utf8"));
		e = utf8 ? "\xe2\x80\xa6" /* U+2026 */ : "...";
	}
	return e;
}

const char *cli_approx(void)
{
	/* (the locale's character set, read as for cli_ellipsis) */
	return strcmp(cli_ellipsis(), "...") ? "\xe2\x89\x88" /* U+2248 */ : "~";
}

void cli_dump_totals(const struct leaksnap_snapshot *s, char *buf, size_t size)
{
	uint64_t b = leaksnap_snapshot_records_bytes(s), n = leaksnap_snapshot_allocation_count(s);
	if (leaksnap_snapshot_sample_interval(s)) {
		/* the estimates, as show gives them, the sampled counts beside */
		uint64_t eb, en;
		const char *e = cli_approx();
		leaksnap_snapshot_estimate(s, &eb, &en, NULL, NULL);
		snprintf(buf, size,
			 "%zu records, %s%llu bytes in %s%llu allocations (sampled: %llu bytes "
			 "in %llu allocations)",
			 leaksnap_snapshot_record_count(s), e, (unsigned long long)eb, e,
			 (unsigned long long)en, (unsigned long long)b, (unsigned long long)n);
	} else {
		snprintf(buf, size, "%zu records, %llu bytes in %llu allocations",
			 leaksnap_snapshot_record_count(s), (unsigned long long)b,
			 (unsigned long long)n);
	}
}

const char *cli_name(const char *name)
{
	static char *buf;
	static size_t cap;
	if (!name || full_names)
		return name;
	const char *e = cli_ellipsis();
	size_t need = kit_name_short_max(name, e);
	if (need > cap) {
		char *b = realloc(buf, need);
		if (!b)
			return name; /* out of memory: the whole name */
		buf = b;
		cap = need;
	}
	kit_name_shorten(name, e, buf, cap);
	return buf;
}

bool cli_stack_may_be_cut(size_t frames, size_t slots)
{
	return frames > 0 && slots > 0 && frames >= slots;
}

void cli_print_cut(size_t frames)
{
	printf("    %s (stack may be cut at %zu frames)\n", cli_ellipsis(), frames);
}

/* Frames -------------------------------------------------------------------- */

static void print_source(const struct leaksnap_sym_frame *f)
{
	if (f->from_symtab)
		printf("  %s+0x%llx", cli_name(f->function), (unsigned long long)f->symbol_offset);
	else
		printf("  %s", f->function ? cli_name(f->function) : "??");
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
	/* (frames without a module: answers known before, a store's) */
	if (!r->frame_count && r->module && !r->module->file) {
		printf("  (%s)\n", cli_no_file_note(r->module));
		return;
	}
	if (!r->frame_count && r->module && r->module->layout == LEAKSNAP_SYM_LAYOUT_NONE) {
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

json_t *cli_json_sym_module(const struct leaksnap_sym_module *m)
{
	return json_pack("{s:o, s:o, s:s, s:o, s:o}", "module", kit_json_text(m->path),
			 "symbol_file", kit_json_text(m->file_path), "build_id_status",
			 leaksnap_sym_build_id_status_name(m->status), "error",
			 kit_json_text(m->error), "layout",
			 kit_json_text(leaksnap_sym_layout_name(m->layout)));
}

const char *cli_no_file_note(const struct leaksnap_sym_module *m)
{
	if (m->status != LEAKSNAP_SYM_BUILD_ID_MISMATCH)
		return "no symbol file";
	if (m->wrong_class == 32)
		return "ELF class mismatch: only 32-bit files, for a 64-bit process";
	if (m->wrong_class == 64)
		return "ELF class mismatch: only 64-bit files, for a 32-bit process";
	return "build-id mismatch";
}

const char *cli_layout_note(const struct leaksnap_sym_module *m)
{
	if (!m->file)
		return m->wrong_class ? ", ELF class mismatch" : "";
	switch (m->layout) {
	case LEAKSNAP_SYM_LAYOUT_FILE: return "";
	case LEAKSNAP_SYM_LAYOUT_HOST: return ", debug-only: layout from the module's own file";
	case LEAKSNAP_SYM_LAYOUT_MAPS: return ", debug-only: layout from the maps";
	case LEAKSNAP_SYM_LAYOUT_NONE: break;
	}
	return ", debug-only: no layout";
}

void cli_fail_output(const char *output, const struct leaksnap_error *err)
{
	if (err->source[0])
		cli_fail_error(err);
	else
		cli_fail(output, "%s", err->text[0] ? err->text : leaksnap_code_string(err->code));
}

int cli_report_page(const char *path, const struct report_page *page, const char *subject)
{
	struct cli_outfile o;
	if (cli_outfile_open(&o, path, CLI_REPLACE_OWN_HTML))
		return -1;
	struct leaksnap_error err;
	int rc = report_write(o.f, page, &err);
	/* (a callback's failure was said by the callback) */
	if (rc == -1 && err.code != LEAKSNAP_OK)
		cli_fail_output(err.code == LEAKSNAP_ERR_IO ? o.path : subject, &err);
	return cli_outfile_close(&o, rc == 0);
}
