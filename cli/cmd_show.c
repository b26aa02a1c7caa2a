/* leaksnap show and leaksnap symbolize: header facts, totals and records of
 * one snapshot, with every frame symbolized for symbolize. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <leaksnap/export.h>

#include "cli.h"
#include "report.h"

static const char show_usage[] =
	"Usage: leaksnap show [OPTIONS] DUMP\n\n"
	"Print a heap snapshot: format and version, pointer size, backtrace size, pid,\n"
	"capture time, totals, the app/zygote split, then the records sorted by total\n"
	"bytes (size x count), each frame as module+0xREL_PC (REL_PC is the offset in\n"
	"the mapped file) or the raw PC when no mapping covers it. A dump recorded with\n"
	"reachability also says how many blocks no pointer reached: in all\n"
	"('unreachable: N bytes in M allocations') and per record ('N of M unreachable').\n"
	"DUMP is read by content: LEAKSNAP, Android text (v1.0-v1.2), DDMS NHGT, or a\n"
	"raw get_malloc_leak_info buffer (needs --pointer-size and --frames). '-' reads\n"
	"standard input.\n\n"
	"Options:\n"
	CLI_INPUT_HELP
	"  --top N              print only the N largest records (0: none, the header\n"
	"                       facts alone)\n"
	"  -j, --json           JSON output (addresses as \"0x...\" strings)\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error.\n";

static const char symbolize_usage[] =
	"Usage: leaksnap symbolize [OPTIONS] DUMP\n\n"
	"Print a heap snapshot as 'leaksnap show' does, with every frame symbolized:\n"
	"function, source file, line and column, and the functions it was inlined\n"
	"into. Symbols are read in-process from the modules' ELF files and their\n"
	"DWARF (separate debug files through .gnu_debuglink or the build ID too).\n\n"
	"A module (as the maps name it, e.g. /system/lib64/libfoo.so) is looked for\n"
	"in each --symbols DIR in order: DIR/system/lib64/libfoo.so (the layout of\n"
	"AOSP's out/target/product/NAME/symbols), DIR/.build-id/xx/rest.debug, then a\n"
	"file of that name anywhere under DIR; last, at its own path on this host.\n"
	"When the dump records the module's build ID (LEAKSNAP dumps do), a file with\n"
	"another build ID is never used: its frames say 'build-id mismatch'.\n"
	"A library mapped straight out of an APK (maps name base.apk at an offset) is\n"
	"the stored entry at that offset: base.apk!/lib/ABI/libfoo.so, looked for by\n"
	"its build ID and name, else read from the APK.\n\n"
	"Frames are return addresses: each is looked up at the call instruction\n"
	"(pc - 1); addresses are printed as captured.\n\n"
	"Options:\n"
	"  -s, --symbols DIR    look for symbol files under DIR (repeatable)\n"
	"  --no-adjust          look frames up at the captured address itself\n"
	CLI_DEBUGINFOD_HELP
	"  -v, --verbose        say which file was used for each module\n"
	"                       (and where a debug-only file's layout came from)\n"
	CLI_INPUT_HELP
	"  --top N              print only the N largest records (0: none, the header\n"
	"                       facts alone)\n"
	"  -j, --json           JSON output: frames gain function, file, line,\n"
	"                       column, inlined, symbol_file, build_id_status; last,\n"
	"                       \"warnings\": every warning said\n"
	"  --html FILE          also write one self-contained HTML page (header facts,\n"
	"                       flame graph of the live bytes, the top records; '-' is\n"
	"                       standard output, instead of the report); an existing\n"
	"                       FILE is replaced only if it is a report leaksnap\n"
	"                       wrote; --top defaults to 1000\n"
	"  --html-stacks N      the flame graph shows the N largest records' stacks\n"
	"                       (default 500); the rest are summed as one\n"
	"  --full-names         print function names whole: by default the text and\n"
	"                       the page show C++ template arguments and parameters\n"
	"                       as an ellipsis, std::map<...>::at(...) ('...' is the\n"
	"                       character U+2026 in a UTF-8 locale); --json always\n"
	"                       has the whole names\n"
	"  -h, --help           this help\n\n"
	"A stack that fills every frame slot of the dump (its backtrace size) may have\n"
	"been cut: the text says so under it, --json marks its record \"truncated\",\n"
	"and the flame graph puts it under a [truncated] root.\n\n"
	"Exit status: 0 success, 2 any error (an unreadable or corrupt symbol file is\n"
	"reported and its frames left unsymbolized; the report is still printed).\n";

#define MAX_SYMBOL_DIRS 64

struct show_opts {
	struct cli_input in;
	bool json;
	bool has_top;
	uint64_t top;
	bool symbolize, no_adjust, verbose;
	const char *dirs[MAX_SYMBOL_DIRS];
	size_t ndirs;
	struct cli_symctx *sc;
	const char *html;      /* --html FILE, or NULL */
	uint64_t html_stacks;
};

