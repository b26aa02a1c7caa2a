/* leaksnap diff: the text report (snapshots, suspects with the definite leaks
 * first, caches, one-off leaks). */
#include <stdio.h>
#include <string.h>

#include <leaksnap/export.h>

#include "diff_cli.h"

static void print_series(const char *label, const uint64_t *v, size_t n)
{
	printf("    %s", label);
	for (size_t i = 0; i < n; i++)
		printf("%s%llu", i ? " -> " : " ", (unsigned long long)v[i]);
	printf("\n");
}

/* A group's unreachable series: "?" for a snapshot that does not say. */
static void print_unreachable(struct leaksnap_diff *d, const char *label, const uint64_t *v)
{
	size_t n = leaksnap_diff_snapshot_count(d);
	printf("    %s", label);
	for (size_t i = 0; i < n; i++) {
		printf("%s", i ? " -> " : " ");
		if (leaksnap_diff_snapshot(d, i)->has_reachability)
			printf("%llu", (unsigned long long)v[i]);
		else
			printf("?");
	}
	printf("\n");
}

/* @v right-aligned in @width columns after the mark @e ("" or the mark of
 * an estimate, one column wide whatever its bytes); @sign: with its sign. */
static void print_num(int width, const char *e, long long v, bool sign)
{
	char buf[32];
	int k = snprintf(buf, sizeof(buf), sign ? "%+lld" : "%lld", v);
	for (int pad = width - k - (*e ? 1 : 0); pad > 0; pad--)
		putchar(' ');
	printf("%s%s", e, buf);
}

static void print_unum(int width, const char *e, uint64_t v)
{
	char buf[32];
	int k = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	for (int pad = width - k - (*e ? 1 : 0); pad > 0; pad--)
		putchar(' ');
	printf("%s%s", e, buf);
}

/* Which list a group is printed in. */
enum list { LIST_SUSPECTS, LIST_STOPPED, LIST_UNREACHABLE };

/* @site_level: the inline level of this frame that is the group's site
 * (0 marks the frame's own line), SIZE_MAX if the site is another frame. */
static void print_diff_frame(const struct leaksnap_diff_frame *f, unsigned ptr, size_t idx,
			     size_t site_level)
{
	printf("  %s #%02zu 0x%0*llx", site_level == 0 ? ">" : " ", idx, (int)ptr * 2,
	       (unsigned long long)f->pc);
	if (!f->module) {
		/* unmapped, or in an anonymous mapping (JIT code): a raw PC */
		printf("  (not in a file)\n");
		return;
	}
	printf("  %s+0x%llx", f->module, (unsigned long long)f->rel_pc);
	if (!f->sym_count &&
	    (!f->sym_module || (!f->sym_module->file &&
				f->sym_module->status != LEAKSNAP_SYM_BUILD_ID_MISMATCH))) {
		printf("\n"); /* no symbol file: the summary line says so once */
		return;
	}
	struct leaksnap_resolved r = {f->sym_module, f->sym, f->sym_count};
	cli_print_symbols_marked(&r, site_level);
}

static const char *trend_text(const struct leaksnap_diff_group *g, size_t n, char *buf, size_t size)
{
	if (g->trend == LEAKSNAP_DIFF_TREND_GREW)
		return "grew";
	if (g->trend == LEAKSNAP_DIFF_TREND_STEADY)
		return "grew in every interval";
	int k = snprintf(buf, size, "grew in %u of %zu intervals", g->grew, n - 1);
	if (g->shrank && k > 0 && (size_t)k < size)
		k += snprintf(buf + k, size - (size_t)k, ", shrank in %u", g->shrank);
	if (g->trend == LEAKSNAP_DIFF_TREND_STOPPED && k > 0 && (size_t)k < size)
		snprintf(buf + k, size - (size_t)k, ", not in the last");
	return buf;
}

