/* bench/onepause MIB BITS DUMPS [thread]: how long a process of one thread
 * stands still for a dump (bench/pause.sh).  It allocates MIB MiB in blocks
 * of 16 to 112 bytes from 2^BITS call paths (1 to 14 bits: 2 to 16,384
 * stacks, so about 100 to 1.6 million records), all live, then replaces blocks
 * chosen at random (a free, then a malloc) without rest while a forked
 * child (another process: this one keeps its one thread) sends it the dump
 * signal DUMPS times, 100 ms apart.  With "thread", a thread that only
 * waits is started first: the hook's dump thread then writes the dumps.
 * Prints "stall US" for every free+malloc pair that took 1 ms or more (a
 * dump's), then "pairs N". */
#include <dirent.h>
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

/* 2^bits call paths: each bit of @path picks one of two frames at its
 * depth. */
static unsigned bits;
static void *__attribute__((noinline)) alloc_a(unsigned path, unsigned d, size_t n);
static void *__attribute__((noinline)) alloc_b(unsigned path, unsigned d, size_t n);
static void *alloc_a(unsigned path, unsigned d, size_t n)
{
	void *p = d == bits ? malloc(n) : ((path >> d) & 1 ? alloc_b : alloc_a)(path, d + 1, n);
	__asm__ volatile("" ::"r"(p) : "memory");
	return p;
}
static void *alloc_b(unsigned path, unsigned d, size_t n)
{
	void *p = d == bits ? malloc(n) : ((path >> d) & 1 ? alloc_b : alloc_a)(path, d + 1, n);
	__asm__ volatile("" ::"r"(p) : "memory");
	return p;
}

/* The numbered dumps of this process under LEAKSNAP_OUT. */
static int dumps_written(void)
{
	const char *out = getenv("LEAKSNAP_OUT");
	if (!out)
		return -1;
	char dir[4096], stem[4096];
	const char *slash = strrchr(out, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - out) : 1, slash ? out : ".");
	snprintf(stem, sizeof(stem), "%s.%d.", slash ? slash + 1 : out, (int)getpid());
	DIR *d = opendir(dir[0] ? dir : "/");
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		n += !strncmp(e->d_name, stem, strlen(stem)) && l > 5 &&
		     !strcmp(e->d_name + l - 5, ".dump") && !strstr(e->d_name, ".exit.");
	}
	if (d)
		closedir(d);
	return n;
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
	if (argc < 4)
		return 2;
	uint64_t bytes = (uint64_t)atoi(argv[1]) << 20;
	bits = (unsigned)atoi(argv[2]);
	int dumps = atoi(argv[3]);
	if (bits < 1 || bits > 14)
		return 2;
	unsigned mask = (1u << bits) - 1;
	if (argc > 4 && !strcmp(argv[4], "thread")) {
		pthread_t t;
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			return 1;
	}
	size_t count = (size_t)(bytes / 64);
	void **blocks = calloc(count, sizeof(*blocks));
	if (!blocks)
		return 1;
	for (size_t i = 0; i < count; i++)
		blocks[i] = alloc_a((unsigned)next() & mask, 0, 16 + next() % 97);
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
			blocks[i] = alloc_a((unsigned)next() & mask, 0, 16 + next() % 97);
			uint64_t dt = now_ns() - t0;
			if (dt >= 1000000)
				printf("stall %llu\n", (unsigned long long)(dt / 1000));
		}
	}
	for (time_t end = time(NULL) + 60; dumps_written() >= 0 && dumps_written() < dumps &&
					     time(NULL) < end;) {
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	printf("pairs %lu\n", pairs);
	return 0;
}