/* symbolize --html without --top: the page's table holds this many records */
#define HTML_DEFAULT_TOP 1000

struct app_split {
	uint64_t records[2], allocations[2], bytes[2]; /* [0] app, [1] zygote */
	/* the estimates of a sampled snapshot (the sums of its records') */
	uint64_t est_allocations[2], est_bytes[2];
};

static struct app_split split_of(const struct leaksnap_snapshot *s)
{
	struct app_split a = {{0}, {0}, {0}, {0}, {0}};
	for (size_t i = 0; i < leaksnap_snapshot_record_count(s); i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		int z = r->zygote ? 1 : 0;
		uint64_t eb, ec;
		leaksnap_snapshot_record_estimate(s, r, &eb, &ec, NULL, NULL);
		a.records[z]++;
		a.allocations[z] += r->count;
		a.bytes[z] += r->size * r->count;
		a.est_allocations[z] += ec;
		a.est_bytes[z] += eb;
	}
	return a;
}

static const char *count_mode_text(enum leaksnap_snapshot_count_mode m)
{
	switch (m) {
	case LEAKSNAP_SNAPSHOT_COUNTS_FLAGGED: return "flagged";
	case LEAKSNAP_SNAPSHOT_COUNTS_DETECTED: return "detected";
	case LEAKSNAP_SNAPSHOT_COUNTS_FORCED: return "forced";
	case LEAKSNAP_SNAPSHOT_COUNTS_REAL: break;
	}
	return NULL;
}

/* Whether @r's stack filled every frame slot of @s: it may have been cut
 * (0 when not). */
static bool cut_at(const struct leaksnap_snapshot *s, const struct leaksnap_snapshot_record *r)
{
	return cli_stack_may_be_cut(r->frame_count, leaksnap_snapshot_backtrace_size(s));
}

/* Text output ---------------------------------------------------------------- */

static void print_frame(const struct leaksnap_maps *maps, struct cli_symctx *sc, unsigned ptr,
			unsigned idx, uint64_t pc)
{
	struct leaksnap_maps_location loc;
	printf("    #%02u 0x%0*llx", idx, (int)ptr * 2, (unsigned long long)pc);
	struct leaksnap_resolved r;
	if (leaksnap_maps_locate(maps, pc, &loc) && loc.module) {
		printf("  %s+0x%llx", loc.module->path, (unsigned long long)loc.rel_pc);
		if (sc && cli_symctx_resolve(sc, &loc, &r) == 0 && r.module)
			cli_print_symbols(&r);
		else
			printf("\n");
	} else if (loc.mapping)
		printf("  (anonymous mapping %llx-%llx)\n", (unsigned long long)loc.mapping->start,
		       (unsigned long long)loc.mapping->end);
	else
		printf("  (unmapped)\n");
}