static int print_group(struct leaksnap_diff *d, const struct leaksnap_diff_group *g, size_t rank,
		       unsigned ptr, enum list list)
{
	struct leaksnap_error err;
	if (!g) {
		cli_fail("diff", "out of memory");
		return -1;
	}
	if (leaksnap_diff_symbolize_group(d, g, &err) != 0) {
		cli_fail_error(&err);
		return -1;
	}
	size_t n = leaksnap_diff_snapshot_count(d);
	char tbuf[128];
	/* a sampled diff's figures are estimates, marked */
	const char *e = leaksnap_diff_sample_interval(d) ? cli_approx() : "";
	const char *allocs = g->count_delta == 1 || g->count_delta == -1 ? "allocation"
									    : "allocations";
	if (list == LIST_STOPPED)
		printf("  %s%+lld bytes, %s%+lld %s, %s\n", e, (long long)g->bytes_delta, e,
		       (long long)g->count_delta, allocs, trend_text(g, n, tbuf, sizeof(tbuf)));
	else if (list == LIST_UNREACHABLE)
		printf("  %s%llu bytes unreachable in %s%llu allocation%s, %s%+lld bytes since the "
		       "first snapshot\n",
		       e, (unsigned long long)g->unreachable_bytes[n - 1], e,
		       (unsigned long long)g->unreachable_counts[n - 1],
		       g->unreachable_counts[n - 1] == 1 ? "" : "s", e, (long long)g->bytes_delta);
	else
		printf("#%zu  %s%s%+lld bytes, %s%+lld %s%s  score %s%.0f  (%s)\n", rank,
		       g->definite ? "DEFINITE LEAK  " : "", e, (long long)g->bytes_delta, e,
		       (long long)g->count_delta, allocs, g->is_new ? ", new" : "", e, g->score,
		       trend_text(g, n, tbuf, sizeof(tbuf)));
	if (g->sampled_bytes) {
		print_series("bytes (estimated):", g->bytes, n);
		print_series("count (estimated):", g->counts, n);
		print_series("sampled:", g->sampled_counts, n);
	} else {
		print_series("bytes:", g->bytes, n);
		print_series("count:", g->counts, n);
	}
	if (g->unreachable_bytes) {
		print_unreachable(d, *e ? "unreachable bytes (estimated):" : "unreachable bytes:",
				  g->unreachable_bytes);
		print_unreachable(d, *e ? "unreachable count (estimated):" : "unreachable count:",
				  g->unreachable_counts);
		if (g->sampled_unreachable_counts)
			print_unreachable(d, "unreachable sampled:", g->sampled_unreachable_counts);
	}
	if (g->module)
		printf("    module: %s\n", g->module);
	if (g->stack_count > 1)
		printf("    the one of its %zu stacks that grew most:\n", g->stack_count);
	if (g->frame_count == 0)
		printf("    (no frames)\n");
	for (size_t i = 0; i < g->frame_count; i++)
		print_diff_frame(g->frames[i], ptr, i, i == g->site ? g->site_level : SIZE_MAX);
	if (leaksnap_export_diff_stack_cut(d, g->frame_count))
		cli_print_cut(g->frame_count);
	return 0;
}

/* The snapshots compared, one line each, and the growth from the first to
 * the last. */
static void print_snapshots(struct leaksnap_diff *d, const struct diff_cli *c, bool reach)
{
	size_t n = leaksnap_diff_snapshot_count(d);
	const struct leaksnap_diff_snapshot *first = leaksnap_diff_snapshot(d, 0),
					    *last = leaksnap_diff_snapshot(d, n - 1);
	uint64_t left_out = 0;
	int w = 8;
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i);
		left_out += s->left_out_count;
		if ((int)strlen(s->file) > w)
			w = strlen(s->file) > 60 ? 60 : (int)strlen(s->file);
	}
	printf("%zu snapshots compared, grouped by %s", n, leaksnap_diff_by_name(c->o.by));
	if (left_out)
		printf("; zygote-child allocations left out (--include-zygote)");
	if (leaksnap_diff_sample_interval(d))
		printf("\nsampled every %llu bytes on average: bytes and counts are estimates "
		       "(%s), ranked on\nas such; 'sampled:' counts the blocks sampled",
		       (unsigned long long)leaksnap_diff_sample_interval(d), cli_approx());
	/* a sampled diff's figures are estimates, each marked */
	const char *e = leaksnap_diff_sample_interval(d) ? cli_approx() : "";
	printf("\n\n  #  %-*s %8s %12s %14s", w, "snapshot", "pid", "allocations", "bytes");
	printf(reach ? " %14s\n" : "\n", "unreachable");
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i);
		char pid[32];
		snprintf(pid, sizeof(pid), s->pid >= 0 ? "%lld" : "?", (long long)s->pid);
		printf("%3zu  %-*s %8s ", i + 1, w, s->file, pid);
		print_unum(12, e, s->count);
		printf(" ");
		print_unum(14, e, s->bytes);
		if (s->has_reachability) {
			printf(" ");
			print_unum(14, e, s->unreachable_bytes);
		} else if (reach)
			printf(" %14s", "?");
		if (s->left_out_count)
			printf("  (%s%llu zygote-child allocation%s, %s%llu bytes left out)", e,
			       (unsigned long long)s->left_out_count,
			       s->left_out_count == 1 ? "" : "s", e,
			       (unsigned long long)s->left_out_bytes);
		printf("\n");
	}
	printf("     %-*s %8s ", w, "growth", "");
	print_num(12, e, (long long)((int64_t)last->count - (int64_t)first->count), true);
	printf(" ");
	print_num(14, e, (long long)((int64_t)last->bytes - (int64_t)first->bytes), true);
	printf("\n");
	if (*e) {
		/* the blocks sampled, beside the estimates above */
		printf("     sampled blocks:");
		for (size_t i = 0; i < n; i++) {
			const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i);
			printf("%s%llu (%llu bytes", i ? " -> " : " ",
			       (unsigned long long)s->sampled_count,
			       (unsigned long long)s->sampled_bytes);
			if (s->has_reachability)
				printf(", %llu unreachable",
				       (unsigned long long)s->sampled_unreachable_count);
			printf(")");
		}
		printf("\n");
	}
}

