/* leaksnap diff (also installed as leakdiff): compare two or more snapshots
 * of one program, rank what grew, and gate CI on it.  The comparison is
 * diff/'s; this file reads the inputs and prints text, JSON or folded
 * stacks. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <leaksnap/diff.h>

#include "cli.h"

static const char diff_usage[] =
	"Usage: leakdiff [OPTIONS] OLD.dump NEW.dump [MORE.dump...]\n"
	"       leaksnap diff [OPTIONS] OLD.dump NEW.dump [MORE.dump...]\n\n"
	"Compare heap snapshots of one program, oldest first, and rank what grew.\n"
	"Snapshots may come from one process, from two runs (other pids and load\n"
	"addresses) or from two builds: every frame is compared as (module, offset in\n"
	"the module's file), the module known by its build ID when the dump records\n"
	"one, else by its path. Any readable format may be mixed (LEAKSNAP, Android\n"
	"text, DDMS NHGT, raw buffers with --pointer-size and --frames).\n\n"
	"Each group of records gets its bytes and count in every snapshot. Groups that\n"
	"grew are ranked by score = growth x (intervals grown - intervals shrunk) /\n"
	"intervals: growth in every interval scores fully. A group that grew but not\n"
	"in the last interval is a cache, not a leak: it is listed apart and never\n"
	"counts toward --fail-on.\n\n"
	"Frames are symbolized when their files are found (--symbols trees, or the\n"
	"paths themselves on this host, build IDs checked) and shown as\n"
	"module+0xOFFSET otherwise.\n\n"
	"Options:\n"
	"  --by KEY             group records by: stack (default, the whole stack),\n"
	"                       site (the first frame outside the allocation wrappers:\n"
	"                       malloc family, operator new, std::, libc, libc++,\n"
	"                       libstdc++), function (the function names from the site\n"
	"                       out; matches across builds), module (the site's module)\n"
	"  --skip PATTERN       also count frames whose function or module matches\n"
	"                       PATTERN as allocation wrappers (repeatable)\n"
	"  --include-zygote     compare zygote-child allocations too (by default they\n"
	"                       are left out of Android snapshots, kept for Linux)\n"
	"  --top N              print the N best suspects (default 20, 0 = all)\n"
	"  --min-bytes BYTES    suspects must have grown by at least BYTES\n"
	"  --suppressions FILE  leave out records with a frame matching a 'leak:PATTERN'\n"
	"                       line of FILE (function, source file or module; '*' is\n"
	"                       a wildcard, '^' and '$' anchor, '#' starts a comment)\n"
	"  -s, --symbols DIR    look for symbol files under DIR (repeatable; as in\n"
	"                       'leaksnap symbolize')\n"
	"  --no-symbols         do not symbolize: frames are module+0xOFFSET\n"
	"  --no-adjust          look frames up at the captured address, not pc - 1\n"
	"  --pointer-size N     raw buffers: 4 or 8\n"
	"  --frames N           raw buffers: frames per record (1..256)\n"
	"  --count-is-frames    the count field holds the frame count (Android 7)\n"
	"  -j, --json           JSON output\n"
	"  --folded             the suspects' growth as folded stacks, outermost frame\n"
	"                       first ('frame;frame;frame BYTES'), for flame graphs\n"
	"  --html FILE          also write the report as one self-contained HTML page\n"
	"                       (memory curve, growth flame graph, suspects; '-' is\n"
	"                       standard output, instead of the text report); an\n"
	"                       existing regular FILE is replaced\n"
	"  --html-stacks N      the flame graph shows the N stacks that grew most\n"
	"                       (default 500); the rest are summed as one\n"
	"  --fail-on BYTES      exit 1 when the suspects grew by BYTES or more\n"
	"  -h, --help           this help\n"
	"  --version            versions of leakdiff and of the libraries it runs with\n\n"
	"BYTES is a number, optionally with a K, M or G suffix (powers of 1024).\n\n"
	"Exit status: 0 success (and, with --fail-on, growth below the limit);\n"
	"1 the suspects grew by --fail-on BYTES or more; 2 any error (usage,\n"
	"unreadable, malformed or mismatched snapshots, an unreadable symbol file).\n";

#define MAX_SYMBOL_DIRS 64
#define MAX_SKIP 256

struct diff_cli {
	struct diff_options o;
	struct cli_input in;
	const char *dirs[MAX_SYMBOL_DIRS];
	size_t ndirs;
	const char *skip[MAX_SKIP];
	size_t nskip;
	const char *supp_path;
	uint64_t top;
	bool json, folded, no_symbols, no_adjust;
	bool has_fail_on;
	uint64_t fail_on;
	const char *html;      /* --html FILE, or NULL */
	uint64_t html_stacks;
	struct leaksnap_error err;
};