static void show_text(const struct leaksnap_snapshot *s, const struct leaksnap_maps *maps,
		      const struct show_opts *o, const size_t *top, size_t ntop)
{
	const char *ver = leaksnap_snapshot_version(s);
	uint64_t t;
	char tbuf[64];
	printf("file:            %s\n", leaksnap_snapshot_source(s));
	printf("format:          %s%s%s\n",
	       leaksnap_snapshot_format_name(leaksnap_snapshot_format(s)), ver ? " " : "",
	       ver ? ver : "");
	printf("pointer size:    %u%s\n", leaksnap_snapshot_pointer_size(s),
	       leaksnap_snapshot_big_endian(s) ? " (big-endian records)" : "");
	printf("backtrace size:  %u\n", leaksnap_snapshot_backtrace_size(s));
	if (leaksnap_snapshot_pid(s) >= 0)
		printf("pid:             %lld\n", (long long)leaksnap_snapshot_pid(s));
	else
		printf("pid:             unknown\n");
	if (leaksnap_snapshot_time_ns(s, &t)) {
		cli_format_time(t, tbuf, sizeof(tbuf));
		printf("time:            %s\n", tbuf);
	} else {
		printf("time:            unknown\n");
	}
	uint64_t interval = leaksnap_snapshot_sample_interval(s), eb, ec, eub, euc;
	struct app_split a = split_of(s);
	static const char *const names[] = {"app:   ", "zygote:"};
	if (interval) {
		/* a sampled snapshot: every figure is either a sampled count,
		 * said so, or an estimate, marked */
		const char *e = cli_approx();
		leaksnap_snapshot_estimate(s, &eb, &ec, &eub, &euc);
		printf("total memory:    %llu bytes in sampled blocks\n",
		       (unsigned long long)leaksnap_snapshot_total_memory(s));
		printf("records:         %zu (%llu sampled allocations, %llu sampled bytes)\n",
		       leaksnap_snapshot_record_count(s),
		       (unsigned long long)leaksnap_snapshot_allocation_count(s),
		       (unsigned long long)leaksnap_snapshot_records_bytes(s));
		for (int z = 0; z < 2; z++)
			printf("  %s        %llu record%s, %llu sampled allocation%s (%s%llu), "
			       "%llu sampled bytes (%s%llu)\n",
			       names[z], (unsigned long long)a.records[z],
			       a.records[z] == 1 ? "" : "s", (unsigned long long)a.allocations[z],
			       a.allocations[z] == 1 ? "" : "s", e,
			       (unsigned long long)a.est_allocations[z],
			       (unsigned long long)a.bytes[z], e, (unsigned long long)a.est_bytes[z]);
		printf("sampled:         one sample point every %llu bytes on average: the counts\n"
		       "                 are of sampled blocks; estimated %s%llu bytes in "
		       "%s%llu allocations\n",
		       (unsigned long long)interval, e, (unsigned long long)eb, e,
		       (unsigned long long)ec);
		if (leaksnap_snapshot_has_reachability(s))
			printf("unreachable:     %llu bytes in %llu sampled allocations (%s%llu bytes "
			       "in %s%llu)\n",
			       (unsigned long long)leaksnap_snapshot_unreachable_bytes(s),
			       (unsigned long long)leaksnap_snapshot_unreachable_count(s), e,
			       (unsigned long long)eub, e, (unsigned long long)euc);
	} else {
		printf("total memory:    %llu bytes\n",
		       (unsigned long long)leaksnap_snapshot_total_memory(s));
		printf("records:         %zu (%llu allocations, %llu bytes)\n",
		       leaksnap_snapshot_record_count(s),
		       (unsigned long long)leaksnap_snapshot_allocation_count(s),
		       (unsigned long long)leaksnap_snapshot_records_bytes(s));
		for (int z = 0; z < 2; z++)
			printf("  %s        %llu record%s, %llu allocation%s, %llu bytes\n",
			       names[z], (unsigned long long)a.records[z],
			       a.records[z] == 1 ? "" : "s", (unsigned long long)a.allocations[z],
			       a.allocations[z] == 1 ? "" : "s", (unsigned long long)a.bytes[z]);
		if (leaksnap_snapshot_has_reachability(s))
			printf("unreachable:     %llu bytes in %llu allocations\n",
			       (unsigned long long)leaksnap_snapshot_unreachable_bytes(s),
			       (unsigned long long)leaksnap_snapshot_unreachable_count(s));
	}
	const char *mode = count_mode_text(leaksnap_snapshot_count_mode(s));
	if (mode)
		printf("counts:          the count field held frame counts (Android 7 layout, "
		       "%s);\n"
		       "                 each record was counted as one allocation\n",
		       mode);
	if (maps)
		printf("maps:            %zu mappings, %zu modules%s%s\n",
		       leaksnap_maps_mapping_count(maps), leaksnap_maps_module_count(maps),
		       o->in.maps_path ? " from " : "", o->in.maps_path ? o->in.maps_path : "");
	else
		printf("maps:            none (frames are shown as raw PCs)\n");
	if (leaksnap_snapshot_meta_count(s) > 0) {
		printf("metadata:\n");
		for (size_t i = 0; i < leaksnap_snapshot_meta_count(s); i++) {
			const struct leaksnap_snapshot_meta *m = leaksnap_snapshot_meta(s, i);
			printf("  %s=%s\n", m->key, m->value);
		}
	}
	size_t n = leaksnap_snapshot_record_count(s);
	printf("\n");
	const char *by = interval ? "estimated total bytes" : "total bytes";
	if (ntop < n)
		printf("records by %s (top %zu of %zu):\n", by, ntop, n);
	else
		printf("records by %s:\n", by);
	unsigned ptr = leaksnap_snapshot_pointer_size(s);
	bool reach = leaksnap_snapshot_has_reachability(s);
	for (size_t i = 0; i < ntop; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, top[i]);
		if (o->sc)
			cli_symctx_progress(o->sc, i, ntop);
		if (interval && r->size < interval) {
			/* estimates, with the sampled counts beside them */
			leaksnap_snapshot_record_estimate(s, r, &eb, &ec, &eub, &euc);
			printf("#%zu  %s%llu bytes = %llu x %s%llu (%llu sampled)  %s", i + 1,
			       cli_approx(), (unsigned long long)eb, (unsigned long long)r->size,
			       cli_approx(), (unsigned long long)ec, (unsigned long long)r->count,
			       r->zygote ? "zygote" : "app");
			if (reach)
				printf("  %llu of %llu sampled unreachable (%s%llu)",
				       (unsigned long long)r->unreachable,
				       (unsigned long long)r->count, cli_approx(),
				       (unsigned long long)euc);
		} else if (interval) {
			/* a block of the interval or more is always sampled and
			 * stands for itself: the sampled count is exact */
			printf("#%zu  %llu bytes = %llu x %llu (%llu sampled, exact)  %s", i + 1,
			       (unsigned long long)(r->size * r->count), (unsigned long long)r->size,
			       (unsigned long long)r->count, (unsigned long long)r->count,
			       r->zygote ? "zygote" : "app");
			if (reach)
				printf("  %llu of %llu sampled unreachable",
				       (unsigned long long)r->unreachable,
				       (unsigned long long)r->count);
		} else {
			printf("#%zu  %llu bytes = %llu x %llu  %s", i + 1,
			       (unsigned long long)(r->size * r->count), (unsigned long long)r->size,
			       (unsigned long long)r->count, r->zygote ? "zygote" : "app");
			if (reach)
				printf("  %llu of %llu unreachable", (unsigned long long)r->unreachable,
				       (unsigned long long)r->count);
		}
		printf("\n");
		if (r->frame_count == 0)
			printf("    (no frames)\n");
		for (uint32_t f = 0; f < r->frame_count; f++)
			print_frame(maps, o->sc, ptr, f, r->frames[f]);
		if (cut_at(s, r))
			cli_print_cut(r->frame_count);
	}
}

