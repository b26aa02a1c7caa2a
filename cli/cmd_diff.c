/* leaksnap diff (also installed as leakdiff): compare two or more snapshots
 * of one program, rank what grew, and gate CI on it.  The comparison is
 * diff/'s; this file reads the inputs and hands the ranked diff to its
 * renderers: the text report (diff_text.c), the JSON one (diff_json.c),
 * folded stacks and pprof (export/), the HTML page (report/). */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/diff.h>
#include <leaksnap/export.h>

#include "cli.h"
#include "diff_cli.h"
#include "diff_store.h"
#include "pprof.h"
#include "report.h"

static const char diff_usage[] =
	"Usage: leakdiff [OPTIONS] OLD.dump NEW.dump [MORE.dump...]\n"
	"       leaksnap diff [OPTIONS] OLD.dump NEW.dump [MORE.dump...]\n"
	"       leakdiff [OPTIONS] --db DB (--run ID | --where KEY=VALUE...)\n\n"
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
	"counts toward --fail-on. An exit or crash dump given last is taken when the\n"
	"program stopped: the interval before it counts as the last one too.\n\n"
	"Snapshots of one run (the same pid, program and process start) are compared\n"
	"in capture order, by their time and dump number, whatever order they are\n"
	"given in (a shell glob lists m.1.10.dump before m.1.2.dump), and a note says\n"
	"so; snapshots of other runs keep the order given.\n\n"
	"With --db, the snapshots are those of a run kept by 'leaksnap store' in DB,\n"
	"compared as their dump files would be, their frames named as they were\n"
	"symbolized when stored (the PCs shown are made up: the store keeps each\n"
	"frame's module and offset).\n\n"
	"Frames are symbolized when their files are found (--symbols trees, or the\n"
	"paths themselves on this host, build IDs checked) and shown as\n"
	"module+0xOFFSET otherwise.\n\n"
	"Options:\n"
	"  --db DB              compare the snapshots of a run of this store (a SQLite\n"
	"                       file 'leaksnap store' wrote) instead of dump files\n"
	"  --run ID             with --db: the run with this id (16 hex digits, as\n"
	"                       'leaksnap history --by run' prints it)\n"
	"  --where KEY=VALUE    with --db: the newest run with this label (repeatable:\n"
	"                       all of them; several runs: a warning names the one)\n"
	"  --by KEY             group records by: stack (default, the whole stack),\n"
	"                       site (the first frame outside the allocation wrappers:\n"
	"                       malloc family, operator new, std::, libc, libc++,\n"
	"                       libstdc++), function (the function names from the site\n"
	"                       out; matches across builds), module (the site's module)\n"
	"  --skip PATTERN       also count frames whose function or module matches\n"
	"                       PATTERN as allocation wrappers (repeatable)\n"
	"  --keep-order         compare the snapshots of one run in the order given,\n"
	"                       not in capture order\n"
	"  --include-zygote     compare zygote-child allocations too (by default they\n"
	"                       are left out of Android snapshots, kept for Linux)\n"
	"  --top N              print the N best suspects (default 20, 0 = all)\n"
	"  --min-bytes BYTES    suspects must have grown by at least BYTES\n"
	"  --suppressions FILE  leave out records with a frame matching a 'leak:PATTERN'\n"
	"                       line of FILE (function, source file or module; '*' is\n"
	"                       a wildcard, '^' and '$' anchor; a line starting with\n"
	"                       '#' is a comment)\n"
	"  -s, --symbols DIR    look for symbol files under DIR (repeatable; as in\n"
	"                       'leaksnap symbolize')\n"
	"  --no-symbols         do not symbolize: frames are module+0xOFFSET\n"
	"  --no-adjust          look frames up at the captured address, not pc - 1\n"
	CLI_DEBUGINFOD_HELP
	"  --pointer-size N     raw buffers: 4 or 8\n"
	"  --frames N           raw buffers: frames per record (1..256)\n"
	"  --count-is-frames    the count field holds the frame count (Android 7)\n"
	"  -j, --json           JSON output (last, \"warnings\": every warning said)\n"
	"  --folded             the suspects' growth as folded stacks, outermost frame\n"
	"                       first ('frame;frame;frame BYTES'), for flame graphs\n"
	"  --html FILE          also write the report as one self-contained HTML page\n"
	"                       (memory curve, growth flame graph, suspects; '-' is\n"
	"                       standard output, instead of the text report); an\n"
	"                       existing FILE is replaced only if it is a report\n"
	"                       leaksnap wrote\n"
	"  --html-stacks N      the flame graph shows the N stacks that grew most\n"
	"                       (default 500); the rest are summed as one\n"
	"  --full-names         print function names whole: by default the text and\n"
	"                       the page show C++ template arguments and parameters\n"
	"                       as an ellipsis, std::map<...>::at(...) ('...' is the\n"
	"                       character U+2026 in a UTF-8 locale); --json and\n"
	"                       --folded always have the whole names\n"
	"  --pprof FILE         also write the suspects' growth as a gzip-compressed\n"
	"                       pprof profile (growth_objects, growth_space; one\n"
	"                       sample per growing stack; '-' is standard output,\n"
	"                       instead of the text report); an existing FILE is\n"
	"                       replaced only if it is a growth profile leaksnap\n"
	"                       wrote\n"
	"  --fail-on BYTES      exit 1 when the suspects grew, by BYTES or more\n"
	"  --fail-on-unreachable BYTES\n"
	"                       exit 1 when the last snapshot holds BYTES or more\n"
	"                       unreachable (after suppressions); exit 2 when it does\n"
	"                       not say which blocks are unreachable\n"
	"  -h, --help           this help\n"
	"  --version            versions of leakdiff and of the libraries it runs with\n\n"
	"BYTES is a number, optionally with a K, M or G suffix (powers of 1024).\n\n"
	"Snapshots recorded with reachability (LEAKSNAP_REACHABILITY=1) say which\n"
	"blocks no pointer reached: a group holding such blocks in the last snapshot\n"
	"is a definite leak, ranked before every other suspect; one that did not grow\n"
	"is listed apart as a one-off leak.\n\n"
	"Snapshots of sampled collection (LEAKSNAP_SAMPLE) hold a sample of the\n"
	"blocks: every byte and count figure is then an estimate, marked with '≈'\n"
	"('~' outside a UTF-8 locale), with the blocks sampled beside it; ranking\n"
	"and the gates judge the estimates.\n\n"
	"A stack that fills every frame slot of a dump (its backtrace size) may have\n"
	"been cut: the text says so under it, --json marks its group \"truncated\",\n"
	"and --folded and the flame graph put it under a [truncated] root.\n\n"
	"Exit status: 0 success (and, with --fail-on, growth below the limit);\n"
	"1 the suspects grew by --fail-on BYTES or more, or the last snapshot holds\n"
	"--fail-on-unreachable BYTES or more; 2 any error (usage, unreadable,\n"
	"malformed or mismatched snapshots, an unreadable symbol file).\n";


