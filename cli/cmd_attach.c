/* leaksnap attach: load the in-app hook into a running process and start
 * it; take a dump of it now (--dump); stop it (--detach).  The work is
 * attach/'s (docs/attach.md); this is the command: its options, the
 * library to load, the dump prefix, and what is said. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "attach.h"
#include "cli.h"

static const char attach_usage[] =
	"Usage: leaksnap attach PID [--libs REGEX] [--frames N] [--unwind MODE]\n"
	"                           [--out PREFIX] [--interval SEC] [--reachability]\n"
	"                           [--control] [--sample BYTES]\n"
	"       leaksnap attach PID --dump [--out PREFIX]\n"
	"       leaksnap attach PID --detach\n\n"
	"Load the in-app hook (" LEAKSNAP_HOOK_INAPP_LIB ") into the running process PID\n"
	"and start it: from then on the process writes dumps as under 'leaksnap record'\n"
	"(on the dump signal, every --interval, at exit, and on 'leaksnap attach PID\n"
	"--dump').  Only allocations made after the attach are known: a leak that grows\n"
	"from then on is found, one that happened before is not.  The process is stopped\n"
	"for a moment with ptrace (no debugger is needed) and goes on as it was; it\n"
	"needs the right to trace it (the same user and kernel.yama.ptrace_scope 0, or\n"
	"CAP_SYS_PTRACE: docs/attach.md).\n\n"
	"Options:\n"
	"  --libs REGEX         watch only the libraries whose path matches this POSIX\n"
	"                       extended regular expression (default: every library\n"
	"                       but the C library, the loader and the hook)\n"
	"  --frames N           frames captured per allocation: 1..256 (default 16)\n"
	"  --unwind MODE        auto (the default), fp or dwarf\n"
	"  --out PREFIX         name the dumps PREFIX.PID.NNNN.dump (default\n"
	"                       " LEAKSNAP_HOOK_DEFAULT_OUT "); the directory must exist as the process sees\n"
	"                       it; with --dump: where the attach put them\n"
	"  --interval SEC       also dump every SEC seconds (0.001 to 1000000)\n"
	"  --sample BYTES       sampled collection, as 'leaksnap record --sample'\n"
	"                       (1 to 1073741824; not with --reachability)\n"
	"  --reachability       classify every live block as reachable or not at each\n"
	"                       dump (docs/reachability.md)\n"
	"  --control            serve the control socket too (as LEAKSNAP_CONTROL=1:\n"
	"                       leaksnap ctl PID, leaksnap watch PID; docs/control.md)\n"
	"  --dump               have the attached process write a dump now, print its\n"
	"                       path\n"
	"  --detach             stop collecting: put back the GOT slots the hook changed\n"
	"                       (the library stays loaded; a later attach starts it again)\n"
	"  --lib PATH           load this build of the in-app hook instead of\n"
	"                       ../lib/" LEAKSNAP_HOOK_INAPP_LIB " next to the leaksnap program\n"
	"  -h, --help           this help\n\n"
	"Exit status: 0 success; 2 any error, said in one line, with the process left as\n"
	"it was (no such process, not permitted, a static program, already attached,\n"
	"a library the process cannot load, the process exited meanwhile).\n";

enum action { ACT_START, ACT_DUMP, ACT_DETACH };

struct attach_opts {
	enum action action;
	int pid;
	const char *libs, *unwind, *out, *lib;
	unsigned frames;
	double interval;
	uint64_t sample;
	bool reachability, control;
};

static int parse_options(int argc, char **argv, struct attach_opts *o)
{
	static const struct option longopts[] = {
		{"libs", required_argument, NULL, 'L'},
		{"frames", required_argument, NULL, 'F'},
		{"unwind", required_argument, NULL, 'U'},
		{"out", required_argument, NULL, 'o'},
		{"interval", required_argument, NULL, 'I'},
		{"sample", required_argument, NULL, 'S'},
		{"reachability", no_argument, NULL, 'R'},
		{"control", no_argument, NULL, 'C'},
		{"dump", no_argument, NULL, 'D'},
		{"detach", no_argument, NULL, 'X'},
		{"lib", required_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	uint64_t v;
	bool start_opts = false;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'L': {
			regex_t re;
			int rc = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);
			if (rc != 0) {
				char why[256];
				regerror(rc, &re, why, sizeof(why));
				return cli_usage_error("attach", "--libs '%s': %s", optarg, why);
			}
			regfree(&re);
			o->libs = optarg;
			start_opts = true;
			break;
		}
		case 'F':
			if (!cli_parse_uint(optarg, 1, 256, &v))
				return cli_usage_error("attach", "--frames must be a number from 1 to 256");
			o->frames = (unsigned)v;
			start_opts = true;
			break;
		case 'U':
			if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "fp") != 0 &&
			    strcmp(optarg, "dwarf") != 0)
				return cli_usage_error("attach", "--unwind must be auto, fp or dwarf");
			o->unwind = optarg;
			start_opts = true;
			break;
		case 'o': o->out = optarg; break;
		case 'I':
			if (!cli_parse_seconds(optarg, 0.001, 1000000.0, &o->interval))
				return cli_usage_error("attach", "--interval must be a number of seconds "
								 "from 0.001 to 1000000, e.g. 0.5");
			start_opts = true;
			break;
		case 'S':
			if (!cli_parse_uint(optarg, 1, LEAKSNAP_HOOK_SAMPLE_MAX, &o->sample))
				return cli_usage_error("attach", "--sample must be a number of bytes "
								 "from 1 to %llu",
						       (unsigned long long)LEAKSNAP_HOOK_SAMPLE_MAX);
			start_opts = true;
			break;
		case 'R': o->reachability = true; start_opts = true; break;
		case 'C': o->control = true; start_opts = true; break;
		case 'D':
		case 'X': {
			enum action a = c == 'D' ? ACT_DUMP : ACT_DETACH;
			if (o->action != ACT_START && o->action != a)
				return cli_usage_error("attach", "--dump and --detach go alone");
			o->action = a;
			break;
		}
		case 'l': o->lib = optarg; break;
		case 'h':
			fputs(attach_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default: return cli_bad_option("attach", argv, c == ':' ? ':' : optopt);
		}
	}
	if (o->sample && o->reachability)
		return cli_usage_error("attach", "--sample and --reachability do not go together: a "
						 "sample cannot tell which blocks are unreachable");
	if (optind >= argc)
		return cli_usage_error("attach", "missing PID");
	if (optind + 1 < argc)
		return cli_usage_error("attach", "one PID only ('%s' is more)", argv[optind + 1]);
	if (!cli_parse_uint(argv[optind], 1, INT_MAX, &v))
		return cli_usage_error("attach", "'%s' is not a process id", argv[optind]);
	o->pid = (int)v;
	if (o->action != ACT_START && start_opts)
		return cli_usage_error("attach", "--%s takes no collection option (those are "
						 "the attach's)",
				       o->action == ACT_DUMP ? "dump" : "detach");
	if (o->action == ACT_DETACH && o->out)
		return cli_usage_error("attach", "--detach takes no --out");
	return 0;
}

/* The in-app hook: --lib, else ../lib/libleakhook-inapp.so from the
 * directory of this program.  The absolute path (owned), or NULL after
 * saying why. */
