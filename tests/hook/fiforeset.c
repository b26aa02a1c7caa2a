/* fiforeset DUMP N: N reachability dumps (signal SIGRTMAX-17, waiting for
 * each file DUMP.PID.NNNN.dump) while threads allocate, two threads make
 * short-lived threads one after another, and one thread opens its signals
 * for 0.1 ms at a time and, with every signal blocked, forks.  Where the
 * hook's thread runs at SCHED_FIFO (root, or RLIMIT_RTPRIO), it raises the
 * threads it signals until they answer; a thread or process one of them
 * makes in that moment must start at the normal policy, never inherit the
 * raise.  Prints "raised threads T of N, raised children C of K". */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop, made, raised_made, kids, raised_kids;

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void busy(long long ns)
{
	long long end = now_ns() + ns;
	while (now_ns() < end)
		;
}

static void nap(long ns)
{
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	nanosleep(&ts, NULL);
}

static void *churn(void *arg)
{
	(void)arg;
	void *keep[64] = {0};
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		free(keep[i % 64]);
		keep[i % 64] = malloc(16 + i % 300);
	}
	for (int i = 0; i < 64; i++)
		free(keep[i]);
	return NULL;
}

static void *brief(void *arg)
{
	(void)arg;
	if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_OTHER)
		atomic_fetch_add(&raised_made, 1);
	atomic_fetch_add(&made, 1);
	for (int i = 0; i < 20; i++)
		free(malloc(64 + i));
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, brief, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	sigset_t all, old;
	sigfillset(&all);
	while (!atomic_load(&stop)) {
		busy(100000); /* signals open */
		pthread_sigmask(SIG_BLOCK, &all, &old);
		for (int r = 0; r < 4; r++) {
			pid_t c = fork();
			if (c == 0)
				_exit((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_OTHER ? 7 : 0);
			int st = 0;
			if (c > 0 && waitpid(c, &st, 0) == c) {
				atomic_fetch_add(&kids, 1);
				if (WIFEXITED(st) && WEXITSTATUS(st) == 7)
					atomic_fetch_add(&raised_kids, 1);
			}
			busy(200000);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[2]);
	pthread_t t[6];
	int nt = 0;
	for (int i = 0; i < 3; i++)
		pthread_create(&t[nt++], NULL, churn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[nt++], NULL, spawner, NULL);
	pthread_create(&t[nt++], NULL, forker, NULL);
	for (int i = 1; i <= n; i++) {
		kill(getpid(), SIGRTMAX - 17);
		char path[4096];
		snprintf(path, sizeof(path), "%s.%d.%04d.dump", argv[1], (int)getpid(), i);
		struct stat sb;
		for (int waited = 0; stat(path, &sb) != 0 && waited < 60000; waited++)
			nap(1000000);
		nap(5000000);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	printf("raised threads %d of %d, raised children %d of %d\n", atomic_load(&raised_made),
	       atomic_load(&made), atomic_load(&raised_kids), atomic_load(&kids));
	return 0;
}
