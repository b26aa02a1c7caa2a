/* leaksnap record: running the program -- fork, exec, forward signals
 * while it runs, reap it (record.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
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
	const int sig[N_SIGS] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, HOOK_SIG_DUMP, HOOK_SIG_TOGGLE,
				 SIGINT, SIGQUIT, SIGCHLD};
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

int record_run(char **argv, struct run_result *res)
{
	struct sig_state ss;
	int pfd[2];
	res->exec_errno = 0;
	res->wait_status = 0;
	res->pid = 0;
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return cli_fail(argv[0], "cannot start: %s", strerror(errno));
	sig_init(&ss);
	sig_take(&ss);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		sig_restore(&ss);
		close(pfd[0]);
		close(pfd[1]);
		return cli_fail(argv[0], "cannot start: fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(pfd[0]);
		sig_restore(&ss);
		cli_restore_open_files();
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w;
		do
			w = write(pfd[1], &e, sizeof(e));
		while (w < 0 && errno == EINTR);
		_exit(127);
	}
	close(pfd[1]);
	res->pid = pid;
	fwd_pid = pid;
	sigprocmask(SIG_SETMASK, &ss.old_mask, NULL);
	/* Empty read: the exec succeeded and closed the pipe. */
	int e = 0;
	ssize_t n;
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(e))
		res->exec_errno = e ? e : ENOEXEC;
	/* Wait without reaping, so that the pid stays ours while a forwarded
	 * signal may still be on its way; then block, forget, reap. */
	siginfo_t si;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0 && errno == EINTR)
		;
	sigprocmask(SIG_BLOCK, &ss.set, NULL);
	fwd_pid = 0;
	int st = 0;
	pid_t r;
	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	sig_restore(&ss);
	if (r < 0)
		return cli_fail(argv[0], "waitpid: %s", strerror(errno));
	res->wait_status = st;
	return 0;
}
