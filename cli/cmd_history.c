/* leaksnap history: the runs of a store (store/), one row per build (or
 * per value of another label, or per run), oldest first, with their
 * suspects matched across builds by function chain. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "history.h"
#include "store.h"

static const char history_usage[] =
	"Usage: leaksnap history --db DB [--by build|run|LABEL] [--where KEY=VALUE]...\n"
	"                        [--last N] [--series KEY] [--json | --html FILE]\n"
	"                        [--fail-on-regression BYTES]\n\n"
	"The runs kept by 'leaksnap store' in DB, one row per build (the runs with one\n"
	"value of the label build), oldest first: the bytes live at each run's last\n"
	"snapshot, the growth from its first snapshot to its last, the definite\n"
	"(unreachable) bytes at the last, all summed over the row's runs; then its\n"
	"suspects: the stacks that grew most, matched across builds by their function\n"
	"chain (the first three functions outside allocation wrappers, innermost\n"
	"first), each said 'new' when the row before did not have it, and the row\n"
	"before's suspects that are gone.  Runs recorded with sampling (LEAKSNAP_SAMPLE)\n"
	"count as their estimates, marked '\xe2\x89\x88' (or '~'), the interval said (and a\n"
	"row of several intervals said so); --fail-on-regression gates on them.\n\n"
	"Options:\n"
	"  --db DB              the store: a SQLite file or\n"
	"                       clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE\n"
	"  --by KEY             a row per value of label KEY (default: build), or\n"
	"                       'run': a row per run\n"
	"  --where KEY=VALUE    only runs with this label (repeatable: all of them)\n"
	"  --last N             only the newest N rows\n"
	"  --series KEY         split each row by the values of label KEY: --json adds\n"
	"                       each row's \"points\", the page draws one line per value\n"
	"                       (default with --html: test)\n"
	"  -j, --json           JSON output\n"
	"  --html FILE          also write one self-contained HTML page: memory, growth\n"
	"                       or definite bytes across the rows, one line per --series\n"
	"                       value; a click on a row shows its suspects' whole\n"
	"                       stacks ('-' is standard output, instead of the table);\n"
	"                       an existing FILE is replaced only if it is a page\n"
	"                       leaksnap wrote\n"
	"  --fail-on-regression BYTES\n"
	"                       exit 1 when the newest row's growth, or its definite\n"
	"                       bytes, exceed the row before's by more than BYTES (a\n"
	"                       number, optionally with K, M or G: powers of 1024);\n"
	"                       one line on standard error for each; the rows are\n"
	"                       sums over their runs (gate one test with --where);\n"
	"                       the newest row is compared with the row before it\n"
	"                       even when --last leaves that one out; the first row\n"
	"                       of all has no build before it: not a regression;\n"
	"                       no run at all is an error (exit 2)\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success (and, with --fail-on-regression, no regression);\n"
	"1 the newest row regressed by more than --fail-on-regression BYTES; 2 any\n"
	"error (a DB that is not a store or has a newer schema).\n";

static int parse_args(int argc, char **argv, struct history_cli *o)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'D'},
		{"by", required_argument, NULL, 'b'},
		{"where", required_argument, NULL, 'w'},
		{"last", required_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"series", required_argument, NULL, 'S'},
		{"html", required_argument, NULL, 'H'},
		{"fail-on-regression", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hj", longopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			if (o->db)
				return cli_usage_error("history", "--db given twice");
			o->db = optarg;
			break;
		case 'b':
			if (!*optarg)
				return cli_usage_error("history", "--by needs build, run or a label's KEY");
			o->by = optarg;
			break;
		case 'w':
			if (cli_labels_add(&o->where, "history", "--where", optarg))
				return -1;
			break;
		case 'n':
			if (!cli_parse_uint(optarg, 1, SIZE_MAX, &o->last))
				return cli_usage_error("history", "--last needs a number from 1");
			break;
		case 'j': o->json = true; break;
		case 'S':
			if (!*optarg)
				return cli_usage_error("history", "--series needs a label's KEY");
			o->series = optarg;
			break;
		case 'H':
			if (o->html)
				return cli_usage_error("history", "--html given twice");
			o->html = optarg;
			break;
		case 'R':
			if (!cli_parse_bytes(optarg, &o->fail_on))
				return cli_usage_error("history",
						       "--fail-on-regression needs a byte count (e.g. "
						       "1048576 or 1M), not '%s'", optarg);
			o->has_fail_on = true;
			break;
		case 'h':
			fputs(history_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("history", argv, c == ':' ? ':' : optopt);
		}
	}
	if (!o->db)
		return cli_usage_error("history", "missing --db DB");
	if (optind != argc)
		return cli_usage_error("history", "unexpected operand '%s'", argv[optind]);
	if (o->html && strcmp(o->html, "-") == 0 && o->json)
		return cli_usage_error("history",
				       "--html - writes the page on standard output: not with --json");
	if (o->html && !o->series)
		o->series = "test";
	/* (before any work: a file of the user's is never replaced) */
	char *inputs[1] = {(char *)(uintptr_t)o->db};
	if (o->html && (cli_outfile_check(o->html, CLI_REPLACE_OWN_HTML) ||
			cli_outfile_not_input(o->html, inputs, 1)))
		return -1;
	return 0;
}

