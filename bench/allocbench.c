/* allocbench THREADS PAIRS: the hook benchmark's workload.
 * Each thread descends a chain of 10 calls, then does PAIRS malloc/free
 * pairs on a ring of 256 live blocks (sizes 16..4096 from a fixed random
 * sequence): free the oldest block, allocate a new one and fill it, as a
 * program uses what it allocates.  Built like
 * ordinary Debian code (-O2, no frame pointers).  Prints a checksum so a
 * broken run is visible. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 256

struct job {
	pthread_t thread;
	unsigned long pairs;
	uint64_t seed, sum;
};

static volatile int depth_sink;

static void work(struct job *j)
{
	void *ring[RING] = {0};
	uint64_t x = j->seed;
	for (unsigned long i = 0; i < j->pairs; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t size = 16 + x % (4096 - 16 + 1);
		unsigned slot = (unsigned)(i % RING);
		free(ring[slot]);
		char *p = malloc(size);
		memset(p, (int)i, size);
		ring[slot] = p;
		j->sum += size;
	}
	for (unsigned k = 0; k < RING; k++)
		free(ring[k]);
}

__attribute__((noinline)) static void descend(struct job *j, int depth)
{
	if (depth == 0)
		work(j);
	else
		descend(j, depth - 1);
	depth_sink++; /* not a tail call: every level stays on the stack */
}

static void *run(void *arg)
{
	descend(arg, 10);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
	unsigned long pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000000;
	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: allocbench THREADS PAIRS\n");
		return 2;
	}
	struct job jobs[64];
	memset(jobs, 0, sizeof(jobs));
	for (unsigned i = 0; i < n; i++) {
		jobs[i].pairs = pairs;
		jobs[i].seed = 0x9e3779b97f4a7c15ULL + i;
		if (n == 1)
			run(&jobs[i]);
		else
			pthread_create(&jobs[i].thread, NULL, run, &jobs[i]);
	}
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		if (n > 1)
			pthread_join(jobs[i].thread, NULL);
		sum += jobs[i].sum;
	}
	printf("allocbench %u x %lu: %llu bytes\n", n, pairs, (unsigned long long)sum);
	return 0;
}
