/* Multi-threaded allocator stress for the hook tests:
 *   stress THREADS OPS
 * Each thread does OPS random malloc / calloc / realloc / free operations
 * on 512 slots of its own (sizes 1..4096), checks that every block kept
 * its contents, frees everything, and the program prints a checksum that
 * depends only on the arguments (so runs with and without the hook print
 * the same).  Nothing is left allocated at exit. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char tag;
};

struct worker {
	pthread_t thread;
	unsigned id;
	unsigned long ops;
	uint64_t sum;
	int bad;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int check(const struct slot *s)
{
	return !s->p || (s->p[0] == s->tag && s->p[s->size - 1] == s->tag);
}

__attribute__((noinline)) static void *stress_thread(void *arg)
{
	struct worker *w = arg;
	struct slot slots[SLOTS] = {{0}};
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (w->id + 1);
	for (unsigned long i = 0; i < w->ops; i++) {
		uint64_t r = next_rand(&rng);
		struct slot *s = &slots[r % SLOTS];
		size_t size = 1 + (r >> 16) % 4096;
		unsigned char tag = (unsigned char)(r >> 40);
		if (!check(s))
			w->bad++;
		switch ((r >> 32) % 4) {
		case 0:
			free(s->p);
			s->p = malloc(size);
			break;
		case 1:
			free(s->p);
			s->p = calloc(1, size);
			if (s->p && s->p[size - 1])
				w->bad++;
			break;
		case 2:
			s->p = realloc(s->p, size);
			break;
		default:
			free(s->p);
			s->p = NULL;
			continue;
		}
		if (!s->p) {
			w->bad++;
			continue;
		}
		s->size = size;
		s->tag = tag;
		s->p[0] = s->p[size - 1] = tag;
		w->sum += size;
	}
	for (unsigned k = 0; k < SLOTS; k++) {
		if (!check(&slots[k]))
			w->bad++;
		free(slots[k].p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
	unsigned long ops = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
	if (n < 1 || n > 64)
		n = 8;
	struct worker *w = calloc(n, sizeof(*w));
	for (unsigned i = 0; i < n; i++) {
		w[i].id = i;
		w[i].ops = ops;
		pthread_create(&w[i].thread, NULL, stress_thread, &w[i]);
	}
	uint64_t sum = 0;
	int bad = 0;
	for (unsigned i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		sum += w[i].sum;
		bad += w[i].bad;
	}
	free(w);
	printf("stress %u x %lu: checksum %llu, %d bad\n", n, ops, (unsigned long long)sum, bad);
	return bad ? 1 : 0;
}
