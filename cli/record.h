/* leaksnap record: running the program (record_run.c), shared with the
 * command itself (cmd_record.c). */
#ifndef LEAKSNAP_CLI_RECORD_H
#define LEAKSNAP_CLI_RECORD_H

#include <sys/types.h>

struct run_result {
	int exec_errno;  /* the child's execvp() failed with this, else 0 */
	int wait_status; /* waitpid() status of the program */
	pid_t pid;       /* the program's */
};

/* Fork and exec @argv (kit_run); wait for it, forwarding SIGTERM, SIGHUP,
 * SIGUSR1, SIGUSR2 and the hook's two signals (leakhook.h; their numbers
 * depend on the C library, 47 and 45 with glibc) to it (SIGINT and SIGQUIT
 * reach it from the terminal).  Returns 0, or -1 after printing why it
 * could not start. */
int record_run(char **argv, struct run_result *res);

#endif
