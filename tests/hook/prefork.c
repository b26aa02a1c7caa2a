/* A prefork server's shape (t-hook-servers.sh): the master leaks 2001 bytes
 * (master_leak), then forks N workers that never allocate again; each
 * blocks in read() on a pipe the master never writes to, and ends with
 * _exit(0) when the master is gone (end of file).  The master prints
 * "ready PID1 PID2 ..." (the workers' pids) and waits for its standard
 * input to end, then ends the workers and exits.
 *   prefork N [fork|exit]
 * "exit": each worker instead leaks 2002 bytes (worker_leak) and returns
 * from main (exit(), its exit dump), and the master waits for them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[2];

static __attribute__((noinline)) void master_leak(void)
{
	keep[0] = malloc(2001);
}

static __attribute__((noinline)) void worker_leak(void)
{
	keep[1] = malloc(2002);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	int exiting = argc > 2 && !strcmp(argv[2], "exit");
	int p[2];
	pid_t pids[64];

	if (n < 1 || n > 64 || pipe(p) != 0)
		return 2;
	master_leak();
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return 2;
		if (pids[i] == 0) {
			if (exiting) {
				worker_leak();
				return 0;
			}
			close(p[1]);
			for (;;) {
				char c;
				ssize_t r = read(p[0], &c, 1);
				if (r == 0)
					_exit(0);
			}
		}
	}
	close(p[0]);
	if (exiting) {
		for (int i = 0; i < n; i++)
			waitpid(pids[i], NULL, 0);
		printf("done\n");
		return 0;
	}
	printf("ready");
	for (int i = 0; i < n; i++)
		printf(" %d", (int)pids[i]);
	printf("\n");
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof(line), stdin))
		;
	close(p[1]);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	return 0;
}