/* A byte count: digits, then optionally K, M or G (powers of 1024),
 * optionally followed by "B" or "iB". */
static bool parse_bytes(const char *s, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return false;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (shift && *end == 'i')
		end++;
	if (*end == 'B' || (*end == 'b' && shift))
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* Text ------------------------------------------------------------------------- */

static void print_series(const char *label, const uint64_t *v, size_t n)
{
	printf("    %s", label);
	for (size_t i = 0; i < n; i++)
		printf("%s%llu", i ? " -> " : " ", (unsigned long long)v[i]);
	printf("\n");
}

static void print_diff_frame(const struct diff_frame *f, unsigned ptr, size_t idx, bool site)
{
	printf("  %s #%02zu 0x%0*llx", site ? ">" : " ", idx, (int)ptr * 2,
	       (unsigned long long)f->pc);
	if (!f->module) {
		printf("  (unmapped)\n");
		return;
	}
	printf("  %s+0x%llx", f->module, (unsigned long long)f->rel_pc);
	if (!f->sym_module ||
	    (!f->sym_module->file && f->sym_module->status != SYM_BUILD_ID_MISMATCH)) {
		printf("\n"); /* no symbol file: the summary line says so once */
		return;
	}
	struct cli_resolved r = {f->sym_module, f->sym, f->sym_count};
	cli_print_symbols(&r);
}

static const char *trend_text(const struct diff_group *g, size_t n, char *buf, size_t size)
{
	if (g->trend == DIFF_TREND_GREW)
		return "grew";
	if (g->trend == DIFF_TREND_STEADY)
		return "grew in every interval";
	int k = snprintf(buf, size, "grew in %u of %zu intervals", g->grew, n - 1);
	if (g->shrank && k > 0 && (size_t)k < size)
		k += snprintf(buf + k, size - (size_t)k, ", shrank in %u", g->shrank);
	if (g->trend == DIFF_TREND_STOPPED && k > 0 && (size_t)k < size)
		snprintf(buf + k, size - (size_t)k, ", not in the last");
	return buf;
}

static int print_group(struct diff *d, const struct diff_group *g, size_t rank, unsigned ptr,
		       bool stopped)
{
	struct leaksnap_error err;
	if (!g)
		return cli_fail("diff", "out of memory");
	if (diff_symbolize_group(d, g, &err) != 0)
		return cli_fail_error(&err);
	size_t n = diff_snapshot_count(d);
	char tbuf[128];
	const char *allocs = g->count_delta == 1 || g->count_delta == -1 ? "allocation"
									    : "allocations";
	if (stopped)
		printf("  %+lld bytes, %+lld %s, %s\n", (long long)g->bytes_delta,
		       (long long)g->count_delta, allocs, trend_text(g, n, tbuf, sizeof(tbuf)));
	else
		printf("#%zu  %+lld bytes, %+lld %s%s  score %.0f  (%s)\n", rank,
		       (long long)g->bytes_delta, (long long)g->count_delta, allocs,
		       g->is_new ? ", new" : "", g->score, trend_text(g, n, tbuf, sizeof(tbuf)));
	print_series("bytes:", g->bytes, n);
	print_series("count:", g->counts, n);
	if (g->module)
		printf("    module: %s\n", g->module);
	if (g->stack_count > 1)
		printf("    largest of its %zu stacks:\n", g->stack_count);
	if (g->frame_count == 0)
		printf("    (no frames)\n");
	for (size_t i = 0; i < g->frame_count; i++)
		print_diff_frame(g->frames[i], ptr, i, i == g->site);
	return 0;
}

static int report_text(struct diff *d, struct diff_cli *c)
{
	size_t n = diff_snapshot_count(d);
	const struct diff_snapshot *first = diff_snapshot(d, 0), *last = diff_snapshot(d, n - 1);
	unsigned ptr = first->pointer_size;
	uint64_t left_out = 0;
	int w = 8;
	for (size_t i = 0; i < n; i++) {
		const struct diff_snapshot *s = diff_snapshot(d, i);
		left_out += s->left_out_count;
		if ((int)strlen(s->file) > w)
			w = strlen(s->file) > 60 ? 60 : (int)strlen(s->file);
	}
	printf("%zu snapshots compared, grouped by %s", n, diff_by_name(c->o.by));
	if (left_out)
		printf("; zygote-child allocations left out (--include-zygote)");
	printf("\n\n  #  %-*s %8s %12s %14s\n", w, "snapshot", "pid", "allocations", "bytes");
	for (size_t i = 0; i < n; i++) {
		const struct diff_snapshot *s = diff_snapshot(d, i);
		char pid[32];
		snprintf(pid, sizeof(pid), s->pid >= 0 ? "%lld" : "?", (long long)s->pid);
		printf("%3zu  %-*s %8s %12llu %14llu", i + 1, w, s->file, pid,
		       (unsigned long long)s->count, (unsigned long long)s->bytes);
		if (s->left_out_count)
			printf("  (%llu zygote-child allocation%s, %llu bytes left out)",
			       (unsigned long long)s->left_out_count, s->left_out_count == 1 ? "" : "s",
			       (unsigned long long)s->left_out_bytes);
		printf("\n");
	}
	printf("     %-*s %8s %+12lld %+14lld\n", w, "growth", "",
	       (long long)((int64_t)last->count - (int64_t)first->count),
	       (long long)((int64_t)last->bytes - (int64_t)first->bytes));

	size_t ns = diff_suspect_count(d), nc = diff_stopped_count(d);
	size_t shown = c->top && c->top < ns ? (size_t)c->top : ns;
	printf("\n");
	if (ns)
		printf("%zu suspect%s grew by %lld bytes, %+lld allocation%s\n", ns, ns == 1 ? "" : "s",
		       (long long)diff_suspects_bytes(d), (long long)diff_suspects_count(d),
		       diff_suspects_count(d) == 1 ? "" : "s");
	else
		printf("no suspects: nothing grew%s\n",
		       c->o.min_bytes ? " by --min-bytes or more" : "");
	if (shown < ns)
		printf("the best %zu %s shown (--top)\n", shown, shown == 1 ? "is" : "are");
	if (nc)
		printf("%zu %s, then stopped: %s, not %s (listed last)\n", nc,
		       nc == 1 ? "group grew" : "groups grew", nc == 1 ? "a cache" : "caches",
		       nc == 1 ? "a leak" : "leaks");
	if (c->o.sym) {
		size_t nm = 0, missing = 0, mismatch = 0, nolayout = 0;
		for (size_t i = 0; i < ns && i < shown; i++)
			if (diff_symbolize_group(d, diff_suspect(d, i), &c->err) != 0)
				return cli_fail_error(&c->err);
		for (size_t i = 0; i < nc && (!c->top || i < c->top); i++)
			if (diff_symbolize_group(d, diff_stopped(d, i), &c->err) != 0)
				return cli_fail_error(&c->err);
		nm = diff_symbol_module_count(d);
		for (size_t i = 0; i < nm; i++) {
			const struct sym_module *m = diff_symbol_module(d, i);
			missing += !m->file && m->status != SYM_BUILD_ID_MISMATCH;
			mismatch += m->status == SYM_BUILD_ID_MISMATCH;
			nolayout += m->file && m->layout == SYM_LAYOUT_NONE;
		}
		if (missing)
			printf("no symbol file for %zu of %zu modules: their frames are module+offset "
			       "(--symbols DIR)\n", missing, nm);
		if (mismatch)
			printf("%zu module%s found only with another build ID: not symbolized\n",
			       mismatch, mismatch == 1 ? "" : "s");
		if (nolayout)
			printf("%zu module%s found only as a debug-only file that fits no mapping: "
			       "not symbolized\n", nolayout, nolayout == 1 ? "" : "s");
	}
	if (c->o.suppressions && diff_suppressed_records(d))
		printf("%llu stack%s suppressed by %s\n",
		       (unsigned long long)diff_suppressed_records(d),
		       diff_suppressed_records(d) == 1 ? "" : "s", c->supp_path);
	for (size_t i = 0; i < shown; i++) {
		printf("\n");
		if (print_group(d, diff_suspect(d, i), i + 1, ptr, false))
			return EXIT_ERROR;
	}
	if (nc) {
		printf("\ngrew, then stopped (caches, not leaks):\n");
		for (size_t i = 0; i < nc && (!c->top || i < c->top); i++)
			if (print_group(d, diff_stopped(d, i), 0, ptr, true))
				return EXIT_ERROR;
	}
	return EXIT_OK;
}

/* JSON ----------------------------------------------------------------------------- */

static json_t *json_series(const uint64_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, cli_json_u64(v[i]));
	return a;
}

