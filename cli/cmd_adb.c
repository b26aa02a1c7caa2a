/* leaksnap adb: the command -- its options, the action table that picks
 * enable, disable, snapshot or symbols, and the CLI's side of the device
 * driver (adb/, docs/adb.md): its messages and files. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adb.h"
#include "cli.h"

static const char adb_usage[] =
	"Usage: leaksnap adb [-s SERIAL] enable PACKAGE [--malloc-debug | --hook LIB.so [--control]]\n"
	"                                [--frames N]\n"
	"       leaksnap adb [-s SERIAL] disable PACKAGE\n"
	"       leaksnap adb [-s SERIAL] snapshot (PACKAGE | --pid PID) [--count N] [--interval "
	"SEC] [--out DIR]\n"
	"                                [--socket]\n"
	"       leaksnap adb [-s SERIAL] symbols DUMP... --out DIR [--symbols DIR]...\n\n"
	"Drive an Android device through adb ($ADB, else adb on PATH).\n\n"
	"Actions:\n"
	"  enable      start the app under malloc_debug (wrap.PACKAGE =\n"
	"              'LIBC_DEBUG_MALLOC_OPTIONS=backtrace=N logwrapper') or with the\n"
	"              hook (LIB.so pushed, LD_PRELOAD), restart it, check it came back\n"
	"              under the wrapper; needs a debuggable app or a root shell\n"
	"  disable     clear wrap.PACKAGE, remove the pushed hook, restart the app\n"
	"  snapshot    take N heap snapshots of the running app (am dumpheap -n with\n"
	"              malloc_debug, signal 47 with the hook), pull them as\n"
	"              PACKAGE.PID.N.txt or .dump (never overwriting), remove the\n"
	"              device copies, list the files; with --socket, stream them\n"
	"              from the hook's control socket instead (adb forward tcp:0\n"
	"              localabstract:leaksnap.PID; the app started with\n"
	"              LEAKSNAP_CONTROL=1, as enable --control does): no file on the\n"
	"              device, no run-as\n"
	"  symbols     pull the device's files of every module of the dumps' maps that\n"
	"              the --symbols trees do not hold with the right build ID into\n"
	"              DIR, in the AOSP symbols layout (DIR/system/lib64/libc.so)\n\n"
	"Options:\n"
	"  -s SERIAL          the device (default: $ANDROID_SERIAL, else the only one)\n"
	"  --malloc-debug     enable: bionic's malloc_debug backtrace option (default)\n"
	"  --hook LIB.so      enable: preload this build of libleakhook.so instead\n"
	"  --control          enable: the hook serves its control socket too\n"
	"                     (LEAKSNAP_CONTROL=1 in wrap.PACKAGE; snapshot --socket)\n"
	"  --frames N         enable: frames per allocation (1..256, default 16)\n"
	"  --pid PID          snapshot: this process instead of PACKAGE's\n"
	"  --count N          snapshot: snapshots to take (1..1000, default 1)\n"
	"  --interval SEC     snapshot: seconds between them (default 10)\n"
	"  --out DIR          snapshot: where to write (default .); symbols: required\n"
	"  --socket           snapshot: through the control socket (PACKAGE.PID.N.dump)\n"
	"  --symbols DIR      symbols: a tree already holding symbol files (repeatable)\n"
	"  -h, --help         this help\n\n"
	"Environment: ADB, ANDROID_SERIAL, LEAKSNAP_ADB_TIMEOUT (seconds to wait for\n"
	"a dump or a restart, default 60).\n\n"
	"Exit status: 0 success, 2 any error (every adb failure is one line\n"
	"'leaksnap: adb: ...').\n";

/* The driver's output: the CLI's messages and files. */
static void out_error(const char *subject, const char *text)
{
	cli_fail(subject, "%s", text);
}

static void out_warning(const char *subject, const char *text)
{
	cli_warn(subject, "%s", text);
}

static void out_progress(const char *text)
{
	fprintf(stderr, "leaksnap: %s\n", text);
}

static void out_result(const char *text)
{
	printf("%s\n", text);
}

static int out_read_maps(const char *path, char **text, size_t *len)
{
	return cli_read_file(path, CLI_MAPS_MAX, "a maps file", text, len) ? -1 : 0;
}

static int out_open_dump(const char *path, struct leaksnap_snapshot **snap,
			 struct leaksnap_maps **maps)
{
	struct leaksnap_snapshot *s = cli_open_snapshot(path, NULL, NULL);
	*snap = NULL;
	*maps = NULL;
	if (!s || cli_snapshot_maps(s, NULL, maps)) {
		leaksnap_snapshot_close(s);
		return -1;
	}
	*snap = s;
	return 0;
}

