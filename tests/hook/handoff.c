/* Blocks that change threads, for the hook tests:
 *   handoff ROUNDS THREADS OPS
 * In each of ROUNDS rounds, THREADS new threads each do OPS steps: allocate
 * a block (in handoff_alloc), put it in a shared queue, take the oldest
 * block out (most often another thread's) and free it -- except every
 * 997th block, which is kept forever: those are the only leaks, and the
 * program prints how many there are and their bytes, so a test can check
 * the hook's exit dump against exact numbers.  Threads come and go each
 * round, so shards change hands all the time. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE 4096
#define KEEP_EVERY 997

struct block {
	uint64_t seq;
	size_t size;
	unsigned char fill[];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct block *queue[QUEUE];
static size_t q_head, q_len;
static uint64_t next_seq;
static struct block **kept;
static size_t kept_n, kept_cap;
static unsigned long ops;
static int bad;

__attribute__((noinline)) static struct block *handoff_alloc(uint64_t seq)
{
	size_t size = sizeof(struct block) + 16 + (size_t)(seq * 7 % 500);
	struct block *b = malloc(size);
	if (!b)
		abort();
	b->seq = seq;
	b->size = size;
	memset(b->fill, (int)(seq & 0xff), size - sizeof(struct block));
	return b;
}

static void check(const struct block *b)
{
	for (size_t i = 0; i < b->size - sizeof(struct block); i++)
		if (b->fill[i] != (unsigned char)(b->seq & 0xff)) {
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			return;
		}
}

static void *worker(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < ops; i++) {
		pthread_mutex_lock(&mu);
		uint64_t seq = next_seq++;
		pthread_mutex_unlock(&mu);
		struct block *b = handoff_alloc(seq), *old = NULL;
		pthread_mutex_lock(&mu);
		queue[(q_head + q_len) % QUEUE] = b;
		q_len++;
		if (q_len > QUEUE / 2) { /* the oldest goes */
			old = queue[q_head];
			q_head = (q_head + 1) % QUEUE;
			q_len--;
		}
		if (old && old->seq % KEEP_EVERY == 0)
			kept[kept_n++] = old; /* the leak */
		else if (old) {
			check(old);
			free(old);
		}
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: handoff ROUNDS THREADS OPS\n");
		return 2;
	}
	unsigned rounds = (unsigned)strtoul(argv[1], NULL, 10);
	unsigned threads = (unsigned)strtoul(argv[2], NULL, 10);
	ops = strtoul(argv[3], NULL, 10);
	if (threads < 1 || threads > 64)
		return 2;
	kept_cap = (size_t)rounds * threads * ops / KEEP_EVERY + 2;
	kept = calloc(kept_cap, sizeof(*kept));
	if (!kept)
		return 1;
	pthread_t t[64];
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (unsigned i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	}
	/* drain: the queue's blocks are freed, kept ones stay */
	while (q_len) {
		struct block *b = queue[q_head];
		q_head = (q_head + 1) % QUEUE;
		q_len--;
		if (b->seq % KEEP_EVERY == 0) {
			kept[kept_n++] = b;
		} else {
			check(b);
			free(b);
		}
	}
	size_t bytes = 0, sizes = 0;
	static unsigned char seen[sizeof(struct block) + 16 + 500];
	for (size_t i = 0; i < kept_n; i++) {
		bytes += kept[i]->size;
		sizes += !seen[kept[i]->size];
		seen[kept[i]->size] = 1;
	}
	printf("handoff: kept %zu blocks of %zu sizes, %zu bytes, %s\n", kept_n, sizes, bytes,
	       bad ? "BAD" : "ok");
	return bad;
}