static char *find_lib(const char *given)
{
	char exe[PATH_MAX + 64];
	const char *path = given, *hint = "from --lib";
	if (path == NULL) {
		ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX);
		if (n <= 0) {
			cli_fail("/proc/self/exe", "%s (give --lib PATH)",
				 n < 0 ? strerror(errno) : "empty link");
			return NULL;
		}
		exe[n] = '\0';
		for (int up = 0; up < 2; up++) { /* strip "/leaksnap", then "/bin" */
			char *slash = strrchr(exe, '/');
			if (slash)
				*slash = '\0';
		}
		strcat(exe, "/lib/" LEAKSNAP_HOOK_INAPP_LIB);
		path = exe;
		hint = "looked for next to leaksnap; --lib PATH names another";
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		cli_fail(path, "in-app hook library not found: %s (%s)", strerror(errno), hint);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_fail(path, "not a regular file (%s)", hint);
		return NULL;
	}
	char *abs = realpath(path, NULL);
	if (abs == NULL)
		cli_fail(path, "%s", strerror(errno));
	return abs;
}

/* The dump prefix made absolute, its directory checked as the process
 * sees it (through its root).  Owned, or NULL after saying why. */
static char *dump_prefix(const struct attach_proc *p, const char *given)
{
	const char *prefix = given ? given : LEAKSNAP_HOOK_DEFAULT_OUT;
	const char *slash = strrchr(prefix, '/');
	const char *base = slash ? slash + 1 : prefix;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		cli_fail(prefix, "must end in a file name prefix, e.g. DIR/app (dumps are named "
				 "PREFIX.PID.NNNN.dump)");
		return NULL;
	}
	char dir[PATH_MAX];
	if (slash == prefix)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - prefix) : 1,
			 slash ? prefix : ".");
	char *real = realpath(dir, NULL);
	if (real == NULL) {
		cli_fail(prefix, "directory '%s': %s", dir, strerror(errno));
		return NULL;
	}
	size_t len = strlen(real) + 1 + strlen(base) + 1;
	char *abs = malloc(len);
	if (abs)
		snprintf(abs, len, "%s%s%s", real, strcmp(real, "/") == 0 ? "" : "/", base);
	char there[PATH_MAX + 64];
	snprintf(there, sizeof(there), "%s%s", p->root, real);
	struct stat st;
	int bad = stat(there, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	free(real);
	if (abs == NULL) {
		cli_fail(prefix, "out of memory");
		return NULL;
	}
	if (bad) {
		cli_fail(prefix, "directory '%s' inside process %d's root: %s", dir, p->pid,
			 strerror(bad));
		free(abs);
		return NULL;
	}
	if (strlen(abs) > LEAKSNAP_HOOK_OUT_MAX) {
		cli_fail(prefix, "too long: %zu bytes once absolute, the hook takes at most %d",
			 strlen(abs), LEAKSNAP_HOOK_OUT_MAX);
		free(abs);
		return NULL;
	}
	return abs;
}

