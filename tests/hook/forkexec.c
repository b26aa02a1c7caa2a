/* A fork + exec chain: forkexec N leaks 3000 + N bytes, then (N > 0)
 * forks a child that execs "forkexec N-1" and waits for it.  Each process
 * of the chain exits normally, so each writes its own exit dump. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *forkexec_keep; /* global: the compiler cannot drop the leak */

__attribute__((noinline)) static void chain_leak(int n)
{
	forkexec_keep = malloc(3000 + (size_t)n);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	chain_leak(n);
	printf("level %d\n", n);
	fflush(stdout);
	if (n > 0) {
		pid_t pid = fork();
		if (pid == 0) {
			char arg[16];
			snprintf(arg, sizeof(arg), "%d", n - 1);
			execl("/proc/self/exe", argv[0], arg, (char *)NULL);
			_exit(127);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
