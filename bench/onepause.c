/* bench/onepause MIB DUMPS [thread]: how long a process of one thread
 * stands still for a dump (bench/pause.sh).  It allocates MIB MiB in blocks
 * of 16 to 112 bytes from 64 call paths, all live, then replaces blocks
 * chosen at random (a free, then a malloc) without rest while a forked
 * child (another process: this one keeps its one thread) sends it the dump
 * signal DUMPS times, 100 ms apart.  With "thread", a thread that only
 * waits is started first: the hook's dump thread then writes the dumps.
 * Prints "stall US" for every free+malloc pair that took 1 ms or more (a
 * dump's), then "pairs N". */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* 64 call paths: the six bits of @path pick one of two frames at each of
 * six depths. */
static void *__attribute__((noinline)) alloc_a(unsigned path, unsigned d, size_t n);
static void *__attribute__((noinline)) alloc_b(unsigned path, unsigned d, size_t n);
static void *alloc_a(unsigned path, unsigned d, size_t n)
{
	void *p = d == 6 ? malloc(n) : ((path >> d) & 1 ? alloc_b : alloc_a)(path, d + 1, n);
	__asm__ volatile("" ::"r"(p) : "memory");
	return p;
}
static void *alloc_b(unsigned path, unsigned d, size_t n)
{
	void *p = d == 6 ? malloc(n) : ((path >> d) & 1 ? alloc_b : alloc_a)(path, d + 1, n);
	__asm__ volatile("" ::"r"(p) : "memory");
	return p;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	uint64_t bytes = (uint64_t)atoi(argv[1]) << 20;
	int dumps = atoi(argv[2]);
	if (argc > 3 && !strcmp(argv[3], "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
	}
	size_t count = (size_t)(bytes / 64);
	void **blocks = calloc(count, sizeof(*blocks));
	if (!blocks)
		return 1;
	for (size_t i = 0; i < count; i++)
		blocks[i] = alloc_a((unsigned)(next() & 63), 0, 16 + next() % 97);
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		struct timespec gap = {0, 100000000};
		nanosleep(&gap, NULL);
		for (int i = 0; i < dumps; i++) {
			kill(parent, SIGRTMAX - 17);
			nanosleep(&gap, NULL);
		}
		nanosleep(&gap, NULL);
		_exit(0);
	}
	unsigned long pairs = 0;
	int st;
	while (waitpid(child, &st, WNOHANG) == 0) {
		for (int k = 0; k < 1000; k++, pairs++) {
			size_t i = (size_t)(next() % count);
			uint64_t t0 = now_ns();
			free(blocks[i]);
			blocks[i] = alloc_a((unsigned)(next() & 63), 0, 16 + next() % 97);
			uint64_t dt = now_ns() - t0;
			if (dt >= 1000000)
				printf("stall %llu\n", (unsigned long long)(dt / 1000));
		}
	}
	printf("pairs %lu\n", pairs);
	return 0;
}