/* @b - @a, saturated. */
static int64_t sub_sat(int64_t b, int64_t a)
{
	int64_t d;
	if (!__builtin_sub_overflow(b, a, &d))
		return d;
	return b > a ? INT64_MAX : INT64_MIN;
}

/* --fail-on-regression: whether the newest row's growth or definite bytes
 * exceed the row before's by more than the limit, each said in one line
 * on standard error.  A single row has no row before: no regression. */
static bool regressed(const struct leaksnap_store_history *h, const struct history_cli *o)
{
	size_t n = leaksnap_store_history_count(h);
	if (!o->has_fail_on || n == 0)
		return false;
	const struct leaksnap_store_history_row *a = n >= 2 ? leaksnap_store_history_row(h, n - 2)
							    : leaksnap_store_history_before(h),
						*b = leaksnap_store_history_row(h, n - 1);
	if (!a)
		return false;
	const char *ka = *a->key ? a->key : "(none)", *kb = *b->key ? b->key : "(none)";
	/* a sampled row's figures are estimates: gated on as such, marked */
	const char *ea = history_sampled(a) ? cli_approx() : "",
		   *eb = history_sampled(b) ? cli_approx() : "";
	bool bad = false;
	int64_t dg = sub_sat(b->growth, a->growth);
	int64_t dd = sub_sat(b->definite > INT64_MAX ? INT64_MAX : (int64_t)b->definite,
			     a->definite > INT64_MAX ? INT64_MAX : (int64_t)a->definite);
	if (dg > 0 && (uint64_t)dg > o->fail_on) {
		cli_fail(NULL, "%s %s: growth %s%+lld bytes, %s%lld more than %s %s's (%s%+lld), "
			 "above --fail-on-regression %llu", o->by, kb, eb, (long long)b->growth,
			 *ea || *eb ? cli_approx() : "", (long long)dg, o->by, ka, ea,
			 (long long)a->growth, (unsigned long long)o->fail_on);
		bad = true;
	}
	if (dd > 0 && (uint64_t)dd > o->fail_on) {
		cli_fail(NULL, "%s %s: definite %s%llu bytes, %s%lld more than %s %s's (%s%llu), "
			 "above --fail-on-regression %llu", o->by, kb, eb,
			 (unsigned long long)b->definite, *ea || *eb ? cli_approx() : "",
			 (long long)dd, o->by, ka, ea, (unsigned long long)a->definite,
			 (unsigned long long)o->fail_on);
		bad = true;
	}
	return bad;
}

int cmd_history(int argc, char **argv)
{
	struct history_cli o = {.by = "build"};
	int rc = parse_args(argc, argv, &o), status = EXIT_ERROR;
	struct leaksnap_store *st = NULL;
	struct leaksnap_store_history *h = NULL;
	if (rc) {
		status = rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
		goto out;
	}
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_store_open_opts, so, .no_create = true);
	st = leaksnap_store_open(o.db, &so, &err);
	LEAKSNAP_OPTS(leaksnap_store_history_opts, ho, .by = o.by, .where = o.where.v,
		      .where_count = o.where.n, .last = (size_t)o.last, .series = o.series,
		      .stacks = o.html != NULL);
	if (!st || !(h = leaksnap_store_history_new(st, &ho, &err))) {
		cli_fail_error(&err);
		goto out;
	}
	if (o.has_fail_on && leaksnap_store_history_count(h) == 0) {
		/* (a gate that checks nothing must not pass: a --where misspelt) */
		cli_fail(o.db, "no run%s to compare for --fail-on-regression",
			 o.where.n ? " matches the --where labels" : "");
		goto out;
	}
	if (o.html && strcmp(o.html, "-") == 0)
		; /* the page instead */
	else if (o.json ? history_json(stdout, h, &o, false) : (history_text(h, &o), 0))
		goto out;
	if (o.html && history_html(h, &o))
		goto out;
	status = cli_finish_stdout(EXIT_OK);
	if (status == EXIT_OK && regressed(h, &o))
		status = EXIT_LEAKS;
out:
	leaksnap_store_history_free(h);
	leaksnap_store_close(st);
	cli_labels_release(&o.where);
	return status;
}
