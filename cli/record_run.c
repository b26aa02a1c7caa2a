/* leaksnap record: running the program -- started by kit_run (fork, exec,
 * errno pipe), watched while it runs (signals forwarded, dumps listed as
 * they appear), reaped (record.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "cli.h"
#include "kit_run.h"
#include "record.h"

/* The child, while record may forward signals to it; 0 once it is reaped
 * (so a late signal never reaches a recycled pid). */
static volatile sig_atomic_t fwd_pid;
/* The hook's signals received and not passed on yet: the main loop sends
 * them to the run's processes (a /proc search: no place for a handler). */
static atomic_uint pending_dump, pending_toggle;
/* The write end of the pipe that wakes the main loop. */
static volatile sig_atomic_t wake_fd = -1;

static void wake(void)
{
	if (wake_fd >= 0)
		(void)!write(wake_fd, "", 1);
}

static void forward_signal(int sig)
{
	int saved = errno;
	pid_t pid = (pid_t)fwd_pid;
	if (pid > 0)
		kill(pid, sig);
	errno = saved;
}

static void hook_signal(int sig)
{
	int saved = errno;
	atomic_fetch_add(sig == LEAKSNAP_HOOK_SIG_DUMP ? &pending_dump : &pending_toggle, 1);
	wake();
	errno = saved;
}

static void child_changed(int sig)
{
	int saved = errno;
	(void)sig;
	wake();
	errno = saved;
}

/* What record does with a signal while the program runs. */
enum sig_role {
	SIG_FORWARD, /* pass it on to the program (unless record inherited it
		      * ignored: then it stays ignored, as a shell keeps it) */
	SIG_HOOK,    /* the hook's: pass it on to every process of the run */
	SIG_IGNORE,  /* the terminal sends it to the program already */
	SIG_CHILD,   /* SIGCHLD: wakes the loop (an inherited SIG_IGN would
		      * also reap the program behind our back) */
};

enum { N_SIGS = 9 };

struct sig_state {
	int sig[N_SIGS];
	enum sig_role role[N_SIGS];
	struct sigaction old[N_SIGS];
	sigset_t set; /* all of them */
	sigset_t old_mask;
};

static void sig_init(struct sig_state *s)
{
	static const enum sig_role roles[N_SIGS] = {
		SIG_FORWARD, SIG_FORWARD, SIG_FORWARD, SIG_FORWARD, SIG_HOOK,
		SIG_HOOK,    SIG_IGNORE,  SIG_IGNORE,  SIG_CHILD,
	};
	const int sig[N_SIGS] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, LEAKSNAP_HOOK_SIG_DUMP,
				 LEAKSNAP_HOOK_SIG_TOGGLE, SIGINT, SIGQUIT, SIGCHLD};
	sigemptyset(&s->set);
	for (int i = 0; i < N_SIGS; i++) {
		s->sig[i] = sig[i];
		s->role[i] = roles[i];
		sigaddset(&s->set, sig[i]);
	}
}

/* Block the signals, then install record's dispositions; forwarding starts
 * when the mask is restored with the child's pid known. */
static void sig_take(struct sig_state *s)
{
	struct sigaction sa;
	sigprocmask(SIG_BLOCK, &s->set, &s->old_mask);
	for (int i = 0; i < N_SIGS; i++) {
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		switch (s->role[i]) {
		case SIG_FORWARD: sa.sa_handler = forward_signal; break;
		case SIG_HOOK: sa.sa_handler = hook_signal; break;
		case SIG_IGNORE: sa.sa_handler = SIG_IGN; break;
		case SIG_CHILD:
			sa.sa_handler = child_changed;
			sa.sa_flags |= SA_NOCLDSTOP;
			break;
		}
		if (sigaction(s->sig[i], s->role[i] == SIG_FORWARD ? NULL : &sa, &s->old[i]) != 0)
			continue;
		if (s->role[i] == SIG_FORWARD && s->old[i].sa_handler != SIG_IGN)
			sigaction(s->sig[i], &sa, NULL);
	}
}

/* Put back the dispositions and mask record started with (in the child
 * before exec, so that it inherits what record inherited, the SIGHUP that
 * nohup ignores included; in record once the child is reaped). */
