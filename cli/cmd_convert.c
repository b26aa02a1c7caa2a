/* leaksnap convert: write any readable snapshot as a LEAKSNAP v1 file, an
 * Android text heap dump v1.2 or a pprof profile, optionally with its
 * module paths rewritten. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pprof.h"

static const char convert_usage[] =
	"Usage: leaksnap convert [OPTIONS] DUMP OUT\n\n"
	"Read DUMP in any supported format and write it to OUT (\"-\": standard output).\n"
	"  --to leaksnap (the default): a LEAKSNAP v1 file with the maps embedded and\n"
	"    the metadata kept (plus source_format=...), and the unreachable counts.\n"
	"  --to android-text: an Android text heap dump v1.2, as bionic's malloc_debug\n"
	"    writes one. The pid, capture time, unreachable counts and metadata other\n"
	"    than the build fingerprint have no place there: a warning names what is\n"
	"    left out.\n"
	"  --to pprof: a gzip-compressed pprof profile (profile.proto) of the live\n"
	"    heap: inuse_objects and inuse_space, one sample per record (labels\n"
	"    bytes; zygote on zygote-child records; unreachable, the count no pointer\n"
	"    reached, when the dump has reachability), each PC a location in its\n"
	"    mapping with the module's build ID, symbolized when symbol files are\n"
	"    found (as 'leaksnap symbolize' finds them). Read it with go tool pprof.\n"
	"Duplicate records are merged; Android 7 counts are written corrected.\n"
	"OUT must not exist: leaksnap never overwrites a file.\n\n"
	"Options:\n"
	CLI_INPUT_HELP
	"  --to FORMAT          output format: leaksnap, android-text or pprof\n"
	"  --rewrite-prefix OLD=NEW\n"
	"                       write module paths that start with OLD (maps lines,\n"
	"                       build_id and exe metadata) starting with NEW instead;\n"
	"                       repeatable, the first matching OLD wins. A plain prefix:\n"
	"                       /system/lib also matches /system/lib64 (write\n"
	"                       /system/lib/ for the directory only)\n"
	"  --big-endian         --to leaksnap: write big-endian record fields\n"
	"  -s, --symbols DIR    --to pprof: look for symbol files under DIR\n"
	"                       (repeatable; as in 'leaksnap symbolize')\n"
	"  --no-symbols         --to pprof: do not symbolize (pprof may, from the\n"
	"                       mappings' files)\n"
	"  --no-adjust          --to pprof: look frames up, and write their\n"
	"                       addresses, as captured, not at the call (pc - 1)\n"
	"  (--to pprof:)\n"
	CLI_DEBUGINFOD_HELP
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error (--to pprof: a symbol file that cannot\n"
	"be read is reported and the profile still written, its frames unsymbolized).\n";

/* What the writer leaves out, shown once the file is written. */
struct dropped {
	char **lines;
	size_t n;
	bool nomem;
};

static void collect_dropped(void *ctx, const char *what)
{
	struct dropped *d = ctx;
	char **grown = realloc(d->lines, (d->n + 1) * sizeof(*grown));
	char *copy = strdup(what);
	if (grown)
		d->lines = grown;
	if (grown == NULL || copy == NULL) {
		free(copy);
		d->nomem = true;
		return;
	}
	d->lines[d->n++] = copy;
}

/* "OLD=NEW" (the first '=' splits: OLD cannot hold one) into @r.  0, or -1
 * (printed). */
static int parse_rewrite(char *arg, struct leaksnap_snapshot_rewrite *r)
{
	char *eq = strchr(arg, '=');
	if (eq == NULL)
		return cli_usage_error("convert", "--rewrite-prefix '%s' is not OLD=NEW", arg);
	if (eq == arg)
		return cli_usage_error("convert", "--rewrite-prefix '%s': OLD is empty", arg);
	if (strpbrk(arg, "\r\n"))
		return cli_usage_error("convert", "--rewrite-prefix: a prefix cannot hold a line "
				       "break");
	*eq = '\0';
	r->old_prefix = arg;
	r->new_prefix = eq + 1;
	return 0;
}


/* Copy what was written to @fd, from its start, to stdout. */
static int copy_to_stdout(int fd)
{
	char buf[65536];
	if (lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return fflush(stdout) == 0 ? 0 : -1;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return -1;
	}
}

static void warn_unmatched_rewrites(const struct leaksnap_snapshot *s,
				    const struct leaksnap_snapshot_save_opts *save)
{
	for (size_t i = 0; i < save->rewrite_count; i++)
		if (save->rewrites[i].matched == 0)
			cli_warn(leaksnap_snapshot_source(s),
				 "--rewrite-prefix '%s=%s' matched no path",
				 save->rewrites[i].old_prefix, save->rewrites[i].new_prefix);
}