static json_t *json_group(struct diff *d, const struct diff_group *g, size_t rank)
{
	struct leaksnap_error err;
	if (!g) {
		cli_fail("diff", "out of memory");
		return NULL;
	}
	if (diff_symbolize_group(d, g, &err) != 0) {
		cli_fail_error(&err);
		return NULL;
	}
	size_t n = diff_snapshot_count(d);
	json_t *frames = json_array();
	for (size_t i = 0; i < g->frame_count; i++) {
		const struct diff_frame *f = g->frames[i];
		struct cli_resolved r = {f->sym_module, f->sym, f->sym_count};
		cli_json_frames(frames, f->pc, f->module, f->rel_pc, &r);
	}
	json_t *o = json_object();
	if (rank)
		json_object_set_new(o, "rank", json_integer((json_int_t)rank));
	json_object_set_new(o, "bytes_delta", json_integer(g->bytes_delta));
	json_object_set_new(o, "count_delta", json_integer(g->count_delta));
	json_object_set_new(o, "bytes", json_series(g->bytes, n));
	json_object_set_new(o, "counts", json_series(g->counts, n));
	json_object_set_new(o, "new", json_boolean(g->is_new));
	json_object_set_new(o, "score", json_real(g->score));
	json_object_set_new(o, "trend", json_string(diff_trend_name(g->trend)));
	json_object_set_new(o, "grew_intervals", json_integer(g->grew));
	json_object_set_new(o, "shrank_intervals", json_integer(g->shrank));
	json_object_set_new(o, "stacks", json_integer((json_int_t)g->stack_count));
	if (g->module)
		json_object_set_new(o, "module", cli_json_text(g->module));
	/* the site's index in frames[], which has one element per inline level */
	size_t site = g->site_level;
	for (size_t i = 0; i < g->site && i < g->frame_count; i++)
		site += g->frames[i]->sym_count ? g->frames[i]->sym_count : 1;
	json_object_set_new(o, "site", g->site < g->frame_count ? json_integer((json_int_t)site)
								 : json_null());
	json_object_set_new(o, "frames", frames);
	return o;
}