/* HTML page ---------------------------------------------------------------------------
 * The page embeds the document --json prints and the growth of the stacks
 * that grew most, for the flame graph. */

struct page_arg {
	struct leaksnap_diff *d;
	const struct diff_cli *c;
};

static int page_json(FILE *out, void *arg)
{
	struct page_arg *a = arg;
	return cli_diff_json(out, a->d, a->c);
}

static int page_flame(struct leaksnap_export_flame *fl, void *arg, uint64_t *rest_bytes,
		      uint64_t *rest_stacks)
{
	struct page_arg *a = arg;
	struct leaksnap_error err;
	if (leaksnap_export_flame_diff(fl, a->d, (size_t)a->c->html_stacks, rest_bytes,
				       rest_stacks, &err) == 0)
		return 0;
	cli_fail_output(a->c->html, &err);
	return EXIT_ERROR;
}

/* The page at --html: -1 after saying why. */
static int report_html(struct leaksnap_diff *d, const struct diff_cli *c)
{
	struct page_arg a = {d, c};
	struct report_page page = {"diff", "leakdiff report", "growth", page_json,
				   page_flame, &a, cli_full_names()};
	return cli_report_page(c->html, &page, c->html);
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
	const struct leaksnap_snapshot_open_opts *opts;
	struct leaksnap_snapshot **snaps;
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
		struct leaksnap_snapshot *s = leaksnap_snapshot_open(r->paths[i], r->opts,
								     &r->errs[i]);
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
static struct leaksnap_snapshot *reader_take(struct reader *r, size_t i)
{
	pthread_mutex_lock(&r->mu);
	while (!r->done[i])
		pthread_cond_wait(&r->cv, &r->mu);
	struct leaksnap_snapshot *s = r->snaps[i];
	r->snaps[i] = NULL;
	r->consumed = i + 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return s;
}

enum { O_BY = 256, O_SKIP, O_ZYG, O_TOP, O_MIN, O_SUPP, O_NOSYM, O_NOADJ, O_FOLDED, O_FAIL,
       O_HTML, O_HTML_STACKS, O_FAIL_UNREACH, O_PPROF, O_KEEP_ORDER,
       O_FULL_NAMES, O_DB, O_RUN, O_WHERE };

/* Options -------------------------------------------------------------------------------- */

/* One option @opt of getopt_long (its argument in optarg) into @c: 0;
 * CLI_HELP_SHOWN when --help or --version was printed (the command is
 * done); -1 after saying what is wrong. */
static int parse_option(struct diff_cli *c, int opt, char **argv)
{
	const char *cmd = "diff";
	switch (opt) {
	case O_BY: {
		size_t k = LEAKSNAP_DIFF_BY_STACK;
		while (k <= LEAKSNAP_DIFF_BY_MODULE &&
		       strcmp(optarg, leaksnap_diff_by_name((enum leaksnap_diff_by)k)) != 0)
			k++;
		if (k > LEAKSNAP_DIFF_BY_MODULE) {
			char names[128] = "";
			for (k = LEAKSNAP_DIFF_BY_STACK; k <= LEAKSNAP_DIFF_BY_MODULE; k++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s",
					 k == LEAKSNAP_DIFF_BY_STACK	? ""
					 : k == LEAKSNAP_DIFF_BY_MODULE ? " or "
									: ", ",
					 leaksnap_diff_by_name((enum leaksnap_diff_by)k));
			cli_usage_error(cmd, "--by must be %s, not '%s'", names, optarg);
			return -1;
		}
		c->o.by = (enum leaksnap_diff_by)k;
		return 0;
	}
	case O_SKIP:
		if (c->nskip == MAX_SKIP) {
			cli_usage_error(cmd, "more than %d --skip patterns", MAX_SKIP);
			return -1;
		}
		if (!*optarg) {
			cli_usage_error(cmd, "--skip needs a pattern");
			return -1;
		}
		c->skip[c->nskip++] = optarg;
		return 0;
	case O_ZYG: c->o.zygote = LEAKSNAP_DIFF_ZYGOTE_INCLUDE; return 0;
	case O_KEEP_ORDER: c->o.keep_order = true; return 0;
	case O_TOP:
		if (!cli_parse_uint(optarg, 0, SIZE_MAX / 2, &c->top)) {
			cli_usage_error(cmd, "--top needs a number");
			return -1;
		}
		return 0;
	case O_MIN:
		if (!cli_parse_bytes(optarg, &c->o.min_bytes)) {
			cli_usage_error(
				cmd, "--min-bytes needs a byte count (e.g. 4096 or 4K), not '%s'",
				optarg);
			return -1;
		}
		return 0;
	case O_SUPP:
		if (c->supp_path) {
			cli_usage_error(cmd, "--suppressions given twice");
			return -1;
		}
		c->supp_path = optarg;
		return 0;
	case 's':
		if (c->ndirs == MAX_SYMBOL_DIRS) {
			cli_usage_error(cmd, "more than %d --symbols directories", MAX_SYMBOL_DIRS);
			return -1;
		}
		c->dirs[c->ndirs++] = optarg;
		return 0;
	case O_NOSYM: c->no_symbols = true; return 0;
	case O_NOADJ: c->no_adjust = true; return 0;
	case 'j': c->json = true; return 0;
	case O_FOLDED: c->folded = true; return 0;
	case O_FAIL:
		if (!cli_parse_bytes(optarg, &c->fail_on)) {
			cli_usage_error(
				cmd, "--fail-on needs a byte count (e.g. 1048576 or 1M), not '%s'",
				optarg);
			return -1;
		}
		c->has_fail_on = true;
		return 0;
	case O_FAIL_UNREACH:
		if (!cli_parse_bytes(optarg, &c->fail_unreachable)) {
			cli_usage_error(
				cmd,
				"--fail-on-unreachable needs a byte count (e.g. 1 or 4K), not '%s'",
				optarg);
			return -1;
		}
		c->has_fail_unreachable = true;
		return 0;
	case O_HTML:
		if (c->html) {
			cli_usage_error(cmd, "--html given twice");
			return -1;
		}
		c->html = optarg;
		return 0;
	case O_HTML_STACKS:
		if (!cli_parse_uint(optarg, 0, 1000000, &c->html_stacks)) {
			cli_usage_error(cmd, "--html-stacks needs a number from 0 to 1000000");
			return -1;
		}
		return 0;
	case O_PPROF:
		if (c->pprof) {
			cli_usage_error(cmd, "--pprof given twice");
			return -1;
		}
		c->pprof = optarg;
		return 0;
	case O_FULL_NAMES: cli_set_full_names(true); return 0;
	case O_DB:
	case O_RUN:
		if (opt == O_DB ? c->db != NULL : c->run != NULL) {
			cli_usage_error(cmd, "%s given twice", opt == O_DB ? "--db" : "--run");
			return -1;
		}
		*(opt == O_DB ? &c->db : &c->run) = optarg;
		return 0;
	case O_WHERE:
		return cli_labels_add(&c->where, cmd, "--where", optarg);
	case 'V':
		return cli_print_version("leakdiff") == EXIT_OK ? CLI_HELP_SHOWN : -1;
	case 'h':
		fputs(diff_usage, stdout);
		return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
	default:
		cli_bad_option(cmd, argv, opt == ':' ? ':' : optopt);
		return -1;
	}
}

/* The options that exclude each other, and the outputs: -1 after saying
 * what is wrong. */
static int check_outputs(const struct diff_cli *c)
{
	const char *cmd = "diff";
	bool html_out = c->html && strcmp(c->html, "-") == 0;
	bool pprof_out = c->pprof && strcmp(c->pprof, "-") == 0;
	if (c->json && c->folded)
		cli_usage_error(cmd, "--json and --folded exclude each other");
	else if (html_out && (c->json || c->folded))
		cli_usage_error(cmd, "--html - writes the page on standard output: not with %s",
				c->json ? "--json" : "--folded");
	else if (pprof_out && (c->json || c->folded || html_out))
		cli_usage_error(cmd, "--pprof - writes the profile on standard output: not with %s",
				c->json ? "--json" : c->folded ? "--folded" : "--html -");
	else if (pprof_out && isatty(STDOUT_FILENO))
		cli_usage_error(cmd, "refusing to write a binary pprof profile to a terminal");
	else if (c->pprof && c->html && !pprof_out && strcmp(c->pprof, c->html) == 0)
		cli_usage_error(cmd, "--html and --pprof name the same file");
	else if (c->no_symbols && c->ndirs)
		cli_usage_error(cmd, "--symbols and --no-symbols exclude each other");
	else
		return 0;
	return -1;
}

/* A file given twice (by name, or another name of it) is compared with
 * itself: most likely a slip of the command line, so said. */
static void warn_duplicates(char **files, int n)
{
	struct stat *st = calloc((size_t)n, sizeof(*st));
	bool *ok = calloc((size_t)n, sizeof(*ok));
	for (int i = 0; st && ok && i < n; i++)
		ok[i] = strcmp(files[i], "-") != 0 && stat(files[i], &st[i]) == 0 &&
			S_ISREG(st[i].st_mode);
	for (int j = 1; j < n; j++)
		for (int i = 0; i < j; i++) {
			if (strcmp(files[i], files[j]) == 0 && strcmp(files[j], "-") != 0) {
				cli_warn(files[j], "given twice: compared with itself");
				break;
			}
			if (st && ok && ok[i] && ok[j] && st[i].st_dev == st[j].st_dev &&
			    st[i].st_ino == st[j].st_ino) {
				cli_warn(files[j], "the same file as %s: compared with itself",
					 files[i]);
				break;
			}
		}
	free(st);
	free(ok);
}

/* With --db: a stored run instead of the @n @files, and none of the
 * options that are about files.  -1 after saying what is wrong. */
static int check_store_inputs(const struct diff_cli *c, char **files, int n)
{
	const char *cmd = "diff";
	if (!c->db)
		cli_usage_error(cmd, "%s needs --db DB", c->run ? "--run" : "--where");
	else if (!c->run && !c->where.n)
		cli_usage_error(cmd, "--db needs --run ID or --where KEY=VALUE: which run");
	else if (c->run && c->where.n)
		cli_usage_error(cmd, "--run and --where exclude each other");
	else if (n)
		cli_usage_error(cmd, "--db compares a stored run: no snapshot files (got '%s')",
				files[0]);
	else if (c->ndirs || c->no_adjust)
		cli_usage_error(cmd, "%s: a stored run's frames were symbolized when stored",
				c->ndirs ? "--symbols" : "--no-adjust");
	else if (c->in.maps_path || c->in.open.pointer_size || c->in.open.frames ||
		 c->in.open.count_is_frames)
		cli_usage_error(cmd, "--db compares a stored run: no options of dump files "
			       "(--maps, --pointer-size, --frames, --count-is-frames)");
	else {
		for (int k = 0; k < 2; k++) {
			const char *path = k ? c->pprof : c->html;
			char *other[] = {(char *)(uintptr_t)c->supp_path, (char *)(uintptr_t)c->db};
			if (path && (cli_outfile_not_input(path, other, 2) ||
				     cli_outfile_check(path, k ? CLI_REPLACE_OWN_PPROF
							       : CLI_REPLACE_OWN_HTML)))
				return -1;
		}
		return 0;
	}
	return -1;
}

/* The snapshots @files[0..n), the --symbols trees and the outputs, once
 * every option is read: -1 after saying what is wrong. */
static int check_inputs(const struct diff_cli *c, char **files, int n)
{
	const char *cmd = "diff";
	if (c->db || c->run || c->where.n)
		return check_store_inputs(c, files, n);
	if (n < 2) {
		cli_usage_error(cmd, n ? "expected at least two snapshots, got one"
				       : "missing snapshots: expected OLD.dump NEW.dump");
		return -1;
	}
	if (n > LEAKSNAP_DIFF_MAX_SNAPSHOTS) {
		cli_usage_error(cmd, "at most %d snapshots, got %d", LEAKSNAP_DIFF_MAX_SNAPSHOTS,
				n);
		return -1;
	}
	if (cli_no_empty_names(files, n))
		return -1;
	for (int i = 0, dash = c->supp_path && strcmp(c->supp_path, "-") == 0; i < n; i++)
		if (strcmp(files[i], "-") == 0 && dash++) {
			cli_fail("-", "given more than once: standard input can be read only once");
			return -1;
		}
	if (cli_input_check(cmd, &c->in))
		return -1;
	warn_duplicates(files, n);
	if (cli_symbol_dirs_check(c->dirs, c->ndirs))
		return -1;
	for (int k = 0; k < 2; k++) {
		const char *path = k ? c->pprof : c->html;
		char *other[] = {(char *)(uintptr_t)c->supp_path};
		if (path &&
		    (cli_outfile_not_input(path, files, (size_t)n) ||
		     cli_outfile_not_input(path, other, 1) ||
		     cli_outfile_check(path, k ? CLI_REPLACE_OWN_PPROF : CLI_REPLACE_OWN_HTML)))
			return -1;
	}
	return 0;
}

/* The options of the command line into @c (the snapshots left at
 * argv[optind..)): 0; CLI_HELP_SHOWN when --help or --version was
 * printed; -1 after saying what is wrong. */
static int parse_options(int argc, char **argv, struct diff_cli *c)
{
	static const struct option longopts[] = {
		{"pointer-size", required_argument, NULL, 'P'},
		{"frames", required_argument, NULL, 'F'},
		{"count-is-frames", no_argument, NULL, 'C'},
		{"by", required_argument, NULL, O_BY},
		{"skip", required_argument, NULL, O_SKIP},
		{"include-zygote", no_argument, NULL, O_ZYG},
		{"keep-order", no_argument, NULL, O_KEEP_ORDER},
		{"top", required_argument, NULL, O_TOP},
		{"min-bytes", required_argument, NULL, O_MIN},
		{"suppressions", required_argument, NULL, O_SUPP},
		{"symbols", required_argument, NULL, 's'},
		{"no-symbols", no_argument, NULL, O_NOSYM},
		{"no-adjust", no_argument, NULL, O_NOADJ},
		CLI_DEBUGINFOD_LONGOPTS,
		{"json", no_argument, NULL, 'j'},
		{"folded", no_argument, NULL, O_FOLDED},
		{"fail-on", required_argument, NULL, O_FAIL},
		{"fail-on-unreachable", required_argument, NULL, O_FAIL_UNREACH},
		{"html", required_argument, NULL, O_HTML},
		{"html-stacks", required_argument, NULL, O_HTML_STACKS},
		{"pprof", required_argument, NULL, O_PPROF},
		{"full-names", no_argument, NULL, O_FULL_NAMES},
		{"db", required_argument, NULL, O_DB},
		{"run", required_argument, NULL, O_RUN},
		{"where", required_argument, NULL, O_WHERE},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int opt, r;
	optind = 0;
	opterr = 0;
	c->top = 20;
	c->html_stacks = REPORT_STACKS;
	while ((opt = getopt_long(argc, argv, ":js:h", longopts, NULL)) != -1) {
		if ((r = cli_input_option("diff", opt, optarg, &c->in)) != 0 ||
		    (r = cli_debuginfod_option("diff", opt, optarg)) != 0) {
			if (r != 1)
				return -1; /* said */
			continue;
		}
		if ((r = parse_option(c, opt, argv)) != 0)
			return r;
	}
	return check_outputs(c) ? -1 : 0;
}

/* The command line into @c, the first snapshot's index in *@first_file:
 * 0; CLI_HELP_SHOWN when --help or --version was printed; -1 after saying
 * what is wrong. */
static int parse_args(int argc, char **argv, struct diff_cli *c, int *first_file)
{
	int r = parse_options(argc, argv, c);
	if (r)
		return r;
	if (check_inputs(c, argv + optind, argc - optind))
		return -1;
	*first_file = optind;
	return 0;
}

int diff_check_options(int argc, char **argv)
{
	struct diff_cli c;
	memset(&c, 0, sizeof(c));
	c.in = (struct cli_input)CLI_INPUT_INIT;
	c.o.sz = sizeof(c.o);
	int rc = parse_options(argc, argv, &c);
	cli_labels_release(&c.where);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Snapshots that are probably not what the user meant to compare: of
 * another program than the first (another file name), or (with
 * --keep-order) taken before a snapshot of the same run given before them.
 * Said, not refused: a program can move (a reinstalled app), and a clock
 * can step back.  Two runs are compared in the order given, whatever
 * their times: nothing to say. */
static void warn_mismatch(struct leaksnap_diff *d, size_t n)
{
	const struct leaksnap_diff_snapshot *first = leaksnap_diff_snapshot(d, 0);
	for (size_t i = 1; i < n; i++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, i), *prev = NULL;
		/* (by file name: a rebuilt or reinstalled program moves; once
		 * per other program) */
		bool said = false;
		for (size_t j = 1; s->exe && j < i && !said; j++) {
			const char *e = leaksnap_diff_snapshot(d, j)->exe;
			said = e && strcmp(base_name(e), base_name(s->exe)) == 0;
		}
		if (!said && s->exe && first->exe &&
		    strcmp(base_name(s->exe), base_name(first->exe)) != 0)
			cli_warn(s->file, "a snapshot of another program (%s) than %s (%s): "
				 "their stacks will not match", s->exe, first->file, first->exe);
		for (size_t j = i; s->run != SIZE_MAX && !prev && j-- > 0;)
			if (leaksnap_diff_snapshot(d, j)->run == s->run)
				prev = leaksnap_diff_snapshot(d, j);
		if (prev && s->time_ns < prev->time_ns)
			cli_warn(s->file, "taken before %s, yet given after it: snapshots are "
				 "compared in the order given, oldest first", prev->file);
	}
}

/* A snapshot as a note names it: its dump number, "exit" or "crash", else
 * its file name. */
static void order_label(const struct leaksnap_diff_snapshot *s, char *buf, size_t size)
{
	int k;
	if (s->seq)
		k = snprintf(buf, size, "%llu", (unsigned long long)s->seq);
	else
		k = snprintf(buf, size, "%s",
			     s->crash_dump ? "crash" : s->ends_run ? "exit" : base_name(s->file));
	if (k < 0 || (size_t)k >= size)
		snprintf(buf, size, "..."); /* never a name cut short */
}

/* Append @sep and @text to @buf (of @size, holding @len bytes).  false when
 * they do not fit with room left for another ", ...": then @sep and "..."
 * end the text instead (every item whole, or "..."). */
static bool append(char *buf, size_t size, size_t *len, const char *sep, const char *text)
{
	size_t s = strlen(sep), t = strlen(text);
	if (*len + s + t + sizeof(", ...") > size) {
		if (*len + s + sizeof("...") <= size)
			*len += (size_t)snprintf(buf + *len, size - *len, "%s...", sep);
		return false;
	}
	memcpy(buf + *len, sep, s);
	memcpy(buf + *len + s, text, t + 1);
	*len += s + t;
	return true;
}

/* The @k snapshots @m of one run, as a note lists them: "1-12, exit", a
 * run of 3 or more consecutive dump numbers as a range, into @buf; with
 * @most, only the first @most and "...". */
static void order_list(struct leaksnap_diff *d, const size_t *m, size_t k, size_t most,
		       char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t a = 0, shown = 0; a < k; a++, shown++) {
		const struct leaksnap_diff_snapshot *s = leaksnap_diff_snapshot(d, m[a]);
		char label[256];
		const char *sep = a ? ", " : "";
		if (most && shown == most) {
			append(buf, size, &len, sep, "...");
			break;
		}
		size_t b = a; /* [a, b]: consecutive numbers */
		while (!most && s->seq && b + 1 < k &&
		       leaksnap_diff_snapshot(d, m[b + 1])->seq == s->seq + (b + 1 - a))
			b++;
		if (b >= a + 2) {
			snprintf(label, sizeof(label), "%llu-%llu", (unsigned long long)s->seq,
				 (unsigned long long)leaksnap_diff_snapshot(d, m[b])->seq);
			a = b;
		} else {
			order_label(s, label, sizeof(label));
		}
		if (!append(buf, size, &len, sep, label))
			break;
	}
}

/* The snapshots of each run that leaksnap_diff_add_snapshot() put in capture
 * order, said in one line per run: "snapshots of pid 123 put in capture
 * order: 1-12, exit (given 1, 10, 11, 12, 2, ...; ...)". */
static void say_order(struct leaksnap_diff *d, size_t n)
{
	size_t *now = malloc(n * sizeof(*now)), *given = malloc(n * sizeof(*given));
	for (size_t r = 0; now && given && r < n; r++) {
		if (leaksnap_diff_snapshot(d, r)->run != r)
			continue; /* not the first of a run */
		size_t k = 0;
		bool moved = false;
		for (size_t i = r; i < n; i++)
			if (leaksnap_diff_snapshot(d, i)->run == r) {
				moved |= leaksnap_diff_snapshot(d, i)->given != i;
				now[k++] = i;
			}
		if (!moved)
			continue;
		/* the same snapshots by the places they were given at */
		memcpy(given, now, k * sizeof(*given));
		for (size_t a = 1; a < k; a++)
			for (size_t b = a; b > 0 && leaksnap_diff_snapshot(d, given[b - 1])->given >
							    leaksnap_diff_snapshot(d, given[b])->given;
			     b--) {
				size_t t = given[b];
				given[b] = given[b - 1];
				given[b - 1] = t;
			}
		char now_text[256], given_text[160];
		order_list(d, now, k, 0, now_text, sizeof(now_text));
		order_list(d, given, k, 5, given_text, sizeof(given_text));
		cli_warn(NULL, "snapshots of pid %lld put in capture order: %s (given %s; "
			 "--keep-order keeps the order given)",
			 (long long)leaksnap_diff_snapshot(d, r)->pid, now_text, given_text);
	}
	free(now);
	free(given);
}

/* Running -------------------------------------------------------------------------------- */

/* The --suppressions file, parsed, in *@out (NULL: none): -1 after saying
 * why. */
static int read_suppressions(const struct diff_cli *c, struct leaksnap_diff_suppressions **out)
{
	*out = NULL;
	if (!c->supp_path)
		return 0;
	char *text;
	size_t len;
	if (cli_read_file(c->supp_path, LEAKSNAP_DIFF_SUPPRESSIONS_MAX, "a suppressions file",
			  &text, &len))
		return -1;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	*out = leaksnap_diff_suppressions_parse(text, len, c->supp_path, &err);
	free(text);
	if (!*out) {
		cli_fail_error(&err);
		return -1;
	}
	return 0;
}

/* A diff of @n snapshots with @c's options, symbolizing through a new
 * resolver in *@resolver unless --no-symbols: NULL after saying why. */
static struct leaksnap_diff *new_diff(struct diff_cli *c, size_t n,
				      struct leaksnap_diff_suppressions *supp,
				      struct leaksnap_resolver **resolver)
{
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	*resolver = NULL;
	if (!c->no_symbols && !c->db) {
		LEAKSNAP_OPTS(leaksnap_resolver_opts, ro, .symbol_dirs = c->dirs,
			      .symbol_dir_count = c->ndirs, .return_addresses = !c->no_adjust,
			      .debuginfod = cli_debuginfod(), .no_symbols = cli_say_no_symbols);
		*resolver = leaksnap_resolver_new(&ro, &err);
		if (!*resolver) {
			cli_fail_error(&err);
			return NULL;
		}
	}
	c->o.skip = c->skip;
	c->o.skip_count = c->nskip;
	c->o.suppressions = supp;
	c->o.resolver = *resolver;
	c->o.jobs = cli_sym_jobs();
	struct leaksnap_diff *d = leaksnap_diff_new(&c->o, n, &err);
	if (!d)
		cli_fail_error(&err);
	return d;
}

/* Snapshot @i of @rd, added to @d with its maps: -1 after saying why. */
static int add_snapshot(struct leaksnap_diff *d, struct reader *rd, bool threaded, size_t i)
{
	struct leaksnap_snapshot *s = threaded && i > 0
					      ? reader_take(rd, i)
					      : leaksnap_snapshot_open(rd->paths[i], rd->opts,
								       &rd->errs[i]);
	if (!s) {
		cli_input_error(&rd->errs[i]);
		cli_fail_error(&rd->errs[i]);
		return -1;
	}
	struct leaksnap_maps *maps = NULL;
	if (cli_snapshot_maps(s, NULL, &maps)) {
		leaksnap_snapshot_close(s);
		return -1;
	}
	cli_print_warnings(s);
	if (!maps)
		cli_warn(rd->paths[i], "no maps: its frames are compared as raw addresses");
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	int rc = leaksnap_diff_add_snapshot(d, s, maps, &err);
	leaksnap_maps_free(maps);
	leaksnap_snapshot_close(s);
	if (rc) {
		cli_fail_error(&err);
		return -1;
	}
	return 0;
}

/* Each of the @n snapshots at @paths added to @d, then closed; the next
 * one is read meanwhile.  -1 after saying why. */
static int add_snapshots(struct leaksnap_diff *d, struct diff_cli *c, char **paths, size_t n)
{
	c->in.open.keep_duplicates = true; /* the diff merges equal stacks itself */
	struct reader rd = {.paths = paths, .n = n, .opts = &c->in.open,
			    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	rd.snaps = calloc(n, sizeof(*rd.snaps));
	rd.errs = calloc(n, sizeof(*rd.errs));
	rd.done = calloc(n, sizeof(*rd.done));
	pthread_t tid;
	bool threaded = false;
	int rc = -1;
	if (!rd.snaps || !rd.errs || !rd.done) {
		cli_fail("diff", "out of memory");
	} else {
		threaded = pthread_create(&tid, NULL, reader_main, &rd) == 0;
		rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = add_snapshot(d, &rd, threaded, i);
	}
	if (threaded) {
		pthread_mutex_lock(&rd.mu);
		rd.stop = true;
		pthread_cond_broadcast(&rd.cv);
		pthread_mutex_unlock(&rd.mu);
		pthread_join(tid, NULL);
	}
	for (size_t i = 0; rd.snaps && i < n; i++)
		leaksnap_snapshot_close(rd.snaps[i]);
	free(rd.snaps);
	free(rd.errs);
	free(rd.done);
	return rc;
}

/* The @n snapshots of stored run @ds added to @d: -1 after saying why. */
static int add_stored(struct leaksnap_diff *d, struct diff_store *ds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (diff_store_add(ds, d, i))
			return -1;
	return 0;
}

/* Rank the @n snapshots' growth: -1 after saying why. */
static int rank(struct leaksnap_diff *d, const struct diff_cli *c, size_t n)
{
	const struct leaksnap_diff_snapshot *last = leaksnap_diff_snapshot(d, n - 1);
	if (c->has_fail_unreachable && !last->has_reachability) {
		cli_fail(last->file,
			 "no reachability section: --fail-on-unreachable cannot be evaluated "
			 "(record with LEAKSNAP_REACHABILITY=1)");
		return -1;
	}
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	if (leaksnap_diff_rank(d, &err)) {
		cli_fail_error(&err);
		return -1;
	}
	/* An exit (or crash) dump is taken once the program has stopped
	 * working: the library judges the trend up to the dump before it. */
	if (n > 2 && last->ends_run)
		cli_warn(last->file,
			 "%s dump ends the series, taken when the program stopped: what grew until "
			 "the dump before it counts as still growing, not as a cache that stopped",
			 last->crash_dump ? "a crash" : "an exit");
	return 0;
}

/* The reports the options ask for: -1 after saying why. */
static int render(struct leaksnap_diff *d, struct diff_cli *c)
{
	if (c->folded) {
		struct leaksnap_error err;
		int rc = leaksnap_export_folded_diff(stdout, d, &err);
		if (rc == -1)
			cli_fail_output("diff", &err);
		if (rc) /* (or a write error on standard output) */
			return -1;
	} else if ((!c->html || strcmp(c->html, "-") != 0) &&
		   (!c->pprof || strcmp(c->pprof, "-") != 0)) {
		if (c->json ? cli_diff_json(stdout, d, c) : cli_diff_text(d, c))
			return -1;
	}
	if (c->html && report_html(d, c))
		return -1;
	if (c->pprof && cli_pprof_diff(d, c->pprof, !c->no_adjust))
		return -1;
	return 0;
}

/* The exit status once the reports are out: problems with symbol files,
 * then the --fail-on gates. */
static int exit_status(struct leaksnap_diff *d, const struct diff_cli *c)
{
	/* problems with symbol files: reported, the report still printed */
	int status = EXIT_OK;
	for (size_t i = 0; i < leaksnap_diff_warning_count(d); i++) {
		cli_fail(NULL, "%s", leaksnap_diff_warning(d, i));
		status = EXIT_ERROR;
	}
	if (status == EXIT_OK && c->has_fail_on && leaksnap_diff_suspects_bytes(d) > 0 &&
	    (uint64_t)leaksnap_diff_suspects_bytes(d) >= c->fail_on) {
		fflush(stdout);
		/* sampled snapshots: the gate is on the estimate, and says so */
		fprintf(stderr, "%s: suspects grew by %s%lld bytes%s, at or above --fail-on %llu\n",
			cli_program_name, leaksnap_diff_sample_interval(d) ? "an estimated " : "",
			(long long)leaksnap_diff_suspects_bytes(d),
			leaksnap_diff_sample_interval(d) ? " (sampled)" : "",
			(unsigned long long)c->fail_on);
		status = EXIT_LEAKS;
	}
	if (status != EXIT_ERROR && cli_diff_unreachable_gate(d, c))
		status = EXIT_LEAKS;
	return cli_finish_stdout(status);
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cli c;
	memset(&c, 0, sizeof(c));
	c.in = (struct cli_input)CLI_INPUT_INIT;
	c.o.sz = sizeof(c.o);
	int first = 0, rc = parse_args(argc, argv, &c, &first);
	if (rc) {
		cli_labels_release(&c.where);
		return rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	}
	size_t n = (size_t)(argc - first);
	struct leaksnap_diff_suppressions *supp = NULL;
	struct leaksnap_resolver *resolver = NULL;
	struct leaksnap_diff *d = NULL;
	struct diff_store *ds = NULL;
	int status = EXIT_ERROR;
	if (c.db) { /* a stored run: its snapshots, named by the store's symbols */
		if (diff_store_open(&ds, c.db, c.run, c.where.v, c.where.n))
			goto out;
		n = diff_store_count(ds);
		if (!c.no_symbols) {
			c.o.symbols = diff_store_symbols;
			c.o.symbols_arg = ds;
		}
	}
	if (read_suppressions(&c, &supp) == 0 && (d = new_diff(&c, n, supp, &resolver)) != NULL &&
	    (ds ? add_stored(d, ds, n) : add_snapshots(d, &c, argv + first, n)) == 0) {
		say_order(d, n);
		warn_mismatch(d, n);
		if (rank(d, &c, n) == 0 && render(d, &c) == 0)
			status = exit_status(d, &c);
	}
out:
	leaksnap_diff_free(d);
	leaksnap_resolver_free(resolver);
	leaksnap_diff_suppressions_free(supp);
	diff_store_free(ds);
	cli_labels_release(&c.where);
	return status;
}
