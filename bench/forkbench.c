/* The process bench/fork.sh runs: a fork-per-request server (postgres with
 * pgbench -C, an inetd-style service).
 *   forkbench REQUESTS WORK [PARENT_BLOCKS]
 * The parent allocates PARENT_BLOCKS (20000) blocks of 32..287 bytes and
 * keeps them (its state, which every child inherits), then serves
 * REQUESTS requests one after another: each by a fork()ed child that
 * allocates 200 blocks, frees half of them, computes WORK thousand steps
 * (about a microsecond each thousand) and returns from main (exit(): atexit
 * work and, under the hook, whatever it does at exit), while the parent
 * waits for it.  Prints "requests R seconds S per_second P cpu_seconds C
 * per_cpu_second Q": wall time, and the CPU time of the parent and its
 * children (user + system), which other load on the machine does not
 * change. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static int serve(unsigned long work)
{
	void *b[200];
	for (int i = 0; i < 200; i++)
		b[i] = malloc(16 + (size_t)(i * 37) % 1024);
	for (int i = 0; i < 200; i += 2)
		free(b[i]);
	uint64_t x = 1;
	for (unsigned long k = 0; k < work; k++)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
	return 0;
}

static double cpu_s(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long requests = atol(argv[1]);
	unsigned long work = (unsigned long)atol(argv[2]);
	long blocks = argc > 3 ? atol(argv[3]) : 20000;
	void **keep = calloc((size_t)blocks + 1, sizeof(void *));
	if (!keep)
		return 2;
	for (long i = 0; i < blocks; i++)
		keep[i] = malloc(32 + (size_t)(i * 7919) % 256);
	double t0 = now_s(), c0 = cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN);
	for (long r = 0; r < requests; r++) {
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0)
			exit(serve(work));
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 3;
	}
	double s = now_s() - t0;
	double c = cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN) - c0;
	printf("requests %ld seconds %.3f per_second %.1f cpu_seconds %.3f per_cpu_second %.1f\n",
	       requests, s, (double)requests / s, c, (double)requests / c);
	return 0;
}