/* The names of the numbered dumps of process @pid under @prefix (as
 * @root sees it): a NULL-terminated list (owned), NULL out of memory. */
static char **list_dumps(const char *root, const char *prefix, int pid, size_t *count)
{
	const char *slash = strrchr(prefix, '/');
	char dir[PATH_MAX + 64], start[NAME_MAX + 32];
	snprintf(dir, sizeof(dir), "%s%.*s", root, (int)(slash - prefix), prefix);
	snprintf(start, sizeof(start), "%s.%d.", slash + 1, pid);
	char **names = calloc(1, sizeof(char *));
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (names && d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name), slen = strlen(start);
		if (len <= slen + 5 || strncmp(e->d_name, start, slen) != 0 ||
		    strcmp(e->d_name + len - 5, LEAKSNAP_HOOK_DUMP_SUFFIX) != 0 ||
		    strspn(e->d_name + slen, "0123456789") != len - slen - 5)
			continue;
		char **more = realloc(names, (n + 2) * sizeof(char *));
		if (more == NULL || (more[n] = strdup(e->d_name)) == NULL) {
			names = more;
			break;
		}
		names = more;
		names[++n] = NULL;
	}
	if (d)
		closedir(d);
	*count = n;
	return names;
}

static void free_list(char **l)
{
	for (size_t i = 0; l && l[i]; i++)
		free(l[i]);
	free(l);
}

static bool listed(char **l, const char *name)
{
	for (size_t i = 0; l && l[i]; i++)
		if (strcmp(l[i], name) == 0)
			return true;
	return false;
}

static int fail_error(const struct leaksnap_error *err)
{
	cli_fail(err->source[0] ? err->source : NULL, "%s", err->text);
	return EXIT_ERROR;
}

