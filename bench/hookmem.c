/* hookmem BLOCKS STACKS [DUMP]: the hook's memory and dump pause.
 * Allocates BLOCKS live blocks (16..64 bytes) from STACKS distinct call
 * paths (a chain of 16 levels, each reached from one of two call sites:
 * up to 65536 paths; with 16 frames a walk keeps malloc's caller, the
 * level that calls it and the next 14 levels, so up to 16384 distinct
 * stacks), keeps them, and prints
 *   rss_kib <resident KiB after the allocations>
 * Run bare and under libleakhook.so: the difference is the hook's memory
 * (bench/hook.sh divides it by the blocks and the stacks).  With DUMP,
 * under the hook, it then calls leaksnap_dump(DUMP) while a second thread
 * keeps doing malloc/free pairs, and prints
 *   dump_s <seconds leaksnap_dump took>
 *   pause_s <the longest malloc/free pair of the other thread meanwhile>
 * the second being how long the program stood still. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LEVELS 16

#if defined(__clang__)
#define FRAME __attribute__((noinline))
#else
#define FRAME __attribute__((noinline, noipa))
#endif

static volatile int sink;

FRAME static void *leaf(size_t size)
{
	void *p = malloc(size);
	sink++;
	return p;
}

/* One level: bit depth - 1 of the path picks the call site, so that the
 * levels nearest the allocation (the frames a walk keeps) tell paths
 * apart first. */
FRAME static void *level(unsigned bits, int depth, size_t size)
{
	void *p;
	if (depth == 0) {
		p = leaf(size);
	} else if (bits >> (depth - 1) & 1) {
		p = level(bits, depth - 1, size);
		sink += 1;
	} else {
		p = level(bits, depth - 1, size);
		sink += 2;
	}
	sink++;
	return p;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static atomic_int stop, started;
static double worst;

static void *churn(void *arg)
{
	(void)arg;
	atomic_store(&started, 1);
	while (!atomic_load(&stop)) {
		double t0 = now();
		void *p = malloc(32);
		sink += p != NULL;
		free(p);
		double t1 = now();
		if (t1 - t0 > worst)
			worst = t1 - t0;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: hookmem BLOCKS STACKS [DUMP]\n");
		return 2;
	}
	unsigned long blocks = strtoul(argv[1], NULL, 10);
	unsigned long stacks = strtoul(argv[2], NULL, 10);
	if (stacks < 1 || stacks > (1ul << LEVELS)) {
		fprintf(stderr, "hookmem: STACKS must be 1..%lu\n", 1ul << LEVELS);
		return 2;
	}
	void **keep = malloc(blocks * sizeof(*keep));
	if (!keep)
		return 1;
	for (unsigned long i = 0; i < blocks; i++) {
		keep[i] = level((unsigned)(i % stacks), LEVELS, 16 + i % 49);
		if (!keep[i])
			return 1;
	}
	printf("rss_kib %ld\n", rss_kib());
	if (argc > 3) {
		int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT,
									 "leaksnap_dump");
		if (!dump) {
			fprintf(stderr,
				"hookmem: leaksnap_dump not found: run under libleakhook.so\n");
			return 1;
		}
		pthread_t th;
		pthread_create(&th, NULL, churn, NULL);
		while (!atomic_load(&started))
			;
		struct timespec settle = {0, 20000000};
		nanosleep(&settle, NULL);
		worst = 0;
		double t0 = now();
		int rc = dump(argv[3]);
		double t1 = now();
		nanosleep(&settle, NULL);
		atomic_store(&stop, 1);
		pthread_join(th, NULL);
		if (rc != 0) {
			fprintf(stderr, "hookmem: leaksnap_dump failed\n");
			return 1;
		}
		printf("dump_s %.4f\npause_s %.4f\n", t1 - t0, worst);
	}
	return 0;
}
