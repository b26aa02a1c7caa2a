/* Roots and threads at the exit dump and after threads end (tests/t-reach.sh,
 * "issue 27: roots and threads"; docs/reachability.md).
 *   reachexit MODE [DUMP_PATH]
 * Each mode prints "expect SIZE COUNT UNREACHABLE" for its sizes and
 * "expect-unreachable BYTES BLOCKS" (nothing else of the process is
 * unreachable), then ends as it says:
 *   deadret    a block whose only pointers were in a finished function's
 *              frame (2 KiB of slots, below main's), then main returns:
 *              unreachable at the exit dump, whose path runs over those
 *              slots without writing them all;
 *   deadexit   the same, then exit() from a function that still holds a
 *              block of its own in a live local: that one stays reachable;
 *   joined     a thread that kept one block in a local and one in a
 *              __thread variable ends and is joined; its stack stays in
 *              glibc's cache: both unreachable at a leaksnap_dump() (to
 *              DUMP_PATH), while a thread that ended but is not joined yet
 *              keeps the block it returned (pthread_join will give it);
 *   quick      a lost block, then main returns at once (the exit dump
 *              races the hook's dump thread's start).
 * Pointers are made in noinline functions and kept only where the mode
 * says. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

enum {
	S_DEAD = 2432,     /* only in a finished frame's slots */
	S_HELD = 2448,     /* in a live local of the function that calls exit */
	S_T_LOCAL = 2464,  /* an ended, joined thread's local */
	S_T_TLS = 2480,    /* its __thread variable */
	S_T_RESULT = 2496, /* returned by an ended thread not joined yet */
	S_QUICK = 2512,    /* lost before a quick return */
};

static volatile uintptr_t sink;

/* Fill 2 KiB of stack below the caller's frame with the block's address,
 * then forget it: only the dead slots hold it. */
static NOINLINE void dead_frame(void)
{
	volatile uintptr_t slots[256];
	uintptr_t p = (uintptr_t)malloc(S_DEAD);
	for (size_t i = 0; i < 256; i++)
		slots[i] = p;
	sink = slots[17] & 0; /* (the slots are used) */
}

static NOINLINE void exit_holding(void)
{
	volatile uintptr_t held = (uintptr_t)malloc(S_HELD);
	dead_frame();
	fflush(stdout);
	if (held)
		exit(0);
}

static __thread void *t_tls;

static NOINLINE void *ended(void *arg)
{
	(void)arg;
	volatile uintptr_t local[8];
	uintptr_t p = (uintptr_t)malloc(S_T_LOCAL);
	for (size_t i = 0; i < 8; i++)
		local[i] = p;
	t_tls = malloc(S_T_TLS);
	sink = local[3] & 0;
	return NULL;
}

static NOINLINE void *returns(void *arg)
{
	(void)arg;
	return malloc(S_T_RESULT);
}

static NOINLINE int joined(const char *path)
{
	pthread_t t, r;
	/* The one not joined comes after the join, on a stack of a size that
	 * glibc does not take from its cache (an eighth of the other's: it
	 * takes none more than 4 times the size asked for), so that it leaves
	 * the joined one's stack as it was.  (Made first, its malloc's frames
	 * -- read whole, as it is not joined -- kept the address of the top
	 * chunk that the other thread's block then took.) */
	pthread_attr_t attr;
	if (pthread_create(&t, NULL, ended, NULL) != 0 || pthread_join(t, NULL) != 0 ||
	    pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 1 << 20) != 0 ||
	    pthread_create(&r, &attr, returns, NULL) != 0)
		return 1;
	pthread_attr_destroy(&attr);
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	struct timespec ts = {0, 100000000};
	nanosleep(&ts, NULL); /* (the returning thread is gone by then) */
	if (dump && dump(path) != 0)
		return 1;
	void *res = NULL;
	pthread_join(r, &res);
	free(res);
	return 0;
}

static NOINLINE void quick_lost(void)
{
	sink = (uintptr_t)malloc(S_QUICK);
	sink = 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "quick")) {
		quick_lost();
		return 0;
	}
	if (!strcmp(mode, "deadret")) {
		printf("expect %d 1 1\nexpect-unreachable %d 1\n", S_DEAD, S_DEAD);
		dead_frame();
		return 0;
	}
	if (!strcmp(mode, "deadexit")) {
		printf("expect %d 1 1\nexpect %d 1 0\nexpect-unreachable %d 1\n", S_DEAD, S_HELD,
		       S_DEAD);
		exit_holding();
		return 1;
	}
	if (!strcmp(mode, "joined") && argc > 2) {
		printf("expect %d 1 1\nexpect %d 1 1\nexpect %d 1 0\nexpect-unreachable %d 2\n",
		       S_T_LOCAL, S_T_TLS, S_T_RESULT, S_T_LOCAL + S_T_TLS);
		fflush(stdout);
		return joined(argv[2]);
	}
	fprintf(stderr, "usage: reachexit deadret|deadexit|joined DUMP|quick\n");
	return 2;
}
