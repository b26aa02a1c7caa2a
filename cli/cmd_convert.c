/* leaksnap convert: write any readable snapshot as a LEAKSNAP v1 file or an
 * Android text heap dump v1.2, optionally with its module paths rewritten. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char convert_usage[] =
	"Usage: leaksnap convert [OPTIONS] DUMP OUT\n\n"
	"Read DUMP in any supported format and write it to OUT (\"-\": standard output).\n"
	"  --to leaksnap (the default): a LEAKSNAP v1 file with the maps embedded and\n"
	"    the metadata kept (plus source_format=...), and the unreachable counts.\n"
	"  --to android-text: an Android text heap dump v1.2, as bionic's malloc_debug\n"
	"    writes one. The pid, capture time, unreachable counts and metadata other\n"
	"    than the build fingerprint have no place there: a warning names what is\n"
	"    left out.\n"
	"Duplicate records are merged; Android 7 counts are written corrected.\n"
	"OUT must not exist: leaksnap never overwrites a file.\n\n"
	"Options:\n"
	CLI_INPUT_HELP
	"  --to FORMAT          output format: leaksnap or android-text\n"
	"  --rewrite-prefix OLD=NEW\n"
	"                       write module paths that start with OLD (maps lines,\n"
	"                       build_id and exe metadata) starting with NEW instead;\n"
	"                       repeatable, the first matching OLD wins. A plain prefix:\n"
	"                       /system/lib also matches /system/lib64 (write\n"
	"                       /system/lib/ for the directory only)\n"
	"  --big-endian         --to leaksnap: write big-endian record fields\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error.\n";

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

/* "OLD=NEW" (the first '=' splits: OLD cannot hold one) into @r. */
static int parse_rewrite(char *arg, struct snapshot_rewrite *r)
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

static int convert(const char *src, const char *out, const struct cli_input *in, bool text,
		   struct snapshot_save_opts *save)
{
	struct snapshot *s = cli_open_snapshot(src, &in->open, in->maps_path);
	if (s == NULL)
		return EXIT_ERROR;
	/* Refuse maps we could not read back. */
	struct maps *m = NULL;
	if (cli_snapshot_maps(s, in->maps_path, &m)) {
		snapshot_close(s);
		return EXIT_ERROR;
	}
	maps_free(m);
	cli_print_warnings(s);
	struct dropped d = {0};
	save->dropped = collect_dropped;
	save->dropped_ctx = &d;
	struct leaksnap_error err;
	fflush(stdout);
	int rc = (text ? snapshot_save_text(s, out, save, &err) : snapshot_save(s, out, save, &err))
			 ? cli_fail_error(&err)
			 : EXIT_OK;
	const char *subject = strcmp(out, "-") == 0 ? "<stdout>" : out;
	if (rc == EXIT_OK && d.nomem)
		rc = cli_fail(subject, "out of memory");
	for (size_t i = 0; i < d.n; i++) {
		if (rc == EXIT_OK)
			cli_warn(subject, "%s", d.lines[i]);
		free(d.lines[i]);
	}
	free(d.lines);
	for (size_t i = 0; rc == EXIT_OK && i < save->rewrite_count; i++)
		if (save->rewrites[i].matched == 0)
			cli_warn(snapshot_source(s), "--rewrite-prefix '%s=%s' matched no path",
				 save->rewrites[i].old_prefix, save->rewrites[i].new_prefix);
	snapshot_close(s);
	return rc;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_LONGOPTS,
		{"big-endian", no_argument, NULL, 'B'},
		{"to", required_argument, NULL, 'T'},
		{"rewrite-prefix", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_input in = {0};
	struct snapshot_save_opts save = {0};
	bool text = false;
	int c, r;
	/* At most one rule per argument. */
	struct snapshot_rewrite *rules = calloc((size_t)argc, sizeof(*rules));
	if (rules == NULL)
		return cli_fail("convert", "out of memory");
	save.rewrites = rules;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if ((r = cli_input_option("convert", c, optarg, &in)) != 0) {
			if (r != 1)
				goto out;
			continue;
		}
		switch (c) {
		case 'B': save.big_endian = true; break;
		case 'T':
			if (strcmp(optarg, "leaksnap") == 0) {
				text = false;
			} else if (strcmp(optarg, "android-text") == 0) {
				text = true;
			} else {
				r = cli_usage_error("convert", "unknown output format '%s': "
						    "expected leaksnap or android-text", optarg);
				goto out;
			}
			break;
		case 'R':
			if ((r = parse_rewrite(optarg, &rules[save.rewrite_count])) != 0)
				goto out;
			save.rewrite_count++;
			break;
		case 'h':
			fputs(convert_usage, stdout);
			r = cli_finish_stdout(EXIT_OK);
			goto out;
		default:
			r = cli_bad_option("convert", argv, c == ':' ? ':' : optopt);
			goto out;
		}
	}
	if (argc - optind != 2) {
		r = cli_usage_error("convert", "expected DUMP and OUT, got %d operand%s",
				    argc - optind, argc - optind == 1 ? "" : "s");
		goto out;
	}
	if (text && save.big_endian) {
		r = cli_usage_error("convert", "--big-endian is for --to leaksnap: a text dump "
				    "has no byte order");
		goto out;
	}
	if (!text && strcmp(argv[optind + 1], "-") == 0 && isatty(STDOUT_FILENO)) {
		r = cli_usage_error("convert", "refusing to write a binary LEAKSNAP file to a "
				    "terminal");
		goto out;
	}
	if (cli_input_check("convert", &in)) {
		r = EXIT_ERROR;
		goto out;
	}
	r = convert(argv[optind], argv[optind + 1], &in, text, &save);
out:
	free(rules);
	return r;
}