/* JSON output ------------------------------------------------------------------
 * Written as a stream (records can number millions): top-level keys in a fixed
 * order, each record and mapping one compact object per line. */

static json_t *json_frame(const struct leaksnap_maps *maps, uint64_t pc)
{
	struct leaksnap_maps_location loc;
	bool mod = leaksnap_maps_locate(maps, pc, &loc) && loc.module;
	return json_pack("{s:o, s:o, s:o}", "pc", kit_json_addr(pc), "module",
			 mod ? kit_json_text(loc.module->path) : json_null(), "rel_pc",
			 mod ? kit_json_addr(loc.rel_pc) : json_null());
}

static json_t *json_record(const struct leaksnap_snapshot *s,
			   const struct leaksnap_snapshot_record *r, bool reach,
			   const struct leaksnap_maps *maps, struct cli_symctx *sc)
{
	json_t *frames = json_array();
	for (uint32_t f = 0; f < r->frame_count; f++) {
		if (sc) {
			struct leaksnap_maps_location loc = {0};
			struct leaksnap_resolved res = {0};
			if (!leaksnap_maps_locate(maps, r->frames[f], &loc) || !loc.module)
				loc.module = NULL;
			else
				cli_symctx_resolve(sc, &loc, &res);
			struct leaksnap_export_frame ef = {r->frames[f], r->frames[f],
							   loc.module ? loc.module->path : NULL,
							   loc.rel_pc, res};
			leaksnap_export_json_frames(frames, &ef);
		} else
			json_array_append_new(frames, json_frame(maps, r->frames[f]));
	}
	json_t *o = json_pack("{s:o, s:o, s:b, s:o, s:o, s:b}", "size", kit_json_u64(r->size),
			      "count", kit_json_u64(r->count), "zygote", r->zygote, "total_bytes",
			      kit_json_u64(r->size * r->count), "unreachable_count",
			      reach ? kit_json_u64(r->unreachable) : json_null(), "truncated",
			      cut_at(s, r));
	if (o && leaksnap_snapshot_sample_interval(s)) {
		/* a sampled snapshot: the estimates beside the sampled counts */
		uint64_t eb, ec, euc;
		leaksnap_snapshot_record_estimate(s, r, &eb, &ec, NULL, &euc);
		json_object_set_new(o, "estimated_bytes", kit_json_u64(eb));
		json_object_set_new(o, "estimated_count", kit_json_u64(ec));
		json_object_set_new(o, "estimated_unreachable_count",
				    reach ? kit_json_u64(euc) : json_null());
	}
	if (o)
		json_object_set_new(o, "frames", frames);
	else
		json_decref(frames);
	return o;
}