/* What was found: the suspects (@shown of them listed), the definite and
 * one-off leaks, the caches. */
static void print_findings(struct leaksnap_diff *d, const struct diff_cli *c, bool reach,
			   size_t shown)
{
	const struct leaksnap_diff_snapshot *last = leaksnap_diff_snapshot(
		d, leaksnap_diff_snapshot_count(d) - 1);
	size_t ns = leaksnap_diff_suspect_count(d), nc = leaksnap_diff_stopped_count(d);
	/* a sampled diff's figures are estimates, each marked */
	const char *e = leaksnap_diff_sample_interval(d) ? cli_approx() : "";
	printf("\n");
	if (ns)
		printf("%zu suspect%s grew by %s%lld bytes, %s%+lld allocation%s\n", ns,
		       ns == 1 ? "" : "s", e, (long long)leaksnap_diff_suspects_bytes(d), e,
		       (long long)leaksnap_diff_suspects_count(d),
		       leaksnap_diff_suspects_count(d) == 1 ? "" : "s");
	else if (nc)
		printf("no suspects: nothing still grew in the last interval (%zu group%s grew, "
		       "then stopped)\n",
		       nc, nc == 1 ? "" : "s");
	else
		printf("no suspects: nothing grew%s\n",
		       c->o.min_bytes ? " by --min-bytes or more" : "");
	if (shown < ns)
		printf("the best %zu %s shown (--top)\n", shown, shown == 1 ? "is" : "are");
	size_t nu = leaksnap_diff_unreachable_count(d);
	if (last->has_reachability) {
		size_t nd = leaksnap_diff_definite_count(d);
		printf("last snapshot: %s%llu unreachable bytes in %s%llu allocation%s", e,
		       (unsigned long long)last->unreachable_bytes, e,
		       (unsigned long long)last->unreachable_count,
		       last->unreachable_count == 1 ? "" : "s");
		if (*e) /* the sampled blocks the estimates stand on */
			printf(" (%llu sampled, %llu bytes)",
			       (unsigned long long)last->sampled_unreachable_count,
			       (unsigned long long)last->sampled_unreachable_bytes);
		printf("\n");
		if (nd)
			printf("%zu definite leak%s (unreachable blocks, ranked first)\n", nd,
			       nd == 1 ? "" : "s");
		if (nu)
			printf("%zu one-off leak%s: unreachable, did not grow%s (listed apart)\n",
			       nu, nu == 1 ? "" : "s",
			       c->o.min_bytes ? " by --min-bytes or more" : "");
	} else if (reach) {
		printf("the last snapshot does not say which blocks are unreachable: no definite "
		       "leaks\n");
	}
	if (nc)
		printf("%zu %s, then stopped: %s, not %s (listed last)\n", nc,
		       nc == 1 ? "group grew" : "groups grew", nc == 1 ? "a cache" : "caches",
		       nc == 1 ? "a leak" : "leaks");
}

/* Symbolize the groups to be listed (@shown suspects), then say which
 * modules could not be: -1 after saying why. */
