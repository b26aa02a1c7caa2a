/* leaksnap convert: write any readable snapshot as a LEAKSNAP v1 file. */
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char convert_usage[] =
	"Usage: leaksnap convert [OPTIONS] DUMP OUT\n\n"
	"Read DUMP in any supported format and write it to OUT as a LEAKSNAP v1 file\n"
	"with its maps embedded and its metadata kept (plus source_format=...).\n"
	"Duplicate records are merged; Android 7 counts are written corrected.\n"
	"OUT must not exist: leaksnap never overwrites a file.\n\n"
	"Options:\n"
	CLI_INPUT_HELP
	"  --big-endian         write big-endian record fields (flag bit 0)\n"
	"  --to FORMAT          output format: leaksnap (the default and only one so far)\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error.\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_LONGOPTS,
		{"big-endian", no_argument, NULL, 'B'},
		{"to", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_input in = {0};
	struct snapshot_save_opts save = {0};
	int c, r;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if ((r = cli_input_option("convert", c, optarg, &in)) != 0) {
			if (r != 1)
				return r;
			continue;
		}
		switch (c) {
		case 'B': save.big_endian = true; break;
		case 'T':
			if (strcmp(optarg, "leaksnap") != 0)
				return cli_usage_error("convert", "unknown output format '%s'", optarg);
			break;
		case 'h':
			fputs(convert_usage, stdout);
			return cli_finish_stdout(EXIT_OK);
		default:
			return cli_bad_option("convert", argv, c == ':' ? ':' : optopt);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("convert", "expected DUMP and OUT, got %d operand%s",
				       argc - optind, argc - optind == 1 ? "" : "s");
	if (cli_input_check("convert", &in))
		return EXIT_ERROR;
	const char *src = argv[optind], *out = argv[optind + 1];
	struct snapshot *s = cli_open_snapshot(src, &in.open, in.maps_path);
	if (s == NULL)
		return EXIT_ERROR;
	/* Refuse maps we could not read back. */
	struct maps *m = NULL;
	if (cli_snapshot_maps(s, in.maps_path, &m)) {
		snapshot_close(s);
		return EXIT_ERROR;
	}
	maps_free(m);
	cli_print_warnings(s);
	struct leaksnap_error err;
	int rc = snapshot_save(s, out, &save, &err) ? cli_fail_error(&err) : EXIT_OK;
	snapshot_close(s);
	return rc;
}