json_t *cli_json_mapping(const struct leaksnap_maps_mapping *m)
{
	char dev[32];
	snprintf(dev, sizeof(dev), "%02x:%02x", m->dev_major, m->dev_minor);
	return json_pack("{s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:b, s:b}", "start",
			 kit_json_addr(m->start), "end", kit_json_addr(m->end), "perms",
			 kit_json_text(m->perms),
			 "offset", kit_json_addr(m->offset), "dev", dev, "inode",
			 kit_json_u64(m->inode), "path", kit_json_text(m->path), "deleted",
			 m->deleted, "unloaded", m->unloaded);
}

/* The snapshot's facts: header, totals and metadata. */
static void json_facts(struct kit_json *j, const struct leaksnap_snapshot *s)
{
	const char *ver = leaksnap_snapshot_version(s);
	enum leaksnap_snapshot_format fmt = leaksnap_snapshot_format(s);
	uint64_t t;
	char tbuf[64];

	kit_json_key(j, "file");
	kit_json_value(j, kit_json_text(leaksnap_snapshot_source(s)));
	kit_json_key(j, "format");
	kit_json_value(j, json_string(leaksnap_snapshot_format_name(fmt)));
	kit_json_key(j, "version");
	if (ver == NULL)
		kit_json_value(j, json_null());
	else if (fmt == LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT)
		kit_json_value(j, kit_json_text(ver));
	else
		kit_json_value(j, json_integer(atoi(ver)));
	kit_json_key(j, "pointer_size");
	kit_json_value(j, json_integer(leaksnap_snapshot_pointer_size(s)));
	kit_json_key(j, "big_endian");
	kit_json_value(j, json_boolean(leaksnap_snapshot_big_endian(s)));
	kit_json_key(j, "backtrace_size");
	kit_json_value(j, json_integer(leaksnap_snapshot_backtrace_size(s)));
	kit_json_key(j, "pid");
	kit_json_value(j, leaksnap_snapshot_pid(s) >= 0 ? json_integer(leaksnap_snapshot_pid(s))
							: json_null());
	kit_json_key(j, "time_ns");
	bool has_time = leaksnap_snapshot_time_ns(s, &t);
	kit_json_value(j, has_time ? kit_json_u64(t) : json_null());
	kit_json_key(j, "time");
	if (has_time)
		cli_format_time(t, tbuf, sizeof(tbuf));
	kit_json_value(j, has_time ? json_string(tbuf) : json_null());
	kit_json_key(j, "total_memory");
	kit_json_value(j, kit_json_u64(leaksnap_snapshot_total_memory(s)));
	kit_json_key(j, "records_bytes");
	kit_json_value(j, kit_json_u64(leaksnap_snapshot_records_bytes(s)));
	kit_json_key(j, "record_count");
	kit_json_value(j, kit_json_u64(leaksnap_snapshot_record_count(s)));
	kit_json_key(j, "allocation_count");
	kit_json_value(j, kit_json_u64(leaksnap_snapshot_allocation_count(s)));
	struct app_split a = split_of(s);
	static const char *const split_keys[] = {"app", "zygote"};
	for (int z = 0; z < 2; z++) {
		json_t *o = json_pack("{s:o, s:o, s:o}", "records", kit_json_u64(a.records[z]),
				      "allocations", kit_json_u64(a.allocations[z]), "bytes",
				      kit_json_u64(a.bytes[z]));
		if (o && leaksnap_snapshot_sample_interval(s)) {
			/* sampled: the estimates beside the sampled figures */
			json_object_set_new(o, "estimated_allocations",
					    kit_json_u64(a.est_allocations[z]));
			json_object_set_new(o, "estimated_bytes", kit_json_u64(a.est_bytes[z]));
		}
		kit_json_key(j, split_keys[z]);
		kit_json_value(j, o);
	}
	kit_json_key(j, "unreachable");
	kit_json_value(j, leaksnap_snapshot_has_reachability(s)
				  ? json_pack("{s:o, s:o}", "bytes",
					      kit_json_u64(leaksnap_snapshot_unreachable_bytes(s)),
					      "allocations",
					      kit_json_u64(leaksnap_snapshot_unreachable_count(s)))
				  : json_null());
	uint64_t interval = leaksnap_snapshot_sample_interval(s);
	if (interval) {
		/* a sampled snapshot (only then: unsampled output is as it was) */
		uint64_t eb, ec, eub, euc;
		leaksnap_snapshot_estimate(s, &eb, &ec, &eub, &euc);
		kit_json_key(j, "sample_interval");
		kit_json_value(j, kit_json_u64(interval));
		kit_json_key(j, "estimated_bytes");
		kit_json_value(j, kit_json_u64(eb));
		kit_json_key(j, "estimated_count");
		kit_json_value(j, kit_json_u64(ec));
		kit_json_key(j, "estimated_unreachable");
		kit_json_value(j, leaksnap_snapshot_has_reachability(s)
					  ? json_pack("{s:o, s:o}", "bytes", kit_json_u64(eub),
						      "allocations", kit_json_u64(euc))
					  : json_null());
	}
	kit_json_key(j, "count_is_frames");
	const char *mode = count_mode_text(leaksnap_snapshot_count_mode(s));
	kit_json_value(j, mode ? json_string(mode) : json_null());
	kit_json_key(j, "metadata");
	json_t *meta = json_array();
	for (size_t i = 0; i < leaksnap_snapshot_meta_count(s); i++) {
		const struct leaksnap_snapshot_meta *m = leaksnap_snapshot_meta(s, i);
		json_array_append_new(meta, json_pack("{s:o, s:o}", "key", kit_json_text(m->key),
						      "value", kit_json_text(m->value)));
	}
	kit_json_value(j, meta);
}

