/* leaksnap hook: reachability -- stopping the threads (the stopper;
 * docs/reachability.md, "Stopping and the table locks").  Owns the stop
 * signal's handler, the thread list, the signals, the waits for the
 * answers, the raise of the threads' scheduling and the release.  The
 * snapshot that uses it (the fork, the child's arguments, the result) is
 * reach.c's; nothing here knows of it.
 *
 * The threads are stopped by a signal of their own (SIGRTMAX-18): each
 * one's handler copies its machine context and stack pointer into a slot
 * of the hook's memory and waits on a futex.
 *
 * Signals rather than ptrace: ptrace needs a tracer process (a thread
 * cannot trace its own process), is refused under qemu-user, in many
 * containers and by Yama's ptrace_scope, and bionic apps cannot rely on
 * it; a signal works wherever the hook runs.  Its cost: a thread blocked
 * in a system call that is never restarted after a handler (poll, epoll,
 * nanosleep ...) sees EINTR, as with any signal (SA_RESTART covers the
 * rest).  A thread that blocks the signal and sleeps is not signalled
 * (it could be a sigwaitinfo() thread, which would receive it); its stack
 * is scanned whole, its registers are not known.
 *
 * Nothing from the first signal to the release calls malloc or takes a
 * lock that another thread may hold: /proc reads go through open/read/
 * getdents64 into the hook's own memory. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "reach_stop.h"

#define STOP_TIMEOUT_NS 500000000ull   /* for every thread to answer */
/* While threads are late: the first look at them (a thread that blocks
 * the signal and sleeps is then taken as it is: waiting longer for it
 * only lengthens the pause), then every LATE_EVERY_NS; one that blocks it
 * and runs fails the stop after LATE_RUNS_NS. */
#define LATE_FIRST_NS 1000000ull
#define LATE_EVERY_NS 3000000ull
#define LATE_RUNS_NS 100000000ull

static atomic_uint stop_phase;          /* odd while threads are to stop */
/* The phase of a stop taken before the table locks (the child walks the
 * tables): a thread inside the tables then finishes there first. */
static atomic_uint stop_defer_phase;
static _Atomic(struct reach_thread *) stop_threads;
static atomic_size_t stop_nthreads;
static atomic_uint stop_acks;
static const char *init_error;          /* the stop signal could not be had */
static struct reach_thread *list;        /* the thread list (dump thread only) */
static size_t list_cap;

static int reach_sig(void)
{
	return LEAKSNAP_HOOK_SIG_STOP;
}

static long futex(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, (unsigned *)(uintptr_t)addr, op, val, ts, NULL, 0);
}

static uintptr_t context_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__i386__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_ESP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.sp;
#elif defined(__arm__)
	return (uintptr_t)uc->uc_mcontext.arm_sp;
#elif defined(__riscv)
	return (uintptr_t)uc->uc_mcontext.__gregs[2];
#else
	(void)uc;
	return 0; /* unknown: the whole stack mapping is scanned */
#endif
}

/* struct sched_attr as the kernel has it since 4.13 (SCHED_ATTR_SIZE_VER1,
 * 56 bytes): sched_getattr() fills what the kernel knows and says how
 * much in .size, which sched_setattr() then takes back. */
struct sched_attr_ {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
	uint32_t util_min, util_max;
};
#define SCHED_ATTR_VER0_ 48u
#define SCHED_FLAG_RESET_ON_FORK_ 0x01u

/* Give @t's scheduling back to thread @tid (0: the calling thread). */
static void sched_restore(int tid, const struct reach_thread *t)
{
#ifdef SYS_sched_setattr
	struct sched_attr_ old;
	_Static_assert(sizeof(old) <= sizeof(t->sched), "room for sched_attr");
	memcpy(&old, t->sched, sizeof(old));
	int saved = errno;
	/* Without the privilege to, the kernel refuses to clear the
	 * reset-on-fork flag the raise set: then the policy back with the
	 * flag kept (a thread it makes starts at the normal policy, as it
	 * would have). */
	if (syscall(SYS_sched_setattr, tid, &old, 0u) != 0 && errno == EPERM &&
	    !(old.flags & SCHED_FLAG_RESET_ON_FORK_)) {
		old.flags |= SCHED_FLAG_RESET_ON_FORK_;
		syscall(SYS_sched_setattr, tid, &old, 0u);
	}
	errno = saved;
#else
	(void)tid;
	(void)t;
#endif
}

