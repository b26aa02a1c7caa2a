/* bench/bigheap MIB [THREADS]: a big heap of small blocks, for the filter
 * of sampled blocks (bench/sample.sh).  Each of THREADS threads (1 if not
 * given) allocates its share of MIB MiB in blocks of 16 to 112 bytes, all
 * live at once, then replaces an eighth as many blocks, chosen at random
 * (a free, then a malloc of a new size), with the whole heap live: every
 * free meets the filter at its fullest.  The blocks are left to the exit.
 * Prints "frees N alloc_ns A churn_ns C": the frees made and the slowest
 * thread's time in each phase.  Under the hook with LEAKSNAP_SAMPLE, the
 * exit dump's sample_filter= line says how many of them took the table
 * lock. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct job {
	uint64_t bytes;
	void **blocks;
	size_t count;
	uint64_t alloc_ns, churn_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
	struct job *j = arg;
	uint64_t rs = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)j;
#define NEXT() (rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17)
	size_t cap = (size_t)(j->bytes / 16) + 1;
	j->blocks = malloc(cap * sizeof(void *));
	if (!j->blocks)
		return NULL;
	uint64_t t0 = now_ns(), done = 0;
	while (done < j->bytes && j->count < cap) {
		NEXT();
		size_t n = 16 + (size_t)(rs >> 32) % 97;
		void *p = malloc(n);
		if (!p)
			break;
		*(volatile char *)p = 1;
		j->blocks[j->count++] = p;
		done += n;
	}
	uint64_t t1 = now_ns();
	for (size_t k = 0; k < j->count / 8; k++) {
		size_t i = (size_t)(NEXT() % j->count);
		free(j->blocks[i]);
		j->blocks[i] = malloc(16 + (size_t)(rs >> 32) % 97);
	}
	uint64_t t2 = now_ns();
	j->alloc_ns = t1 - t0;
	j->churn_ns = t2 - t1;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bigheap MIB [THREADS]\n");
		return 2;
	}
	uint64_t mib = strtoull(argv[1], NULL, 10);
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	if (!mib || threads < 1 || threads > 64) {
		fprintf(stderr, "bigheap: bad arguments\n");
		return 2;
	}
	struct job jobs[64] = {{0}};
	pthread_t tids[64];
	for (int i = 0; i < threads; i++) {
		jobs[i].bytes = (mib << 20) / (uint64_t)threads;
		if (pthread_create(&tids[i], NULL, run, &jobs[i]) != 0)
			return 1;
	}
	size_t frees = 0;
	uint64_t a = 0, f = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		frees += jobs[i].count / 8;
		a = jobs[i].alloc_ns > a ? jobs[i].alloc_ns : a;
		f = jobs[i].churn_ns > f ? jobs[i].churn_ns : f;
	}
	printf("frees %zu alloc_ns %llu churn_ns %llu\n", frees, (unsigned long long)a,
	       (unsigned long long)f);
	return 0;
}
