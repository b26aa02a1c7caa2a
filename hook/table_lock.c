/* leaksnap hook: taking every table lock (forks, snapshots, a rebuild of
 * the stack store, a reachability pause) and the slow way to one shard's
 * lock, which sleeps while someone takes or holds them all.  The shards'
 * hot paths are table.c's.  Internal to hook/.
 *
 * Lock order (docs/reachability.md, "Stopping and the table locks"): a
 * thread takes the table locks before any other lock it may wait for
 * while holding them (a fork's handler: then glibc's arena and stdio
 * locks), never after; a thread holding one shard waits for nothing but
 * the hook's own locks and memory.  Every lock is taken in shard order. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "table_internal.h"

/* While a thread takes or holds every lock (a snapshot, a fork, a
 * rebuild), threads waiting for a shard sleep on a futex instead of
 * yielding in a loop: a dozen threads yielding on two CPUs kept the
 * threads that held a shard, preempted, from running, and the taker
 * waited tens of milliseconds for each (issue 32).  all_takers counts the
 * threads taking or holding every lock; all_seq changes at each release. */
static atomic_uint all_takers, all_seq, all_sleepers;

static long futex_word(atomic_uint *w, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, (unsigned *)(uintptr_t)w, op, val, ts, NULL, 0);
}

void __attribute__((noinline)) table_lock_slow(atomic_int *l)
{
	for (unsigned spin = 0;; spin++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return;
		if (spin < 64) {
			cpu_relax();
			continue;
		}
		unsigned seq = atomic_load_explicit(&all_seq, memory_order_acquire);
		if (!atomic_load_explicit(&all_takers, memory_order_acquire)) {
			if (HOOK_UNLIKELY(stop_deferred)) {
				/* A thread whose reachability stop waits for it to
				 * leave the tables runs raised (SCHED_FIFO): its
				 * yield lets no thread of normal priority run, this
				 * lock's holder among them (on two CPUs, two such
				 * threads starved it for good): it sleeps instead. */
				int saved = errno;
				struct timespec ts = {0, 20000};
				nanosleep(&ts, NULL);
				errno = saved;
			} else {
				sched_yield();
			}
			continue;
		}
		/* every lock is being taken or held: sleep until they are let
		 * go (at most 1 ms: a release without the wake cannot strand
		 * anyone); the stop signal of a reachability pause still comes
		 * through (it interrupts the wait) */
		int saved = errno;
		struct timespec ts = {0, 1000000};
		atomic_fetch_add_explicit(&all_sleepers, 1, memory_order_seq_cst);
		if (atomic_load_explicit(l, memory_order_seq_cst))
			futex_word(&all_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
		atomic_fetch_sub_explicit(&all_sleepers, 1, memory_order_acq_rel);
		errno = saved;
	}
}

/* The signal mask of the thread holding every lock, from before it took
 * them (guarded by the locks themselves). */
static sigset_t holder_mask;
/* Set from the start of taking every lock to their release: a thread
 * stopped by a reachability pause here may hold any of them (reach_stop.c's
 * on_stop stops it at once rather than let it finish: see the lock order
 * in docs/reachability.md). */
static HOOK_TLS int taking_all;

bool table_takes_all_here(void)
{
	return taking_all || holds_all;
}

unsigned table_all_takers(void)
{
	return atomic_load_explicit(&all_takers, memory_order_acquire);
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A shard's lock, for the thread taking every lock: a holder that was
 * preempted must get a CPU, so after a short spin the taker sleeps a
 * little between looks.  With @deadline (CLOCK_MONOTONIC ns, 0: none),
 * false once it passed without the lock. */
static bool lock_for_all_until(atomic_int *l, uint64_t deadline)
{
	for (unsigned spin = 0;; spin++) {
		if (!atomic_load_explicit(l, memory_order_relaxed) &&
		    !atomic_exchange_explicit(l, 1, memory_order_acquire))
			return true;
		if (spin < 64) {
			cpu_relax();
			continue;
		}
		if (deadline && mono_ns() >= deadline)
			return false;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
}

/* Let go of shards [0, @n) and of the taker's count (table_unlock_all and
 * a bounded take that gave up). */
static void release_shards(unsigned n)
{
	for (unsigned i = n; i-- > 0;)
		atomic_store_explicit(&shards[i].lock, 0, memory_order_release);
	atomic_fetch_sub_explicit(&all_takers, 1, memory_order_acq_rel);
	atomic_fetch_add_explicit(&all_seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&all_sleepers, memory_order_seq_cst)) {
		int saved_errno = errno;
		futex_word(&all_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
		errno = saved_errno;
	}
}

/* Take every lock; with @deadline (ns, 0: wait as long as it takes) give
 * up when it passes, or at once when another thread takes or holds them
 * too, and return -1 holding nothing. */
static int lock_all(uint64_t deadline)
{
	if (holds_all)
		return 0;
	/* The holder's signals wait until it lets go: a handler of the
	 * program's run meanwhile could wait for a lock of the program's that
	 * another thread holds while it waits for these (or, during a
	 * reachability pause, while it is stopped), and none would be released.
	 * Faults stay open: blocked, a bug's fault would kill at once.  So does
	 * the stop of a reachability pause: a thread waiting here for another
	 * dump's locks must still be stopped by it (its handler takes no
	 * lock). */
	sigset_t quiet, old;
	sigfillset(&quiet);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&quiet, faults[i]);
	sigdelset(&quiet, LEAKSNAP_HOOK_SIG_STOP);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	in_shard = 1;
	taking_all = 1;
	atomic_signal_fence(memory_order_seq_cst);
	unsigned others = atomic_fetch_add_explicit(&all_takers, 1, memory_order_acq_rel);
	int saved_errno = errno;
	bool any_biased = false;
	unsigned got = 0;
	if (deadline && others)
		goto give_up;
	for (; got < NSHARDS; got++) {
		struct shard *s = &shards[got];
		if (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire) &&
		    !lock_for_all_until(&s->lock, deadline))
			goto give_up;
		if (atomic_load_explicit(&s->bias, memory_order_relaxed)) {
			atomic_store_explicit(&s->bias, 0, memory_order_relaxed);
			any_biased = true;
		}
	}
	/* one barrier for every bias taken away (not counted as revokes:
	 * the owners get them back on their next way in) */
	if (any_biased) {
		table_bias_barrier();
		for (unsigned i = 0; i < NSHARDS; i++)
			for (unsigned spin = 0;
			     atomic_load_explicit(&shards[i].owner_in, memory_order_acquire); spin++) {
				if (deadline && (spin & 63) == 63 && mono_ns() >= deadline)
					goto give_up;
				cpu_relax();
			}
	}
	holds_all = 1;
	holder_mask = old;
	/* a forked child's own table goes into the shards before anyone
	 * reads them whole (table_child.c) */
	if (HOOK_UNLIKELY(atomic_load_explicit(&child_on, memory_order_acquire)))
		child_flatten();
	errno = saved_errno;
	return 0;
give_up:
	release_shards(got);
	atomic_signal_fence(memory_order_seq_cst);
	taking_all = 0;
	in_shard = 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
	return -1;
}

void table_lock_all(void)
{
	lock_all(0);
}

int table_lock_all_within(uint64_t ns)
{
	return lock_all(mono_ns() + (ns ? ns : 1));
}

void table_unlock_all(void)
{
	sigset_t mask = holder_mask;
	holds_all = 0;
	release_shards(NSHARDS);
	atomic_signal_fence(memory_order_seq_cst);
	taking_all = 0;
	in_shard = 0;
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	atomic_signal_fence(memory_order_seq_cst);
	if (HOOK_UNLIKELY(stop_deferred))
		table_run_deferred_stop();
}

void table_fork_child(void)
{
	table_bias_register();
	/* (a snapshot of the parent's other threads is not going on here,
	 * and no other thread takes every lock: this one holds them) */
	atomic_store(&snap_readers, 0);
	atomic_store(&all_takers, 1);
	atomic_store(&all_sleepers, 0);
	/* its changes go to a table of its own until it needs them whole */
	child_start();
}