static int do_start(const struct attach_proc *p, const struct attach_opts *o, const char *lib,
		    const char *prefix)
{
	struct leaksnap_error err = {0};
	struct leaksnap_options lo = {
		.size = sizeof(lo),
		.libs = o->libs,
		.frames = o->frames,
		.unwind = o->unwind,
		.out = prefix,
		.interval = o->interval,
		.flags = o->reachability ? LEAKSNAP_START_REACHABILITY : 0,
		.control = o->control ? "1" : NULL,
		.sample = o->sample,
	};
	if (attach_lib_check(p, lib, &err) != 0)
		return fail_error(&err);
	/* another copy of the in-app hook loaded (record --libs, an earlier
	 * attach with another --lib): a second one would patch the same slots */
	char there[PATH_MAX];
	const char *name = strrchr(lib, '/') + 1;
	if (attach_find_module(p, name, there, sizeof(there)) && strcmp(there, lib) != 0) {
		cli_fail(p->subject, "the process has another %s loaded (%s, which stays after a "
				     "detach): attach with --lib %s",
			 name, there, there);
		return EXIT_ERROR;
	}
	struct attach_result res;
	if (attach_start(p, lib, &lo, &res, &err) != 0)
		return fail_error(&err);
	if (res.ret != 0 && res.err_no == EALREADY) {
		cli_fail(p->subject, "already attached: collection runs since an earlier attach "
				     "('leaksnap attach %d --dump' takes a dump, --detach stops it)",
			 p->pid);
		return EXIT_ERROR;
	}
	if (res.ret != 0) {
		cli_fail(p->subject, "leaksnap_start failed in the process: %s",
			 res.err_no > 0 ? strerror(res.err_no) : "unknown error");
		return EXIT_ERROR;
	}
	printf("attached to process %d: collecting with %s\n", p->pid, lib);
	printf("only allocations made from now on are known: a leak that grew before this "
	       "moment is not seen\n");
	printf("dumps: %s.%d.NNNN.dump, on 'leaksnap attach %d --dump%s%s', on kill -%d %d",
	       prefix, p->pid, p->pid, o->out ? " --out " : "", o->out ? o->out : "",
	       LEAKSNAP_HOOK_SIG_DUMP, p->pid);
	if (o->interval > 0)
		printf(", every %g s", o->interval);
	printf(", and %s.%d.exit.dump at exit\n", prefix, p->pid);
	if (o->control)
		printf("control: leaksnap ctl %d stats, leaksnap watch %d --out DIR\n", p->pid,
		       p->pid);
	printf("stop: leaksnap attach %d --detach\n", p->pid);
	return cli_finish_stdout(EXIT_OK);
}

/* The file name of the hook the process has loaded: the preload hook's,
 * else the in-app one's (@lib's).  NULL after saying none is. */
static const char *loaded_hook(const struct attach_proc *p, const char *lib, char *buf, size_t size)
{
	if (p->preload_hook[0])
		return LEAKSNAP_HOOK_LIB;
	const char *name = strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib;
	if (attach_find_module(p, name, buf, size) == NULL) {
		cli_fail(p->subject, "not attached: the process has no %s loaded (attach first: "
				     "'leaksnap attach %d')",
			 name, p->pid);
		return NULL;
	}
	return name;
}

/* attach_call_hook, called in again while the answer is EDEADLK: the
 * thread was stopped inside the hook (waiting for a table lock, or the
 * in-app hook's, in a system call, which looks like a safe point from
 * outside); up to 2 s, at other points. */
static int call_hook(const struct attach_proc *p, const char *name, const char *fn,
		     struct attach_result *res, struct leaksnap_error *err)
{
	for (int tries = 0;; tries++) {
		if (attach_call_hook(p, name, fn, res, err) != 0)
			return -1;
		if (res->ret >= 0 || res->err_no != EDEADLK || tries == 200)
			return 0;
		usleep(10000);
	}
}