static void sig_restore(const struct sig_state *s)
{
	for (int i = 0; i < N_SIGS; i++)
		sigaction(s->sig[i], &s->old[i], NULL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

/* In the child before exec: what record inherited, given back. */
static void child_setup(void *ctx)
{
	sig_restore(ctx);
	cli_restore_open_files();
}

/* Pass the hook's signals received since the last time on to the run's
 * processes; say so when none catches them. */
static void pass_hook_signals(const char *run_id)
{
	static const struct {
		atomic_uint *count;
		const char *what;
	} kinds[] = {{&pending_dump, "dump"}, {&pending_toggle, "capture toggle"}};
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		unsigned n = atomic_exchange(kinds[k].count, 0);
		if (n == 0)
			continue;
		int sig = k == 0 ? LEAKSNAP_HOOK_SIG_DUMP : LEAKSNAP_HOOK_SIG_TOGGLE;
		if (record_procs_signal(run_id, (pid_t)fwd_pid, sig, n) == 0)
			cli_warn(NULL, "signal %d (%s) not passed on: no process of this run catches it "
				       "(not started yet, not hooked, or left out by --only)",
				 sig, kinds[k].what);
	}
}

/* Wait for the program to end without reaping it, passing signals on and
 * listing dumps meanwhile.  The program's pid stays ours until the caller
 * reaps it, so a forwarded signal never reaches another process. */
static void watch(pid_t pid, int wake_r, const char *run_id, struct record_watch *w)
{
	for (;;) {
		siginfo_t si;
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
			if (si.si_pid == pid)
				return;
		} else if (errno != EINTR) {
			return; /* the caller's waitpid() says what went wrong */
		}
		struct pollfd fds[2] = {{wake_r, POLLIN, 0}, {w ? record_watch_fd(w) : -1, POLLIN, 0}};
		int timeout = w ? record_watch_timeout(w) : -1;
		if (poll(fds, fds[1].fd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR)
			return;
		char buf[64];
		while (read(wake_r, buf, sizeof(buf)) > 0)
			;
		pass_hook_signals(run_id);
		if (w)
			record_watch_step(w, (fds[1].revents & POLLIN) != 0);
	}
}

/* Block the signals, forget the pid, reap.  0, or -1 with @e. */
static int reap(pid_t pid, struct sig_state *ss, int *status, struct kit_run_error *e)
{
	sigprocmask(SIG_BLOCK, &ss->set, NULL);
	fwd_pid = 0;
	*status = 0;
	return kit_wait(pid, status, e);
}

int record_run(char **argv, const char *run_id, struct record_watch *w, struct record_ctl *ctl,
	       struct run_result *res)
{
	struct sig_state ss;
	res->exec_errno = 0;
	res->wait_status = 0;
	res->pid = 0;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
		cli_fail(argv[0], "cannot start: pipe: %s", strerror(errno));
		return -1;
	}
	sig_init(&ss);
	sig_take(&ss);
	wake_fd = pfd[1];
	fflush(NULL);
	const struct kit_spawn_opts so = {KIT_RUN_INHERIT, KIT_RUN_INHERIT, KIT_RUN_INHERIT, false,
					  child_setup, &ss};
	struct kit_proc p;
	struct kit_run_error e;
	int rc = kit_spawn((const char *const *)argv, &so, &p, &e);
	if (rc != 0) {
		if (strcmp(e.call, "fork") == 0)
			cli_fail(argv[0], "cannot start: fork: %s", strerror(e.errnum));
		else
			cli_fail(argv[0], "cannot start: %s", strerror(e.errnum));
	} else {
		res->pid = p.pid;
		fwd_pid = p.pid;
		sigprocmask(SIG_SETMASK, &ss.old_mask, NULL);
		res->exec_errno = kit_exec_errno(&p);
		if (res->exec_errno == 0) {
			if (ctl)
				record_ctl_started(ctl, p.pid);
			watch(p.pid, pfd[0], run_id, w);
			/* (before the program is reaped: its pid is still its own) */
			if (ctl)
				record_ctl_ended(ctl);
		}
		int st;
		if ((rc = reap(p.pid, &ss, &st, &e)) != 0)
			cli_fail(argv[0], "waitpid: %s", strerror(e.errnum));
		res->wait_status = st;
	}
	wake_fd = -1;
	sig_restore(&ss);
	close(pfd[0]);
	close(pfd[1]);
	return rc;
}
