/* Edge cases for the hook tests:
 *   edge sigexit   exit() from a SIGALRM handler that may interrupt malloc
 *                  or free (the hook must not hang at exit)
 *   edge child     a forked child that allocates (prints the child's
 *                  thread count: its own, and the hook's dump thread where
 *                  it has one)
 *   edge userns    a forked child calls unshare(CLONE_NEWUSER), which
 *                  needs a single-threaded process: prints "userns ok", or
 *                  "userns " and the error
 *   edge big       a live 3 GiB block (virtual; prints "big ok" or "big
 *                  skipped" if the system refuses it)
 *   edge pexit     main leaks 10 bytes and ends by pthread_exit(); a thread
 *                  leaks 4242 bytes 0.2 s later and returns: the process
 *                  must then end (exit status 0)
 *   edge smallstack
 *                  a thread of PTHREAD_STACK_MIN bytes of stack, 10 frames
 *                  of 256 bytes deep, allocates (malloc, realloc, calloc:
 *                  the hook's own frames, its thread-local storage and
 *                  the C library's must fit); prints "smallstack ok"
 *   edge cd DIR    asks for a dump, changes directory to DIR, asks for
 *                  another (0.2 s apart), exits
 *   edge refail    a block of 777 bytes from refail_leak(), then a realloc
 *                  of it that fails: the block stays recorded, with its
 *                  stack (prints "refail ok")
 *   edge pexit-atexit
 *                  as pexit, with an atexit handler that allocates 5555
 *                  bytes (atexit_leak), uses 512 KiB of stack and prints
 *                  "atexit ok" unless SIGTERM is blocked where it runs
 *   edge pexit-cancel
 *                  main is cancelled by a thread (pthread_cancel), which
 *                  then ends: the process must end
 *   edge pexit-fork
 *                  a forked child does as pexit, after a dump signal that
 *                  starts its dump thread; prints "child ended" if the
 *                  child ends within 10 s
 *   edge masked    blocks every signal (sigprocmask), reads its mask back,
 *                  sleeps 1 s in steps of 0.1 s, then prints "masked asked
 *                  A pending P threads T": A 1 if the mask read back has
 *                  the dump signal blocked, P 1 if it is pending (blocked
 *                  in fact), T its threads
 *   edge masked-thread
 *                  blocks every signal, reads its mask back, starts a thread
 *                  (that waits), sleeps 1 s in one nanosleep and prints
 *                  "masked-thread asked A sleep S": A 1 if the mask read
 *                  back has the dump signal blocked, S "slept" or "EINTR"
 *   edge masked-fork
 *                  blocks every signal, forks; the child reads its mask
 *                  back, starts a thread (that waits), reads it back again
 *                  and prints "masked-fork child A B": A, B 1 where the
 *                  dump signal is blocked in what it read
 *   edge masked-unshare
 *                  blocks every signal, starts a thread and joins it, calls
 *                  unshare(CLONE_NEWUSER), prints "masked-unshare ready" (or
 *                  "masked-unshare skipped: ERROR"), sleeps 1 s in steps of
 *                  0.1 s and prints "masked-unshare pending P threads T"
 *   edge forkunload LIB N
 *                  loads and unloads LIB (dlopen, dlclose), prints
 *                  "forkunload unloaded", then forks N children that _exit
 *                  at once, one at a time; prints "forkunload N ok"
 *   edge flood     a thread asks for dumps (the dump signal) without end
 *                  while others allocate; main calls exit() after 0.1 s:
 *                  the process must end
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leakhook.h"

void *edge_keep;

static void on_alarm(int sig)
{
	(void)sig;
	exit(0);
}

__attribute__((noinline)) void *pexit_main_leak(void) /* (a tail call: frame 0 is its caller) */
{
	return malloc(10);
}

__attribute__((noinline)) void *pexit_thread_leak(void)
{
	return malloc(4242);
}

static void *pexit_late(void *arg)
{
	(void)arg;
	usleep(200000);
	edge_keep = pexit_thread_leak();
	return NULL;
}

