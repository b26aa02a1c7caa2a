/* kit_run: fork + exec with an errno pipe, waiting, and running a program
 * to completion with bounded captured output and a time limit (kit_run.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kit_run.h"

double kit_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void kit_sleep(double seconds)
{
	if (seconds <= 0)
		return;
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int run_error(struct kit_run_error *e, const char *call, int errnum)
{
	if (e) {
		e->call = call;
		e->errnum = errnum;
	}
	return -1;
}

static void close_pair(int fd[2])
{
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* The child's side of kit_spawn: its streams, then exec; on failure the
 * errno goes up the pipe @report. */
static _Noreturn void child(const char *const *argv, const struct kit_spawn_opts *o,
			    const int out[2], const int err[2], int report)
{
	if (o->in == KIT_RUN_DEVNULL) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
	} else if (o->in >= 0) {
		dup2(o->in, 0);
	}
	const int want[2] = {o->out, o->err};
	const int *pipes[2] = {out, err};
	for (int i = 0; i < 2; i++) {
		if (want[i] == KIT_RUN_CAPTURE) {
			dup2(pipes[i][1], i + 1);
		} else if (want[i] == KIT_RUN_DEVNULL) {
			int devnull = open("/dev/null", O_WRONLY);
			if (devnull >= 0)
				dup2(devnull, i + 1);
		} else if (want[i] >= 0) {
			dup2(want[i], i + 1);
		}
	}
	if (o->default_sigpipe)
		signal(SIGPIPE, SIG_DFL);
	if (o->child_setup)
		o->child_setup(o->ctx);
	char *const *av; /* execvp takes char *const, and changes nothing */
	memcpy(&av, &argv, sizeof(av));
	execvp(av[0], av);
	int e = errno;
	ssize_t w;
	do
		w = write(report, &e, sizeof(e));
	while (w < 0 && errno == EINTR);
	_exit(127);
}

int kit_spawn(const char *const *argv, const struct kit_spawn_opts *o, struct kit_proc *p,
	      struct kit_run_error *e)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, report[2] = {-1, -1};
	p->pid = 0;
	p->out = p->err = p->exec_fd = -1;
	if ((o->out == KIT_RUN_CAPTURE && pipe2(out, O_CLOEXEC) != 0) ||
	    (o->err == KIT_RUN_CAPTURE && pipe2(err, O_CLOEXEC) != 0) ||
	    pipe2(report, O_CLOEXEC) != 0) {
		int en = errno;
		close_pair(out);
		close_pair(err);
		return run_error(e, "pipe", en);
	}
	pid_t pid = fork();
	if (pid < 0) {
		int en = errno;
		close_pair(out);
		close_pair(err);
		close_pair(report);
		return run_error(e, "fork", en);
	}
	if (pid == 0)
		child(argv, o, out, err, report[1]);
	if (out[1] >= 0)
		close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	close(report[1]);
	p->pid = pid;
	p->out = out[0];
	p->err = err[0];
	p->exec_fd = report[0];
	return 0;
}