/* --to pprof: the command's exit status. */
static int convert_pprof(const struct leaksnap_snapshot *s, const struct leaksnap_maps *m,
			 const char *out, const struct leaksnap_snapshot_save_opts *save,
			 struct pprof_convert_opts *pprof)
{
	pprof->rewrites = save->rewrites;
	pprof->rewrite_count = save->rewrite_count;
	fflush(stdout);
	if (cli_pprof_snapshot(s, m, out, pprof) != 0)
		return EXIT_ERROR;
	warn_unmatched_rewrites(s, save);
	return EXIT_OK;
}

/* Write @s as LEAKSNAP (or Android text when @text) on @out.  Android text
 * on a terminal is written to memory first, then through the terminal's
 * escaping stdout (the library writes the descriptor itself, and the
 * dump's paths and fingerprint are untrusted bytes).  0, or -1 (printed). */
static int save_snapshot(const struct leaksnap_snapshot *s, const char *out, bool text,
			 const struct leaksnap_snapshot_save_opts *save)
{
	struct leaksnap_error err;
	fflush(stdout);
	int tty = -1, mem = -1;
	if (text && strcmp(out, "-") == 0 && isatty(STDOUT_FILENO)) {
		mem = memfd_create("leaksnap-convert", MFD_CLOEXEC);
		tty = mem < 0 ? -1 : dup(STDOUT_FILENO);
		if (tty < 0 || dup2(mem, STDOUT_FILENO) < 0) {
			int e = errno;
			if (tty >= 0)
				close(tty);
			if (mem >= 0)
				close(mem);
			return cli_fail("<stdout>", "%s", strerror(e));
		}
	}
	int rc = 0;
	if (text ? leaksnap_snapshot_save_text(s, out, save, &err)
		 : leaksnap_snapshot_save(s, out, save, &err))
		rc = cli_fail_error(&err);
	if (mem >= 0) {
		dup2(tty, STDOUT_FILENO);
		close(tty);
		if (rc == 0 && copy_to_stdout(mem) != 0)
			rc = cli_fail("<stdout>", "%s", strerror(errno));
		close(mem);
	}
	return rc;
}

/* Read @src and write it on @out: the command's exit status. */
static int convert(const char *src, const char *out, const struct cli_input *in, bool text,
		   struct leaksnap_snapshot_save_opts *save, struct pprof_convert_opts *pprof)
{
	struct leaksnap_snapshot *s = cli_open_snapshot(src, &in->open, in->maps_path);
	if (s == NULL)
		return EXIT_ERROR;
	/* Refuse maps we could not read back. */
	struct leaksnap_maps *m = NULL;
	if (cli_snapshot_maps(s, in->maps_path, &m)) {
		leaksnap_snapshot_close(s);
		return EXIT_ERROR;
	}
	cli_print_warnings(s);
	if (pprof) {
		int rc = convert_pprof(s, m, out, save, pprof);
		leaksnap_maps_free(m);
		leaksnap_snapshot_close(s);
		return rc;
	}
	leaksnap_maps_free(m);
	struct dropped d = {0};
	save->dropped = collect_dropped;
	save->dropped_ctx = &d;
	int rc = save_snapshot(s, out, text, save);
	/* what the writer left out, once the file is written */
	const char *subject = strcmp(out, "-") == 0 ? "<stdout>" : out;
	if (rc == 0 && d.nomem)
		rc = cli_fail(subject, "out of memory");
	for (size_t i = 0; i < d.n; i++) {
		if (rc == 0)
			cli_warn(subject, "%s", d.lines[i]);
		free(d.lines[i]);
	}
	free(d.lines);
	if (rc == 0)
		warn_unmatched_rewrites(s, save);
	leaksnap_snapshot_close(s);
	return rc == 0 ? EXIT_OK : EXIT_ERROR;
}

/* What the command line asks for. */
struct convert_cli {
	struct cli_input in;
	struct leaksnap_snapshot_save_opts save;
	struct pprof_convert_opts po;
	bool text, pprof;
	const char *sym_opt; /* an option that is for --to pprof only */
	struct leaksnap_snapshot_rewrite *rules; /* at most one rule... */
	const char **dirs;              /* ...or symbols directory per argument */
};