static int print_symbol_files(struct leaksnap_diff *d, struct diff_cli *c, size_t shown)
{
	size_t nc = leaksnap_diff_stopped_count(d), nu = leaksnap_diff_unreachable_count(d);
	size_t nm = 0, missing = 0, mismatch = 0, nolayout = 0, wrong_class = 0;
	int rc = 0;
	for (size_t i = 0; i < shown && rc == 0; i++)
		rc = leaksnap_diff_symbolize_group(d, leaksnap_diff_suspect(d, i), &c->err);
	for (size_t i = 0; i < nc && (!c->top || i < c->top) && rc == 0; i++)
		rc = leaksnap_diff_symbolize_group(d, leaksnap_diff_stopped(d, i), &c->err);
	for (size_t i = 0; i < nu && (!c->top || i < c->top) && rc == 0; i++)
		rc = leaksnap_diff_symbolize_group(d, leaksnap_diff_unreachable(d, i), &c->err);
	if (rc) {
		cli_fail_error(&c->err);
		return -1;
	}
	nm = leaksnap_diff_symbol_module_count(d);
	for (size_t i = 0; i < nm; i++) {
		const struct leaksnap_sym_module *m = leaksnap_diff_symbol_module(d, i);
		missing += !m->file && m->status != LEAKSNAP_SYM_BUILD_ID_MISMATCH;
		mismatch += m->status == LEAKSNAP_SYM_BUILD_ID_MISMATCH && !m->wrong_class;
		wrong_class += m->wrong_class != 0;
		nolayout += m->file && m->layout == LEAKSNAP_SYM_LAYOUT_NONE;
	}
	if (missing)
		printf("no symbol file for %zu of %zu modules: their frames are module+offset "
		       "(--symbols DIR)\n", missing, nm);
	if (mismatch)
		printf("%zu module%s found only with another build ID: not symbolized\n",
		       mismatch, mismatch == 1 ? "" : "s");
	if (wrong_class)
		printf("%zu module%s found only as ELF files of the other class (32/64-bit): "
		       "not symbolized\n", wrong_class, wrong_class == 1 ? "" : "s");
	if (nolayout)
		printf("%zu module%s found only as a debug-only file that fits no mapping: "
		       "not symbolized\n", nolayout, nolayout == 1 ? "" : "s");
	return 0;
}

/* The groups: the @shown best suspects, the caches, the one-off leaks.
 * -1 after saying why. */
static int print_groups(struct leaksnap_diff *d, const struct diff_cli *c, size_t shown)
{
	unsigned ptr = leaksnap_diff_snapshot(d, 0)->pointer_size;
	size_t nc = leaksnap_diff_stopped_count(d), nu = leaksnap_diff_unreachable_count(d);
	for (size_t i = 0; i < shown; i++) {
		printf("\n");
		if (print_group(d, leaksnap_diff_suspect(d, i), i + 1, ptr, LIST_SUSPECTS))
			return -1;
	}
	if (nc) {
		printf("\ngrew, then stopped (caches, not leaks):\n");
		for (size_t i = 0; i < nc && (!c->top || i < c->top); i++)
			if (print_group(d, leaksnap_diff_stopped(d, i), 0, ptr, LIST_STOPPED))
				return -1;
	}
	if (nu) {
		printf("\nunreachable, did not grow%s (one-off leaks):\n",
		       c->o.min_bytes ? " by --min-bytes or more" : "");
		for (size_t i = 0; i < nu && (!c->top || i < c->top); i++)
			if (print_group(d, leaksnap_diff_unreachable(d, i), 0, ptr,
					LIST_UNREACHABLE))
				return -1;
	}
	return 0;
}

int cli_diff_text(struct leaksnap_diff *d, struct diff_cli *c)
{
	size_t ns = leaksnap_diff_suspect_count(d);
	size_t shown = c->top && c->top < ns ? (size_t)c->top : ns;
	bool reach = false; /* any snapshot says which blocks are unreachable */
	for (size_t i = 0; i < leaksnap_diff_snapshot_count(d); i++)
		reach |= leaksnap_diff_snapshot(d, i)->has_reachability;
	print_snapshots(d, c, reach);
	print_findings(d, c, reach, shown);
	if (c->o.resolver && print_symbol_files(d, c, shown))
		return -1;
	if (c->o.suppressions && leaksnap_diff_suppressed_records(d))
		printf("%llu stack%s suppressed by %s\n",
		       (unsigned long long)leaksnap_diff_suppressed_records(d),
		       leaksnap_diff_suppressed_records(d) == 1 ? "" : "s", c->supp_path);
	return print_groups(d, c, shown);
}

bool cli_diff_unreachable_gate(struct leaksnap_diff *d, const struct diff_cli *c)
{
	const struct leaksnap_diff_snapshot *last = leaksnap_diff_snapshot(
		d, leaksnap_diff_snapshot_count(d) - 1);
	if (!c->has_fail_unreachable || !last->has_reachability || last->unreachable_bytes == 0 ||
	    last->unreachable_bytes < c->fail_unreachable)
		return false;
	fflush(stdout);
	/* sampled snapshots: the gate is on the estimate, and says so */
	fprintf(stderr, "%s: %s%llu unreachable bytes in the last snapshot%s, at or above "
			"--fail-on-unreachable %llu\n",
		cli_program_name, leaksnap_diff_sample_interval(d) ? "an estimated " : "",
		(unsigned long long)last->unreachable_bytes,
		leaksnap_diff_sample_interval(d) ? " (sampled)" : "",
		(unsigned long long)c->fail_unreachable);
	return true;
}
