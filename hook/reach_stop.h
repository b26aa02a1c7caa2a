/* leaksnap hook: the stop of the threads for a reachability pause, shared
 * by reach.c (the handler, the order of the stop and the table locks, the
 * image) and reach_stop.c (listing, signalling, waiting, releasing).
 * Internal to hook/. */
#ifndef LEAKSNAP_HOOK_REACH_STOP_H
#define LEAKSNAP_HOOK_REACH_STOP_H

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "reach.h"

/* The stop's state, shared with the handler (reach.c). */
extern atomic_uint stop_phase;        /* odd while threads are to stop */
extern atomic_uint stop_defer_phase;  /* the phase of a stop before the
				       * table locks: a thread inside the
				       * tables finishes there first */
extern _Atomic(struct reach_thread *) stop_threads;
extern atomic_size_t stop_nthreads;
extern atomic_uint stop_acks;

static inline int reach_sig(void)
{
	return LEAKSNAP_HOOK_SIG_STOP;
}

static inline long futex(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, (unsigned *)(uintptr_t)addr, op, val, ts, NULL, 0);
}

static inline uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline int my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* The threads of the process, stopped ---------------------------------------- */

struct stopper {
	struct reach_thread *threads;
	size_t n, cap, map_size;
	int self, dump_tid, control_tid;
	unsigned phase;
	size_t blocked, frozen;
	char why[160];          /* non-empty: the stop failed */
	/* where a pause's time goes (the metadata's reachability_*_us) */
	uint64_t stop_ns;       /* the first signal to the last thread stopped */
	uint64_t walk_ns;       /* the table walk, locks held, before the pause */
	uint64_t locked_ns;     /* the table locks held: the walk and the pause */
	size_t relisted;        /* thread-list reads after the first signals */
	bool fifo;              /* the locks were held at SCHED_FIFO (boost()) */
	bool walk_image;        /* the child walked the tables in its image */
	bool locks_first;       /* the table locks were taken before the stop */
	unsigned retries;       /* stops given up: a thread held every lock */
	uint64_t lock_t0;       /* when the table locks were taken */
};

/* Give @t's scheduling from before its boost back to thread @tid (0: the
 * calling thread). */
void reach_sched_restore(int tid, const struct reach_thread *t);
/* The hook's own thread at SCHED_FIFO for the pause, where it may; its
 * scheduling back. */
bool boost(const struct stopper *st, int *policy, struct sched_param *param);
void unboost(bool boosted, int policy, const struct sched_param *param);
/* The thread list in the hook's memory (@st->threads NULL: none); the
 * threads not listed yet added (how many, or -1 with @st->why); threads
 * that block the signal and run watched for 100 ms (0, or -1). */
void prepare_thread_list(struct stopper *st);
long list_threads(struct stopper *st);
int watch_blocking_threads(struct stopper *st);
/* A stop: begun (@defer: threads inside the tables finish first), the
 * threads signalled and waited for (0; -1 with @st->why; with
 * @locks_after, -2 when a thread takes every table lock), every thread
 * still raised lowered, the threads released; a stop given up asked
 * again. */
void stop_begin(struct stopper *st, bool defer);
int stop_threads_now(struct stopper *st, bool locks_after);
void unboost_all(struct stopper *st);
void release_threads(struct stopper *st);
void stop_again(struct stopper *st);

#endif
