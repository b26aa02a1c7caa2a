/* ctlbench: the process and the timer of bench/control.sh.
 *
 *   ctlbench heap N
 *       Allocates N live blocks (four call sites, 1024 sizes each: about
 *       4,096 records), starts a ticker thread that allocates and frees in a
 *       tight loop and keeps the longest time one turn took (the program's
 *       pause: its threads wait while a snapshot holds the tables), prints
 *       "ready <pid>", then answers lines on its standard input:
 *         reset      the longest turn forgotten             -> "ok"
 *         gap        "gap <longest turn, us> <turns>"
 *         dump PATH  leaksnap_dump(PATH), timed             -> "dump <us>"
 *         exit
 *   ctlbench cpu CMD [ARGS...]
 *       Runs CMD (its output to /dev/null) and prints "<user+system CPU
 *       seconds> <exit status>".
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void **blocks;
static atomic_ullong longest, turns;
static atomic_bool reset;
static volatile int sink;

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

#define SITE(name)                                                      \
	__attribute__((noinline)) static void name(size_t from, size_t to) \
	{                                                               \
		for (size_t i = from; i < to; i++)                      \
			blocks[i] = malloc(16 + (i % 1024) * 8);        \
		sink++;                                                 \
	}
SITE(site_a)
SITE(site_b)
SITE(site_c)
SITE(site_d)

static void *ticker(void *arg)
{
	(void)arg;
	uint64_t last = now_us();
	for (;;) {
		void *p = malloc(32);
		sink += p != NULL;
		free(p);
		uint64_t t = now_us();
		if (atomic_exchange(&reset, false)) {
			atomic_store(&longest, 0);
			atomic_store(&turns, 0);
		} else if (t - last > atomic_load(&longest)) {
			atomic_store(&longest, t - last);
		}
		atomic_fetch_add(&turns, 1);
		last = t;
	}
	return NULL;
}

static int heap(size_t n)
{
	blocks = calloc(n ? n : 1, sizeof(*blocks));
	if (!blocks)
		return 1;
	site_a(0, n / 4);
	site_b(n / 4, n / 2);
	site_c(n / 2, 3 * n / 4);
	site_d(3 * n / 4, n);
	pthread_t t;
	if (pthread_create(&t, NULL, ticker, NULL) != 0)
		return 1;
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char line[4096];
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "reset")) {
			atomic_store(&reset, true);
			while (atomic_load(&reset))
				usleep(1000);
			printf("ok\n");
		} else if (!strcmp(line, "gap")) {
			printf("gap %llu %llu\n", (unsigned long long)atomic_load(&longest),
			       (unsigned long long)atomic_load(&turns));
		} else if (!strncmp(line, "dump ", 5)) {
			uint64_t t0 = now_us();
			int rc = dump ? dump(line + 5) : -1;
			uint64_t t1 = now_us();
			if (rc == 0)
				printf("dump %llu\n", (unsigned long long)(t1 - t0));
			else
				printf("error %s\n", dump ? strerror(errno) : "no hook");
		} else if (!strcmp(line, "exit")) {
			break;
		}
		fflush(stdout);
	}
	return 0;
}

static int cpu(char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) != pid)
		return 1;
	double s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	printf("%.6f %d\n", s, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "heap"))
		return heap(strtoul(argv[2], NULL, 10));
	if (argc >= 3 && !strcmp(argv[1], "cpu"))
		return cpu(argv + 2);
	fprintf(stderr, "usage: ctlbench heap N | ctlbench cpu CMD [ARGS...]\n");
	return 2;
}