/* The stop handler: save, answer, wait for the release.  Every signal is
 * blocked while it runs (sa_mask), so nothing of the program runs on this
 * thread until the release. */
static void on_stop(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	int saved = errno;
	unsigned phase = atomic_load_explicit(&stop_phase, memory_order_acquire);
	if (!(phase & 1))
		goto out; /* a late signal of a stop that is over */
	struct reach_thread *ts = atomic_load_explicit(&stop_threads, memory_order_acquire);
	size_t n = atomic_load_explicit(&stop_nthreads, memory_order_acquire);
	int me = reach_my_tid();
	struct reach_thread *t = NULL;
	for (size_t i = 0; ts && i < n; i++)
		if (atomic_load_explicit(&ts[i].tid, memory_order_relaxed) == me &&
		    atomic_load_explicit(&ts[i].want, memory_order_acquire) == phase) {
			t = &ts[i];
			break;
		}
	if (table_busy_here() && !table_takes_all_here() &&
	    atomic_load_explicit(&stop_defer_phase, memory_order_acquire) == phase) {
		/* Inside the tables, a shard's lock held or waited for:
		 * stopped here, the tables would be half-changed in the image,
		 * or the dump could not take their locks.  The thread stops as
		 * it leaves them (stop_deferred): it waits there for nothing
		 * but the hook's own locks.  Never a thread taking or holding
		 * every lock (a fork's handler, whose fork() then waits for
		 * glibc's locks, which stopped threads may hold): it stops at
		 * once, and the dump gives this stop up (stop_and_fork). */
		table_defer_stop();
		goto out;
	}
	if (!t)
		goto out;
	const ucontext_t *uc = ucv;
	size_t bytes = sizeof(uc->uc_mcontext) < REACH_REG_BYTES ? sizeof(uc->uc_mcontext)
								 : REACH_REG_BYTES;
	memcpy(t->regs, &uc->uc_mcontext, bytes);
	t->reg_bytes = (unsigned)bytes;
	t->sp = context_sp(uc);
	table_memo_range(t->memo);
	const volatile uintptr_t *f = table_inflight;
	t->inflight[0] = f ? f[0] : 0;
	t->inflight[1] = f ? f[1] : 0;
	atomic_store_explicit(&t->answered, phase, memory_order_release);
	atomic_fetch_add_explicit(&stop_acks, 1, memory_order_release);
	futex(&stop_acks, FUTEX_WAKE_PRIVATE, 1, NULL);
	/* Raised to real-time priority to get here at once (boost_thread):
	 * its own scheduling back once it answered (not before: lowered, it
	 * would be preempted by the threads still to answer), so that it
	 * never waits, nor runs the program's code after, at that priority.
	 * (One let finish in the tables first runs only the hook's code
	 * there, raised, until it stops here or the dump thread lowers it.) */
	if (atomic_exchange_explicit(&t->boosted, false, memory_order_acq_rel))
		sched_restore(0, t);
	while (atomic_load_explicit(&stop_phase, memory_order_acquire) == phase)
		futex(&stop_phase, FUTEX_WAIT_PRIVATE, phase, NULL);
out:
	errno = saved;
}

/* A thread that was inside the tables when its stop signal came, leaving
 * them: stop now (the handler runs again, outside), if the stop is not
 * over. */
static void stop_deferred(void)
{
	unsigned phase = atomic_load_explicit(&stop_phase, memory_order_acquire);
	if ((phase & 1) && atomic_load_explicit(&stop_defer_phase, memory_order_acquire) == phase) {
		int saved = errno;
		syscall(SYS_tgkill, (int)getpid(), reach_my_tid(), reach_sig());
		errno = saved;
	}
}