static int do_dump(const struct attach_proc *p, const char *lib, const char *prefix)
{
	char buf[PATH_MAX];
	const char *name = loaded_hook(p, lib, buf, sizeof(buf));
	if (name == NULL)
		return EXIT_ERROR;
	size_t before_n, after_n;
	char **before = list_dumps(p->root, prefix, p->pid, &before_n);
	struct attach_result res;
	struct leaksnap_error err = {0};
	if (call_hook(p, name, "leaksnap_dump", &res, &err) != 0) {
		free_list(before);
		return fail_error(&err);
	}
	if (res.ret != 0) {
		free_list(before);
		/* (the in-app hook says ENOSYS when it was not started) */
		if (res.err_no == EINVAL || res.err_no == ENOSYS)
			cli_fail(p->subject, "not attached: collection is not running (attach "
					     "first: 'leaksnap attach %d')",
				 p->pid);
		else
			cli_fail(p->subject, "leaksnap_dump failed in the process: %s",
				 res.err_no > 0 ? strerror(res.err_no) : "unknown error");
		return EXIT_ERROR;
	}
	char **after = list_dumps(p->root, prefix, p->pid, &after_n);
	/* the newest new one: ours (with --interval, others may have come
	 * meanwhile; leaksnap_dump took the next number when it was called) */
	const char *newest = NULL;
	unsigned long best = 0;
	for (size_t i = 0; after && after[i]; i++) {
		if (listed(before, after[i]))
			continue;
		const char *num = after[i] + strlen(strrchr(prefix, '/') + 1) + 1;
		num = strchr(num, '.') + 1; /* past "PID." */
		unsigned long n = strtoul(num, NULL, 10);
		if (newest == NULL || n > best) {
			newest = after[i];
			best = n;
		}
	}
	if (newest) {
		const char *slash = strrchr(prefix, '/');
		printf("%.*s/%s\n", (int)(slash - prefix), prefix, newest);
	}
	free_list(before);
	free_list(after);
	if (newest == NULL)
		cli_warn(p->subject, "the process wrote a dump, but not as %s.%d.NNNN.dump: give "
				     "--out the prefix the attach was given",
			 prefix, p->pid);
	return cli_finish_stdout(EXIT_OK);
}

static int do_detach(const struct attach_proc *p, const char *lib)
{
	char buf[PATH_MAX];
	if (p->preload_hook[0]) {
		cli_fail(p->subject, "the process runs under the preload hook %s (LD_PRELOAD), "
				     "which cannot be detached",
			 p->preload_hook);
		return EXIT_ERROR;
	}
	const char *name = loaded_hook(p, lib, buf, sizeof(buf));
	if (name == NULL)
		return EXIT_ERROR;
	struct attach_result res;
	struct leaksnap_error err = {0};
	if (call_hook(p, name, "leaksnap_stop", &res, &err) != 0)
		return fail_error(&err);
	if (res.ret < 0) {
		if (res.err_no == EINVAL)
			cli_fail(p->subject, "not attached: collection is not running");
		else
			cli_fail(p->subject, "leaksnap_stop failed in the process: %s",
				 res.err_no > 0 ? strerror(res.err_no) : "unknown error");
		return EXIT_ERROR;
	}
	if (res.ret == 0)
		printf("detached from process %d: collection stopped, every GOT slot put back\n",
		       p->pid);
	else
		printf("detached from process %d: collection stopped; %lld GOT slot%s left as "
		       "%s (something else changed %s since the attach)\n",
		       p->pid, (long long)res.ret, res.ret == 1 ? "" : "s",
		       res.ret == 1 ? "it was" : "they were", res.ret == 1 ? "it" : "them");
	return cli_finish_stdout(EXIT_OK);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = {0};
	int rc = parse_options(argc, argv, &o);
	if (rc != 0)
		return rc == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	struct attach_proc p;
	struct leaksnap_error err = {0};
	if (attach_proc_read(o.pid, &p, &err) != 0) {
		attach_proc_release(&p);
		return fail_error(&err);
	}
	char *lib = NULL, *prefix = NULL;
	int status = EXIT_ERROR;
	if (o.action == ACT_START && p.preload_hook[0]) {
		cli_fail(p.subject, "already attached: the process runs under the preload hook %s "
				    "(LD_PRELOAD), which records everything already (take a dump with "
				    "kill -%d %d)",
			 p.preload_hook, LEAKSNAP_HOOK_SIG_DUMP, p.pid);
		goto out;
	}
	/* --dump and --detach only need the library's file name */
	const char *name = o.lib ? o.lib : LEAKSNAP_HOOK_INAPP_LIB;
	if (o.action == ACT_START && (lib = find_lib(o.lib)) == NULL)
		goto out;
	if (o.action != ACT_DETACH && (prefix = dump_prefix(&p, o.out)) == NULL)
		goto out;
	switch (o.action) {
	case ACT_START: status = do_start(&p, &o, lib, prefix); break;
	case ACT_DUMP: status = do_dump(&p, name, prefix); break;
	case ACT_DETACH: status = do_detach(&p, name); break;
	}
out:
	free(lib);
	free(prefix);
	attach_proc_release(&p);
	return status;
}