static void show_json(FILE *out, const struct leaksnap_snapshot *s,
		      const struct leaksnap_maps *maps, const size_t *top, size_t ntop,
		      struct cli_symctx *sc)
{
	struct kit_json j;
	kit_json_begin(&j, out);
	json_facts(&j, s);
	kit_json_key(&j, "records");
	kit_json_list_begin(&j);
	for (size_t i = 0; i < ntop; i++) {
		if (sc)
			cli_symctx_progress(sc, i, ntop);
		kit_json_list_item(&j,
				   json_record(s, leaksnap_snapshot_record(s, top[i]),
					       leaksnap_snapshot_has_reachability(s), maps, sc));
	}
	kit_json_list_end(&j);
	kit_json_key(&j, "maps");
	kit_json_list_begin(&j);
	size_t nm = maps ? leaksnap_maps_mapping_count(maps) : 0;
	for (size_t i = 0; i < nm; i++)
		kit_json_list_item(&j, cli_json_mapping(leaksnap_maps_mapping(maps, i)));
	kit_json_list_end(&j);
	if (sc) {
		/* each module the frames named, and the file that was used */
		kit_json_key(&j, "symbols");
		kit_json_list_begin(&j);
		for (size_t i = 0; i < cli_symctx_module_count(sc); i++)
			kit_json_list_item(&j, cli_json_sym_module(cli_symctx_module(sc, i)));
		kit_json_list_end(&j);
	}
	/* last: the snapshot's own warnings, then what symbolizing it said */
	kit_json_key(&j, "warnings");
	kit_json_value(&j, cli_warnings_json(leaksnap_snapshot_source(s), NULL, 0));
	kit_json_end(&j);
}

static void print_modules(struct cli_symctx *sc)
{
	size_t n = cli_symctx_module_count(sc);
	printf("\nsymbol files:\n");
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_sym_module *m = cli_symctx_module(sc, i);
		if (!m->file) { /* as its frames say it; the file passed over, if any */
			const char *seen = m->rejected_path ? m->rejected_path : m->error_file;
			printf("  %s  %s  (%s)\n", m->path, seen ? seen : "-", cli_no_file_note(m));
			continue;
		}
		printf("  %s  %s  (build-id %s%s%s)\n", m->path, m->file_path,
		       leaksnap_sym_build_id_status_name(m->status), cli_layout_note(m),
		       cli_debug_note(m));
	}
}

/* HTML page ---------------------------------------------------------------------
 * The --json document and the stacks of the largest records for the flame
 * graph. */

struct page_arg {
	const struct show_opts *o;
	const struct leaksnap_snapshot *s;
	const struct leaksnap_maps *maps;
	const size_t *top;
	size_t ntop;
};

static int page_json(FILE *out, void *arg)
{
	struct page_arg *a = arg;
	show_json(out, a->s, a->maps, a->top, a->ntop, a->o->sc);
	return 0;
}

/* The stacks of the --html-stacks largest records into @fl: -1 when out of
 * memory. */
