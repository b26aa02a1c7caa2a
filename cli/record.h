/* leaksnap record: the pieces of the command (cmd_record.c): running the
 * program (record_run.c), its dump files (record_dumps.c) and the processes
 * of one run (record_procs.c). */
#ifndef LEAKSNAP_CLI_RECORD_H
#define LEAKSNAP_CLI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

/* Dump files ---------------------------------------------------------------- */

/* Where the dumps go.  @shown is how messages name the prefix (as the user
 * wrote it); @abs is what the hook gets, so that a program that changes its
 * working directory still writes where record looks. */
struct record_prefix {
	const char *shown;  /* borrowed: --out, $LEAKSNAP_OUT or the default */
	const char *origin; /* "--out ", "LEAKSNAP_OUT=" or "default prefix " */
	char *dir;          /* directory part as given incl. the '/', or "" */
	const char *base;   /* file-name part, borrowed from @shown */
	char *abs;          /* absolute prefix (owned) */
	char *drop;         /* the drop box record made (owned), or NULL */
};

/* One dump file name: PREFIX.PID.N.dump (N with or without leading zeros,
 * PREFIX.PID.0001.dump as the hook writes it, PREFIX.PID.1.dump as it
 * used to), PREFIX.PID.crash.dump or PREFIX.PID.exit.dump. */
struct record_dump {
	char *name;   /* owned file name (no directory) */
	uint64_t pid;
	uint64_t num; /* N; RECORD_DUMP_CRASH, RECORD_DUMP_EXIT: they sort last */
};
#define RECORD_DUMP_CRASH (UINT64_MAX - 1)
#define RECORD_DUMP_EXIT UINT64_MAX

/* A set of dump names, kept sorted by pid, then number (numerically: 2
 * before 10, 0002 and 2 alike), then crash, then exit. */
struct record_dump_list {
	struct record_dump *v;
	size_t n, cap;
};
#define RECORD_DUMP_LIST_INIT {NULL, 0, 0}

/* Whether @name is a dump file name of prefix base @base (nothing else:
 * not the hook's temporary files, not the .maps files); fills @pid, @num. */
bool record_dump_parse(const char *name, const char *base, uint64_t *pid, uint64_t *num);
void record_dump_list_release(struct record_dump_list *l);
bool record_dump_list_has(const struct record_dump_list *l, const struct record_dump *d);
/* Collect the dump files (regular files) of @p's directory that are in
 * neither @skip nor @skip2 (each may be NULL).  Returns 0, or an errno
 * value. */
int record_dump_scan(const struct record_prefix *p, const struct record_dump_list *skip,
		     const struct record_dump_list *skip2, struct record_dump_list *out);
/* "leaksnap: wrote PATH: N records, B bytes in A allocations" on stderr
 * for each dump of @l, in order; a dump the library cannot read gets its
 * error as a warning. */
void record_dump_list_print(const struct record_prefix *p, const struct record_dump_list *l);
/* Add copies of @l's names to @into (kept sorted).  0, or ENOMEM. */
int record_dump_list_add(struct record_dump_list *into, const struct record_dump_list *l);

/* Listing the dumps while the program runs: each new dump is listed once,
 * as soon as it is seen, after a first second (a short run gets all its
 * dumps listed at the end, in order).  Watches the directory with inotify,
 * else looks every RECORD_POLL_MS. */
#define RECORD_FIRST_LOOK_MS 1000
#define RECORD_POLL_MS 250
struct record_watch {
	const struct record_prefix *p;
	const struct record_dump_list *before; /* there before the run */
	struct record_dump_list listed;        /* listed so far */
	int fd;                                /* inotify, or -1 */
	bool dirty;                            /* a dump may have appeared */
	bool looked;                           /* the first look is done */
	uint64_t first_look_ns;                /* CLOCK_MONOTONIC */
};
/* Starts the clock; the watch borrows @p and @before.  Never fails (no
 * inotify: it polls). */
void record_watch_start(struct record_watch *w, const struct record_prefix *p,
			const struct record_dump_list *before);
/* The descriptor to poll for input, or -1; the poll timeout in ms (-1:
 * none needed). */
int record_watch_fd(const struct record_watch *w);
int record_watch_timeout(const struct record_watch *w);
/* After a poll (@ready: the descriptor has input): list what is new. */
void record_watch_step(struct record_watch *w, bool ready);
void record_watch_release(struct record_watch *w);

/* Processes that change user (record_drop.c) ------------------------------- */

/* Make the drop box in @dir, the output directory record just made as
 * root: @p->drop.  Returns 0, or an errno value. */
int record_drop_make(struct record_prefix *p, const char *dir);
/* Move the run's dump and maps files from the drop box into the output
 * directory (never over a file there).  Returns how many moved. */
size_t record_drop_collect(const struct record_prefix *p);
/* At the end: collect, then remove the drop box (a warning if it is not
 * empty). */
void record_drop_finish(const struct record_prefix *p);
/* Listen for the hook's notes of the run @run_id.  The descriptor, or -1
 * (then nothing is learnt, as before). */
int record_notes_open(const char *run_id);
/* Say each process that could not write a dump, once per process and
 * reason, with what to do; closes @fd.  Returns how many were said. */
size_t record_notes_report(int fd, const struct record_prefix *p);

/* The processes of a run ------------------------------------------------------ */

/* The environment variable that marks the processes of a run (record's
 * children, theirs, and so on; a daemon that left the process tree too):
 * RUN[:RUN...], one id per enclosing record. */
#define RECORD_RUN_ENV "LEAKSNAP_RUN"

/* Send @sig @times times to each process that carries @run_id in
 * RECORD_RUN_ENV (or is @child, record's own) and catches @sig (the hook's handler is installed: a
 * process left inert by --only, or not hooked at all, is not killed by
 * it).  Each is signalled through a pidfd where the kernel has them, so a
 * pid used again is never hit.  Returns the number of processes reached. */
size_t record_procs_signal(const char *run_id, pid_t child, int sig, unsigned times);

/* Watching the program (--watch SEC: record_ctl.c) ---------------------------- */

/* The watch loop over the program's control socket, on a thread of its
 * own from the program's start to its end, its snapshots written to @dir
 * every @every seconds. */
struct record_ctl {
	const char *dir;      /* record's output directory */
	double every;
	char target[24];      /* the program's pid */
	int stop[2];          /* written when the program ended */
	pthread_t thread;
	bool running;
	int rc;
	struct watch_result res;
};
/* The program @pid started: watch it (a failure to start is a warning). */
void record_ctl_started(struct record_ctl *r, pid_t pid);
/* It ended: stop the loop, and name the leakdiff command to run. */
void record_ctl_ended(struct record_ctl *r);

/* Running the program ------------------------------------------------------- */

struct run_result {
	int exec_errno;  /* the child's execvp() failed with this, else 0 */
	int wait_status; /* waitpid() status of the program */
	pid_t pid;       /* the program's */
};

/* Fork and exec @argv (kit_run); wait for it, listing dumps as they appear
 * (@watch, may be NULL), watching it over its control socket (@ctl, may be
 * NULL), forwarding SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2
 * to the program (those record did not inherit ignored: they stay ignored)
 * and the hook's two signals (leakhook.h; 47 and 45 with glibc) to every
 * process of the run that catches them (@run_id: record_procs_signal).
 * SIGINT and SIGQUIT reach the program from the terminal.  Returns 0, or
 * -1 after printing why it could not start. */
int record_run(char **argv, const char *run_id, struct record_watch *watch,
	       struct record_ctl *ctl, struct run_result *res);

#endif
