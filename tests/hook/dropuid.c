/* A server's worker that gives up root (t-record-procs.sh): the parent
 * leaks 3001 bytes (parent_leak) and forks a child that becomes uid and
 * gid 65534 (nobody), leaks 3002 bytes (worker_leak) and exits; its exit
 * dump (asked for with LEAKSNAP_DUMP_ON_EXIT=all) is written as nobody.
 * Prints "dropuid ok", or "dropuid: not root" when it cannot change user. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[2];

static __attribute__((noinline)) void parent_leak(void)
{
	keep[0] = malloc(3001);
}

static __attribute__((noinline)) void worker_leak(void)
{
	keep[1] = malloc(3002);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("dropuid: not root\n");
		return 0;
	}
	parent_leak();
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(3);
		worker_leak();
		exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 4;
	printf("dropuid ok\n");
	return 0;
}
