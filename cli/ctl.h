/* leaksnap ctl, watch, record --watch: what they share -- a dump received
 * over a process's control socket into a file (ctl_dump.c), and the watch
 * loop (cmd_watch.c). */
#ifndef LEAKSNAP_CLI_CTL_H
#define LEAKSNAP_CLI_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <leaksnap/snapshot.h>

#include "control.h"

/* Ctrl-C while a dump is received (ctl dump, watch).  With @stop_fd >= 0
 * (watch) the first SIGINT writes a byte to @stop_fd, so that the loop
 * ends after the snapshot in flight; any other SIGINT (the first, without
 * @stop_fd) removes the temporary file a dump is being received into and
 * ends the process at once, killed by SIGINT.  @old gets the disposition
 * to give back with ctl_sigint_restore.  Without @stop_fd a SIGINT that
 * was ignored (a job started in the background) stays ignored. */
struct sigaction;
void ctl_sigint_catch(int stop_fd, struct sigaction *old);
void ctl_sigint_restore(const struct sigaction *old);
/* The temporary of ctl_dump_receive is named (*@tmp) and no longer needs
 * removing on SIGINT: call once it was published or removed. */
void ctl_dump_settled(void);

/* Print a control error record: "leaksnap: SUBJECT: TEXT"; returns -1. */
int ctl_fail(const struct leaksnap_error *err);

/* Receive a dump (@reachability: "dump reachability") over @c into a
 * temporary file beside @near (a path in the directory it goes to), and
 * check that it is a LEAKSNAP dump the readers accept.  0 with *@tmp (the
 * temporary's name, owned) and *@snap (the dump opened); else the
 * temporary is removed and a CONTROL_E_* code returned with @err filled
 * (a dump that is not readable: CONTROL_E_OTHER with the reader's
 * message).  Prints nothing.  Until ctl_dump_settled, a SIGINT caught by
 * ctl_sigint_catch's handler removes the temporary. */
int ctl_dump_receive(struct control_conn *c, const char *near, bool reachability, char **tmp,
		     struct leaksnap_snapshot **snap, struct leaksnap_error *err);

/* The watch loop: a snapshot every @every seconds written to
 * DIR/watch.PID.NNNN.dump (NNNN from 0001, the next free number: a file is
 * never replaced), one live line each on @live, until the process ends,
 * @count snapshots (0: no limit) were written, or @stop_fd (may be -1)
 * becomes readable (a snapshot in flight is finished first). */
struct watch_cfg {
	const char *target;   /* PID or SOCKET, as given */
	const char *dir;
	double every;
	uint64_t count;
	bool reachability;
	FILE *live;           /* the live lines */
	const char *prefix;   /* before each live line ("" or "leaksnap: ") */
	int stop_fd;
	double wait_socket;   /* seconds to wait for the socket to appear
			       * (a program just started), 0: none */
};
struct watch_result {
	char **files;         /* the snapshots written, in order (owned) */
	size_t n;
	bool ended;           /* the process ended */
};
/* 0, or -1 after printing the error (the files written stay listed). */
int watch_run(const struct watch_cfg *cfg, struct watch_result *res);
void watch_result_release(struct watch_result *res);
/* "leakdiff FILE..." for @res's files, shell-quoted where needed. */
void watch_print_leakdiff(FILE *f, const char *prefix, const struct watch_result *res);

#endif