static void json_key(FILE *out, bool *first, const char *key)
{
	fprintf(out, "%s\n  \"%s\": ", *first ? "{" : ",", key);
	*first = false;
}

static int json_list(FILE *out, struct diff *d, bool stopped, size_t count)
{
	fprintf(out, "[");
	for (size_t i = 0; i < count; i++) {
		json_t *g = json_group(d, stopped ? diff_stopped(d, i) : diff_suspect(d, i),
				       stopped ? 0 : i + 1);
		if (!g)
			return EXIT_ERROR;
		fprintf(out, "%s\n    ", i ? "," : "");
		cli_json_print(out, g);
	}
	fprintf(out, "%s]", count ? "\n  " : "");
	return 0;
}

static int report_json(FILE *out, struct diff *d, const struct diff_cli *c)
{
	size_t n = diff_snapshot_count(d);
	bool first = true;
	json_key(out, &first, "by");
	cli_json_print(out, json_string(diff_by_name(c->o.by)));
	json_key(out, &first, "zygote_included");
	cli_json_print(out, json_boolean(diff_zygote_included(d)));
	json_key(out, &first, "snapshots");
	fprintf(out, "[");
	for (size_t i = 0; i < n; i++) {
		const struct diff_snapshot *s = diff_snapshot(d, i);
		fprintf(out, "%s\n    ", i ? "," : "");
		json_t *o = json_pack("{s:o, s:o, s:i, s:b, s:o, s:o, s:o, s:o, s:o, s:o}",
				      "file", cli_json_text(s->file), "pid",
				      s->pid >= 0 ? json_integer(s->pid) : json_null(),
				      "pointer_size", (int)s->pointer_size, "android", s->android,
				      "total_memory", cli_json_u64(s->total_memory),
				      "allocation_count", cli_json_u64(s->allocation_count), "bytes",
				      cli_json_u64(s->bytes), "count", cli_json_u64(s->count),
				      "left_out_bytes", cli_json_u64(s->left_out_bytes),
				      "left_out_count", cli_json_u64(s->left_out_count));
		char tbuf[64];
		if (s->has_time)
			cli_format_time(s->time_ns, tbuf, sizeof(tbuf));
		json_object_set_new(o, "time_ns", s->has_time ? cli_json_u64(s->time_ns) : json_null());
		json_object_set_new(o, "time", s->has_time ? json_string(tbuf) : json_null());
		cli_json_print(out, o);
	}
	fprintf(out, "\n  ]");
	const struct diff_snapshot *a = diff_snapshot(d, 0), *b = diff_snapshot(d, n - 1);
	json_key(out, &first, "totals");
	cli_json_print(out,
		       json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "bytes_delta",
				 (json_int_t)((int64_t)b->bytes - (int64_t)a->bytes), "count_delta",
				 (json_int_t)((int64_t)b->count - (int64_t)a->count), "suspects",
				 (json_int_t)diff_suspect_count(d), "suspects_bytes_delta",
				 (json_int_t)diff_suspects_bytes(d), "suspects_count_delta",
				 (json_int_t)diff_suspects_count(d), "stopped",
				 (json_int_t)diff_stopped_count(d), "suppressed_stacks",
				 (json_int_t)diff_suppressed_records(d)));
	size_t ns = diff_suspect_count(d), nc = diff_stopped_count(d);
	json_key(out, &first, "suspects");
	if (json_list(out, d, false, c->top && c->top < ns ? (size_t)c->top : ns))
		return EXIT_ERROR;
	json_key(out, &first, "stopped");
	if (json_list(out, d, true, c->top && c->top < nc ? (size_t)c->top : nc))
		return EXIT_ERROR;
	if (c->o.suppressions) {
		json_key(out, &first, "suppressions");
		json_t *arr = json_array();
		for (size_t i = 0; i < diff_suppressions_count(c->o.suppressions); i++)
			json_array_append_new(
				arr, json_pack("{s:o, s:o}", "pattern",
					       cli_json_text(diff_suppressions_pattern(c->o.suppressions, i)), "stacks",
					       cli_json_u64(diff_suppressions_hits(c->o.suppressions, i))));
		cli_json_print(out, arr);
	}
	if (c->o.sym) {
		json_key(out, &first, "symbols");
		size_t nm = diff_symbol_module_count(d);
		fprintf(out, "[");
		for (size_t i = 0; i < nm; i++)
			cli_json_print_sym_module(out, diff_symbol_module(d, i), i == 0);
		fprintf(out, "%s]", nm ? "\n  " : "");
	}
	fprintf(out, "\n}\n");
	return EXIT_OK;
}