const char *reach_stop_install(void)
{
	struct sigaction old, sa;
	if (sigaction(reach_sig(), NULL, &old) != 0)
		return init_error = "the stop signal cannot be had";
	if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
		return init_error = "signal SIGRTMAX-18 already has a handler";
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(reach_sig(), &sa, NULL) != 0)
		return init_error = "the stop signal cannot be had";
	table_deferred_stop = stop_deferred;
	return NULL;
}

static bool handler_is_ours(void)
{
	struct sigaction cur;
	return sigaction(reach_sig(), NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == on_stop;
}

void reach_stop(void)
{
	if (!handler_is_ours())
		return;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(reach_sig(), &dfl, NULL);
	init_error = NULL;
}

const char *reach_stop_unusable(void)
{
	if (init_error)
		return init_error;
	return handler_is_ours() ? NULL : "the program replaced the stop signal's handler";
}

/* /proc/self/task/<tid>/status: whether the thread blocks the stop signal,
 * and its state letter.  false if the thread is gone (or a zombie). */
static bool thread_status(int tid, bool *blocks, char *state)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = 0;
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*blocks = false;
	*state = '?';
	const char *s = strstr(buf, "\nState:");
	if (s) {
		s += 7;
		while (*s == ' ' || *s == '\t')
			s++;
		*state = *s;
	}
	/* a zombie (the main thread after pthread_exit(), until the last
	 * thread ends) runs no more: never answers the stop signal */
	if (*state == 'Z' || *state == 'X')
		return false;
	s = strstr(buf, "\nSigBlk:");
	if (s) {
		s += 8;
		while (*s == ' ' || *s == '\t')
			s++;
		const char *e = s;
		while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f'))
			e++;
		/* the mask is hex, signal 1 in the lowest bit of the last digit */
		int bit = reach_sig() - 1, digit = bit / 4;
		if (e - s > digit) {
			char c = e[-1 - digit];
			unsigned v = (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
			*blocks = (v >> (bit % 4)) & 1;
		}
	}
	return len > 0;
}

/* Thread @tid's start time (field 22 of its stat), 0 if unknown: with
 * its tid, what tells it from a thread that got the tid later. */
static unsigned long long thread_start_time(int tid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	const char *p = strrchr(buf, ')'); /* (the name may hold anything) */
	if (!p)
		return 0;
	/* fields 3.. follow ") "; the start time is the 22nd */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Whether thread @tid sleeps in sigwaitinfo()/sigtimedwait() waiting for
 * the stop signal.  The kernel unblocks the waited signals for the time of
 * the wait, so SigBlk does not show it; /proc/<tid>/syscall gives the call
 * and its first argument, the set, read with process_vm_readv (a fault
 * there is an error, not a crash). */
static bool thread_sigwaits(int tid)
{
#if defined(SYS_rt_sigtimedwait) || defined(SYS_rt_sigtimedwait_time64)
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	char *end;
	long nr = strtol(buf, &end, 10);
	if (end == buf || *end != ' ')
		return false;
	bool wait = false;
#ifdef SYS_rt_sigtimedwait
	wait |= nr == SYS_rt_sigtimedwait;
#endif
#ifdef SYS_rt_sigtimedwait_time64
	wait |= nr == SYS_rt_sigtimedwait_time64;
#endif
	if (!wait)
		return false;
	unsigned long long set_addr = strtoull(end + 1, NULL, 16);
	unsigned char set[8];
	struct iovec local = {set, sizeof(set)}, remote = {(void *)(uintptr_t)set_addr, sizeof(set)};
	if (!set_addr || syscall(SYS_process_vm_readv, (int)getpid(), &local, 1UL, &remote, 1UL, 0UL) !=
				 (long)sizeof(set))
		return true; /* waiting for signals, which ones unknown: leave it */
	int bit = reach_sig() - 1;
	/* the kernel's sigset: 64 bits in native words, native byte order */
	uint64_t mask = 0;
	if (sizeof(unsigned long) == 8) {
		memcpy(&mask, set, 8);
	} else {
		uint32_t w[2];
		memcpy(w, set, 8);
		mask = (uint64_t)w[1] << 32 | w[0];
	}
	return (mask >> bit) & 1;
#else
	(void)tid;
	return false;
#endif
}

/* The threads of the process, stopped ---------------------------------------- */

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* While it holds every table lock (the walk, then the pause), the hook's
 * own thread runs at the lowest real-time priority where the process may
 * (CAP_SYS_NICE, or RLIMIT_RTPRIO): on a loaded machine a thread of normal
 * priority is preempted there for milliseconds, up to half a second seen,
 * while every thread of the program that allocates waits for its locks,
 * and the stopped threads wait for their release.  Not a thread of the
 * program's (a leaksnap_dump() call), and never the scanning child
 * (SCHED_RESET_ON_FORK).  Returns whether it did; reach_stop_unboost_self() undoes it. */
bool reach_stop_boost_self(const struct stopper *st, int *policy, struct sched_param *param)
{
	if (st->self != st->dump_tid && st->self != st->control_tid)
		return false;
	*policy = sched_getscheduler(0);
	if (*policy < 0 || sched_getparam(0, param) != 0 ||
	    (*policy & ~SCHED_RESET_ON_FORK) != SCHED_OTHER)
		return false;
	struct sched_param rt = {.sched_priority = 1};
	return sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt) == 0;
}

void reach_stop_unboost_self(bool boosted, int policy, const struct sched_param *param)
{
	/* (refused without the privilege to clear reset-on-fork: then kept) */
	if (boosted && sched_setscheduler(0, policy, param) != 0 && errno == EPERM)
		sched_setscheduler(0, policy | SCHED_RESET_ON_FORK, param);
}

struct dirent64_ {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* @t's state as listed: a thread that blocks the signal is not sent it (a
 * sigwaitinfo() thread would receive it): asleep, it is left as it is;
 * running, it is watched.  Also at each new try of a stop (stop_again),
 * when a thread may have opened or closed its signals since. */
static void classify(struct reach_thread *t, int tid)
{
	bool blocks;
	char state;
	t->state = REACH_NEW;
	t->start_time = 0;
	if (!thread_status(tid, &blocks, &state)) {
		t->state = REACH_GONE;
		return;
	}
	if (!blocks)
		t->start_time = thread_start_time(tid);
	if (blocks)
		t->state = state == 'R' ? REACH_WATCH : REACH_BLOCKED;
	else if (state != 'R' && thread_sigwaits(tid))
		t->state = REACH_BLOCKED;
}

/* Add the threads not listed yet, with whether they block the signal.
 * Returns how many were added, or -1. */
long reach_stop_list(struct stopper *st)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(st->why, sizeof(st->why), "cannot list the threads (errno %d)", errno);
		return -1;
	}
	long added = 0;
	char buf[4096] __attribute__((aligned(8)));
	for (;;) {
		long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (r <= 0)
			break;
		for (long off = 0; off < r;) {
			struct dirent64_ *d = (struct dirent64_ *)(void *)(buf + off);
			off += d->reclen;
			int tid = 0;
			const char *c = d->name;
			if (*c < '0' || *c > '9')
				continue;
			for (; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid == st->self || tid == st->dump_tid || tid == st->control_tid)
				continue;
			bool known = false;
			for (size_t i = 0; i < st->n && !known; i++)
				known = atomic_load_explicit(&st->threads[i].tid, memory_order_relaxed) == tid;
			if (known)
				continue;
			if (st->n == st->cap) {
				close(fd);
				snprintf(st->why, sizeof(st->why), "more than %zu threads", st->cap);
				st->full = true;
				return -1;
			}
			struct reach_thread *t = &st->threads[st->n];
			memset(t, 0, sizeof(*t));
			atomic_store_explicit(&t->tid, tid, memory_order_relaxed);
			classify(t, tid);
			atomic_store_explicit(&stop_nthreads, st->n + 1, memory_order_release);
			st->n++;
			added++;
		}
	}
	close(fd);
	return added;
}

