/* leaksnap maps: the parsed mappings and modules of a maps file or a dump. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char maps_usage[] =
	"Usage: leaksnap maps [OPTIONS] FILE\n\n"
	"Parse /proc/PID/maps text and print its mappings and the modules they form\n"
	"(consecutive mappings of one file). FILE is maps text, or any snapshot that\n"
	"carries maps (LEAKSNAP, Android text, NHGT); '-' reads standard input.\n"
	"A dump's maps include the mappings of libraries unloaded before it (the\n"
	"hook's unloaded= lines), marked (unloaded).\n\n"
	"Options:\n"
	"  -j, --json    JSON output: {\"mappings\": [...], \"modules\": [...]}\n"
	"  -h, --help    this help\n\n"
	"Exit status: 0 success, 2 any error.\n";

static void print_text(const struct leaksnap_maps *m)
{
	printf("%zu mappings, %zu modules\n\nmappings:\n", leaksnap_maps_mapping_count(m),
	       leaksnap_maps_module_count(m));
	for (size_t i = 0; i < leaksnap_maps_mapping_count(m); i++) {
		const struct leaksnap_maps_mapping *p = leaksnap_maps_mapping(m, i);
		printf("  %016llx-%016llx %s %08llx %02x:%02x %-10llu",
		       (unsigned long long)p->start, (unsigned long long)p->end, p->perms,
		       (unsigned long long)p->offset, p->dev_major, p->dev_minor,
		       (unsigned long long)p->inode);
		if (p->path)
			printf(" %s%s%s", p->path, p->deleted ? " (deleted)" : "",
			       p->unloaded ? " (unloaded)" : "");
		if (p->module != LEAKSNAP_MAPS_NONE)
			printf("  [module %zu]", p->module);
		printf("\n");
	}
	printf("\nmodules:\n");
	for (size_t i = 0; i < leaksnap_maps_module_count(m); i++) {
		const struct leaksnap_maps_module *d = leaksnap_maps_module(m, i);
		printf("  %zu  %016llx-%016llx  %zu mapping%s  %s\n", i,
		       (unsigned long long)d->start, (unsigned long long)d->end, d->mapping_count,
		       d->mapping_count == 1 ? "" : "s", d->path);
	}
}

static void print_json(const struct leaksnap_maps *m)
{
	struct kit_json j;
	kit_json_begin(&j, stdout);
	kit_json_key(&j, "mappings");
	kit_json_list_begin(&j);
	for (size_t i = 0; i < leaksnap_maps_mapping_count(m); i++)
		kit_json_list_item(&j, cli_json_mapping(leaksnap_maps_mapping(m, i)));
	kit_json_list_end(&j);
	kit_json_key(&j, "modules");
	kit_json_list_begin(&j);
	for (size_t i = 0; i < leaksnap_maps_module_count(m); i++) {
		const struct leaksnap_maps_module *d = leaksnap_maps_module(m, i);
		kit_json_list_item(&j,
				   json_pack("{s:o, s:o, s:o, s:o, s:o}", "path",
					     kit_json_text(d->path), "start",
					     kit_json_addr(d->start), "end", kit_json_addr(d->end),
					     "first_mapping", kit_json_u64(d->first_mapping),
					     "mapping_count", kit_json_u64(d->mapping_count)));
	}
	kit_json_list_end(&j);
	kit_json_end(&j);
}

/* The maps of @path: a snapshot carries its own; anything else is parsed
 * as maps text.  NULL after printing the error. */
static struct leaksnap_maps *load_maps(const char *path)
{
	struct leaksnap_maps *m = NULL;
	struct leaksnap_error err;
	/* Standard input is read once, then tried both ways. */
	char *in = NULL;
	size_t in_len = 0;
	bool is_stdin = strcmp(path, "-") == 0;
	/* so is any input that is not a regular file (a pipe, <(...)) */
	struct stat st;
	bool once = is_stdin || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
				 !S_ISDIR(st.st_mode));
	if (once && cli_read_file(path, CLI_MAPS_MAX, "a maps file or dump read as a stream",
				  &in, &in_len))
		return NULL;
	const char *name = is_stdin ? "<stdin>" : path;
	struct leaksnap_snapshot *s = once ? leaksnap_snapshot_open_memory(in, in_len, name, NULL,
									   &err)
					   : leaksnap_snapshot_open(path, NULL, &err);
	if (s != NULL) {
		int rc = cli_snapshot_maps(s, NULL, &m);
		leaksnap_snapshot_close(s);
		free(in);
		if (rc == 0 && m == NULL)
			cli_fail(name, "the snapshot carries no maps");
		return m;
	}
	if (err.code != LEAKSNAP_ERR_UNKNOWN_FORMAT && err.code != LEAKSNAP_ERR_MAPS_FILE) {
		free(in);
		cli_fail_error(&err);
		return NULL;
	}
	/* Not a snapshot: parse it as maps text. */
	if (!once && cli_read_file(path, CLI_MAPS_MAX, "a maps file", &in, &in_len))
		return NULL;
	m = leaksnap_maps_parse(in, in_len, name, 1, 0, &err);
	free(in);
	if (m == NULL)
		cli_fail_error(&err);
	return m;
}

int cmd_maps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h':
			fputs(maps_usage, stdout);
			return cli_finish_stdout(EXIT_OK);
		default:
			cli_bad_option("maps", argv, c == ':' ? ':' : optopt);
			return EXIT_ERROR;
		}
	}
	if (argc - optind != 1) {
		cli_usage_error("maps", argc - optind ? "expected one FILE, got %d files"
						      : "missing FILE operand%.0d",
				argc - optind);
		return EXIT_ERROR;
	}
	if (cli_no_empty_names(argv + optind, 1))
		return EXIT_ERROR;
	struct leaksnap_maps *m = load_maps(argv[optind]);
	if (m == NULL)
		return EXIT_ERROR;
	if (json)
		print_json(m);
	else
		print_text(m);
	leaksnap_maps_free(m);
	return cli_finish_stdout(EXIT_OK);
}