static int flame_records(const struct page_arg *a, struct leaksnap_export_flame *fl,
			 uint64_t *rest, uint64_t *nrest)
{
	const struct leaksnap_snapshot *s = a->s;
	size_t n = leaksnap_snapshot_record_count(s);
	size_t k = a->o->html_stacks < n ? (size_t)a->o->html_stacks : n;
	size_t *idx = malloc((k ? k : 1) * sizeof(*idx));
	if (!idx)
		return -1;
	k = leaksnap_snapshot_records_top(s, k, idx);
	cli_symctx_prefetch(a->o->sc, a->maps, s, idx, k);
	uint64_t kept = 0;
	int rc = 0;
	for (size_t i = 0; i < k && rc == 0; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, idx[i]);
		uint64_t bytes; /* (a sampled snapshot's: the estimate) */
		leaksnap_snapshot_record_estimate(s, r, &bytes, NULL, NULL, NULL);
		kept += bytes;
		rc = leaksnap_export_flame_stack(fl, bytes, NULL);
		if (rc == 0 && cut_at(s, r))
			rc = leaksnap_export_flame_truncated(fl, NULL);
		for (uint32_t f = r->frame_count; f-- > 0 && rc == 0;) {
			struct leaksnap_maps_location loc = {0};
			struct leaksnap_resolved res = {0};
			if (!leaksnap_maps_locate(a->maps, r->frames[f], &loc) || !loc.module)
				loc.module = NULL;
			else if (cli_symctx_resolve(a->o->sc, &loc, &res))
				rc = -1;
			struct leaksnap_export_frame ef = {r->frames[f], r->frames[f],
							   loc.module ? loc.module->path : NULL,
							   loc.rel_pc, res};
			if (rc == 0)
				rc = leaksnap_export_flame_frame(fl, &ef, NULL);
		}
	}
	free(idx);
	uint64_t all;
	leaksnap_snapshot_estimate(s, &all, NULL, NULL, NULL);
	*rest = all > kept ? all - kept : 0;
	*nrest = n - k;
	return rc;
}

static int page_flame(struct leaksnap_export_flame *fl, void *arg, uint64_t *rest_bytes,
		      uint64_t *rest_stacks)
{
	struct page_arg *a = arg;
	if (flame_records(a, fl, rest_bytes, rest_stacks) == 0)
		return 0;
	cli_fail(leaksnap_snapshot_source(a->s), "out of memory");
	return EXIT_ERROR;
}

/* The page at --html: -1 after saying why. */
static int symbolize_html(const struct show_opts *o, const struct leaksnap_snapshot *s,
			  const struct leaksnap_maps *maps, const size_t *top, size_t ntop)
{
	struct page_arg a = {o, s, maps, top, ntop};
	struct report_page page = {"symbolize", "leaksnap heap snapshot", "live", page_json,
				   page_flame, &a, cli_full_names()};
	return cli_report_page(o->html, &page, leaksnap_snapshot_source(s));
}

/* Main ---------------------------------------------------------------------------- */

/* The command line into @o, the DUMP's index in *@file: 0; CLI_HELP_SHOWN
 * when --help was printed (the command is done); -1 after saying what is
 * wrong. */
static int parse_args(int argc, char **argv, struct show_opts *o, int *file)
{
	const char *cmd = o->symbolize ? "symbolize" : "show";
	static const struct option show_longopts[] = {
		CLI_INPUT_LONGOPTS,
		{"top", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const struct option symbolize_longopts[] = {
		CLI_INPUT_LONGOPTS,
		{"top", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"symbols", required_argument, NULL, 's'},
		{"no-adjust", no_argument, NULL, 'A'},
		CLI_DEBUGINFOD_LONGOPTS,
		{"verbose", no_argument, NULL, 'v'},
		{"html", required_argument, NULL, 'H'},
		{"html-stacks", required_argument, NULL, 'S'},
		{"full-names", no_argument, NULL, 'N'},
		{NULL, 0, NULL, 0},
	};
	const struct option *longopts = o->symbolize ? symbolize_longopts : show_longopts;
	int c, r;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, o->symbolize ? ":jhs:v" : ":jh", longopts, NULL)) !=
	       -1) {
		if ((r = cli_input_option(cmd, c, optarg, &o->in)) != 0 ||
		    (r = cli_debuginfod_option(cmd, c, optarg)) != 0) {
			if (r != 1)
				return -1; /* said */
			continue;
		}
		switch (c) {
		case 't':
			if (!cli_parse_uint(optarg, 0, SIZE_MAX / sizeof(size_t), &o->top)) {
				cli_usage_error(cmd, "--top needs a number");
				return -1;
			}
			o->has_top = true;
			break;
		case 'j': o->json = true; break;
		case 's':
			if (o->ndirs == MAX_SYMBOL_DIRS) {
				cli_usage_error(cmd, "more than %d --symbols directories",
						MAX_SYMBOL_DIRS);
				return -1;
			}
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'A': o->no_adjust = true; break;
		case 'N': cli_set_full_names(true); break;
		case 'v': o->verbose = true; break;
		case 'H':
			if (o->html) {
				cli_usage_error(cmd, "--html given twice");
				return -1;
			}
			o->html = optarg;
			break;
		case 'S':
			if (!cli_parse_uint(optarg, 0, 1000000, &o->html_stacks)) {
				cli_usage_error(cmd,
						"--html-stacks needs a number from 0 to 1000000");
				return -1;
			}
			break;
		case 'h':
			fputs(o->symbolize ? symbolize_usage : show_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			cli_bad_option(cmd, argv, c == ':' ? ':' : optopt);
			return -1;
		}
	}
	if (argc - optind != 1) {
		cli_usage_error(cmd, argc - optind ? "expected one DUMP, got %d files"
						   : "missing DUMP operand%.0d",
				argc - optind);
		return -1;
	}
	*file = optind;
	return 0;
}