/* When the hook's thread runs at SCHED_FIFO for the pause (reach_stop_boost_self()), each
 * thread it signals does too until it takes the signal: a thread of
 * normal priority that waits for a CPU runs its handler only when the
 * scheduler next runs it, after every other process's turn on a loaded
 * machine (milliseconds); at SCHED_FIFO it runs it at once.  The handler
 * gives the thread its own scheduling back as soon as it has answered
 * (on_stop), before it waits; a thread let finish in the tables first runs
 * the hook's code there, raised, until it stops; whatever is still raised
 * when the stop ends is lowered by the dump thread before the release
 * (unboost_all).  Only a thread that did not block the signal when
 * listed, of the normal policies (SCHED_OTHER, BATCH, IDLE), with a known
 * start time.  One that does not run its handler (it blocked the signal
 * between being listed and signalled, or exited) is given its scheduling
 * back by the dump thread at the first look at late threads
 * (LATE_FIRST_NS, 1 ms), if it is still the thread listed (unboost_late):
 * that window is the only time the program's own code can run raised.
 * The raise sets reset-on-fork, so a thread or process it makes in that
 * window starts at the normal policy. */
static void boost_thread(const struct stopper *st, struct reach_thread *t)
{
#if defined(SYS_sched_getattr) && defined(SYS_sched_setattr)
	if (!st->fifo || !t->start_time)
		return;
	int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
	struct sched_attr_ old, rt;
	memset(&old, 0, sizeof(old));
	if (syscall(SYS_sched_getattr, tid, &old, (unsigned)sizeof(old), 0u) != 0 ||
	    old.size < SCHED_ATTR_VER0_ || old.size > sizeof(old) ||
	    (old.policy != SCHED_OTHER && old.policy != SCHED_BATCH && old.policy != SCHED_IDLE))
		return;
	old.flags &= SCHED_FLAG_RESET_ON_FORK_;
	memcpy(t->sched, &old, sizeof(old));
	memset(&rt, 0, sizeof(rt));
	rt.size = SCHED_ATTR_VER0_;
	rt.policy = SCHED_FIFO;
	rt.priority = 1;
	/* (a thread or process it makes before it answers starts at the
	 * normal policy again, never at this priority) */
	rt.flags = old.flags | SCHED_FLAG_RESET_ON_FORK_;
	if (syscall(SYS_sched_setattr, tid, &rt, 0u) == 0)
		atomic_store_explicit(&t->boosted, true, memory_order_release);
#else
	(void)st;
	(void)t;
#endif
}