/* Read the options: 0, CLI_HELP_SHOWN, or -1 (printed). */
static int parse_options(int argc, char **argv, struct convert_cli *o)
{
	static const struct option longopts[] = {
		CLI_INPUT_LONGOPTS,
		{"big-endian", no_argument, NULL, 'B'},
		{"to", required_argument, NULL, 'T'},
		{"rewrite-prefix", required_argument, NULL, 'R'},
		{"symbols", required_argument, NULL, 's'},
		{"no-symbols", no_argument, NULL, 'N'},
		{"no-adjust", no_argument, NULL, 'A'},
		CLI_DEBUGINFOD_LONGOPTS,
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c, r;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hs:", longopts, NULL)) != -1) {
		if ((r = cli_input_option("convert", c, optarg, &o->in)) != 0) {
			if (r != 1)
				return -1;
			continue;
		}
		if ((r = cli_debuginfod_option("convert", c, optarg)) != 0) {
			if (r != 1)
				return -1;
			o->sym_opt = c == CLI_OPT_DEBUGINFOD  ? "--debuginfod"
				     : c == CLI_OPT_OFFLINE ? "--offline"
							    : "--no-debuginfod";
			continue;
		}
		switch (c) {
		case 'B': o->save.big_endian = true; break;
		case 'T':
			o->text = strcmp(optarg, "android-text") == 0;
			o->pprof = strcmp(optarg, "pprof") == 0;
			if (!o->text && !o->pprof && strcmp(optarg, "leaksnap") != 0)
				return cli_usage_error("convert", "unknown output format '%s': "
						       "expected leaksnap, android-text or pprof",
						       optarg);
			break;
		case 's':
			o->dirs[o->po.ndirs++] = optarg;
			o->sym_opt = "--symbols";
			break;
		case 'N': o->po.no_symbols = true; o->sym_opt = "--no-symbols"; break;
		case 'A': o->po.no_adjust = true; o->sym_opt = "--no-adjust"; break;
		case 'R':
			if (parse_rewrite(optarg, &o->rules[o->save.rewrite_count]) != 0)
				return -1;
			o->save.rewrite_count++;
			break;
		case 'h':
			fputs(convert_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("convert", argv, c == ':' ? ':' : optopt);
		}
	}
	return 0;
}

/* The operands DUMP and OUT at @argv[0..@n) and what the options allow
 * together: 0, or -1 (printed). */
static int check_args(char **argv, int n, const struct convert_cli *o)
{
	if (n != 2)
		return cli_usage_error("convert", "expected DUMP and OUT, got %d operand%s", n,
				       n == 1 ? "" : "s");
	if (o->text && o->save.big_endian)
		return cli_usage_error("convert", "--big-endian is for --to leaksnap: a text dump "
				       "has no byte order");
	if (o->pprof && o->save.big_endian)
		return cli_usage_error("convert", "--big-endian is for --to leaksnap: a pprof "
				       "profile has no byte order");
	if (!o->pprof && o->sym_opt)
		return cli_usage_error("convert", "%s is for --to pprof", o->sym_opt);
	if (o->po.no_symbols && o->po.ndirs)
		return cli_usage_error("convert", "--symbols and --no-symbols exclude each other");
	if (!o->text && strcmp(argv[1], "-") == 0 && isatty(STDOUT_FILENO))
		return cli_usage_error("convert", "refusing to write a binary %s to a terminal",
				       o->pprof ? "pprof profile" : "LEAKSNAP file");
	if (cli_symbol_dirs_check(o->dirs, o->po.ndirs))
		return -1;
	if (cli_input_check("convert", &o->in) || cli_stdin_once(argv[0], o->in.maps_path) ||
	    cli_no_empty_names(argv, 2))
		return -1;
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_cli o = {.in = CLI_INPUT_INIT,
				.save = {.sz = sizeof(struct leaksnap_snapshot_save_opts)}};
	o.rules = calloc((size_t)argc, sizeof(*o.rules));
	o.dirs = calloc((size_t)argc, sizeof(*o.dirs));
	int status = EXIT_ERROR;
	if (o.rules == NULL || o.dirs == NULL) {
		cli_fail("convert", "out of memory");
		goto out;
	}
	o.save.rewrites = o.rules;
	o.po.dirs = o.dirs;
	int r = parse_options(argc, argv, &o);
	if (r == CLI_HELP_SHOWN)
		status = EXIT_OK;
	else if (r == 0 && check_args(argv + optind, argc - optind, &o) == 0)
		status = convert(argv[optind], argv[optind + 1], &o.in, o.text, &o.save,
				 o.pprof ? &o.po : NULL);
out:
	free(o.rules);
	free(o.dirs);
	return status;
}
