/* reachrace DUMP_PREFIX DUMPS THREADS: reachability dumps while threads
 * allocate and free without rest (tests/t-reach.sh).
 *
 * Before the threads start, 3 blocks of S_LOST bytes are lost (their only
 * pointer overwritten) and BALLAST blocks of S_BALLAST bytes are held by a
 * global array (so that walking the tables takes a while).  Each thread
 * then keeps a singly linked list of LIST nodes of S_NODE bytes, reachable
 * only from its head: it pushes a new node at the head (the new node holds
 * the only pointer to the rest of the list) and frees the last one, in a
 * loop.  A dump whose block list missed a node allocated meanwhile, or
 * kept one freed meanwhile, would find the rest of that list unreachable.
 * One more thread keeps VEC blocks of S_ELEM bytes whose only pointers
 * are in one array, itself held by a global, and grows and shrinks that
 * array with realloc() without rest, between S_VEC_SMALL and S_VEC_BIG
 * bytes, in place: main grows it once, then allocates an S_FENCE block
 * after it, so that it stays between live blocks in the heap (where
 * nothing but the live blocks is scanned; a block malloc mapped on its
 * own, or one past the heap's last live block, would be scanned as part
 * of a root even out of the tables).  A
 * dump that stops the thread inside realloc() -- the array out of the
 * tables, not yet back -- must still find the S_ELEM blocks reachable.
 * Meanwhile the main thread dumps DUMPS times through leaksnap_dump() and
 * prints "dumps N"; every dump must say: S_NODE blocks THREADS * LIST to
 * THREADS * (LIST + 1), none unreachable; S_ELEM VEC, none unreachable;
 * the array 0 or 1 block, reachable; S_FENCE held; S_LOST 3 of 3; S_BALLAST all held;
 * nothing else unreachable. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakhook.h"

#define NOINLINE __attribute__((noinline))

enum {
	S_LOST = 4000,
	S_BALLAST = 48,
	S_NODE = 4016,
	BALLAST = 200000,
	LIST = 64,
	MAX_THREADS = 16,
	S_ELEM = 4032,
	VEC = 64,
	S_VEC_SMALL = 1024,
	S_VEC_BIG = 65552,
	S_FENCE = 4064,
};

struct node {
	struct node *next;
	char pad[S_NODE - sizeof(struct node *)];
};

static void *volatile g_lost;
static void **volatile ballast;
static _Atomic(struct node *) heads[MAX_THREADS];
static atomic_int stop;

NOINLINE static void lose(void)
{
	for (int i = 0; i < 3; i++) {
		g_lost = malloc(S_LOST);
		memset(g_lost, 0x11, S_LOST);
	}
	g_lost = NULL;
}

NOINLINE static struct node *node_new(struct node *next)
{
	struct node *n = malloc(sizeof(*n));
	if (!n)
		abort();
	memset(n->pad, 0x22, sizeof(n->pad));
	n->next = next;
	return n;
}

/* Free the list's last node (the list has at least two). */
NOINLINE static void drop_last(struct node *head)
{
	struct node *p = head;
	while (p->next->next)
		p = p->next;
	struct node *last = p->next;
	p->next = NULL;
	free(last);
}

static void *worker(void *arg)
{
	_Atomic(struct node *) *head = arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		atomic_store(head, node_new(atomic_load(head)));
		drop_last(atomic_load(head));
	}
	return NULL;
}

static void **volatile g_vec;
static void *volatile g_fence;
static atomic_int grown;

static void *grower(void *arg)
{
	(void)arg;
	for (size_t k = 0; !atomic_load_explicit(&stop, memory_order_relaxed); k++) {
		void **v = realloc(g_vec, k % 2 ? S_VEC_BIG : S_VEC_SMALL);
		if (!v)
			abort();
		g_vec = v;
		atomic_fetch_add_explicit(&grown, 1, memory_order_relaxed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: reachrace DUMP_PREFIX DUMPS THREADS\n");
		return 2;
	}
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	int n = atoi(argv[2]), nthreads = atoi(argv[3]);
	if (!dump || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "reachrace: not under the hook, or bad arguments\n");
		return 2;
	}
	lose();
	ballast = calloc(BALLAST, sizeof(void *));
	for (int i = 0; ballast && i < BALLAST; i++)
		ballast[i] = malloc(S_BALLAST);
	pthread_t t[MAX_THREADS], g;
	for (int i = 0; i < nthreads; i++) {
		struct node *h = NULL;
		for (int k = 0; k < LIST; k++)
			h = node_new(h);
		atomic_store(&heads[i], h);
		if (pthread_create(&t[i], NULL, worker, &heads[i]) != 0)
			return 2;
	}
	void **v = calloc(1, S_VEC_SMALL);
	for (int i = 0; v && i < VEC; i++)
		v[i] = malloc(S_ELEM);
	g_vec = v ? realloc(v, S_VEC_BIG) : NULL;
	g_fence = malloc(S_FENCE);
	if (!g_vec || !g_fence || pthread_create(&g, NULL, grower, NULL) != 0)
		return 2;
	/* (under way before the first dump: a thread just made runs with its
	 * signals blocked for a moment, and is then not stopped -- its stack
	 * taken whole, its realloc's block not known; docs/reachability.md) */
	while (atomic_load_explicit(&grown, memory_order_relaxed) < 2)
		sched_yield();
	int written = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%d" LEAKSNAP_HOOK_DUMP_SUFFIX, argv[1], i);
		written += dump(path) == 0;
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	pthread_join(g, NULL);
	printf("dumps %d\n", written);
	return 0;
}