/* Folded stacks ------------------------------------------------------------------------- */

static void folded_name(const char *s)
{
	for (; *s; s++)
		putchar(*s == ';' ? ',' : *s == '\n' ? ' ' : *s);
}

static int folded_stack(void *arg, const struct diff_frame *const *frames, size_t n,
			uint64_t bytes)
{
	(void)arg;
	bool sep = false;
	for (size_t i = 0; i < n; i++) {
		const struct diff_frame *f = frames[i];
		if (f->sym_count) { /* callers first: the inline chain outermost first */
			for (size_t l = f->sym_count; l-- > 0;) {
				const struct sym_frame *s = &f->sym[l];
				if (sep)
					putchar(';');
				sep = true;
				if (s->function)
					folded_name(s->function);
				else
					printf("??");
			}
			continue;
		}
		if (sep)
			putchar(';');
		sep = true;
		if (f->module) {
			const char *base = strrchr(f->module, '/');
			folded_name(base ? base + 1 : f->module);
			printf("+0x%llx", (unsigned long long)f->rel_pc);
		} else {
			printf("0x%llx", (unsigned long long)f->pc);
		}
	}
	printf("%s%llu\n", sep ? " " : "(no frames) ", (unsigned long long)bytes);
	return ferror(stdout) ? EXIT_ERROR : 0;
}

/* HTML page ---------------------------------------------------------------------------
 * The page embeds the document --json prints and the growth of the stacks
 * that grew most, for the flame graph. */

struct flame_arg {
	struct cli_flame *fl;
};

static int flame_stack(void *arg, const struct diff_frame *const *frames, size_t n,
		       uint64_t bytes)
{
	struct cli_flame *fl = ((struct flame_arg *)arg)->fl;
	if (cli_flame_stack(fl, bytes))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct diff_frame *f = frames[i];
		struct cli_resolved r = {f->sym_module, f->sym, f->sym_count};
		if (cli_flame_frame(fl, (uintptr_t)f, f->pc, f->module, f->rel_pc, &r))
			return -1;
	}
	return 0;
}

struct json_arg {
	struct diff *d;
	const struct diff_cli *c;
};

static int page_json(FILE *out, void *arg)
{
	struct json_arg *a = arg;
	return report_json(out, a->d, a->c);
}

