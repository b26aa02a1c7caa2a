/* leaksnap: command-line entry point — a table of subcommands.
 * Invoked as "leakdiff", the program runs "leaksnap diff". */
#include <string.h>

#include "cli.h"

static const struct cmd cmds[] = {
	{"show", cmd_show, "print a snapshot: header facts, totals, records by size"},
	{"maps", cmd_maps, "print the mappings and modules of a maps file or dump"},
	{"convert", cmd_convert, "write a snapshot as LEAKSNAP v1, Android text v1.2 or a pprof profile"},
	{"record", cmd_record, "run a program with the malloc hook, list the dumps it wrote"},
	{"diff", cmd_diff, "compare snapshots and rank suspected leaks (leakdiff)"},
	{"symbolize", cmd_symbolize, "show a snapshot with every frame symbolized"},
	{"addr2line", cmd_addr2line, "addresses in an ELF file to functions and source lines"},
	{"attach", cmd_attach, "load the in-app hook into a running process and start it"},
	{"adb", cmd_adb, "take heap snapshots and symbol files from an Android device"},
	{"ctl", cmd_ctl, "ask a running process over its control socket: stats, dump, capture"},
	{"watch", cmd_watch, "snapshot a running process every few seconds, then leakdiff"},
	{"store", cmd_store, "keep heap snapshots in a store (SQLite) across runs and builds"},
	{"history", cmd_history, "the runs of a store, build by build, with their suspects"},
	{NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: leaksnap COMMAND [OPTIONS] [FILE...]\n"
		   "       leakdiff OLD.dump NEW.dump...   (same as 'leaksnap diff')\n\n"
		   "Find native memory leaks from heap snapshots (LEAKSNAP dumps, raw bionic\n"
		   "get_malloc_leak_info buffers, Android text heap dumps, DDMS NHGT payloads).\n\n"
		   "Commands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nRun 'leaksnap COMMAND --help' for a command's options.\n"
		   "'leaksnap --version' prints the versions of leaksnap and of its libraries.\n\n"
		   "Exit status: 0 success; 1 leakdiff --fail-on or --fail-on-unreachable\n"
		   "             limit reached; 2 any error (usage, unreadable or malformed\n"
		   "             input, I/O).\n");
}

/* A command's exit status: a negative one (an error said by a function
 * that returns -1) is taken for EXIT_ERROR. */
static int run(int (*fn)(int argc, char **argv), int argc, char **argv)
{
	int status = fn(argc, argv);
	return status < 0 ? EXIT_ERROR : status;
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
	self = self ? self + 1 : (argc > 0 && argv[0] ? argv[0] : "leaksnap");
	cli_guard_terminal();
	cli_raise_open_files();
	if (strcmp(self, "leakdiff") == 0) {
		cli_program_name = "leakdiff"; /* its messages say so */
		return run(cmd_diff, argc, argv);
	}
	if (argc < 2) {
		cli_fail(NULL, "missing command (see 'leaksnap --help')");
		return EXIT_ERROR;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
	    strcmp(name, "help") == 0) {
		if (strcmp(name, "help") == 0 && argc > 2) {
			for (const struct cmd *c = cmds; c->name; c++) {
				if (strcmp(c->name, argv[2]) == 0) {
					static char help_opt[] = "--help";
					char *av[] = {argv[2], help_opt, NULL};
					return run(c->fn, 2, av);
				}
			}
			cli_fail(NULL, "unknown command '%s'", argv[2]);
			return EXIT_ERROR;
		}
		usage(stdout);
		return cli_finish_stdout(EXIT_OK);
	}
	if (strcmp(name, "--version") == 0) {
		return cli_print_version("leaksnap");
	}
	for (const struct cmd *c = cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return run(c->fn, argc - 1, argv + 1);
	cli_fail(NULL, "unknown command '%s' (see 'leaksnap --help')", name);
	return EXIT_ERROR;
}
