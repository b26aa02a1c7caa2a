/* Edge cases for the hook tests:
 *   edge sigexit   exit() from a SIGALRM handler that may interrupt malloc
 *                  or free (the hook must not hang at exit)
 *   edge child     a forked child that allocates stays single-threaded
 *                  (prints the child's thread count)
 *   edge big       a live 3 GiB block (virtual; prints "big ok" or "big
 *                  skipped" if the system refuses it)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

void *edge_keep;

static void on_alarm(int sig)
{
	(void)sig;
	exit(0);
}

static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8))
			n = atoi(line + 8);
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "sigexit")) {
		signal(SIGALRM, on_alarm);
		struct itimerval it = {{0, 0}, {0, 2000}};
		setitimer(ITIMER_REAL, &it, NULL);
		void *v[64] = {0};
		for (unsigned long i = 0;; i++) {
			unsigned k = (unsigned)(i % 64);
			free(v[k]);
			v[k] = malloc(16 + i % 512);
		}
	}
	if (!strcmp(mode, "child")) {
		pid_t pid = fork();
		if (pid == 0) {
			edge_keep = strdup("allocated in the child");
			printf("child threads %d\n", thread_count());
			fflush(stdout);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return 0;
	}
	if (!strcmp(mode, "big")) {
		edge_keep = malloc((size_t)3 << 30);
		printf(edge_keep ? "big ok\n" : "big skipped\n");
		return 0;
	}
	return 2;
}
