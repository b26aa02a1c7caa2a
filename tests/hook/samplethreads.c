/* Sampled collection from eight threads at once (t-sample.sh):
 *
 *   samplethreads DIR INTERVAL
 *
 * Every thread, at the same time as the others:
 *  1. churns a ring of 1024 blocks through malloc, calloc, memalign,
 *     posix_memalign, aligned_alloc and realloc (sizes 1 to 1024 bytes, one
 *     in 16 from INTERVAL to 3 * INTERVAL), holds 2000 more blocks of 200
 *     bytes meanwhile (at a small INTERVAL the filter of sampled blocks
 *     grows under the threads), and frees everything: DIR/empty.dump;
 *  2. keeps one block of INTERVAL or more from each function (st_keep):
 *       INTERVAL            malloc
 *       INTERVAL + 64       calloc
 *       INTERVAL + 128      memalign(64)
 *       INTERVAL + 192      posix_memalign(256)
 *       INTERVAL + 256      aligned_alloc(64)
 *       4 * INTERVAL + 384  malloc(INTERVAL + 320) grown by realloc past a
 *                           block that stops it growing in place (moved;
 *                           tried again when it was not)
 *       2 * INTERVAL + 512  malloc(INTERVAL + 448), realloc to 8 bytes, then
 *                           to this
 *       3 * INTERVAL + 576  malloc(24), realloc to this
 *     and nothing else: DIR/kept.dump;
 *  3. frees them: DIR/end.dump.
 * Prints "moved N": how many of the eight grown blocks realloc moved. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>

#define THREADS 8
#define RING 1024
#define HELD 2000

static size_t interval;
static pthread_barrier_t phase;
static int moved[THREADS];
void *st_kept[THREADS][8]; /* global: the compiler cannot drop them */

#define SITE __attribute__((noinline))

SITE static void *st_churn(unsigned op, void *old, size_t n)
{
	void *p = NULL;
	switch (op) {
	case 0:
		p = malloc(n);
		break;
	case 1:
		p = calloc(1, n);
		break;
	case 2:
		p = memalign(64, n);
		break;
	case 3:
		if (posix_memalign(&p, 32, n) != 0)
			p = NULL;
		break;
	case 4:
		p = aligned_alloc(128, (n + 127) & ~(size_t)127);
		break;
	default: {
		p = realloc(old, n);
		if (p)
			return p;
		break;
	}
	}
	free(old);
	__asm__ volatile("" ::: "memory");
	return p;
}

SITE static void *st_held(void)
{
	void *p = malloc(200);
	__asm__ volatile("" ::: "memory");
	return p;
}

SITE static void st_keep(int t)
{
	size_t I = interval;
	void **k = st_kept[t];
	k[0] = malloc(I);
	k[1] = calloc(4, (I + 64) / 4);
	k[2] = memalign(64, I + 128);
	if (posix_memalign(&k[3], 256, I + 192) != 0)
		k[3] = NULL;
	k[4] = aligned_alloc(64, I + 256);
	/* (tried again while realloc grows it in place, up to 8 times) */
	void *g = NULL, *stop[8];
	int tries = 0;
	do {
		free(g);
		g = malloc(I + 320);
		stop[tries++] = malloc(I + 320);
		uintptr_t was = (uintptr_t)g;
		g = realloc(g, 4 * I + 384);
		moved[t] = (uintptr_t)g != was;
	} while (!moved[t] && tries < 8);
	for (int i = 0; i < tries; i++)
		free(stop[i]);
	k[5] = g;
	void *r = malloc(I + 448);
	r = realloc(r, 8);
	k[6] = realloc(r, 2 * I + 512);
	void *s = malloc(24);
	k[7] = realloc(s, 3 * I + 576);
	__asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint64_t rs = 0x2545f4914f6cdd1dULL * (uint64_t)(t + 1);
	void *ring[RING] = {0}, *held[HELD];
	for (int i = 0; i < HELD; i++)
		held[i] = st_held();
	for (int i = 0; i < 40000; i++) {
		rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
		unsigned slot = (unsigned)(rs % RING), op = (unsigned)((rs >> 12) % 6);
		size_t n = 1 + (size_t)((rs >> 20) % 1024);
		if ((rs >> 40) % 16 == 0)
			n = interval + (size_t)((rs >> 44) % (2 * interval));
		void *p = st_churn(op, ring[slot], n);
		if (!p)
			abort();
		ring[slot] = p;
	}
	for (int i = 0; i < RING; i++)
		free(ring[i]);
	for (int i = 0; i < HELD; i++)
		free(held[i]);
	pthread_barrier_wait(&phase); /* empty.dump */
	pthread_barrier_wait(&phase);
	st_keep(t);
	pthread_barrier_wait(&phase); /* kept.dump */
	pthread_barrier_wait(&phase);
	for (int i = 0; i < 8; i++)
		free(st_kept[t][i]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || !(interval = strtoul(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: samplethreads DIR INTERVAL\n");
		return 2;
	}
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (!dump) {
		fprintf(stderr, "samplethreads: not under the hook\n");
		return 1;
	}
	char path[4096];
	pthread_barrier_init(&phase, NULL, THREADS + 1);
	pthread_t tids[THREADS];
	for (int t = 0; t < THREADS; t++)
		if (pthread_create(&tids[t], NULL, thread_main, (void *)(intptr_t)t) != 0)
			return 1;
	static const char *const names[] = {"empty", "kept"};
	for (int d = 0; d < 2; d++) {
		pthread_barrier_wait(&phase);
		snprintf(path, sizeof(path), "%s/%s.dump", argv[1], names[d]);
		if (dump(path) != 0) {
			perror(path);
			return 1;
		}
		pthread_barrier_wait(&phase);
	}
	int n = 0;
	for (int t = 0; t < THREADS; t++) {
		pthread_join(tids[t], NULL);
		n += moved[t];
	}
	snprintf(path, sizeof(path), "%s/end.dump", argv[1]);
	if (dump(path) != 0) {
		perror(path);
		return 1;
	}
	printf("moved %d\n", n);
	return 0;
}
