/* leaksnap adb: options and dispatch; enable and disable (the app's wrap
 * property, the hook pushed, the restart and the check that it came back
 * under the wrapper).  docs/adb.md has the whole contract. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adb.h"
#include "cli.h"

static const char adb_usage[] =
	"Usage: leaksnap adb [-s SERIAL] enable PACKAGE [--malloc-debug | --hook LIB.so] [--frames N]\n"
	"       leaksnap adb [-s SERIAL] disable PACKAGE\n"
	"       leaksnap adb [-s SERIAL] snapshot (PACKAGE | --pid PID) [--count N] [--interval SEC] [--out DIR]\n"
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
	"              device copies, list the files\n"
	"  symbols     pull the device's files of every module of the dumps' maps that\n"
	"              the --symbols trees do not hold with the right build ID into\n"
	"              DIR, in the AOSP symbols layout (DIR/system/lib64/libc.so)\n\n"
	"Options:\n"
	"  -s SERIAL          the device (default: $ANDROID_SERIAL, else the only one)\n"
	"  --malloc-debug     enable: bionic's malloc_debug backtrace option (default)\n"
	"  --hook LIB.so      enable: preload this build of libleakhook.so instead\n"
	"  --frames N         enable: frames per allocation (1..256, default 16)\n"
	"  --pid PID          snapshot: this process instead of PACKAGE's\n"
	"  --count N          snapshot: snapshots to take (1..1000, default 1)\n"
	"  --interval SEC     snapshot: seconds between them (default 10)\n"
	"  --out DIR          snapshot: where to write (default .); symbols: required\n"
	"  --symbols DIR      symbols: a tree already holding symbol files (repeatable)\n"
	"  -h, --help         this help\n\n"
	"Environment: ADB, ANDROID_SERIAL, LEAKSNAP_ADB_TIMEOUT (seconds to wait for\n"
	"a dump or a restart, default 60).\n\n"
	"Exit status: 0 success, 2 any error (every adb failure is one line\n"
	"'leaksnap: adb: ...').\n";

#define HOOK_DIR "/data/local/tmp"

/* Run a device command made of @args (quoted); its output in @r. */
static int device(const struct adb *a, const char *const *args, bool quiet, struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	char *cmd = adb_cmd(NULL, args);
	if (!cmd)
		return adb_fail("out of memory");
	int rc = adb_shell(a, cmd, ADB_SMALL, 60, quiet, r);
	free(cmd);
	return rc;
}

static int device_ok(const struct adb *a, const char *const *args)
{
	struct adb_result r = {0};
	int rc = device(a, args, false, &r);
	adb_result_free(&r);
	return rc;
}

static int check_installed(const struct adb *a, const char *package)
{
	const char *args[] = {"pm", "path", package, NULL};
	struct adb_result r = {0};
	int rc = device(a, args, true, &r);
	if (rc == 0 && strncmp(r.out, "package:", 8) != 0)
		rc = adb_fail("package '%s' is not installed", package);
	adb_result_free(&r);
	return rc;
}

/* A wrap property needs a debuggable app or a root shell. */
static int check_access(const struct adb *a, const char *package, const char *prop)
{
	if (a->root)
		return 0;
	const char *args[] = {"run-as", package, "id", "-u", NULL};
	struct adb_result r = {0};
	int rc = device(a, args, true, &r);
	if (rc == 0 && r.status != 0) {
		const char *why = adb_first_line(r.err);
		rc = adb_fail("%s needs a debuggable app or a root shell (adb root): %s", prop,
			      *why ? why : "run-as failed");
	}
	adb_result_free(&r);
	return rc;
}