int kit_exec_errno(struct kit_proc *p)
{
	if (p->exec_fd < 0)
		return 0;
	/* An empty read: the exec succeeded and closed the pipe. */
	int e = 0;
	ssize_t n;
	do
		n = read(p->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(p->exec_fd);
	p->exec_fd = -1;
	if (n == (ssize_t)sizeof(e))
		return e ? e : ENOEXEC;
	return 0;
}

int kit_wait(pid_t pid, int *status, struct kit_run_error *e)
{
	pid_t r;
	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r < 0 ? run_error(e, "waitpid", errno) : 0;
}

/* Running to completion ------------------------------------------------------- */

/* One captured stream. */
struct sink {
	int fd;
	char **buf;
	size_t *len, cap, max;
	bool *truncated;
};

/* Append what s->fd has to its buffer (at most s->max bytes kept).  0: more
 * may come, 1: end of file. */
static int drain(struct sink *s)
{
	char tmp[65536];
	ssize_t n = read(s->fd, tmp, sizeof(tmp));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : 1;
	if (n == 0)
		return 1;
	size_t keep = (size_t)n;
	if (keep > s->max - *s->len) {
		keep = s->max - *s->len;
		*s->truncated = true;
	}
	if (*s->len + keep + 1 > s->cap) {
		size_t c = s->cap ? s->cap : 4096;
		while (c < *s->len + keep + 1)
			c *= 2;
		char *p = realloc(*s->buf, c);
		if (!p) {
			*s->truncated = true;
			return 0;
		}
		*s->buf = p;
		s->cap = c;
	}
	memcpy(*s->buf + *s->len, tmp, keep);
	*s->len += keep;
	(*s->buf)[*s->len] = '\0';
	return 0;
}

/* Read both streams until they end, the time is up, or the program has
 * exited and nothing more is buffered (a process it left behind may hold
 * the pipes open).  Sets *@exited with @st once it reaped the program;
 * true when the time ran out first. */
static bool collect(pid_t pid, struct sink s[2], double deadline, bool *exited, int *st)
{
	while (s[0].fd >= 0 || s[1].fd >= 0) {
		struct pollfd fds[2];
		struct sink *of[2];
		int nf = 0;
		for (int i = 0; i < 2; i++)
			if (s[i].fd >= 0) {
				of[nf] = &s[i];
				fds[nf++] = (struct pollfd){s[i].fd, POLLIN, 0};
			}
		double left = deadline - kit_now();
		if (left <= 0)
			return !*exited; /* (exited: only a leftover holds the pipes) */
		int ms = *exited ? 0 : left < 0.1 ? (int)(left * 1000) + 1 : 100;
		int rc = poll(fds, (nfds_t)nf, ms);
		if ((rc < 0 && errno != EINTR) || (rc == 0 && *exited))
			return false;
		for (int i = 0; rc > 0 && i < nf; i++) {
			if (fds[i].revents && drain(of[i])) {
				close(of[i]->fd);
				of[i]->fd = -1;
			}
		}
		if (!*exited && waitpid(pid, st, WNOHANG) == pid)
			*exited = true;
	}
	return false;
}

/* Reap the program; past the deadline (or @timed_out already) it is killed. */
static void reap(pid_t pid, double deadline, bool *timed_out, bool exited, int *st)
{
	if (*timed_out)
		kill(pid, SIGKILL);
	while (!exited) {
		pid_t w = waitpid(pid, st, *timed_out ? 0 : WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0 && kit_now() > deadline) {
			*timed_out = true;
			kill(pid, SIGKILL);
		} else if (w == 0) {
			kit_sleep(0.01);
		}
	}
}

static char *or_empty(char *s)
{
	return s ? s : calloc(1, 1);
}

int kit_run_capture(const char *const *argv, const struct kit_run_opts *o, struct kit_run_result *r,
		    struct kit_run_error *e)
{
	memset(r, 0, sizeof(*r));
	struct kit_spawn_opts so = {
		.in = KIT_RUN_DEVNULL,
		.out = o->out_fd >= 0 ? o->out_fd : KIT_RUN_CAPTURE,
		.err = KIT_RUN_CAPTURE,
		.default_sigpipe = true,
		.child_setup = o->child_setup,
		.ctx = o->ctx,
	};
	struct kit_proc p;
	if (kit_spawn(argv, &so, &p, e) != 0)
		return -1;
	struct sink s[2] = {
		{p.out, &r->out, &r->out_len, 0, o->max_out, &r->out_truncated},
		{p.err, &r->err, &r->err_len, 0, o->max_err, &r->err_truncated},
	};
	double deadline = kit_now() + o->timeout;
	bool exited = false;
	int st = 0;
	r->timed_out = collect(p.pid, s, deadline, &exited, &st);
	for (int i = 0; i < 2; i++)
		if (s[i].fd >= 0)
			close(s[i].fd);
	reap(p.pid, deadline, &r->timed_out, exited, &st);
	r->exec_errno = kit_exec_errno(&p);
	r->out = or_empty(r->out);
	r->err = or_empty(r->err);
	r->wait_status = st;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

void kit_run_result_free(struct kit_run_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}
