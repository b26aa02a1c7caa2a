/* leaksnap record: running the program -- started by kit_run (fork, exec,
 * errno pipe), signals forwarded while it runs, reaped (record.h). */
#include <errno.h>
#include <signal.h>
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

static void forward_signal(int sig)
{
	int saved = errno;
	pid_t pid = (pid_t)fwd_pid;
	if (pid > 0)
		kill(pid, sig);
	errno = saved;
}

/* What record does with a signal while the program runs. */
enum sig_role {
	SIG_FORWARD, /* pass it on to the program */
	SIG_IGNORE,  /* the terminal sends it to the program already */
	SIG_DEFAULT, /* SIGCHLD: an inherited SIG_IGN would reap the program
		      * behind our back and lose its exit status */
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
	const int sig[N_SIGS] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, LEAKSNAP_HOOK_SIG_DUMP,
				 LEAKSNAP_HOOK_SIG_TOGGLE, SIGINT, SIGQUIT, SIGCHLD};
	sigemptyset(&s->set);
	for (int i = 0; i < N_SIGS; i++) {
		s->sig[i] = sig[i];
		s->role[i] = i < 6 ? SIG_FORWARD : i < 8 ? SIG_IGNORE : SIG_DEFAULT;
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
		if (s->role[i] == SIG_FORWARD) {
			sa.sa_handler = forward_signal;
			sa.sa_flags = SA_RESTART;
		} else {
			sa.sa_handler = s->role[i] == SIG_IGNORE ? SIG_IGN : SIG_DFL;
		}
		sigaction(s->sig[i], &sa, &s->old[i]);
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

/* Wait for the program without reaping it, so that its pid stays ours
 * while a forwarded signal may still be on its way; then block, forget,
 * reap.  0, or -1 with @e. */
static int reap(pid_t pid, struct sig_state *ss, int *status, struct kit_run_error *e)
{
	siginfo_t si;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &ss->set, NULL);
	fwd_pid = 0;
	*status = 0;
	return kit_wait(pid, status, e);
}

int record_run(char **argv, struct run_result *res)
{
	struct sig_state ss;
	res->exec_errno = 0;
	res->wait_status = 0;
	res->pid = 0;
	sig_init(&ss);
	sig_take(&ss);
	fflush(NULL);
	const struct kit_spawn_opts so = {KIT_RUN_INHERIT, KIT_RUN_INHERIT, KIT_RUN_INHERIT, false,
					  child_setup, &ss};
	struct kit_proc p;
	struct kit_run_error e;
	if (kit_spawn((const char *const *)argv, &so, &p, &e) != 0) {
		sig_restore(&ss);
		if (strcmp(e.call, "fork") == 0)
			cli_fail(argv[0], "cannot start: fork: %s", strerror(e.errnum));
		else
			cli_fail(argv[0], "cannot start: %s", strerror(e.errnum));
		return -1;
	}
	res->pid = p.pid;
	fwd_pid = p.pid;
	sigprocmask(SIG_SETMASK, &ss.old_mask, NULL);
	res->exec_errno = kit_exec_errno(&p);
	int st, rc = reap(p.pid, &ss, &st, &e);
	sig_restore(&ss);
	if (rc != 0) {
		cli_fail(argv[0], "waitpid: %s", strerror(e.errnum));
		return -1;
	}
	res->wait_status = st;
	return 0;
}