static int getprop(const struct adb *a, const char *prop, char **value)
{
	const char *args[] = {"getprop", prop, NULL};
	struct adb_result r = {0};
	*value = NULL;
	if (device(a, args, false, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	size_t n = r.out_len;
	while (n && (r.out[n - 1] == '\n' || r.out[n - 1] == '\r'))
		n--;
	r.out[n] = '\0';
	*value = r.out;
	r.out = NULL;
	adb_result_free(&r);
	return 0;
}

static int setprop(const struct adb *a, const char *prop, const char *value)
{
	const char *args[] = {"setprop", prop, value, NULL};
	if (device_ok(a, args))
		return EXIT_ERROR;
	char *now;
	if (getprop(a, prop, &now))
		return EXIT_ERROR;
	int rc = strcmp(now, value) == 0 ? 0
					 : adb_fail("setprop %s was refused: it reads '%s'", prop, now);
	free(now);
	return rc;
}

/* Force-stop and start the app's launcher activity; its new pid. */
static int restart(const struct adb *a, const char *package, long *pid)
{
	const char *stop[] = {"am", "force-stop", package, NULL};
	if (device_ok(a, stop))
		return EXIT_ERROR;
	const char *resolve[] = {"cmd", "package", "resolve-activity", "--brief", "-c",
				 "android.intent.category.LAUNCHER", package, NULL};
	struct adb_result r = {0};
	if (device(a, resolve, true, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	/* the last line is PACKAGE/ACTIVITY when one was found */
	char comp[512] = "";
	for (char *line = strtok(r.out, "\r\n"); line; line = strtok(NULL, "\r\n"))
		snprintf(comp, sizeof(comp), "%s", line);
	size_t pl = strlen(package);
	bool ok = r.status == 0 && strncmp(comp, package, pl) == 0 && comp[pl] == '/' && comp[pl + 1];
	for (const char *p = comp + pl + 1; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		     *p == '.' || *p == '_' || *p == '$';
	adb_result_free(&r);
	const char *start[] = {"am", "start", "-n", comp, NULL};
	const char *monkey[] = {"monkey", "-p", package, "-c", "android.intent.category.LAUNCHER",
				"1", NULL};
	if (device_ok(a, ok ? start : monkey))
		return EXIT_ERROR;
	double deadline = adb_now() + a->timeout;
	for (;;) {
		if (adb_pidof(a, package, pid))
			return EXIT_ERROR;
		if (*pid)
			return 0;
		if (adb_now() > deadline)
			return adb_fail("%s did not start within %.0f s", package, a->timeout);
		adb_sleep(0.2);
	}
}

/* Whether the NUL-separated @env has an entry starting with @prefix and
 * containing @part (NULL: anything). */
static bool env_has(const char *env, size_t len, const char *prefix, const char *part)
{
	for (size_t at = 0; at < len;) {
		const char *e = env + at;
		size_t n = strnlen(e, len - at);
		if (strncmp(e, prefix, strlen(prefix)) == 0 && (!part || strstr(e, part)))
			return true;
		at += n + 1;
	}
	return false;
}

/* Read the app's environment (and maps): is it under the wrapper? */
static int check_wrapped(const struct adb *a, const char *package, long pid, const char *hook,
			 bool want)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	struct adb_result r = {0};
	if (adb_cat(a, package, path, ADB_LARGE, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	bool md = env_has(r.out, r.out_len, "LIBC_DEBUG_MALLOC_OPTIONS=", "backtrace");
	bool pre = env_has(r.out, r.out_len, "LD_PRELOAD=", hook ? hook : "leakhook");
	adb_result_free(&r);
	bool mapped = false;
	if (pre) {
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		if (adb_cat(a, package, path, ADB_LARGE, &r)) {
			adb_result_free(&r);
			return EXIT_ERROR;
		}
		mapped = strstr(r.out, hook ? hook : "leakhook") != NULL;
		adb_result_free(&r);
	}
	if (!want && (md || pre))
		return adb_fail("%s (pid %ld) still runs under a wrapper after the restart", package, pid);
	if (want && !hook && !md)
		return adb_fail("%s (pid %ld) did not start under malloc_debug: no "
				"LIBC_DEBUG_MALLOC_OPTIONS in its environment",
				package, pid);
	if (want && hook && !pre)
		return adb_fail("%s (pid %ld) did not start with the hook: no LD_PRELOAD of %s in its "
				"environment",
				package, pid, hook);
	if (want && hook && !mapped)
		return adb_fail("%s (pid %ld) did not load %s (SELinux? adb root && adb shell "
				"setenforce 0)",
				package, pid, hook);
	return 0;
}

/* What enable and disable both start with: the device, the package, the
 * right to set its wrap property (named into @prop), and the name of the
 * hook pushed for it (into @hook). */
static int prepare(struct adb *a, const char *package, char *prop, size_t prop_size, char *hook,
		   size_t hook_size)
{
	if (adb_connect(a, NULL) || check_installed(a, package))
		return EXIT_ERROR;
	adb_wrap_prop(a, package, prop, prop_size);
	if (check_access(a, package, prop))
		return EXIT_ERROR;
	snprintf(hook, hook_size, HOOK_DIR "/leakhook.%s.so", package);
	return 0;
}

static int do_enable(struct adb *a, const char *package, const char *hook_lib, unsigned frames,
		     bool frames_set)
{
	char prop[300], value[512], hook[300];
	if (hook_lib) {
		int fd = open(hook_lib, O_RDONLY | O_CLOEXEC);
		char magic[4] = {0};
		if (fd < 0)
			return cli_fail(hook_lib, "%s", strerror(errno));
		ssize_t n = read(fd, magic, 4);
		close(fd);
		if (n != 4 || memcmp(magic, "\177ELF", 4) != 0)
			return cli_fail(hook_lib, "not an ELF shared library");
	}
	if (prepare(a, package, prop, sizeof(prop), hook, sizeof(hook)))
		return EXIT_ERROR;
	if (hook_lib) {
		int n = snprintf(value, sizeof(value), "LD_PRELOAD=%s LEAKSNAP_OUT=/data/data/%s/leaksnap",
				 hook, package);
		if (frames_set)
			snprintf(value + n, sizeof(value) - (size_t)n, " LEAKSNAP_FRAMES=%u", frames);
	} else {
		snprintf(value, sizeof(value), "LIBC_DEBUG_MALLOC_OPTIONS=backtrace=%u logwrapper",
			 frames);
	}
	if (a->sdk > 0 && a->sdk < 26 && strlen(value) > 91)
		return adb_fail("the %s value '%s' is %zu bytes: Android before 8.0 (this device: SDK "
				"%d) allows 91",
				prop, value, strlen(value), a->sdk);
	if (hook_lib) {
		const char *push[] = {"push", hook_lib, hook, NULL};
		struct adb_result r = {0};
		int rc = adb_run(a, push, -1, ADB_SMALL, 300, false, &r);
		adb_result_free(&r);
		const char *chmod[] = {"chmod", "644", hook, NULL};
		if (rc || device_ok(a, chmod))
			return EXIT_ERROR;
		printf("pushed %s to %s\n", hook_lib, hook);
	}
	if (setprop(a, prop, value)) {
		if (hook_lib) { /* nothing names it: not left behind */
			const char *rm[] = {"rm", "-f", hook, NULL};
			struct adb_result r = {0};
			if (device(a, rm, true, &r) == 0)
				printf("removed %s\n", hook);
			adb_result_free(&r);
		}
		return EXIT_ERROR;
	}
	printf("%s: %s\n", prop, value);
	long pid;
	if (restart(a, package, &pid) || check_wrapped(a, package, pid, hook_lib ? hook : NULL, true))
		return EXIT_ERROR;
	if (hook_lib)
		printf("%s: running as pid %ld with %s (dumps: /data/data/%s/leaksnap.%ld.N.dump)\n",
		       package, pid, hook, package, pid);
	else
		printf("%s: running as pid %ld with malloc_debug (backtrace=%u)\n", package, pid,
		       frames);
	return cli_finish_stdout(EXIT_OK);
}

static int do_disable(struct adb *a, const char *package)
{
	char prop[300], hook[300];
	if (prepare(a, package, prop, sizeof(prop), hook, sizeof(hook)))
		return EXIT_ERROR;
	char *old;
	if (getprop(a, prop, &old))
		return EXIT_ERROR;
	bool had_hook = strstr(old, hook) != NULL;
	int rc = 0;
	if (*old) {
		rc = setprop(a, prop, "");
		if (!rc)
			printf("%s: cleared (was '%s')\n", prop, old);
	} else {
		printf("%s: was not set\n", prop);
	}
	free(old);
	if (rc)
		return rc;
	/* The hook this tool pushes for the package, named by the property
	 * or left by an enable that failed after the push. */
	const char *ls[] = {"ls", hook, NULL};
	struct adb_result r = {0};
	/* (by what ls prints: adb before Android 7 does not pass on the
	 * status of the command) */
	bool there = had_hook || (device(a, ls, true, &r) == 0 && r.out &&
				  strncmp(r.out, hook, strlen(hook)) == 0 &&
				  (r.out[strlen(hook)] == '\n' || r.out[strlen(hook)] == '\r'));
	adb_result_free(&r);
	if (there) {
		const char *rm[] = {"rm", "-f", hook, NULL};
		if (device_ok(a, rm))
			return EXIT_ERROR;
		printf("removed %s\n", hook);
	}
	long pid;
	if (restart(a, package, &pid) || check_wrapped(a, package, pid, NULL, false))
		return EXIT_ERROR;
	printf("%s: running as pid %ld without a wrapper\n", package, pid);
	return cli_finish_stdout(EXIT_OK);
}

/* Which action each option belongs to (bit 0 enable, 1 disable, 2
 * snapshot, 3 symbols). */
static int check_option(const char *action, int opt, const char *name)
{
	static const char *const actions[] = {"enable", "disable", "snapshot", "symbols"};
	unsigned mask = 0;
	switch (opt) {
	case 'D': case 'H': case 'F': mask = 1; break;
	case 'p': case 'c': case 'i': mask = 4; break;
	case 'o': mask = 4 | 8; break;
	case 'S': mask = 8; break;
	}
	for (unsigned i = 0; i < 4; i++)
		if (strcmp(action, actions[i]) == 0 && (mask & (1u << i)))
			return 0;
	return cli_usage_error("adb", "option '--%s' is not for '%s'", name, action);
}

int cmd_adb(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"malloc-debug", no_argument, NULL, 'D'},
		{"hook", required_argument, NULL, 'H'},
		{"frames", required_argument, NULL, 'F'},
		{"pid", required_argument, NULL, 'p'},
		{"count", required_argument, NULL, 'c'},
		{"interval", required_argument, NULL, 'i'},
		{"out", required_argument, NULL, 'o'},
		{"symbols", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *serial = NULL, *hook = NULL, *out = NULL;
	bool malloc_debug = false, frames_set = false;
	uint64_t frames = 16, count = 1, pid = 0;
	double interval = 10;
	const char **symdirs = calloc((size_t)argc + 1, sizeof(*symdirs));
	int seen[128] = {0};
	size_t nsym = 0;
	int c, rc = EXIT_ERROR;
	if (!symdirs)
		return cli_fail("adb", "out of memory");
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:h", longopts, NULL)) != -1) {
		if (c > 0 && c < 128)
			seen[c]++;
		switch (c) {
		case 's': serial = optarg; break;
		case 'D': malloc_debug = true; break;
		case 'H': hook = optarg; break;
		case 'o': out = optarg; break;
		case 'S': symdirs[nsym++] = optarg; break;
		case 'F':
			if (!cli_parse_uint(optarg, 1, 256, &frames)) {
				cli_usage_error("adb", "--frames must be a number from 1 to 256");
				goto done;
			}
			frames_set = true;
			break;
		case 'p':
			if (!cli_parse_uint(optarg, 1, 4194304, &pid)) {
				cli_usage_error("adb", "--pid must be a process id (1 to 4194304)");
				goto done;
			}
			break;
		case 'c':
			if (!cli_parse_uint(optarg, 1, 1000, &count)) {
				cli_usage_error("adb", "--count must be a number from 1 to 1000");
				goto done;
			}
			break;
		case 'i': {
			char *end;
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(interval >= 0 && interval <= 86400) ||
			    (*optarg < '0' || *optarg > '9')) {
				cli_usage_error("adb", "--interval must be seconds from 0 to 86400");
				goto done;
			}
			break;
		}
		case 'h':
			fputs(adb_usage, stdout);
			rc = cli_finish_stdout(EXIT_OK);
			goto done;
		default:
			rc = cli_bad_option("adb", argv, c == ':' ? ':' : optopt);
			goto done;
		}
	}
	if (optind >= argc) {
		cli_usage_error("adb", "missing action: enable, disable, snapshot or symbols");
		goto done;
	}
	const char *action = argv[optind++];
	if (strcmp(action, "enable") && strcmp(action, "disable") && strcmp(action, "snapshot") &&
	    strcmp(action, "symbols")) {
		cli_usage_error("adb", "unknown action '%s'", action);
		goto done;
	}
	static const struct {
		int opt;
		const char *name;
	} names[] = {{'D', "malloc-debug"}, {'H', "hook"}, {'F', "frames"}, {'p', "pid"},
		     {'c', "count"}, {'i', "interval"}, {'o', "out"}, {'S', "symbols"}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (seen[names[i].opt] && check_option(action, names[i].opt, names[i].name))
			goto done;
	int nargs = argc - optind;
	char **args = argv + optind;
	struct adb a;
	memset(&a, 0, sizeof(a));
	if (strcmp(action, "symbols") == 0) {
		if (nargs < 1) {
			cli_usage_error("adb", "symbols: missing DUMP operand");
			goto done;
		}
		if (!out) {
			cli_usage_error("adb", "symbols: --out DIR is required");
			goto done;
		}
		struct adb_symbols_opts so = {args, (size_t)nargs, out, symdirs, nsym};
		rc = adb_symbols(&a, serial, &so);
		goto done;
	}
	const char *package = nargs >= 1 ? args[0] : NULL;
	int want = strcmp(action, "snapshot") == 0 && pid ? 0 : 1;
	if (nargs != want) {
		if (nargs < want)
			cli_usage_error("adb", "%s: missing PACKAGE operand", action);
		else if (want == 0)
			cli_usage_error("adb", "snapshot: give PACKAGE or --pid PID, not both");
		else
			cli_usage_error("adb", "%s: one PACKAGE expected, got %d operands", action, nargs);
		goto done;
	}
	if (package && !adb_package_valid(package)) {
		cli_usage_error("adb", "'%s' is not a Java package name (like com.example.app)", package);
		goto done;
	}
	if (malloc_debug && hook) {
		cli_usage_error("adb", "enable: --malloc-debug and --hook exclude each other");
		goto done;
	}
	if (serial) /* adb_connect starts from it */
		snprintf(a.serial, sizeof(a.serial), "%s", serial);
	if (strcmp(action, "enable") == 0) {
		rc = do_enable(&a, package, hook, (unsigned)frames, frames_set);
	} else if (strcmp(action, "disable") == 0) {
		rc = do_disable(&a, package);
	} else {
		if (out) {
			struct stat st;
			if (stat(out, &st) != 0) {
				rc = cli_fail(out, "%s", strerror(errno));
				goto done;
			}
			if (!S_ISDIR(st.st_mode)) {
				rc = cli_fail(out, "not a directory");
				goto done;
			}
		}
		struct adb_snapshot_opts so = {package, (long)pid, (unsigned)count, interval,
					       out ? out : "."};
		rc = adb_snapshot(&a, &so);
	}
done:
	free(symdirs);
	return rc;
}