static int report_html(struct diff *d, const struct diff_cli *c)
{
	struct cli_outfile o;
	struct leaksnap_error err;
	if (cli_outfile_open(&o, c->html, true))
		return EXIT_ERROR;
	struct flame_arg fa = {cli_flame_new()};
	uint64_t rest = 0;
	size_t nrest = 0;
	int rc = fa.fl ? diff_foreach_top_growing_stack(d, (size_t)c->html_stacks, flame_stack, &fa,
							 &rest, &nrest, &err)
		       : -1;
	if (rc && fa.fl && err.code != LEAKSNAP_OK)
		cli_fail_error(&err);
	else if (rc)
		cli_fail(c->html, "out of memory");
	else {
		struct json_arg ja = {d, c};
		struct cli_html_doc doc = {"diff", "leakdiff report", page_json, &ja, fa.fl,
					   "growth", rest, nrest};
		rc = cli_html_page(o.f, o.path, &doc);
	}
	cli_flame_free(fa.fl);
	return cli_outfile_close(&o, rc == 0);
}

/* Reading ahead -----------------------------------------------------------------------------
 * The main thread opens snapshot 0 while a thread opens snapshot 1; then,
 * while the diff takes in snapshot i, the thread opens snapshot i + 1 (never
 * more than one ahead, so at most two are in memory).  Errors are reported
 * by the main thread when it reaches that snapshot, so the output is the
 * same as reading in order. */

struct reader {
	char **paths;
	size_t n;
	const struct snapshot_open_opts *opts;
	struct snapshot **snaps;
	struct leaksnap_error *errs;
	bool *done;
	size_t consumed; /* snapshots the main thread has taken */
	bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	for (size_t i = 1; i < r->n; i++) {
		pthread_mutex_lock(&r->mu);
		while (!r->stop && i > r->consumed && i > 1)
			pthread_cond_wait(&r->cv, &r->mu);
		bool stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (stop)
			break;
		struct snapshot *s = snapshot_open(r->paths[i], r->opts, &r->errs[i]);
		pthread_mutex_lock(&r->mu);
		r->snaps[i] = s;
		r->done[i] = true;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		if (!s)
			break;
	}
	return NULL;
}

/* Snapshot @i, or NULL with its error in r->errs[i]. */
static struct snapshot *reader_take(struct reader *r, size_t i)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done[i])
		pthread_cond_wait(&r->cv, &r->mu);
	struct snapshot *s = r->snaps[i];
	r->snaps[i] = NULL;
	r->consumed = i + 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return s;
}

