/* leaksnap diff (also installed as leakdiff): compare two or more snapshots
 * of one program, rank what grew, and gate CI on it.  The comparison is
 * diff/'s; this file reads the inputs and prints folded stacks or the HTML
 * page; the text report is in diff_text.c, the JSON one in diff_json.c. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/diff.h>

#include "cli.h"
#include "diff_cli.h"
#include "pprof.h"

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
	"                       a wildcard, '^' and '$' anchor; a line starting with\n"
	"                       '#' is a comment)\n"
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
	"                       existing FILE is replaced only if it is a report\n"
	"                       leaksnap wrote\n"
	"  --html-stacks N      the flame graph shows the N stacks that grew most\n"
	"                       (default 500); the rest are summed as one\n"
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
	"Exit status: 0 success (and, with --fail-on, growth below the limit);\n"
	"1 the suspects grew by --fail-on BYTES or more, or the last snapshot holds\n"
	"--fail-on-unreachable BYTES or more; 2 any error (usage, unreadable,\n"
	"malformed or mismatched snapshots, an unreadable symbol file).\n";


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
		struct leaksnap_resolved r = {f->sym_module, f->sym, f->sym_count};
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
	return cli_diff_json(out, a->d, a->c);
}

static int report_html(struct diff *d, const struct diff_cli *c)
{
	struct cli_outfile o;
	struct leaksnap_error err;
	if (cli_outfile_open(&o, c->html, CLI_REPLACE_OWN_HTML))
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
	       O_HTML, O_HTML_STACKS, O_FAIL_UNREACH, O_PPROF };
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
		{"fail-on-unreachable", required_argument, NULL, O_FAIL_UNREACH},
		{"html", required_argument, NULL, O_HTML},
		{"html-stacks", required_argument, NULL, O_HTML_STACKS},
		{"pprof", required_argument, NULL, O_PPROF},
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
		case O_FAIL_UNREACH:
			if (!parse_bytes(optarg, &c->fail_unreachable))
				return cli_usage_error(cmd, "--fail-on-unreachable needs a byte count (e.g. 1 or 4K), not '%s'",
						       optarg);
			c->has_fail_unreachable = true;
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
		case O_PPROF:
			if (c->pprof)
				return cli_usage_error(cmd, "--pprof given twice");
			c->pprof = optarg;
			break;
		case 'V':
			return cli_print_version("leakdiff") == EXIT_OK ? CLI_HELP_SHOWN : -1;
		case 'h':
			fputs(diff_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option(cmd, argv, opt == ':' ? ':' : optopt);
		}
	}
	if (c->json && c->folded)
		return cli_usage_error(cmd, "--json and --folded exclude each other");
	if (c->html && strcmp(c->html, "-") == 0 && (c->json || c->folded))
		return cli_usage_error(cmd, "--html - writes the page on standard output: not with %s",
				       c->json ? "--json" : "--folded");
	if (c->pprof && strcmp(c->pprof, "-") == 0 &&
	    (c->json || c->folded || (c->html && strcmp(c->html, "-") == 0)))
		return cli_usage_error(cmd, "--pprof - writes the profile on standard output: not with %s",
				       c->json ? "--json" : c->folded ? "--folded" : "--html -");
	if (c->pprof && strcmp(c->pprof, "-") == 0 && isatty(STDOUT_FILENO))
		return cli_usage_error(cmd, "refusing to write a binary pprof profile to a terminal");
	if (c->pprof && c->html && strcmp(c->pprof, "-") != 0 && strcmp(c->pprof, c->html) == 0)
		return cli_usage_error(cmd, "--html and --pprof name the same file");
	if (c->no_symbols && c->ndirs)
		return cli_usage_error(cmd, "--symbols and --no-symbols exclude each other");
	if (argc - optind < 2)
		return cli_usage_error(cmd, argc - optind ? "expected at least two snapshots, got one"
							 : "missing snapshots: expected OLD.dump NEW.dump");
	if (argc - optind > DIFF_MAX_SNAPSHOTS)
		return cli_usage_error(cmd, "at most %d snapshots, got %d", DIFF_MAX_SNAPSHOTS,
				       argc - optind);
	if (cli_no_empty_names(argv + optind, argc - optind))
		return EXIT_ERROR;
	for (int i = optind, dash = c->supp_path && strcmp(c->supp_path, "-") == 0; i < argc; i++)
		if (strcmp(argv[i], "-") == 0 && dash++)
			return cli_fail("-", "given more than once: standard input can be read only once");
	if (cli_input_check(cmd, &c->in))
		return EXIT_ERROR;
	for (size_t i = 0; i < c->ndirs; i++) {
		struct stat st;
		if (stat(c->dirs[i], &st) != 0)
			return cli_fail(c->dirs[i], "%s", strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cli_fail(c->dirs[i], "not a directory");
	}
	for (int k = 0; k < 2; k++) {
		const char *path = k ? c->pprof : c->html;
		char *other[] = {(char *)(uintptr_t)c->supp_path};
		if (path && (cli_outfile_not_input(path, argv + optind, (size_t)(argc - optind)) ||
			     cli_outfile_not_input(path, other, 1) ||
			     cli_outfile_check(path, k ? CLI_REPLACE_OWN_PPROF : CLI_REPLACE_OWN_HTML)))
			return EXIT_ERROR;
	}
	*first_file = optind;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Snapshots that are probably not what the user meant to compare: of
 * another program than the first (another file name), or taken before the
 * one given before them.  Said, not refused: a program can move (a
 * reinstalled app), and a clock can step back. */