/* The DUMP at @path, the --html page and the --symbols trees, once every
 * option is read: -1 after saying what is wrong. */
static int check_args(struct show_opts *o, char **path)
{
	const char *cmd = o->symbolize ? "symbolize" : "show";
	if (cli_input_check(cmd, &o->in) || cli_stdin_once(*path, o->in.maps_path) ||
	    cli_no_empty_names(path, 1))
		return -1;
	if (o->html && strcmp(o->html, "-") == 0 && o->json) {
		cli_usage_error(cmd,
				"--html - writes the page on standard output: not with --json");
		return -1;
	}
	if (o->html) {
		char *other[] = {(char *)(uintptr_t)o->in.maps_path};
		if (cli_outfile_not_input(o->html, path, 1) ||
		    cli_outfile_not_input(o->html, other, 1) ||
		    cli_outfile_check(o->html, CLI_REPLACE_OWN_HTML))
			return -1;
	}
	if (o->html && !o->has_top) {
		o->top = HTML_DEFAULT_TOP;
		o->has_top = true;
	}
	return cli_symbol_dirs_check(o->dirs, o->ndirs);
}

/* The reports of snapshot @s (its @maps) and its @ntop largest records
 * @top: the exit status. */
static int report(struct show_opts *o, const struct leaksnap_snapshot *s,
		  const struct leaksnap_maps *maps, const size_t *top, size_t ntop)
{
	if (o->sc)
		cli_symctx_prefetch(o->sc, maps, s, top, ntop);
	bool to_stdout = !o->html || strcmp(o->html, "-") != 0;
	if (to_stdout && o->json)
		show_json(stdout, s, maps, top, ntop, o->sc);
	else if (to_stdout)
		show_text(s, maps, o, top, ntop);
	cli_symctx_progress_end(o->sc);
	if (to_stdout && o->sc && o->verbose && !o->json)
		print_modules(o->sc);
	int status = o->sc ? cli_symctx_status(o->sc) : EXIT_OK;
	if (o->html && symbolize_html(o, s, maps, top, ntop))
		status = EXIT_ERROR;
	return status;
}

static int show_main(int argc, char **argv, bool symbolize)
{
	struct show_opts o = {.in = CLI_INPUT_INIT};
	o.symbolize = symbolize;
	o.html_stacks = REPORT_STACKS;
	int file = 0, rc = parse_args(argc, argv, &o, &file);
	if (rc)
		return rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	if (check_args(&o, argv + file))
		return EXIT_ERROR;
	const char *path = argv[file];
	struct leaksnap_snapshot *s = cli_open_snapshot(path, &o.in.open, o.in.maps_path);
	if (s == NULL)
		return EXIT_ERROR;
	struct leaksnap_maps *maps = NULL;
	if (cli_snapshot_maps(s, o.in.maps_path, &maps)) {
		leaksnap_snapshot_close(s);
		return EXIT_ERROR;
	}
	cli_print_warnings(s);
	size_t n = leaksnap_snapshot_record_count(s);
	size_t limit = o.has_top && o.top < n ? (size_t)o.top : n;
	size_t *top = malloc((limit ? limit : 1) * sizeof(*top));
	if (symbolize)
		o.sc = cli_symctx_new(s, maps, o.dirs, o.ndirs, !o.no_adjust);
	bool nomem = top == NULL || (symbolize && !o.sc);
	int status = EXIT_ERROR;
	if (nomem)
		cli_fail(path, "out of memory");
	else
		status = report(&o, s, maps, top, leaksnap_snapshot_records_top(s, limit, top));
	cli_symctx_free(o.sc);
	free(top);
	leaksnap_maps_free(maps);
	leaksnap_snapshot_close(s);
	return nomem ? EXIT_ERROR : cli_finish_stdout(status);
}

int cmd_show(int argc, char **argv)
{
	return show_main(argc, argv, false);
}

int cmd_symbolize(int argc, char **argv)
{
	return show_main(argc, argv, true);
}
