/* The processes tests/t-attach.sh attaches to.
 *
 *   target wait READY          writes READY, then sleeps in pause() until killed
 *   target read READY          blocks in read() on standard input; prints what
 *                              read returned (and errno) when it returns
 *   target nanosleep READY MS  sleeps MS milliseconds in one nanosleep(); prints
 *                              its result
 *   target signals READY N     a child sends N SIGRTMIN (sigqueue, values 1..N)
 *                              and a SIGUSR1 after every tenth, one every 2 ms,
 *                              once READY.go exists; the parent counts them
 *                              (handlers, no SA_RESTART) until N SIGRTMIN came
 *                              and prints the counts and the values' sum;
 *                              it ends once READY.stop exists
 *   target undumpable READY    as wait, after prctl(PR_SET_DUMPABLE, 0)
 *   target handler READY MS    as wait; a SIGUSR1 handler sleeps MS milliseconds,
 *                              then creates READY.handled
 *   target mainexit READY      the main thread ends (pthread_exit), a second
 *                              one waits
 *   target smallstack READY    as wait, the main thread on a 64 KiB stack of
 *                              its own (a coroutine's)
 *   target spin READY THREADS  THREADS threads allocate and free in a tight loop
 *                              until killed; the main thread too
 *   target leak READY THREADS N FLAG  as spin; once FLAG exists, each thread
 *                              allocates N blocks of 4000+i bytes (thread i) and
 *                              keeps them, then writes FLAG.i and goes on spinning
 *
 * READY is created once the process is in the state its mode names (for
 * read and nanosleep: just before the call). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static const char *flag;
static long leak_n;

static void ready(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
}

static volatile sig_atomic_t rt_count, usr1_count;
static volatile long value_sum;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	rt_count++;
	value_sum += si->si_value.sival_int;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_count++;
}

static void *volatile sink;
static const char *handler_ready;
static long handler_ms;

static void on_usr1_sleep(int sig)
{
	(void)sig;
	struct timespec ts = {handler_ms / 1000, (handler_ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
	char done[4096];
	snprintf(done, sizeof(done), "%s.handled", handler_ready);
	ready(done);
}
static const char *small_ready;

static void on_small_stack(void)
{
	ready(small_ready);
	for (;;)
		pause();
}

static void spin(int id)
{
	size_t i = 0;
	bool leaked = false;
	for (;;) {
		void *p = malloc(16 + (i++ % 512));
		sink = p;
		free(p);
		if (flag && !leaked && (i & 1023) == 0 && access(flag, F_OK) == 0) {
			for (long k = 0; k < leak_n; k++)
				sink = malloc(4000 + (size_t)id);
			char done[4096];
			snprintf(done, sizeof(done), "%s.%d", flag, id);
			ready(done);
			leaked = true;
		}
	}
}

static void *waiter(void *arg)
{
	ready(arg);
	for (;;)
		pause();
	return NULL;
}

static void *thread_main(void *arg)
{
	spin((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *mode = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "handler") == 0 && argc > 3) {
		handler_ready = argv[2];
		handler_ms = atol(argv[3]);
		signal(SIGUSR1, on_usr1_sleep);
		mode = "wait";
	}
	if (strcmp(mode, "mainexit") == 0) {
		pthread_t th;
		pthread_create(&th, NULL, waiter, argv[2]);
		pthread_exit(NULL);
	}
	if (strcmp(mode, "smallstack") == 0) {
		static ucontext_t main_ctx, co;
		size_t size = 64 * 1024;
		void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED || getcontext(&co) != 0)
			return 2;
		co.uc_stack.ss_sp = stack;
		co.uc_stack.ss_size = size;
		co.uc_link = NULL;
		small_ready = argv[2];
		makecontext(&co, on_small_stack, 0);
		swapcontext(&main_ctx, &co);
		return 2;
	}
	if (strcmp(mode, "undumpable") == 0) {
		prctl(PR_SET_DUMPABLE, 0);
		mode = "wait";
	}
	if (strcmp(mode, "wait") == 0) {
		ready(argv[2]);
		for (;;)
			pause();
	}
	if (strcmp(mode, "read") == 0) {
		char buf[64];
		ready(argv[2]);
		ssize_t n = read(0, buf, sizeof(buf) - 1);
		int e = errno;
		if (n >= 0) {
			buf[n] = '\0';
			printf("read %zd: %s\n", n, buf);
		} else {
			printf("read -1: %s\n", strerror(e));
		}
		return 0;
	}
	if (strcmp(mode, "nanosleep") == 0 && argc > 3) {
		long ms = atol(argv[3]);
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000}, rem = {0, 0};
		ready(argv[2]);
		int r = nanosleep(&ts, &rem);
		int e = errno;
		printf("nanosleep %d: %s\n", r, r == 0 ? "slept" : strerror(e));
		return 0;
	}
	if (strcmp(mode, "signals") == 0 && argc > 3) {
		long want = atol(argv[3]);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_rt;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGRTMIN, &sa, NULL);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		pid_t parent = getpid(), child = fork();
		if (child == 0) {
			char go[4096];
			snprintf(go, sizeof(go), "%s.go", argv[2]);
			while (access(go, F_OK) != 0)
				usleep(1000);
			for (long i = 1; i <= want; i++) {
				union sigval v = {.sival_int = (int)i};
				sigqueue(parent, SIGRTMIN, v);
				if (i % 10 == 0)
					kill(parent, SIGUSR1);
				usleep(2000);
			}
			_exit(0);
		}
		ready(argv[2]);
		while (rt_count < want)
			usleep(1000); /* (pause() could miss the last one) */
		waitpid(child, NULL, 0);
		printf("SIGRTMIN %d, sum %ld, SIGUSR1 %s\n", (int)rt_count, value_sum,
		       usr1_count > 0 ? "seen" : "not seen");
		fflush(stdout);
		/* (alive until told: a slow attach loop may outlast the signals) */
		char stop[4096];
		snprintf(stop, sizeof(stop), "%s.stop", argv[2]);
		while (access(stop, F_OK) != 0)
			usleep(1000);
		return 0;
	}
	if ((strcmp(mode, "spin") == 0 || strcmp(mode, "leak") == 0) && argc > 3) {
		int threads = atoi(argv[3]);
		if (strcmp(mode, "leak") == 0 && argc > 5) {
			leak_n = atol(argv[4]);
			flag = argv[5];
		}
		for (int t = 1; t < threads; t++) {
			pthread_t th;
			pthread_create(&th, NULL, thread_main, (void *)(long)t);
		}
		ready(argv[2]);
		spin(0);
	}
	return 2;
}
