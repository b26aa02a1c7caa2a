/* leaksnap hook: the stopper -- the threads of the process stopped for a
 * reachable snapshot and released after it (reach_stop.c).  Used by the
 * snapshot (reach.c), which it knows nothing of.  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_REACH_STOP_H
#define LEAKSNAP_HOOK_REACH_STOP_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "reach.h"

/* One stop: the threads listed (in the thread list of the hook's memory,
 * reach_stop_prepare), their states, and where the pause's time went. */
struct stopper {
	struct reach_thread *threads;
	size_t n, cap, map_size;
	int self, dump_tid, control_tid;
	unsigned phase;
	size_t blocked, frozen;
	char why[160];          /* non-empty: the stop failed */
	bool full;              /* it failed for the list's size: trying again
				 * cannot help (the list is sized before the
				 * dump) */
	/* where a pause's time goes (the metadata's reachability_*_us) */
	uint64_t stop_ns;       /* the first signal to the last thread stopped */
	uint64_t walk_ns;       /* the table walk, locks held, before the pause */
	uint64_t locked_ns;     /* the table locks held: the walk and the pause */
	size_t relisted;        /* thread-list reads after the first signals */
	bool fifo;              /* the locks were held at SCHED_FIFO (reach_stop_boost_self()) */
	bool walk_image;        /* the child walked the tables in its image */
	bool locks_first;       /* the table locks were taken before the stop */
	unsigned retries;       /* stops given up: a thread held every lock */
	uint64_t lock_t0;       /* when the table locks were taken */
};

static inline uint64_t reach_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline int reach_my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

/* Install the stop signal's handler.  Returns NULL, or why it cannot be
 * had (then kept for reach_stop_unusable). */
const char *reach_stop_install(void);
/* NULL when the stop signal's handler is ours, else why no stop can be
 * made. */
const char *reach_stop_unusable(void);

/* The thread list, sized for the threads the process has now with room
 * to spare, into @st->threads (NULL: no memory).  Never unmapped. */
void reach_stop_prepare(struct stopper *st);
/* Make @st's list the one the handlers answer in; unpublish when done. */
void reach_stop_publish(const struct stopper *st);
void reach_stop_unpublish(void);
/* Add the threads not listed yet.  Returns how many, or -1 (@st->why). */
long reach_stop_list(struct stopper *st);
/* Watch the threads that block the signal and run, before anything
 * stops.  Returns 0, or -1 with @st->why. */
int reach_stop_watch_blocking(struct stopper *st);

/* A new stop's phase (@defer: a thread inside the tables finishes there
 * first); reach_stop_end_defer() ends the deferring. */
void reach_stop_begin(struct stopper *st, bool defer);
void reach_stop_end_defer(void);
/* Signal every thread, wait for the answers.  Returns 0, -1 with
 * @st->why, or (@locks_after) -2 when a thread takes every table lock. */
int reach_stop_threads(struct stopper *st, bool locks_after);
/* The threads of a stop given up, to be asked again in the next one. */
void reach_stop_again(struct stopper *st);
/* The threads still raised to SCHED_FIFO given their scheduling back. */
void reach_stop_unboost_all(struct stopper *st);
/* Release every thread of this stop (also those that answer late). */
void reach_stop_release(struct stopper *st);

/* The calling (hook's) thread raised to SCHED_FIFO while it holds the
 * table locks; returns whether it was (the old policy in *@policy,
 * *@param); reach_stop_unboost_self() undoes it. */
bool reach_stop_boost_self(const struct stopper *st, int *policy, struct sched_param *param);
void reach_stop_unboost_self(bool boosted, int policy, const struct sched_param *param);

#endif /* LEAKSNAP_HOOK_REACH_STOP_H */
