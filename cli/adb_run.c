/* leaksnap adb: running adb (fork + exec of an argument vector, no host
 * shell), its output captured with bounds and a time limit; finding the
 * device; quoting device shell commands. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adb.h"
#include "cli.h"

int adb_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cli_fail("adb", "%s", msg);
}

double adb_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void adb_sleep(double seconds)
{
	if (seconds <= 0)
		return;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void adb_result_free(struct adb_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

const char *adb_first_line(const char *text)
{
	static char line[512];
	const char *p = text ? text : "";
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *s = p;
		p += n + (e != NULL);
		while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
			n--;
		while (n && *s == ' ')
			s++, n--;
		if (n == 0 || (n >= 2 && s[0] == '*' && s[1] == ' ')) /* "* daemon started" */
			continue;
		for (int k = 0; k < 2; k++) {
			if (n > 5 && strncmp(s, "adb: ", 5) == 0)
				s += 5, n -= 5;
			if (n > 7 && strncmp(s, "error: ", 7) == 0)
				s += 7, n -= 7;
		}
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, s, n);
		line[n] = '\0';
		return line;
	}
	return "";
}

/* Append what @fd has to @buf (at most @max bytes kept).  0: more may
 * come, 1: end of file. */
static int drain(int fd, char **buf, size_t *len, size_t *cap, size_t max, bool *truncated)
{
	char tmp[65536];
	ssize_t n = read(fd, tmp, sizeof(tmp));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	if (n == 0)
		return 1;
	size_t keep = (size_t)n;
	if (keep > max - *len) {
		keep = max - *len;
		*truncated = true;
	}
	if (*len + keep + 1 > *cap) {
		size_t c = *cap ? *cap : 4096;
		while (c < *len + keep + 1)
			c *= 2;
		char *p = realloc(*buf, c);
		if (!p) {
			*truncated = true;
			return 0;
		}
		*buf = p;
		*cap = c;
	}
	memcpy(*buf + *len, tmp, keep);
	*len += keep;
	(*buf)[*len] = '\0';
	return 0;
}