__attribute__((noinline)) void atexit_leak(void)
{
	edge_keep = malloc(5555);
	__asm__ volatile("" ::: "memory");
}

static void on_exit_handler(void)
{
	volatile char big[512 * 1024];
	for (size_t i = 0; i < sizeof(big); i += 4096)
		big[i] = 1;
	atexit_leak();
	sigset_t s;
	pthread_sigmask(SIG_BLOCK, NULL, &s);
	printf(sigismember(&s, SIGTERM) ? "atexit: SIGTERM blocked\n" : "atexit ok\n");
	fflush(stdout);
}

static pthread_t main_thread;

static void *cancel_main(void *arg)
{
	(void)arg;
	usleep(100000);
	pthread_cancel(main_thread);
	usleep(200000);
	return NULL;
}

static void *fork_worker(void *arg)
{
	(void)arg;
	usleep(200000);
	kill(getpid(), LEAKSNAP_HOOK_SIG_DUMP); /* a dump: the child's dump thread starts */
	usleep(100000);
	edge_keep = malloc(33);
	usleep(300000);
	return NULL;
}

static void *flood_ask(void *arg)
{
	(void)arg;
	for (;;)
		kill(getpid(), LEAKSNAP_HOOK_SIG_DUMP);
	return NULL;
}

static void *flood_churn(void *arg)
{
	void *k[32] = {0};
	unsigned s = (unsigned)(unsigned long)arg;
	for (;;) {
		unsigned i = (unsigned)rand_r(&s) % 32;
		free(k[i]);
		k[i] = malloc((size_t)(rand_r(&s) % 500 + 1));
	}
	return NULL;
}

__attribute__((noinline)) void refail_leak(void)
{
	edge_keep = malloc(777);
	__asm__ volatile("" ::: "memory"); /* (no tail call: a frame of its own) */
}

__attribute__((noinline)) static void small_rec(int d)
{
	volatile char buf[256];
	buf[0] = (char)d;
	if (d > 0) {
		small_rec(d - 1);
	} else {
		edge_keep = malloc(100);
		edge_keep = realloc(edge_keep, 200);
		free(edge_keep);
		edge_keep = calloc(2, 2);
	}
	__asm__ volatile("" ::"r"(buf) : "memory");
}

