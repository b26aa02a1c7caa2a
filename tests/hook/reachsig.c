/* reachsig DUMP_PREFIX DUMPS: dumps with reachability while a signal
 * handler allocates on the dumping thread (tests/t-reach.sh).
 *
 * A worker thread holds a lock most of the time, allocating and freeing
 * under it; SIGALRM, every 100 us, goes to the main thread (the worker
 * blocks it), whose handler takes the same lock, frees a block the worker
 * handed over and allocates one.  Without the hook the handler just waits
 * for the worker.  Should it run while the threads are stopped for a dump,
 * with the worker stopped holding the lock, it would wait for a lock no
 * one can release: the dumping thread must keep its signals blocked for
 * the pause.  Prints the number of dumps written and whether the handler
 * ran.
 *
 * reachsig DUMP_PREFIX DUMPS fork: instead, the worker forks without
 * pause (each fork takes every table lock, its signals waiting meanwhile):
 * a worker waiting there for a dump's locks must still take the dump's
 * stop signal, or every dump would find a thread it cannot stop. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>

#include "leakhook.h"

#define RING 64

static _Atomic(void *) ring[RING];
static atomic_int stop;
static atomic_long handled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	static unsigned k;
	pthread_mutex_lock(&lock);
	void *p = atomic_exchange(&ring[k++ % RING], NULL);
	free(p);
	void *volatile q = malloc(48);
	free(q);
	pthread_mutex_unlock(&lock);
	atomic_fetch_add(&handled, 1);
	errno = saved;
}

static void *worker(void *arg)
{
	(void)arg;
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	unsigned k = 0;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&lock);
		for (int i = 0; i < 200; i++, k++) {
			void *p = malloc(32 + k % 512);
			free(atomic_exchange(&ring[k % RING], p));
		}
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "fork"))) {
		fprintf(stderr, "usage: reachsig DUMP_PREFIX DUMPS [fork]\n");
		return 2;
	}
	bool forking = argc == 4;
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (!dump) {
		fprintf(stderr, "reachsig: not under the hook\n");
		return 2;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, forking ? forker : worker, NULL))
		return 2;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	if (!forking)
		setitimer(ITIMER_REAL, &it, NULL);
	int n = atoi(argv[2]), written = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%d" LEAKSNAP_HOOK_DUMP_SUFFIX, argv[1], i);
		written += dump(path) == 0;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (forking)
		printf("dumps %d\n", written);
	else
		printf("dumps %d handled %ld\n", written, atomic_load(&handled) > 0 ? 1L : 0L);
	return 0;
}
