/* leaksnap watch: a test harness's loop over a process's control socket
 * (docs/control.md) -- a snapshot every SEC seconds into a directory,
 * numbered so that they sort, one live line each, until the process ends,
 * N were taken or Ctrl-C (which lets the snapshot in flight finish); then
 * the leakdiff command to run, or (--leakdiff) that diff run here, with the
 * same code as the leakdiff command, its exit status the command's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "kit.h"
#include "kit_publish.h"

static const char watch_usage[] =
	"Usage: leaksnap watch PID|SOCKET --out DIR [--every SEC] [--count N]\n"
	"                      [--reachability] [--leakdiff [LEAKDIFF OPTIONS...]]\n\n"
	"Take a snapshot of a running process every SEC seconds over its control\n"
	"socket (the process started with LEAKSNAP_CONTROL=1; a PID is digits only,\n"
	"anything else a socket path) and write each into DIR as\n"
	"watch.PID.NNNN.dump (0001, 0002 ...; a LEAKSNAP dump with its maps\n"
	"embedded; a name already taken is skipped, never overwritten).  Each\n"
	"snapshot prints one line: the time, its number, the live bytes and blocks\n"
	"it holds and the growth of the live bytes since the first snapshot:\n"
	"  HH:MM:SS  #N  live BYTES  blocks N  growth +BYTES\n"
	"(counted from the dump itself: the sum of size x count of its records;\n"
	"a sampled process's are estimates, marked with '≈', as show gives them,\n"
	"the sampled counts beside them).\n"
	"Watching ends when the process ends, after N snapshots, or on Ctrl-C\n"
	"(SIGINT), which lets the snapshot in flight finish (a second Ctrl-C ends\n"
	"watch at once).  Then the leakdiff command that compares every snapshot\n"
	"written is printed.\n\n"
	"Options:\n"
	"  --out DIR            where the snapshots go (an existing directory)\n"
	"  --every SEC          seconds between snapshots: 0 to 86400, fractions\n"
	"                       allowed (default 10)\n"
	"  --count N            stop after N snapshots (1 to 1000000)\n"
	"  --reachability       classify every live block as reachable or not at each\n"
	"                       snapshot (docs/reachability.md)\n"
	"  --leakdiff [OPTIONS...]\n"
	"                       at the end run leakdiff OPTIONS on the snapshots here\n"
	"                       and exit with its status (every argument after\n"
	"                       --leakdiff is leakdiff's: --fail-on 1M, --json ...;\n"
	"                       fewer than two snapshots: an error)\n"
	"  -h, --help           this help\n\n"
	"Example, a CI job in one line:\n"
	"  leaksnap watch $PID --every 10 --out snaps --leakdiff --fail-on 1M\n\n"
	"Exit status: 0 success; with --leakdiff, leakdiff's (1: --fail-on reached);\n"
	"2 any error (one line 'leaksnap: PID|SOCKET: ...': no such process, no\n"
	"control socket, refused, connection closed early, a malformed answer).\n";

/* ------------------------------------------------------------------------
 * The loop (also record --watch's)
 * ------------------------------------------------------------------------ */

void watch_result_release(struct watch_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->files[i]);
	free(res->files);
	res->files = NULL;
	res->n = 0;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Wait up to @sec seconds for @fd (may be -1) to become readable: true if
 * it did (stop). */
static bool stop_within(int fd, double sec)
{
	double start = mono();
	for (;;) {
		double left = sec - (mono() - start);
		if (left < 0)
			left = 0;
		struct pollfd p = {fd, POLLIN, 0};
		int r = poll(&p, fd >= 0 ? 1 : 0, (int)(left * 1000));
		if (r > 0)
			return true;
		if (r == 0 || (r < 0 && errno != EINTR))
			return false;
	}
}

/* Whether @r says that the process went away rather than failed: also a
 * dump refused because the process is exiting (its exit dump is being
 * written), which is the process's end. */
static bool gone(int r, const struct leaksnap_error *err)
{
	return r == CONTROL_E_NOPROC || r == CONTROL_E_NOSOCK || r == CONTROL_E_REFUSED ||
	       r == CONTROL_E_EXITING || (r == CONTROL_E_CLOSED && strstr(err->text, "(no answer)")) ||
	       (r == CONTROL_E_REMOTE && control_remote_said(err, CONTROL_REMOTE_EXITING));
}

