/* leaksnap record --watch: the watch loop (cmd_watch.c) run on a thread of
 * record over the program it started, into record's output directory; its
 * live lines go to standard error with record's other messages (standard
 * output is the program's).  It stops when the program ends. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "record.h"

/* (the hook opens its socket as the program starts: watch waits for it) */
#define RECORD_CTL_WAIT_SOCKET 30.0

static void *ctl_main(void *arg)
{
	struct record_ctl *r = arg;
	struct watch_cfg cfg = {r->target, r->dir, r->every, 0, false, stderr, "leaksnap: ",
				r->stop[0], RECORD_CTL_WAIT_SOCKET};
	r->rc = watch_run(&cfg, &r->res);
	return NULL;
}

void record_ctl_started(struct record_ctl *r, pid_t pid)
{
	snprintf(r->target, sizeof(r->target), "%ld", (long)pid);
	if (pipe2(r->stop, O_CLOEXEC | O_NONBLOCK) != 0) {
		cli_warn(NULL, "--watch: pipe: %s", strerror(errno));
		return;
	}
	/* the thread takes no signal: record's own are its main thread's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int e = pthread_create(&r->thread, NULL, ctl_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		cli_warn(NULL, "--watch: cannot start a thread: %s", strerror(e));
		close(r->stop[0]);
		close(r->stop[1]);
		return;
	}
	r->running = true;
}

void record_ctl_ended(struct record_ctl *r)
{
	if (!r->running)
		return;
	(void)!write(r->stop[1], "", 1);
	pthread_join(r->thread, NULL);
	r->running = false;
	close(r->stop[0]);
	close(r->stop[1]);
	if (r->res.n > 0)
		watch_print_leakdiff(stderr, "leaksnap: compare them: ", &r->res);
	watch_result_release(&r->res);
}