/* A thread still raised that has not taken its signal: its scheduling
 * back, if it is the thread listed (its start time unchanged). */
static void unboost_late(struct reach_thread *t)
{
	if (!atomic_exchange_explicit(&t->boosted, false, memory_order_acq_rel))
		return;
	int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
	if (thread_start_time(tid) == t->start_time)
		sched_restore(tid, t);
}

void reach_stop_unboost_all(struct stopper *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (atomic_load_explicit(&st->threads[i].boosted, memory_order_acquire))
			unboost_late(&st->threads[i]);
}

static int send_stop(struct stopper *st, struct reach_thread *t)
{
	int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
	atomic_store_explicit(&t->want, st->phase, memory_order_release);
	if (t->state == REACH_NEW)
		boost_thread(st, t);
	atomic_store_explicit(&t->want, st->phase, memory_order_release);
	if (syscall(SYS_tgkill, (int)getpid(), tid, reach_sig()) == 0) {
		t->state = REACH_SIGNALLED;
	} else if (errno == ESRCH) {
		t->state = REACH_GONE;
	} else {
		/* (no strerror while threads wait: it may lock) */
		snprintf(st->why, sizeof(st->why), "cannot signal thread %d (errno %d)", tid,
			 errno);
		return -1;
	}
	return 0;
}

/* Mark the signalled threads that answered as saved; returns how many
 * are still waited for (signalled without an answer, or watched). */
static size_t count_waiting(struct stopper *st)
{
	size_t waiting = 0;
	for (size_t i = 0; i < st->n; i++) {
		struct reach_thread *t = &st->threads[i];
		if (t->state == REACH_WATCH)
			waiting++;
		if (t->state != REACH_SIGNALLED)
			continue;
		if (atomic_load_explicit(&t->answered, memory_order_acquire) == st->phase)
			t->state = REACH_SAVED;
		else
			waiting++;
	}
	return waiting;
}

/* After LATE_FIRST_NS, then every LATE_EVERY_NS, look at who has not
 * answered: one that blocks the signal and runs for LATE_RUNS_NS fails the
 * stop; one in uninterruptible sleep waits in the kernel.  Returns 0, or
 * -1 with @st->why. */