/* adb_fail, unless @a->silent (cleanup after a failure already said). */
static int run_fail(const struct adb *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run_fail(const struct adb *a, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return a->silent ? EXIT_ERROR : adb_fail("%s", msg);
}

static char *dup_or_empty(char *s)
{
	return s ? s : calloc(1, 1);
}

int adb_run(const struct adb *a, const char *const *args, int out_fd, size_t max_out,
	    double timeout, bool quiet_status, struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *argv[64];
	size_t n = 0;
	argv[n++] = a->prog;
	if (a->serial[0]) {
		argv[n++] = "-s";
		argv[n++] = a->serial;
	}
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	int po[2] = {-1, -1}, pe[2], px[2];
	if ((out_fd < 0 && pipe2(po, O_CLOEXEC) != 0) || pipe2(pe, O_CLOEXEC) != 0 ||
	    pipe2(px, O_CLOEXEC) != 0)
		return run_fail(a, "cannot run '%s': %s", a->prog, strerror(errno));
	pid_t pid = fork();
	if (pid < 0)
		return run_fail(a, "cannot run '%s': %s", a->prog, strerror(errno));
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out_fd >= 0 ? out_fd : po[1], 1);
		dup2(pe[1], 2);
		signal(SIGPIPE, SIG_DFL);
		cli_restore_open_files();
		char *xargv[64];
		memcpy(xargv, argv, sizeof(xargv)); /* execvp takes char *const */
		execvp(xargv[0], xargv);
		int e = errno;
		if (write(px[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (po[1] >= 0)
		close(po[1]);
	close(pe[1]);
	close(px[1]);
	size_t cap_o = 0, cap_e = 0;
	bool trunc_err = false, timed_out = false;
	double deadline = adb_now() + timeout;
	int st = 0;
	bool exited = false; /* adb is gone: take what is buffered, then stop */
	while (po[0] >= 0 || pe[0] >= 0) {
		struct pollfd fds[2];
		int nf = 0;
		if (po[0] >= 0)
			fds[nf++] = (struct pollfd){po[0], POLLIN, 0};
		if (pe[0] >= 0)
			fds[nf++] = (struct pollfd){pe[0], POLLIN, 0};
		double left = deadline - adb_now();
		if (left <= 0) {
			timed_out = !exited; /* (exited: only a leftover holds the pipes) */
			break;
		}
		int ms = exited ? 0 : left < 0.1 ? (int)(left * 1000) + 1 : 100;
		int rc = poll(fds, (nfds_t)nf, ms);
		if ((rc < 0 && errno != EINTR) || (rc == 0 && exited))
			break;
		for (int i = 0; rc > 0 && i < nf; i++) {
			if (!fds[i].revents)
				continue;
			bool is_out = fds[i].fd == po[0];
			int end = is_out ? drain(po[0], &r->out, &r->out_len, &cap_o, max_out, &r->truncated)
					 : drain(pe[0], &r->err, &r->err_len, &cap_e, 65536, &trunc_err);
			if (end) {
				close(fds[i].fd);
				if (is_out)
					po[0] = -1;
				else
					pe[0] = -1;
			}
		}
		/* a process adb left behind may hold the pipes open */
		if (!exited && waitpid(pid, &st, WNOHANG) == pid)
			exited = true;
	}
	if (timed_out)
		kill(pid, SIGKILL);
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	for (; !exited;) {
		pid_t w = waitpid(pid, &st, timed_out ? 0 : WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0 && adb_now() > deadline) {
			timed_out = true;
			kill(pid, SIGKILL);
		} else if (w == 0) {
			adb_sleep(0.01);
		}
	}
	int exec_errno = 0;
	ssize_t got = read(px[0], &exec_errno, sizeof(exec_errno));
	close(px[0]);
	r->out = dup_or_empty(r->out);
	r->err = dup_or_empty(r->err);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (got == (ssize_t)sizeof(exec_errno) && exec_errno)
		return run_fail(a, "cannot run '%s': %s (set $ADB or put adb on PATH)", a->prog,
				strerror(exec_errno));
	if (!r->out || !r->err)
		return run_fail(a, "out of memory");
	if (timed_out)
		return run_fail(a, "'%s %s' timed out after %g s", a->prog, args[0], timeout);
	if (r->truncated)
		return run_fail(a, "'%s %s' printed more than %zu MiB", a->prog, args[0], max_out >> 20);
	if (r->status == 0 || quiet_status)
		return 0;
	const char *why = adb_first_line(r->err);
	if (!*why && out_fd < 0)
		why = adb_first_line(r->out);
	if (*why)
		return run_fail(a, "%s", why);
	if (!WIFEXITED(st))
		return run_fail(a, "'%s %s' was killed by signal %d", a->prog, args[0], WTERMSIG(st));
	return run_fail(a, "'%s %s' exited with status %d", a->prog, args[0], r->status);
}

int adb_shell(const struct adb *a, const char *cmd, size_t max_out, double timeout,
	      bool quiet_status, struct adb_result *r)
{
	const char *args[] = {"shell", cmd, NULL};
	return adb_run(a, args, -1, max_out, timeout, quiet_status, r);
}

char *adb_cmd(const char *prefix, const char *const *args)
{
	size_t len = prefix ? strlen(prefix) + 1 : 0;
	for (size_t i = 0; args[i]; i++) {
		len += 3;
		for (const char *p = args[i]; *p; p++)
			len += *p == '\'' ? 4 : 1;
	}
	char *s = malloc(len + 1), *o = s;
	if (!s)
		return NULL;
	if (prefix && *prefix)
		o += sprintf(o, "%s ", prefix);
	for (size_t i = 0; args[i]; i++) {
		if (i)
			*o++ = ' ';
		*o++ = '\'';
		for (const char *p = args[i]; *p; p++) {
			if (*p == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *p;
			}
		}
		*o++ = '\'';
	}
	*o = '\0';
	return s;
}

bool adb_package_valid(const char *s)
{
	size_t len = strlen(s), segments = 0;
	if (len == 0 || len > 255)
		return false;
	const char *p = s;
	for (;;) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
			return false;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		segments++;
		if (*p == '\0')
			return segments >= 2;
		if (*p != '.')
			return false;
		p++;
	}
}

void adb_wrap_prop(const struct adb *a, const char *package, char *buf, size_t size)
{
	snprintf(buf, size, "wrap.%s", package);
	if (a->sdk > 0 && a->sdk < 26 && strlen(buf) > 31)
		buf[31] = '\0';
}

/* Lines "SERIAL<TAB>STATE" of adb devices (other lines skipped). */
static int find_device(struct adb *a, const char *text, const char *want)
{
	char serials[8][256], states[8][256];
	size_t count = 0, total = 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *tab = memchr(p, '\t', n);
		if (tab && tab > p) {
			size_t sl = (size_t)(tab - p), tl = n - sl - 1;
			while (tl && (tab[tl] == '\r' || tab[tl] == ' '))
				tl--;
			if (sl < 256 && (!want || (strlen(want) == sl && memcmp(p, want, sl) == 0))) {
				if (count < 8) {
					memcpy(serials[count], p, sl);
					serials[count][sl] = '\0';
					tl = tl < 255 ? tl : 255;
					memcpy(states[count], tab + 1, tl);
					states[count][tl] = '\0';
					count++;
				}
			}
			total++;
		}
		p += n + (e != NULL);
	}
	if (want && count == 0)
		return adb_fail("device '%s' not found (%zu attached)", want, total);
	if (count == 0)
		return adb_fail("no devices/emulators found");
	if (count > 1 || (!want && total > 1))
		return adb_fail("more than one device/emulator: choose one with -s SERIAL or "
				"$ANDROID_SERIAL");
	const char *st = states[0];
	if (strcmp(st, "unauthorized") == 0)
		return adb_fail("device '%s' is unauthorized: allow USB debugging on the device",
				serials[0]);
	if (strcmp(st, "offline") == 0)
		return adb_fail("device '%s' is offline", serials[0]);
	if (strcmp(st, "device") != 0)
		return adb_fail("device '%s' is not ready: %s", serials[0], st);
	snprintf(a->serial, sizeof(a->serial), "%s", serials[0]);
	return 0;
}

int adb_connect(struct adb *a, const char *serial)
{
	const char *env = getenv("ADB");
	char asked[256];
	snprintf(asked, sizeof(asked), "%s", serial && *serial ? serial : a->serial);
	serial = asked[0] ? asked : NULL;
	a->prog = env && *env ? env : "adb";
	a->serial[0] = '\0';
	a->timeout = 60;
	const char *t = getenv("LEAKSNAP_ADB_TIMEOUT");
	if (t && *t) {
		char *end;
		double v = strtod(t, &end);
		if (*end == '\0' && v > 0 && v <= 86400)
			a->timeout = v;
	}
	if (!serial) {
		const char *s = getenv("ANDROID_SERIAL");
		serial = s && *s ? s : NULL;
	}
	struct adb_result r = {0};
	const char *args[] = {"devices", NULL};
	if (adb_run(a, args, -1, ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	int rc = find_device(a, r.out, serial);
	adb_result_free(&r);
	if (rc)
		return rc;
	if (adb_shell(a, "getprop ro.build.version.sdk", ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	a->sdk = atoi(r.out);
	adb_result_free(&r);
	if (adb_shell(a, "id -u", ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return EXIT_ERROR;
	}
	a->root = strcmp(adb_first_line(r.out), "0") == 0;
	adb_result_free(&r);
	return 0;
}

/* Device commands the actions share ---------------------------------------- */

int adb_pidof(const struct adb *a, const char *package, long *pid)
{
	const char *args[] = {"pidof", package, NULL};
	char *cmd = adb_cmd(NULL, args);
	struct adb_result r = {0};
	*pid = 0;
	if (!cmd)
		return adb_fail("out of memory");
	/* pidof exits 1 when nothing runs by that name */
	int rc = adb_shell(a, cmd, ADB_SMALL, 30, true, &r);
	free(cmd);
	if (rc == 0 && r.status > 1)
		rc = adb_fail("pidof %s: %s", package, *adb_first_line(r.err) ? adb_first_line(r.err)
									  : "failed");
	if (rc == 0)
		*pid = strtol(r.out, NULL, 10);
	if (*pid < 0)
		*pid = 0;
	adb_result_free(&r);
	return rc;
}

int adb_cat(const struct adb *a, const char *package, const char *path, size_t max,
	    struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *direct[] = {"cat", path, NULL};
	const char *runas[] = {"run-as", package, "cat", path, NULL};
	char *cmd = adb_cmd(NULL, a->root || !package ? direct : runas);
	if (!cmd)
		return adb_fail("out of memory");
	int rc = adb_shell(a, cmd, max, 60, false, r);
	free(cmd);
	return rc;
}