static const struct adb_output cli_adb_output = {
	.error = out_error,
	.warning = out_warning,
	.progress = out_progress,
	.result = out_result,
	.child_setup = cli_restore_open_files,
	.read_maps = out_read_maps,
	.open_dump = out_open_dump,
};

/* The options of every action, as given. */
struct adb_args {
	const char *serial, *hook, *out;
	bool malloc_debug, frames_set, socket, control;
	uint64_t frames, count, pid;
	double interval;
	const char **symdirs;
	size_t nsym;
	int seen[128];
	int nargs;   /* the operands after the action */
	char **args;
};

static const struct option adb_longopts[] = {
	{"malloc-debug", no_argument, NULL, 'D'},
	{"hook", required_argument, NULL, 'H'},
	{"frames", required_argument, NULL, 'F'},
	{"pid", required_argument, NULL, 'p'},
	{"count", required_argument, NULL, 'c'},
	{"interval", required_argument, NULL, 'i'},
	{"out", required_argument, NULL, 'o'},
	{"symbols", required_argument, NULL, 'S'},
	{"socket", no_argument, NULL, 'K'},
	{"control", no_argument, NULL, 'C'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* One option's value into @o: 0, or -1 after printing a usage error. */
static int parse_value(int c, const char *arg, struct adb_args *o)
{
	switch (c) {
	case 's': o->serial = arg; break;
	case 'D': o->malloc_debug = true; break;
	case 'K': o->socket = true; break;
	case 'C': o->control = true; break;
	case 'H': o->hook = arg; break;
	case 'o': o->out = arg; break;
	case 'S': o->symdirs[o->nsym++] = arg; break;
	case 'F':
		if (!cli_parse_uint(arg, 1, 256, &o->frames)) {
			cli_usage_error("adb", "--frames must be a number from 1 to 256");
			return -1;
		}
		o->frames_set = true;
		break;
	case 'p':
		if (!cli_parse_uint(arg, 1, 4194304, &o->pid)) {
			cli_usage_error("adb", "--pid must be a process id (1 to 4194304)");
			return -1;
		}
		break;
	case 'c':
		if (!cli_parse_uint(arg, 1, 1000, &o->count)) {
			cli_usage_error("adb", "--count must be a number from 1 to 1000");
			return -1;
		}
		break;
	case 'i':
		if (!cli_parse_seconds(arg, 0, 86400, &o->interval)) {
			cli_usage_error("adb", "--interval must be seconds from 0 to 86400");
			return -1;
		}
		break;
	}
	return 0;
}

/* The options: 0 to go on, 1 when the help was printed, -1 after printing
 * an error. */
static int parse_options(int argc, char **argv, struct adb_args *o)
{
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:h", adb_longopts, NULL)) != -1) {
		if (c > 0 && c < 128)
			o->seen[c]++;
		if (c == 'h') {
			fputs(adb_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? 1 : -1;
		}
		if (c == '?' || c == ':') {
			cli_bad_option("adb", argv, c == ':' ? ':' : optopt);
			return -1;
		}
		if (parse_value(c, optarg, o))
			return -1;
	}
	return 0;
}

/* The one PACKAGE operand (none for snapshot --pid), a valid name: 0, or
 * -1 after printing a usage error. */
static int check_package(const char *action, const struct adb_args *o, bool pid_instead)
{
	int want = pid_instead ? 0 : 1;
	if (o->nargs != want) {
		if (o->nargs < want)
			cli_usage_error("adb", "%s: missing PACKAGE operand", action);
		else if (want == 0)
			cli_usage_error("adb", "snapshot: give PACKAGE or --pid PID, not both");
		else
			cli_usage_error("adb", "%s: one PACKAGE expected, got %d operands", action,
					o->nargs);
		return -1;
	}
	const char *package = o->nargs >= 1 ? o->args[0] : NULL;
	if (package && !adb_package_valid(package)) {
		cli_usage_error("adb", "'%s' is not a Java package name (like com.example.app)",
				package);
		return -1;
	}
	if (o->malloc_debug && o->hook) {
		cli_usage_error("adb", "enable: --malloc-debug and --hook exclude each other");
		return -1;
	}
	if (o->control && !o->hook) {
		cli_usage_error("adb", "enable: --control needs --hook (malloc_debug has no control socket)");
		return -1;
	}
	return 0;
}

/* The device, starting from -s SERIAL when given (adb_connect). */
static void device_from(struct adb *a, const struct adb_args *o)
{
	memset(a, 0, sizeof(*a));
	if (o->serial)
		snprintf(a->serial, sizeof(a->serial), "%s", o->serial);
}

/* The actions: each an exit status. */
static int act_enable(struct adb_args *o)
{
	struct adb a;
	if (check_package("enable", o, false))
		return EXIT_ERROR;
	device_from(&a, o);
	struct adb_enable_opts eo = {o->args[0], o->hook, (unsigned)o->frames, o->frames_set,
				     o->control};
	if (adb_enable(&a, &eo))
		return EXIT_ERROR;
	return cli_finish_stdout(EXIT_OK);
}

static int act_disable(struct adb_args *o)
{
	struct adb a;
	if (check_package("disable", o, false))
		return EXIT_ERROR;
	device_from(&a, o);
	if (adb_disable(&a, o->args[0]))
		return EXIT_ERROR;
	return cli_finish_stdout(EXIT_OK);
}

static int act_snapshot(struct adb_args *o)
{
	struct adb a;
	if (check_package("snapshot", o, o->pid != 0))
		return EXIT_ERROR;
	device_from(&a, o);
	if (o->out) {
		struct stat st;
		if (stat(o->out, &st) != 0) {
			cli_fail(o->out, "%s", strerror(errno));
			return EXIT_ERROR;
		}
		if (!S_ISDIR(st.st_mode)) {
			cli_fail(o->out, "not a directory");
			return EXIT_ERROR;
		}
	}
	struct adb_snapshot_opts so = {o->nargs ? o->args[0] : NULL, (long)o->pid,
				       (unsigned)o->count, o->interval, o->out ? o->out : ".",
				       o->socket};
	int rc = adb_snapshot(&a, &so);
	int st = cli_finish_stdout(EXIT_OK);
	return rc ? EXIT_ERROR : st;
}

static int act_symbols(struct adb_args *o)
{
	if (o->nargs < 1) {
		cli_usage_error("adb", "symbols: missing DUMP operand");
		return EXIT_ERROR;
	}
	if (!o->out) {
		cli_usage_error("adb", "symbols: --out DIR is required");
		return EXIT_ERROR;
	}
	struct adb a;
	memset(&a, 0, sizeof(a));
	struct adb_symbols_opts so = {o->args, (size_t)o->nargs, o->out, o->symdirs, o->nsym};
	int rc = adb_symbols(&a, o->serial, &so);
	int st = cli_finish_stdout(EXIT_OK);
	return rc ? EXIT_ERROR : st;
}

/* The action table, and the options each action takes. */
static const struct adb_action {
	const char *name;
	int (*fn)(struct adb_args *o);
	const char *opts; /* its option letters */
} adb_actions[] = {
	{"enable", act_enable, "DHFC"},
	{"disable", act_disable, ""},
	{"snapshot", act_snapshot, "pcioK"},
	{"symbols", act_symbols, "oS"},
};

/* Every option given belongs to @act: 0, or -1 after printing a usage
 * error (the first in this list's order). */
static int check_options(const struct adb_action *act, const struct adb_args *o)
{
	static const struct {
		int opt;
		const char *name;
	} names[] = {{'D', "malloc-debug"}, {'H', "hook"}, {'F', "frames"}, {'p', "pid"},
		     {'c', "count"}, {'i', "interval"}, {'o', "out"}, {'S', "symbols"},
		     {'K', "socket"}, {'C', "control"}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (o->seen[names[i].opt] && !strchr(act->opts, names[i].opt)) {
			cli_usage_error("adb", "option '--%s' is not for '%s'", names[i].name,
					act->name);
			return -1;
		}
	}
	return 0;
}

/* Pick the action named by the first operand and run it (as bpftool's
 * cmd_select does): its exit status. */
static int select_action(int argc, char **argv, struct adb_args *o)
{
	size_t n = sizeof(adb_actions) / sizeof(adb_actions[0]);
	if (argc < 1) {
		char names[128] = "";
		for (size_t i = 0; i < n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ", adb_actions[i].name);
		cli_usage_error("adb", "missing action: %s", names);
		return EXIT_ERROR;
	}
	for (size_t i = 0; i < n; i++) {
		const struct adb_action *act = &adb_actions[i];
		if (strcmp(argv[0], act->name) != 0)
			continue;
		if (check_options(act, o))
			return EXIT_ERROR;
		o->nargs = argc - 1;
		o->args = argv + 1;
		return act->fn(o);
	}
	cli_usage_error("adb", "unknown action '%s'", argv[0]);
	return EXIT_ERROR;
}

int cmd_adb(int argc, char **argv)
{
	struct adb_args o = {.frames = 16, .count = 1, .interval = 10};
	o.symdirs = calloc((size_t)argc + 1, sizeof(*o.symdirs));
	if (!o.symdirs) {
		cli_fail("adb", "out of memory");
		return EXIT_ERROR;
	}
	adb_set_output(&cli_adb_output);
	int rc = parse_options(argc, argv, &o);
	int status = rc < 0   ? EXIT_ERROR
		     : rc > 0 ? EXIT_OK
			      : select_action(argc - optind, argv + optind, &o);
	free(o.symdirs);
	return status;
}