static int look_at_late(struct stopper *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct reach_thread *t = &st->threads[i];
		if ((t->state != REACH_SIGNALLED && t->state != REACH_WATCH) ||
		    atomic_load_explicit(&t->answered, memory_order_acquire) == st->phase)
			continue;
		int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
		unboost_late(t); /* (1 ms without taking its signal) */
		bool blocks;
		char state;
		if (!thread_status(tid, &blocks, &state)) {
			t->state = REACH_GONE;
		} else if (t->state == REACH_WATCH && !blocks) {
			if (send_stop(st, t) != 0)
				return -1;
		} else if (blocks && state == 'R') {
			/* for 100 ms on end: not a passing mask
			 * (pthread_create's, qemu-user's own) */
			if (++t->strikes >= (int)(LATE_RUNS_NS / LATE_EVERY_NS)) {
				snprintf(st->why, sizeof(st->why),
					 "thread %d blocks the stop signal and runs", tid);
				return -1;
			}
		} else if (blocks) {
			t->state = REACH_BLOCKED;
		} else if (state == 'D') {
			t->state = REACH_FROZEN;
		} else {
			t->strikes = 0;
		}
	}
	return 0;
}

/* At the deadline, the threads that have not answered: gone, or in the
 * kernel with the signal pending (uninterruptible sleep, a vfork parent):
 * such a thread runs none of its code before the handler, so it is as
 * stopped, only its registers unknown.  One that blocks the signal and
 * runs cannot be stopped.  Returns 0, or -1 with @st->why. */
static int settle_unanswered(struct stopper *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct reach_thread *t = &st->threads[i];
		if (t->state != REACH_SIGNALLED && t->state != REACH_WATCH)
			continue;
		int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
		bool blocks;
		char state;
		if (!thread_status(tid, &blocks, &state)) {
			t->state = REACH_GONE;
		} else if (blocks && state == 'R') {
			snprintf(st->why, sizeof(st->why),
				 "thread %d blocks the stop signal and runs", tid);
			return -1;
		} else if (t->state == REACH_WATCH && !blocks) {
			snprintf(st->why, sizeof(st->why), "thread %d did not stop in time", tid);
			return -1;
		} else {
			t->state = blocks ? REACH_BLOCKED : REACH_FROZEN;
		}
	}
	return 0;
}

/* Signal every new thread, wait for the answers; again until no new
 * thread appears.  Returns 0, or -1 with @st->why.  With @locks_after
 * (the table locks are to be taken once the threads stopped), -2 as soon
 * as a thread is seen taking or holding every lock after the first look
 * at late threads: it stops there, holding them (on_stop), or does not
 * stop at all (it blocks the signal); either way the locks may never come
 * free while the others are stopped. */
int reach_stop_threads(struct stopper *st, bool locks_after)
{
	uint64_t deadline = reach_now_ns() + STOP_TIMEOUT_NS, next_look = reach_now_ns() + LATE_FIRST_NS;
	for (bool first = true;; first = false) {
		if (!first) {
			long added = reach_stop_list(st);
			if (added < 0)
				return -1;
			if (added == 0)
				return 0;
		}
		for (size_t i = 0; i < st->n; i++) {
			struct reach_thread *t = &st->threads[i];
			if (t->state != REACH_NEW)
				continue;
			if (send_stop(st, t) != 0)
				return -1;
		}
		/* wait for every signalled thread's answer */
		for (;;) {
			unsigned acks = atomic_load_explicit(&stop_acks, memory_order_acquire);
			if (!count_waiting(st))
				break;
			uint64_t now = reach_now_ns();
			if (locks_after && now >= next_look && table_all_takers()) {
				snprintf(st->why, sizeof(st->why), "a thread holds the table locks");
				return -2;
			}
			if (now >= next_look && now < deadline) {
				next_look = now + LATE_EVERY_NS;
				if (look_at_late(st) != 0)
					return -1;
				continue;
			}
			if (now >= deadline) {
				if (settle_unanswered(st) != 0)
					return -1;
				break;
			}
			uint64_t left = deadline - now < 1000000 ? deadline - now : 1000000;
			struct timespec ts = {0, (long)left};
			futex(&stop_acks, FUTEX_WAIT_PRIVATE, acks, &ts);
		}
	}
}

