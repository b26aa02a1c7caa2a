/* kit_run: running a program -- fork and exec of an argument vector (never
 * through a shell), an errno pipe that tells a failed exec from the
 * program's own exit, time limits, and output captured up to a bound.
 *
 * Tool-only (the CLI and its device driver, never libleaksnap).  It prints
 * nothing: failures come back as a struct kit_run_error, what the program
 * did as a struct kit_run_result, and the caller says what it means. */
#ifndef LEAKSNAP_KIT_RUN_H
#define LEAKSNAP_KIT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Why a program could not be run: the call that failed ("pipe", "fork",
 * "waitpid") and its errno. */
struct kit_run_error {
	const char *call;
	int errnum;
};

/* What the child gets as its standard streams. */
enum {
	KIT_RUN_INHERIT = -1, /* ours */
	KIT_RUN_CAPTURE = -2, /* a pipe whose read end is in kit_proc */
	KIT_RUN_DEVNULL = -3, /* /dev/null (read and write) */
};

struct kit_spawn_opts {
	int in, out, err;          /* a file descriptor, or KIT_RUN_* */
	bool default_sigpipe;      /* SIGPIPE back to SIG_DFL in the child */
	/* In the child after fork, before exec (async-signal-safe calls
	 * only); NULL: nothing. */
	void (*child_setup)(void *ctx);
	void *ctx;
};

/* A started program. */
struct kit_proc {
	pid_t pid;
	int out, err; /* read ends of KIT_RUN_CAPTURE streams, else -1 */
	int exec_fd;  /* the errno pipe's read end; -1 once read */
};

/* Fork and exec @argv[0] (looked up on PATH) with @argv (NULL-terminated).
 * 0 with @p filled, or -1 with @e filled (nothing started). */
int kit_spawn(const char *const *argv, const struct kit_spawn_opts *o, struct kit_proc *p,
	      struct kit_run_error *e);

/* Wait until the exec is done: 0 when the program runs, else the errno of
 * the failed exec (the child then exits 127).  Closes p->exec_fd; later
 * calls return 0. */
int kit_exec_errno(struct kit_proc *p);

/* waitpid(@pid, @status, 0), again when interrupted.  0, or -1 with @e. */
int kit_wait(pid_t pid, int *status, struct kit_run_error *e);

/* Running to completion with output captured ------------------------------ */

struct kit_run_opts {
	int out_fd;          /* stdout goes here; KIT_RUN_CAPTURE: into r->out */
	size_t max_out;      /* bytes of stdout kept */
	size_t max_err;      /* bytes of stderr kept */
	double timeout;      /* seconds; then the program is killed (SIGKILL) */
	void (*child_setup)(void *ctx); /* as in kit_spawn_opts */
	void *ctx;
};

struct kit_run_result {
	int status;          /* exit status; 128+N when killed by signal N */
	int wait_status;     /* as waitpid() gave it */
	int exec_errno;      /* the exec failed with this; else 0 */
	bool timed_out;      /* killed at the time limit */
	/* NUL-terminated, and NULL only when out of memory; each holds at most
	 * its bound; *_truncated says more came (or memory ran out). */
	char *out, *err;
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
};

/* Run @argv with stdin from /dev/null, SIGPIPE at its default, its stdout
 * (unless given a descriptor) and stderr captured, until it exits and its
 * output ends, or until @o->timeout.  A process it leaves behind holding
 * the pipes does not hold the call once the program itself has exited.
 * Returns 0 when the program was started (@r says how it went, exec
 * failures included), or -1 with @e when it could not be.  Release @r
 * with kit_run_result_free() either way. */
int kit_run_capture(const char *const *argv, const struct kit_run_opts *o, struct kit_run_result *r,
		    struct kit_run_error *e);
void kit_run_result_free(struct kit_run_result *r);

/* A monotonic clock in seconds, and a sleep of @seconds (fractions allowed,
 * resumed when interrupted). */
double kit_now(void);
void kit_sleep(double seconds);

#endif