static void *small_main(void *arg)
{
	(void)arg;
	small_rec(10);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
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
	if (!strcmp(mode, "masked")) {
		sigset_t all, cur, pend;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		sigprocmask(SIG_BLOCK, NULL, &cur);
		for (int i = 0; i < 10; i++) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
		sigpending(&pend);
		printf("masked asked %d pending %d threads %d\n",
		       sigismember(&cur, LEAKSNAP_HOOK_SIG_DUMP),
		       sigismember(&pend, LEAKSNAP_HOOK_SIG_DUMP), thread_count());
		return 0;
	}
	if (!strcmp(mode, "masked-thread")) {
		sigset_t all, cur;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
		pthread_sigmask(SIG_SETMASK, NULL, &cur);
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
		struct timespec ts = {1, 0};
		int r = nanosleep(&ts, NULL);
		printf("masked-thread asked %d sleep %s\n", sigismember(&cur, LEAKSNAP_HOOK_SIG_DUMP),
		       r ? "EINTR" : "slept");
		return 0;
	}
	if (!strcmp(mode, "masked-fork")) {
		sigset_t all, a, b;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		pid_t c = fork();
		if (c == 0) {
			pthread_t t;
			sigprocmask(SIG_BLOCK, NULL, &a);
			if (pthread_create(&t, NULL, waiter, NULL) != 0)
				_exit(1);
			sigprocmask(SIG_BLOCK, NULL, &b);
			printf("masked-fork child %d %d\n", sigismember(&a, LEAKSNAP_HOOK_SIG_DUMP),
			       sigismember(&b, LEAKSNAP_HOOK_SIG_DUMP));
			fflush(stdout);
			_exit(0);
		}
		int st;
		return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(mode, "masked-unshare")) {
		sigset_t all, pend;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		pthread_t t;
		if (pthread_create(&t, NULL, small_main, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
		if (unshare(CLONE_NEWUSER) != 0) {
			printf("masked-unshare skipped: %s\n", strerror(errno));
			return 0;
		}
		printf("masked-unshare ready\n");
		fflush(stdout);
		for (int i = 0; i < 10; i++) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
		sigpending(&pend);
		printf("masked-unshare pending %d threads %d\n",
		       sigismember(&pend, LEAKSNAP_HOOK_SIG_DUMP), thread_count());
		return 0;
	}
	if (!strcmp(mode, "forkunload") && argc > 3) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		if (!h || dlclose(h) != 0)
			return 1;
		printf("forkunload unloaded\n");
		fflush(stdout);
		int n = atoi(argv[3]);
		for (int i = 0; i < n; i++) {
			edge_keep = malloc(64);
			pid_t c = fork();
			if (c == 0)
				_exit(0);
			if (c < 0 || waitpid(c, NULL, 0) != c)
				return 1;
			free(edge_keep);
		}
		printf("forkunload %d ok\n", n);
		return 0;
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
	if (!strcmp(mode, "userns")) {
		pid_t pid = fork();
		if (pid == 0) {
			int r = unshare(CLONE_NEWUSER);
			printf("userns %s\n", r == 0 ? "ok" : strerror(errno));
			fflush(stdout);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return 0;
	}
	if (!strcmp(mode, "pexit")) {
		static void *keep;
		keep = pexit_main_leak();
		pthread_t t;
		if (!keep || pthread_create(&t, NULL, pexit_late, NULL) != 0)
			return 1;
		pthread_detach(t);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "smallstack")) {
		pthread_attr_t at;
		pthread_t t;
		pthread_attr_init(&at);
		if (pthread_attr_setstacksize(&at, PTHREAD_STACK_MIN) != 0 ||
		    pthread_create(&t, &at, small_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		printf("smallstack ok\n");
		return 0;
	}
	if (!strcmp(mode, "cd") && argc > 2) {
		edge_keep = malloc(10);
		raise(LEAKSNAP_HOOK_SIG_DUMP);
		usleep(200000);
		if (chdir(argv[2]) != 0)
			return 1;
		raise(LEAKSNAP_HOOK_SIG_DUMP);
		usleep(200000);
		return 0;
	}
	if (!strcmp(mode, "refail")) {
		refail_leak();
		void *q = realloc(edge_keep, (size_t)-1 / 2);
		printf(q == NULL && edge_keep ? "refail ok\n" : "refail: the realloc worked\n");
		return 0;
	}
	if (!strcmp(mode, "pexit-atexit")) {
		atexit(on_exit_handler);
		pthread_t t;
		if (pthread_create(&t, NULL, pexit_late, NULL) != 0)
			return 1;
		pthread_detach(t);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "pexit-cancel")) {
		main_thread = pthread_self();
		pthread_t t;
		if (pthread_create(&t, NULL, cancel_main, NULL) != 0)
			return 1;
		pthread_detach(t);
		for (;;)
			pause();
	}
	if (!strcmp(mode, "pexit-fork")) {
		pid_t pid = fork();
		if (pid == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, fork_worker, NULL) != 0)
				_exit(1);
			pthread_detach(t);
			pthread_exit(NULL);
		}
		for (int i = 0; i < 100; i++) {
			int st;
			if (waitpid(pid, &st, WNOHANG) == pid) {
				printf("child ended\n");
				return 0;
			}
			usleep(100000);
		}
		kill(pid, SIGKILL);
		printf("child still running after 10 s\n");
		return 1;
	}
	if (!strcmp(mode, "flood")) {
		pthread_t t;
		if (pthread_create(&t, NULL, flood_ask, NULL) != 0 ||
		    pthread_create(&t, NULL, flood_churn, (void *)1) != 0 ||
		    pthread_create(&t, NULL, flood_churn, (void *)2) != 0)
			return 1;
		usleep(100000);
		exit(0);
	}
	if (!strcmp(mode, "big")) {
		edge_keep = malloc((size_t)3 << 30);
		printf(edge_keep ? "big ok\n" : "big skipped\n");
		return 0;
	}
	return 2;
}