/* Release every thread of this stop (also those that answer late). */
void reach_stop_release(struct stopper *st)
{
	atomic_store_explicit(&stop_phase, st->phase + 1, memory_order_release);
	futex(&stop_phase, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

/* The thread list, in the hook's memory, sized for the threads the
 * process has now with room to spare, before anything stops.  It is never
 * unmapped: a handler that runs late may still read it.  @st->threads is
 * NULL when there is none. */
void reach_stop_prepare(struct stopper *st)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	char buf[4096];
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[len > 0 ? len : 0] = '\0';
	const char *s = strstr(buf, "\nThreads:");
	size_t threads = s ? (size_t)strtoul(s + 9, NULL, 10) : 0;
	if (list_cap < threads * 2 + 64) {
		size_t cap = threads * 2 + 256;
		struct reach_thread *l = hook_map(cap * sizeof(*l));
		if (l) {
			/* The old one stays mapped (a late handler may
			 * still write it) but is cleared: its registers
			 * of earlier dumps must not be roots of this one. */
			if (list)
				memset(list, 0, list_cap * sizeof(*list));
			list = l;
			list_cap = cap;
		}
	}
	st->threads = list;
	st->cap = list_cap;
	st->map_size = list_cap * sizeof(struct reach_thread);
}

/* A thread that blocks the signal and runs is watched for 100 ms before
 * anything stops (a passing mask, pthread_create's or qemu-user's, goes
 * away): one that keeps running so fails the dump's reachability without
 * a pause.  Returns 0, or -1 with @st->why. */
int reach_stop_watch_blocking(struct stopper *st)
{
	for (int look = 0;; look++) {
		int watching = 0;
		for (size_t i = 0; i < st->n; i++) {
			struct reach_thread *t = &st->threads[i];
			if (t->state != REACH_WATCH)
				continue;
			int tid = atomic_load_explicit(&t->tid, memory_order_relaxed);
			bool blocks;
			char state;
			if (!thread_status(tid, &blocks, &state))
				t->state = REACH_GONE;
			else if (!blocks)
				t->state = REACH_NEW;
			else if (state != 'R')
				t->state = REACH_BLOCKED;
			else
				watching = tid;
		}
		if (!watching)
			return 0;
		if (look == 10) {
			snprintf(st->why, sizeof(st->why), "thread %d blocks the stop signal and runs",
				 watching);
			return -1;
		}
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

/* The threads of a stop given up are asked again in the next one. */
void reach_stop_again(struct stopper *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct reach_thread *t = &st->threads[i];
		if (t->state == REACH_SIGNALLED || t->state == REACH_SAVED ||
		    t->state == REACH_FROZEN) {
			t->state = REACH_NEW;
		} else if (t->state == REACH_GONE) {
			/* (its tid, if reused since, is a thread to list
			 * afresh: tid 0 matches none) */
			atomic_store_explicit(&t->tid, 0, memory_order_relaxed);
		} else if (t->state == REACH_BLOCKED || t->state == REACH_WATCH) {
			/* it may have opened its signals since: look again */
			classify(t, atomic_load_explicit(&t->tid, memory_order_relaxed));
		}
		t->strikes = 0;
	}
	st->why[0] = '\0';
}

void reach_stop_begin(struct stopper *st, bool defer)
{
	st->phase = atomic_load(&stop_phase) + 1; /* odd */
	atomic_store_explicit(&stop_defer_phase, defer ? st->phase : 0, memory_order_release);
	atomic_store_explicit(&stop_phase, st->phase, memory_order_release);
}


void reach_stop_end_defer(void)
{
	atomic_store_explicit(&stop_defer_phase, 0, memory_order_release);
}

void reach_stop_publish(const struct stopper *st)
{
	atomic_store(&stop_nthreads, 0);
	atomic_store(&stop_threads, st->threads);
}

void reach_stop_unpublish(void)
{
	atomic_store(&stop_threads, NULL);
	atomic_store(&stop_nthreads, 0);
}