static void warn_mismatch(struct diff *d, size_t n)
{
	const struct diff_snapshot *first = diff_snapshot(d, 0);
	for (size_t i = 1; i < n; i++) {
		const struct diff_snapshot *s = diff_snapshot(d, i), *prev = diff_snapshot(d, i - 1);
		/* (by file name: a rebuilt or reinstalled program moves) */
		if (s->exe && first->exe && strcmp(base_name(s->exe), base_name(first->exe)) != 0)
			cli_warn(s->file, "a snapshot of another program (%s) than %s (%s): "
				 "their stacks will not match", s->exe, first->file, first->exe);
		if (s->has_time && prev->has_time && s->time_ns < prev->time_ns)
			cli_warn(s->file, "taken before %s, yet given after it: snapshots are "
				 "compared in the order given, oldest first", prev->file);
	}
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cli c;
	memset(&c, 0, sizeof(c));
	int first = 0, rc = parse_args(argc, argv, &c, &first);
	if (rc)
		return rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct diff_suppressions *supp = NULL;
	struct leaksnap_resolver *resolver = NULL;
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
		LEAKSNAP_RESOLVER_OPTS(ro, .symbol_dirs = c.dirs, .symbol_dir_count = c.ndirs,
				       .return_addresses = !c.no_adjust);
		resolver = leaksnap_resolver_new(&ro, &err);
		if (!resolver) {
			cli_fail_error(&err);
			goto out;
		}
	}
	c.o.skip = c.skip;
	c.o.skip_count = c.nskip;
	c.o.suppressions = supp;
	c.o.resolver = resolver;
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
			cli_input_error(&rd.errs[i]);
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
	warn_mismatch(d, n);
	status = EXIT_ERROR;
	if (c.has_fail_unreachable && !diff_snapshot(d, n - 1)->has_reachability) {
		cli_fail(diff_snapshot(d, n - 1)->file,
			 "no reachability section: --fail-on-unreachable cannot be evaluated "
			 "(record with LEAKSNAP_REACHABILITY=1)");
		goto out;
	}
	if (diff_rank(d, &err)) {
		cli_fail_error(&err);
		goto out;
	}
	/* An exit dump is taken once the program has stopped working: what
	 * grew until then did not grow in the last interval, and reads as a
	 * cache (the definition of one). */
	if (n > 2 && diff_snapshot(d, n - 1)->exit_dump && diff_stopped_count(d))
		cli_warn(diff_snapshot(d, n - 1)->file,
			 "an exit dump, taken after the program stopped working: what grew before "
			 "it is listed as stopped (a cache); compare the dumps taken while it "
			 "worked to see what was still growing");
	if (c.folded) {
		rc = diff_foreach_growing_stack(d, folded_stack, NULL, &err);
		if (rc == -1)
			cli_fail_error(&err);
		if (rc)
			goto out;
		rc = EXIT_OK;
	} else if ((!c.html || strcmp(c.html, "-") != 0) && (!c.pprof || strcmp(c.pprof, "-") != 0)) {
		rc = c.json ? cli_diff_json(stdout, d, &c) : cli_diff_text(d, &c);
		if (rc)
			goto out;
	}
	if (c.html && report_html(d, &c))
		goto out;
	if (c.pprof && cli_pprof_diff(d, c.pprof, !c.no_adjust))
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
	if (status != EXIT_ERROR && cli_diff_unreachable_gate(d, &c))
		status = EXIT_LEAKS;
	status = cli_finish_stdout(status);
out:
	diff_free(d);
	leaksnap_resolver_free(resolver);
	diff_suppressions_free(supp);
	return status;
}