/* "error busy": the process serves as many clients as it takes; asked
 * again after a short wait, at most this many times (about 5 s) before
 * the answer is an error. */
#define BUSY_TRIES 50
#define BUSY_WAIT_NS (100 * 1000 * 1000L)

static bool busy(int r, const struct leaksnap_error *err)
{
	return r == CONTROL_E_REMOTE && control_remote_said(err, CONTROL_REMOTE_BUSY);
}

static void busy_wait(void)
{
	struct timespec ts = {0, BUSY_WAIT_NS};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Connect; with @wait seconds, try again while there is no socket yet. */
static int connect_wait(const struct watch_cfg *cfg, struct control_conn **c,
			struct leaksnap_error *err)
{
	double waited = 0;
	for (;;) {
		int r = control_open(cfg->target, NULL, c, err);
		if (r != CONTROL_E_NOSOCK || waited >= cfg->wait_socket)
			return r;
		if (stop_within(cfg->stop_fd, 0.05))
			return r;
		waited += 0.05;
	}
}

/* Give @tmp the next free name DIR/watch.PID.NNNN.dump: 0, or -1 (said). */
static int publish(const struct watch_cfg *cfg, int64_t pid, uint64_t *next, const char *tmp,
		   char **name)
{
	for (uint64_t k = *next; k < *next + 100000; k++) {
		char *path;
		if (asprintf(&path, "%s/watch.%lld.%04llu.dump", cfg->dir, (long long)pid,
			     (unsigned long long)k) < 0)
			return cli_fail(cfg->dir, "out of memory");
		int r = kit_publish_noreplace(tmp, path);
		if (r >= 0) {
			if (r == 0)
				unlink(tmp);
			*next = k + 1;
			*name = path;
			return 0;
		}
		if (r != -EEXIST) {
			cli_fail(path, "%s", strerror(-r));
			free(path);
			return -1;
		}
		free(path);
	}
	return cli_fail(cfg->dir, "no free name for watch.%lld.NNNN.dump", (long long)pid);
}

/* One dump received into a temporary beside DIR/watch.PID.dump: 0 with
 * *@tmp and *@snap, or a CONTROL_E_* code with @err filled (nothing said). */
static int receive(const struct watch_cfg *cfg, int64_t pid, char **tmp,
		   struct leaksnap_snapshot **snap, struct leaksnap_error *err)
{
	struct control_conn *c;
	char *near;
	int r = control_open(cfg->target, NULL, &c, err);
	if (r)
		return r;
	if (asprintf(&near, "%s/watch.%lld.dump", cfg->dir, (long long)pid) < 0) {
		control_close(c);
		kit_error(err, LEAKSNAP_ERR_NOMEM, cfg->dir, "out of memory");
		return CONTROL_E_OTHER;
	}
	r = ctl_dump_receive(c, near, cfg->reachability, tmp, snap, err);
	control_close(c);
	free(near);
	return r;
}

/* One snapshot: 1 written (*@snap), 0 the process went away, -1 said. */
static int take(const struct watch_cfg *cfg, int64_t pid, uint64_t *next, char **name,
		struct leaksnap_snapshot **snap)
{
	struct leaksnap_error err;
	char *tmp;
	int r;
	for (int tries = 1; busy(r = receive(cfg, pid, &tmp, snap, &err), &err) &&
			    tries < BUSY_TRIES;
	     tries++)
		busy_wait();
	if (r)
		return gone(r, &err) || r == CONTROL_E_CLOSED ? 0 : ctl_fail(&err);
	r = publish(cfg, pid, next, tmp, name);
	if (r) {
		unlink(tmp);
		leaksnap_snapshot_close(*snap);
		*snap = NULL;
	}
	ctl_dump_settled();
	free(tmp);
	return r ? -1 : 1;
}

static int add_file(struct watch_result *res, char *name)
{
	char **v = realloc(res->files, (res->n + 1) * sizeof(*v));
	if (!v) {
		free(name);
		return cli_fail(NULL, "out of memory");
	}
	res->files = v;
	res->files[res->n++] = name;
	return 0;
}

int watch_run(const struct watch_cfg *cfg, struct watch_result *res)
{
	memset(res, 0, sizeof(*res));
	struct leaksnap_error err;
	struct control_conn *c;
	struct control_version v;
	/* the pid the files are named by (a SOCKET argument has none) */
	int r;
	for (int tries = 1;; tries++) {
		r = connect_wait(cfg, &c, &err);
		if (r == 0) {
			r = control_version(c, &v, &err);
			control_close(c);
		}
		if (!busy(r, &err) || tries >= BUSY_TRIES)
			break;
		busy_wait();
	}
	if (r)
		return ctl_fail(&err);
	uint64_t next = 1, first = 0;
	for (uint64_t i = 1;; i++) {
		char *name = NULL;
		struct leaksnap_snapshot *snap = NULL;
		/* snapshots start every SEC seconds, however long one takes (one
		 * that took longer is followed by the next at once) */
		double started = mono();
		r = take(cfg, v.pid, &next, &name, &snap);
		if (r < 0)
			return -1;
		if (r == 0) {
			res->ended = true;
			break;
		}
		uint64_t bytes = leaksnap_snapshot_records_bytes(snap);
		uint64_t blocks = leaksnap_snapshot_allocation_count(snap);
		uint64_t sampled_bytes = bytes, sampled_blocks = blocks;
		bool sampled = leaksnap_snapshot_sample_interval(snap) != 0;
		/* a sampled process: the estimates (as show gives them), the
		 * sampled counts beside them */
		if (sampled)
			leaksnap_snapshot_estimate(snap, &bytes, &blocks, NULL, NULL);
		leaksnap_snapshot_close(snap);
		if (i == 1)
			first = bytes;
		time_t now = time(NULL);
		struct tm tm;
		char hms[16] = "??:??:??";
		if (localtime_r(&now, &tm))
			strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		if (sampled) {
			const char *e = cli_approx();
			fprintf(cfg->live,
				"%s%s  #%llu  live %s%llu (%llu sampled)  blocks %s%llu (%llu sampled)"
				"  growth %s%+lld\n",
				cfg->prefix, hms, (unsigned long long)(next - 1), e,
				(unsigned long long)bytes, (unsigned long long)sampled_bytes, e,
				(unsigned long long)blocks, (unsigned long long)sampled_blocks, e,
				(long long)(bytes - first));
		} else {
			fprintf(cfg->live, "%s%s  #%llu  live %llu  blocks %llu  growth %+lld\n",
				cfg->prefix, hms, (unsigned long long)(next - 1),
				(unsigned long long)bytes, (unsigned long long)blocks,
				(long long)(bytes - first));
		}
		fflush(cfg->live);
		if (add_file(res, name))
			return -1;
		if (cfg->count && i >= cfg->count)
			break;
		double left = cfg->every - (mono() - started);
		if (stop_within(cfg->stop_fd, left > 0 ? left : 0))
			break;
	}
	return 0;
}

/* @s for a shell: as it is when it holds only safe characters, else in
 * single quotes. */
static void put_shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_-./:=+,@%") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

void watch_print_leakdiff(FILE *f, const char *prefix, const struct watch_result *res)
{
	fputs(prefix, f);
	fputs("leakdiff", f);
	for (size_t i = 0; i < res->n; i++) {
		fputc(' ', f);
		put_shell_word(f, res->files[i]);
	}
	fputc('\n', f);
}

/* ------------------------------------------------------------------------
 * The command
 * ------------------------------------------------------------------------ */

/* Ctrl-C: the loop stops after the snapshot in flight (a pipe wakes it);
 * a second one ends watch at once (ctl_sigint_catch). */
static int stop_pipe[2] = {-1, -1};

struct watch_args {
	const char *out;
	double every;
	uint64_t count;
	bool reachability;
	int diff_at; /* the index of --leakdiff in argv, or 0 */
};

enum { O_OUT = 0x200, O_EVERY, O_COUNT, O_REACH };

static int parse_options(int argc, char **argv, struct watch_args *a)
{
	static const struct option longopts[] = {
		{"out", required_argument, NULL, O_OUT},
		{"every", required_argument, NULL, O_EVERY},
		{"count", required_argument, NULL, O_COUNT},
		{"reachability", no_argument, NULL, O_REACH},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case O_OUT: a->out = optarg; break;
		case O_EVERY:
			if (!cli_parse_seconds(optarg, 0, 86400, &a->every))
				return cli_usage_error("watch", "--every must be seconds from 0 to "
								"86400, e.g. 0.5");
			break;
		case O_COUNT:
			if (!cli_parse_uint(optarg, 1, 1000000, &a->count))
				return cli_usage_error("watch",
						       "--count must be a number from 1 to 1000000");
			break;
		case O_REACH: a->reachability = true; break;
		case 'h':
			fputs(watch_usage, stdout);
			return cli_finish_stdout(EXIT_OK) == EXIT_OK ? CLI_HELP_SHOWN : -1;
		default:
			return cli_bad_option("watch", argv, c == ':' ? ':' : optopt);
		}
	}
	if (optind >= argc)
		return cli_usage_error("watch", "missing PID or SOCKET");
	if (argc - optind > 1)
		return cli_usage_error("watch", "one PID or SOCKET expected, got '%s' too",
				       argv[optind + 1]);
	if (!argv[optind][0])
		return cli_usage_error("watch", "empty PID or SOCKET");
	if (!a->out)
		return cli_usage_error("watch", "--out DIR is required");
	struct stat st;
	if (stat(a->out, &st) != 0)
		return cli_fail(a->out, "%s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_fail(a->out, "not a directory");
	return 0;
}

/* leakdiff with @opts (n of them) on @res's files: its exit status. */
static int run_leakdiff(char **opts, int n, const struct watch_result *res)
{
	char **av = calloc((size_t)n + res->n + 2, sizeof(*av));
	if (!av) {
		cli_fail(NULL, "out of memory");
		return EXIT_ERROR;
	}
	static char name[] = "leakdiff";
	int k = 0;
	av[k++] = name;
	for (int i = 0; i < n; i++)
		av[k++] = opts[i];
	for (size_t i = 0; i < res->n; i++)
		av[k++] = res->files[i];
	av[k] = NULL;
	fflush(stdout);
	int st = cmd_diff(k, av);
	free(av);
	return st < 0 ? EXIT_ERROR : st;
}

/* --leakdiff at the end: @opts[0] is "--leakdiff", its options follow
 * (n in all).  leakdiff's options are leakdiff's to judge; a diff of fewer
 * than two snapshots is watch's to refuse.  The exit status. */
static int leakdiff_at_end(const char *target, char **opts, int n,
			   const struct watch_result *res)
{
	if (res->n < 2) {
		int r = diff_check_options(n, opts);
		if (r == CLI_HELP_SHOWN)
			return EXIT_OK;
		if (r == 0)
			cli_fail(target, "--leakdiff: %zu snapshot%s taken, the diff needs two or "
					 "more",
				 res->n, res->n == 1 ? "" : "s");
		return EXIT_ERROR;
	}
	return run_leakdiff(opts + 1, n - 1, res);
}

int cmd_watch(int argc, char **argv)
{
	struct watch_args a = {.every = 10};
	/* everything after --leakdiff is leakdiff's */
	int nwatch = argc;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--leakdiff") == 0) {
			a.diff_at = i;
			nwatch = i;
			break;
		}
	}
	int r = parse_options(nwatch, argv, &a);
	if (r)
		return r == CLI_HELP_SHOWN ? EXIT_OK : EXIT_ERROR;
	const char *target = argv[optind];
	/* DIR/watch...: without the slashes DIR may end in */
	char *dir = strdup(a.out);
	if (!dir) {
		cli_fail(NULL, "out of memory");
		return EXIT_ERROR;
	}
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		cli_fail(NULL, "pipe: %s", strerror(errno));
		free(dir);
		return EXIT_ERROR;
	}
	struct sigaction old;
	ctl_sigint_catch(stop_pipe[1], &old);
	struct watch_cfg cfg = {target, dir, a.every, a.count, a.reachability, stdout, "",
				stop_pipe[0], 0};
	struct watch_result res;
	r = watch_run(&cfg, &res);
	ctl_sigint_restore(&old);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	stop_pipe[0] = stop_pipe[1] = -1;
	int status = r ? EXIT_ERROR : EXIT_OK;
	if (res.ended)
		cli_fail(target, "the process ended after %zu snapshot%s", res.n,
			 res.n == 1 ? "" : "s");
	if (r == 0 && a.diff_at)
		status = leakdiff_at_end(target, argv + a.diff_at, argc - a.diff_at, &res);
	else if (res.n > 0)
		watch_print_leakdiff(stdout, "", &res);
	watch_result_release(&res);
	free(dir);
	return cli_finish_stdout(status);
}
