/* varbench THREADS ITERS: the hook benchmark's varied workload, where call
 * paths branch as in real programs (allocbench has one site behind one
 * chain).  Each thread does ITERS iterations on 1024 live slots: pick a
 * slot at random, free its block, and allocate a new one from one of two
 * callers (caller_a, caller_b) picked at random, through a 10-deep
 * recursive chain, at one of four sites picked at random: malloc, calloc,
 * malloc + realloc (the block recorded is the realloc's) and
 * posix_memalign; then fill it (sizes 16..4096, as allocbench: the two
 * workloads differ only in their call paths).  Built -O2 without frame
 * pointers, as ordinary Debian code, and as varbench-fp with them (for
 * LEAKSNAP_UNWIND=fp).
 *
 * Every recorded stack is thus, frame 0 first:
 *   site_* chain x 11 caller_a|caller_b work run (main|start_thread)
 * bench/varcheck.sh checks that against a dump.  The live blocks are not
 * freed at exit, so that the hook's exit dump of a timed run holds them.
 * Prints a checksum so a broken run is visible.
 *
 * VARBENCH_IDLE_THREAD=1: first start one more thread, which only waits.
 * A process of one thread lets glibc's malloc skip its arena lock; one
 * more thread, such as the hook's own dump thread, ends that (bench/sample.sh
 * measures what that costs bare). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 1024
#define DEPTH 10

/* Kept out of line and uncloned, each call a real frame of its own. */
#if defined(__clang__)
#define FRAME __attribute__((noinline))
#else
#define FRAME __attribute__((noinline, noipa))
#endif

struct job {
	pthread_t thread;
	unsigned long iters;
	uint64_t seed, sum;
	void *slot[SLOTS];
};

static volatile int depth_sink;

static inline uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

FRAME static void *site_malloc(size_t size)
{
	void *p = malloc(size);
	depth_sink++;
	return p;
}

FRAME static void *site_calloc(size_t size)
{
	void *p = calloc(1, size);
	depth_sink++;
	return p;
}

FRAME static void *site_realloc(size_t size)
{
	void *p = malloc(size / 2);
	if (p != NULL)
		memset(p, 1, size / 2);
	p = realloc(p, size);
	depth_sink++;
	return p;
}

FRAME static void *site_memalign(size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, size) != 0)
		p = NULL;
	depth_sink++;
	return p;
}

/* r: the random word of this iteration (bits 0-1 the site). */
FRAME static void *chain(uint64_t r, size_t size, int depth)
{
	void *p;
	if (depth > 0)
		p = chain(r, size, depth - 1);
	else if ((r & 3) == 0)
		p = site_malloc(size);
	else if ((r & 3) == 1)
		p = site_calloc(size);
	else if ((r & 3) == 2)
		p = site_realloc(size);
	else
		p = site_memalign(size);
	depth_sink++; /* not a tail call: every level stays on the stack */
	return p;
}

FRAME static void *caller_a(uint64_t r, size_t size)
{
	void *p = chain(r, size, DEPTH);
	depth_sink++;
	return p;
}

FRAME static void *caller_b(uint64_t r, size_t size)
{
	void *p = chain(r, size, DEPTH);
	depth_sink += 2;
	return p;
}

FRAME static void work(struct job *j)
{
	uint64_t x = j->seed;
	for (unsigned long i = 0; i < j->iters; i++) {
		uint64_t r = next(&x);
		size_t size = 16 + (r >> 8) % (4096 - 16 + 1);
		unsigned s = (unsigned)(r >> 32) % SLOTS;
		free(j->slot[s]);
		char *p = (r >> 2 & 1) ? caller_a(r, size) : caller_b(r, size);
		if (p == NULL) {
			fprintf(stderr, "varbench: out of memory\n");
			exit(1);
		}
		memset(p, (int)i, size);
		j->slot[s] = p;
		j->sum += size;
	}
	depth_sink++;
}

FRAME static void *run(void *arg)
{
	work(arg);
	depth_sink++;
	return NULL;
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: varbench THREADS ITERS\n");
		return 2;
	}
	const char *idle = getenv("VARBENCH_IDLE_THREAD");
	if (idle && *idle == '1') {
		pthread_t t;
		if (pthread_create(&t, NULL, idle_thread, NULL) != 0) {
			fprintf(stderr, "varbench: cannot start the idle thread\n");
			return 2;
		}
	}
	static struct job jobs[64];
	for (unsigned i = 0; i < n; i++) {
		jobs[i].iters = iters;
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
	printf("varbench %u x %lu: %llu bytes\n", n, iters, (unsigned long long)sum);
	return 0;
}
