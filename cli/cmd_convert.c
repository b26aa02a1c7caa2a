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
	"  --maps FILE          embed FILE (/proc/PID/maps text) instead of DUMP's maps\n"
	"  --pointer-size N     raw input buffers: 4 or 8\n"
	"  --frames N           raw input buffers: frames per record (1..256)\n"
	"  --count-is-frames    the input's count field holds the frame count (Android 7)\n"
	"  --big-endian         write big-endian record fields (flag bit 0)\n"
	"  --to FORMAT          output format: leaksnap (the default and only one so far)\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success, 2 any error.\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"maps", required_argument, NULL, 'm'},
		{"pointer-size", required_argument, NULL, 'P'},
		{"frames", required_argument, NULL, 'F'},
		{"count-is-frames", no_argument, NULL, 'C'},
		{"big-endian", no_argument, NULL, 'B'},
		{"to", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct snapshot_open_opts open = {0};
	struct snapshot_save_opts save = {0};
	const char *maps_path = NULL;
	uint64_t v;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': maps_path = optarg; break;
		case 'P':
			if (!cli_parse_uint(optarg, 4, 8, &v) || (v != 4 && v != 8))
				return cli_usage_error("convert", "--pointer-size must be 4 or 8");
			open.pointer_size = (unsigned)v;
			break;
		case 'F':
			if (!cli_parse_uint(optarg, 1, 256, &v))
				return cli_usage_error("convert",
						       "--frames must be a number from 1 to 256");
			open.frames = (unsigned)v;
			break;
		case 'C': open.count_is_frames = true; break;
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
	if ((open.pointer_size != 0) != (open.frames != 0))
		return cli_usage_error("convert", "--pointer-size and --frames go together");
	const char *in = argv[optind], *out = argv[optind + 1];
	struct snapshot *s = cli_open_snapshot(in, &open, maps_path);
	if (s == NULL)
		return EXIT_ERROR;
	/* Refuse maps we could not read back. */
	struct maps *m = NULL;
	if (cli_snapshot_maps(s, maps_path, &m)) {
		snapshot_close(s);
		return EXIT_ERROR;
	}
	maps_free(m);
	struct leaksnap_error err;
	int rc = snapshot_save(s, out, &save, &err) ? cli_fail_error(&err) : EXIT_OK;
	snapshot_close(s);
	return rc;
}
