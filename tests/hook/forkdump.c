/* Reachability dumps while threads fork (issue 32's review of the second
 * pass): six threads allocate and free (and open files, whose FILE comes
 * from malloc under glibc's stdio list lock), two threads fork in a loop
 * (the hook's fork handler takes every table lock, then glibc takes its
 * arena locks), one thread forks and allocates with every signal blocked
 * (it is never stopped), and short-lived threads come and go during the
 * stops.  The main thread asks for DUMPS dumps by signal, one every 30 ms,
 * waits for each to be written (asking again every 5 s), then ends
 * everything and exits 0.
 *
 * Usage: forkdump OUTPREFIX DUMPS.  Prints "dumps N" (the dumps written).
 * A dump that never comes (the hang the review found) leaves the process
 * waiting: the test's timeout ends it. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;

static void nap(long ns)
{
	struct timespec ts = {0, ns};
	nanosleep(&ts, NULL);
}

static void *worker(void *a)
{
	(void)a;
	void *keep[64] = {0};
	unsigned i = 0;
	while (!atomic_load(&stop)) {
		unsigned k = i++ % 64;
		free(keep[k]);
		keep[k] = malloc(16 + (i % 512));
		if (i % 97 == 0) {
			FILE *f = fopen("/dev/null", "r");
			if (f)
				fclose(f);
		}
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	return NULL;
}

static void *forker(void *a)
{
	(void)a;
	while (!atomic_load(&stop)) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return NULL;
}

/* Every signal blocked while it allocates and forks (never stopped: the
 * dump takes it as it is), then a rest with them open. */
static void *blocker(void *a)
{
	(void)a;
	sigset_t all, old;
	sigfillset(&all);
	while (!atomic_load(&stop)) {
		pthread_sigmask(SIG_BLOCK, &all, &old);
		void *p[32];
		for (int i = 0; i < 32; i++)
			p[i] = malloc(24 + (size_t)i * 8);
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
		for (int i = 0; i < 32; i++)
			free(p[i]);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		nap(2000000);
	}
	return NULL;
}

static void *brief(void *a)
{
	(void)a;
	for (int i = 0; i < 50; i++)
		free(malloc(64 + (size_t)i));
	return NULL;
}

/* Threads that start, allocate a little and exit, during the stops. */
static void *spawner(void *a)
{
	(void)a;
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: forkdump OUTPREFIX DUMPS\n");
		return 2;
	}
	int n = atoi(argv[2]);
	pthread_t t[10];
	int nt = 0;
	for (int i = 0; i < 6; i++)
		pthread_create(&t[nt++], NULL, worker, NULL);
	pthread_create(&t[nt++], NULL, forker, NULL);
	pthread_create(&t[nt++], NULL, forker, NULL);
	pthread_create(&t[nt++], NULL, blocker, NULL);
	pthread_create(&t[nt++], NULL, spawner, NULL);
	int written = 0;
	for (int i = 1; i <= n; i++) {
		kill(getpid(), SIGRTMAX - 17);
		/* wait for dump i (the dump thread numbers them from 1) */
		char path[4096];
		snprintf(path, sizeof(path), "%s.%d.%04d.dump", argv[1], (int)getpid(), i);
		struct stat sb;
		/* (a signal that came before the hook could take it, on a
		 * loaded machine, is asked again every 5 s: a dump that never
		 * comes, the hang, still never comes) */
		for (int waited = 1; stat(path, &sb) != 0; waited++) {
			nap(1000000);
			if (waited % 5000 == 0) {
				fprintf(stderr, "forkdump: dump %d asked again after %d s\n", i,
					waited / 1000);
				kill(getpid(), SIGRTMAX - 17);
			}
		}
		written++;
		nap(30000000);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	printf("dumps %d\n", written);
	return 0;
}
