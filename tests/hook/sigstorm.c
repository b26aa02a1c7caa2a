/* The dump signal at random moments of a process of one thread.
 *
 *   sigstorm DIR N [threads]
 *
 * A forked child (another process: this one keeps one thread) sends the
 * dump signal to its parent N times, 1-3 ms apart, while the parent
 * allocates and frees without end: signals land inside malloc and free,
 * inside the hook's tables among them.  Then the parent allocates on until
 * DIR (LEAKSNAP_OUT's directory) holds N numbered dumps, for at most 20 s,
 * and prints "dumps D threads T": D the numbered dumps, T the threads it
 * has at the end (1 while every dump was written in the handler; 2 once a
 * signal came inside the tables and the hook's dump thread was started for
 * it).  With "threads", the parent starts a thread first (that waits), and
 * the hook's dump thread with it. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int threads(void)
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

static int dumps(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		/* PREFIX.PID.NNNN.dump, not the exit dump */
		if (l > 10 && !strcmp(e->d_name + l - 5, ".dump") && e->d_name[l - 10] == '.' &&
		    strspn(e->d_name + l - 9, "0123456789") == 4)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;)
		pause(); /* (a dump signal's handler may run here) */
	return NULL;
}

static void churn(void **v, unsigned long rounds)
{
	static unsigned long i;
	for (unsigned long end = i + rounds; i < end; i++) {
		unsigned k = (unsigned)(i % 256);
		free(v[k]);
		v[k] = malloc(16 + (i * 7919) % 3000);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *dir = argv[1];
	int n = atoi(argv[2]);
	if (argc > 3 && !strcmp(argv[3], "threads")) {
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
	}
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		srand((unsigned)getpid());
		for (int i = 0; i < n; i++) {
			struct timespec ts = {0, 1000000 + rand() % 2000000};
			nanosleep(&ts, NULL);
			kill(parent, SIGRTMAX - 17);
		}
		_exit(0);
	}
	static void *v[256];
	int st;
	while (waitpid(child, &st, WNOHANG) == 0)
		churn(v, 1000);
	time_t end = time(NULL) + 20;
	while (dumps(dir) < n && time(NULL) < end) {
		churn(v, 1000);
		usleep(1000);
	}
	printf("dumps %d threads %d\n", dumps(dir), threads());
	return 0;
}