/* Main ------------------------------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct diff_cli *c, int *first_file)
{
	enum { O_BY = 256, O_SKIP, O_ZYG, O_TOP, O_MIN, O_SUPP, O_NOSYM, O_NOADJ, O_FOLDED, O_FAIL,
	       O_HTML, O_HTML_STACKS };
	static const struct option longopts[] = {
		{"pointer-size", required_argument, NULL, 'P'},
		{"frames", required_argument, NULL, 'F'},
		{"count-is-frames", no_argument, NULL, 'C'},
		{"by", required_argument, NULL, O_BY},
		{"skip", required_argument, NULL, O_SKIP},
		{"include-zygote", no_argument, NULL, O_ZYG},
		{"top", required_argument, NULL, O_TOP},
		{"min-bytes", required_argument, NULL, O_MIN},
		{"suppressions", required_argument, NULL, O_SUPP},
		{"symbols", required_argument, NULL, 's'},
		{"no-symbols", no_argument, NULL, O_NOSYM},
		{"no-adjust", no_argument, NULL, O_NOADJ},
		{"json", no_argument, NULL, 'j'},
		{"folded", no_argument, NULL, O_FOLDED},
		{"fail-on", required_argument, NULL, O_FAIL},
		{"html", required_argument, NULL, O_HTML},
		{"html-stacks", required_argument, NULL, O_HTML_STACKS},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	static const char *const bys[] = {"stack", "site", "function", "module"};
	const char *cmd = "diff";
	int opt, r;
	optind = 0;
	opterr = 0;
	c->top = 20;
	c->html_stacks = CLI_HTML_STACKS;
	while ((opt = getopt_long(argc, argv, ":js:h", longopts, NULL)) != -1) {
		if ((r = cli_input_option(cmd, opt, optarg, &c->in)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		switch (opt) {
		case O_BY: {
			size_t k = 0;
			while (k < 4 && strcmp(optarg, bys[k]) != 0)
				k++;
			if (k == 4)
				return cli_usage_error(cmd, "--by must be stack, site, function or module, not '%s'",
						       optarg);
			c->o.by = (enum diff_by)k;
			break;
		}
		case O_SKIP:
			if (c->nskip == MAX_SKIP)
				return cli_usage_error(cmd, "more than %d --skip patterns", MAX_SKIP);
			if (!*optarg)
				return cli_usage_error(cmd, "--skip needs a pattern");
			c->skip[c->nskip++] = optarg;
			break;
		case O_ZYG: c->o.zygote = DIFF_ZYGOTE_INCLUDE; break;
		case O_TOP:
			if (!cli_parse_uint(optarg, 0, SIZE_MAX / 2, &c->top))
				return cli_usage_error(cmd, "--top needs a number");
			break;
		case O_MIN:
			if (!parse_bytes(optarg, &c->o.min_bytes))
				return cli_usage_error(cmd, "--min-bytes needs a byte count (e.g. 4096 or 4K), not '%s'",
						       optarg);
			break;
		case O_SUPP:
			if (c->supp_path)
				return cli_usage_error(cmd, "--suppressions given twice");
			c->supp_path = optarg;
			break;
		case 's':
			if (c->ndirs == MAX_SYMBOL_DIRS)
				return cli_usage_error(cmd, "more than %d --symbols directories",
						       MAX_SYMBOL_DIRS);
			c->dirs[c->ndirs++] = optarg;
			break;
		case O_NOSYM: c->no_symbols = true; break;
		case O_NOADJ: c->no_adjust = true; break;
		case 'j': c->json = true; break;
		case O_FOLDED: c->folded = true; break;
		case O_FAIL:
			if (!parse_bytes(optarg, &c->fail_on))
				return cli_usage_error(cmd, "--fail-on needs a byte count (e.g. 1048576 or 1M), not '%s'",
						       optarg);
			c->has_fail_on = true;
			break;
		case O_HTML:
			if (c->html)
				return cli_usage_error(cmd, "--html given twice");
			c->html = optarg;
			break;
		case O_HTML_STACKS:
			if (!cli_parse_uint(optarg, 0, 1000000, &c->html_stacks))
				return cli_usage_error(cmd, "--html-stacks needs a number from 0 to 1000000");
			break;
		case 'V':
			return cli_print_version("leakdiff") == EXIT_OK ? -1 : EXIT_ERROR;
		case 'h':
			fputs(diff_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? -1 : EXIT_ERROR;
		default:
			return cli_bad_option(cmd, argv, opt == ':' ? ':' : optopt);
		}
	}
	if (c->json && c->folded)
		return cli_usage_error(cmd, "--json and --folded exclude each other");
	if (c->html && strcmp(c->html, "-") == 0 && (c->json || c->folded))
		return cli_usage_error(cmd, "--html - writes the page on standard output: not with %s",
				       c->json ? "--json" : "--folded");
	if (c->no_symbols && c->ndirs)
		return cli_usage_error(cmd, "--symbols and --no-symbols exclude each other");
	if (argc - optind < 2)
		return cli_usage_error(cmd, argc - optind ? "expected at least two snapshots, got one"
							 : "missing snapshots: expected OLD.dump NEW.dump");
	if (argc - optind > DIFF_MAX_SNAPSHOTS)
		return cli_usage_error(cmd, "at most %d snapshots, got %d", DIFF_MAX_SNAPSHOTS,
				       argc - optind);
	if (cli_input_check(cmd, &c->in))
		return EXIT_ERROR;
	for (size_t i = 0; i < c->ndirs; i++) {
		struct stat st;
		if (stat(c->dirs[i], &st) != 0)
			return cli_fail(c->dirs[i], "%s", strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cli_fail(c->dirs[i], "not a directory");
	}
	if (c->html) {
		char *other[] = {(char *)(uintptr_t)c->supp_path};
		if (cli_outfile_not_input(c->html, argv + optind, (size_t)(argc - optind)) ||
		    cli_outfile_not_input(c->html, other, 1))
			return EXIT_ERROR;
	}
	*first_file = optind;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cli c;
	memset(&c, 0, sizeof(c));
	int first = 0, rc = parse_args(argc, argv, &c, &first);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct diff_suppressions *supp = NULL;
	struct symbolizer *sym = NULL;
	struct diff *d = NULL;
	int status = EXIT_ERROR;
	if (c.supp_path) {
		char *text;
		size_t len;
		if (cli_read_file(c.supp_path, DIFF_SUPPRESSIONS_MAX, "a suppressions file", &text, &len))
			goto out;
		supp = diff_suppressions_parse(text, len, c.supp_path, &err);
		free(text);
		if (!supp) {
			cli_fail_error(&err);
			goto out;
		}
	}
	if (!c.no_symbols) {
		struct sym_options so = {.demangle = true, .symbol_dirs = c.dirs,
					 .symbol_dir_count = c.ndirs};
		sym = symbolizer_new(&so, &err);
		if (!sym) {
			cli_fail_error(&err);
			goto out;
		}
	}
	c.o.skip = c.skip;
	c.o.skip_count = c.nskip;
	c.o.suppressions = supp;
	c.o.sym = sym;
	c.o.adjust = !c.no_adjust;
	c.o.jobs = cli_sym_jobs();
	d = diff_new(&c.o, (size_t)(argc - first), &err);
	if (!d) {
		cli_fail_error(&err);
		goto out;
	}
	/* Each snapshot is added, then closed; the next one is read meanwhile. */
	size_t n = (size_t)(argc - first);
	c.in.open.keep_duplicates = true; /* the diff merges equal stacks itself */
	struct reader rd = {.paths = argv + first, .n = n, .opts = &c.in.open,
			    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	rd.snaps = calloc(n, sizeof(*rd.snaps));
	rd.errs = calloc(n, sizeof(*rd.errs));
	rd.done = calloc(n, sizeof(*rd.done));
	pthread_t tid;
	bool threaded = false;
	if (!rd.snaps || !rd.errs || !rd.done) {
		cli_fail("diff", "out of memory");
		goto out_reader;
	}
	threaded = pthread_create(&tid, NULL, reader_main, &rd) == 0;
	for (size_t i = 0; i < n; i++) {
		struct snapshot *s;
		if (threaded && i > 0) {
			s = reader_take(&rd, i);
		} else {
			s = snapshot_open(rd.paths[i], rd.opts, &rd.errs[i]);
		}
		if (!s) {
			cli_fail_error(&rd.errs[i]);
			goto out_reader;
		}
		struct maps *maps = NULL;
		if (cli_snapshot_maps(s, NULL, &maps)) {
			snapshot_close(s);
			goto out_reader;
		}
		cli_print_warnings(s);
		if (!maps)
			cli_warn(rd.paths[i], "no maps: its frames are compared as raw addresses");
		rc = diff_add_snapshot(d, s, maps, &err);
		maps_free(maps);
		snapshot_close(s);
		if (rc) {
			cli_fail_error(&err);
			goto out_reader;
		}
	}
	status = EXIT_OK;
out_reader:
	if (threaded) {
		pthread_mutex_lock(&rd.mu);
		rd.stop = true;
		pthread_cond_broadcast(&rd.cv);
		pthread_mutex_unlock(&rd.mu);
		pthread_join(tid, NULL);
	}
	for (size_t i = 0; rd.snaps && i < n; i++)
		snapshot_close(rd.snaps[i]);
	free(rd.snaps);
	free(rd.errs);
	free(rd.done);
	if (status != EXIT_OK)
		goto out;
	status = EXIT_ERROR;
	if (diff_rank(d, &err)) {
		cli_fail_error(&err);
		goto out;
	}
	if (c.folded) {
		rc = diff_foreach_growing_stack(d, folded_stack, NULL, &err);
		if (rc == -1)
			cli_fail_error(&err);
		if (rc)
			goto out;
		rc = EXIT_OK;
	} else if (!c.html || strcmp(c.html, "-") != 0) {
		rc = c.json ? report_json(stdout, d, &c) : report_text(d, &c);
		if (rc)
			goto out;
	}
	if (c.html && report_html(d, &c))
		goto out;
	/* problems with symbol files: reported, the report still printed */
	status = EXIT_OK;
	for (size_t i = 0; i < diff_warning_count(d); i++) {
		cli_fail(NULL, "%s", diff_warning(d, i));
		status = EXIT_ERROR;
	}
	if (status == EXIT_OK && c.has_fail_on && diff_suspects_bytes(d) > 0 &&
	    (uint64_t)diff_suspects_bytes(d) >= c.fail_on) {
		fflush(stdout);
		fprintf(stderr, "leaksnap: suspects grew by %lld bytes, at or above --fail-on %llu\n",
			(long long)diff_suspects_bytes(d), (unsigned long long)c.fail_on);
		status = EXIT_LEAKS;
	}
	status = cli_finish_stdout(status);
out:
	diff_free(d);
	symbolizer_free(sym);
	diff_suppressions_free(supp);
	return status;
}
