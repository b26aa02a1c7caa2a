/* leaksnap hook: reachability at capture time -- stopping the threads,
 * the copy-on-write image, the result (docs/reachability.md).
 *
 * The threads are stopped by a signal of their own (SIGRTMAX-18): each
 * one's handler copies its machine context and stack pointer into a slot
 * of the hook's memory and waits on a futex.  With every thread stopped
 * and every table lock held (in the order stop_and_fork explains: no
 * unbounded wait for the locks while a thread is stopped), one raw clone()
 * without CLONE_VM and without an exit signal makes a copy-on-write image
 * of the process, the locks are given back and the threads released: the
 * pause is the signals, the handlers' answers and the clone.  The child
 * walks the tables and marks from the roots in its image (reach_scan.c),
 * writes the records and one unreachable count per record into memory
 * shared with this process, and _exits.
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
 * getdents64 into the hook's own memory, the child only makes system
 * calls and reads memory. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "reach.h"

#define STOP_TIMEOUT_NS 500000000ull   /* for every thread to answer */
/* While threads are late: the first look at them (a thread that blocks
 * the signal and sleeps is then taken as it is: waiting longer for it
 * only lengthens the pause), then every LATE_EVERY_NS; one that blocks it
 * and runs fails the stop after LATE_RUNS_NS. */
#define LATE_FIRST_NS 1000000ull
#define LATE_EVERY_NS 3000000ull
#define LATE_RUNS_NS 100000000ull
#define CHILD_TIMEOUT_NS 300000000000ull /* for the scan */

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

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int my_tid(void)
{
	return (int)syscall(SYS_gettid);
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
	int me = my_tid();
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

/* Whether the allocator underneath is glibc's (its chunk headers then
 * tell a block that is a mapping of its own: reach_scan.c).  Asked once,
 * at start: dladdr takes the loader's lock, which a thread stopped inside
 * dlopen may hold at a snapshot. */
static bool glibc_chunks;
static bool glibc_malloc(void)
{
	Dl_info info;
	const char *base = NULL;
	if (hook_real.malloc && dladdr((void *)hook_real.malloc, &info) && info.dli_fname) {
		base = strrchr(info.dli_fname, '/');
		base = base ? base + 1 : info.dli_fname;
	}
	return base && strncmp(base, "libc.so", 7) == 0 && dlsym(RTLD_DEFAULT, "gnu_get_libc_version");
}

/* The C library's writable segment (.data and .bss, from its program
 * headers: exact, whatever mapping the kernel merged with its .bss), where
 * glibc keeps the main arena (reach_scan.c's chunk rule).  Found once, at
 * start: dl_iterate_phdr takes the loader's lock. */
static uintptr_t libc_data[2];
static int find_libc_data(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
	base = base ? base + 1 : info->dlpi_name;
	if (!base || strncmp(base, "libc.so", 7) != 0)
		return 0;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
		uintptr_t hi = lo + (uintptr_t)ph->p_memsz;
		if (!libc_data[1] || lo < libc_data[0])
			libc_data[0] = lo;
		if (hi > libc_data[1])
			libc_data[1] = hi;
	}
	return 1;
}

/* A thread that was inside the tables when its stop signal came, leaving
 * them: stop now (the handler runs again, outside), if the stop is not
 * over. */
static void stop_deferred(void)
{
	unsigned phase = atomic_load_explicit(&stop_phase, memory_order_acquire);
	if ((phase & 1) && atomic_load_explicit(&stop_defer_phase, memory_order_acquire) == phase) {
		int saved = errno;
		syscall(SYS_tgkill, (int)getpid(), my_tid(), reach_sig());
		errno = saved;
	}
}

void reach_init(void)
{
	glibc_chunks = glibc_malloc();
	if (glibc_chunks)
		dl_iterate_phdr(find_libc_data, NULL);
	struct sigaction old, sa;
	if (sigaction(reach_sig(), NULL, &old) != 0) {
		init_error = "the stop signal cannot be had";
		return;
	}
	if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
		init_error = "signal SIGRTMAX-18 already has a handler";
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(reach_sig(), &sa, NULL) != 0)
		init_error = "the stop signal cannot be had";
	else
		table_deferred_stop = stop_deferred;
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
 * (SCHED_RESET_ON_FORK).  Returns whether it did; unboost() undoes it. */
static bool boost(const struct stopper *st, int *policy, struct sched_param *param)
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

static void unboost(bool boosted, int policy, const struct sched_param *param)
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
static long list_threads(struct stopper *st)
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

/* When the hook's thread runs at SCHED_FIFO for the pause (boost()), each
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

static void unboost_all(struct stopper *st)
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
static int stop_threads_now(struct stopper *st, bool locks_after)
{
	uint64_t deadline = now_ns() + STOP_TIMEOUT_NS, next_look = now_ns() + LATE_FIRST_NS;
	for (bool first = true;; first = false) {
		if (!first) {
			long added = list_threads(st);
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
			uint64_t now = now_ns();
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
static void release_threads(struct stopper *st)
{
	atomic_store_explicit(&stop_phase, st->phase + 1, memory_order_release);
	futex(&stop_phase, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

/* The snapshot ------------------------------------------------------------------ */

HOOK_TLS uintptr_t reach_entry_sp;

/* Fork the image: this function's frame stays alive in the child for its
 * whole scan.  Returns the child's pid or -errno. */
static long __attribute__((noinline)) fork_image(struct reach_child_args *a)
{
	a->self_sp = reach_current_sp();
	a->entry_sp = reach_entry_sp;
	table_memo_range(a->self_memo);
	/* Like fork(), without fork()'s handlers and locks, and without an
	 * exit signal: the program gets no SIGCHLD and its waitpid(-1) does
	 * not see the child (the hook waits with __WALL). */
	long pid = syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
	if (pid < 0 && errno == EINVAL) {
		/* qemu-user takes only SIGCHLD as a fork's exit signal: the
		 * program may then see a SIGCHLD (docs/reachability.md) */
		pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	}
	if (pid == 0)
		reach_child_main(a);
	return pid < 0 ? -errno : pid;
}

static void describe(struct reach_result *res, const struct stopper *st,
		     const struct reach_shared *sh, uint64_t pause_ns, uint64_t fork_ns)
{
	size_t saved = 0;
	for (size_t i = 0; i < st->n; i++)
		saved += st->threads[i].state == REACH_SAVED;
	char extra[192] = "";
	size_t len = 0;
	for (size_t i = 0; i < st->n && len + 32 < sizeof(extra); i++) {
		const struct reach_thread *t = &st->threads[i];
		if (t->state != REACH_BLOCKED && t->state != REACH_FROZEN)
			continue;
		len += (size_t)snprintf(extra + len, sizeof(extra) - len, "%s %d (%s)",
					len ? "," : "; not stopped, stack scanned whole, registers unknown:",
					atomic_load_explicit(&t->tid, memory_order_relaxed),
					t->state == REACH_BLOCKED ? "waits with the signal blocked"
								  : "in the kernel");
	}
	char ended[96] = "";
	if (sh->ended_stacks)
		snprintf(ended, sizeof(ended), ", %llu cached stack(s) of ended threads read at "
			 "their DTV pointer only", (unsigned long long)sh->ended_stacks);
	snprintf(res->meta, sizeof(res->meta),
		 "reachability=signal SIGRTMAX-18 stopped %zu thread(s) + this one, registers "
		 "saved, fork image scanned: stacks from SP, %llu writable non-heap mapping(s) "
		 "(modules' data, TLS, anonymous) %llu bytes%s%s\n"
		 "reachability_pause_us=%llu\n"
		 "reachability_scan_us=%llu\n"
		 "reachability_scan_cpu_us=%llu\n"
		 "reachability_index_us=%llu\n"
		 "reachability_fork_us=%llu\n"
		 "reachability_stop_us=%llu\n"
		 "reachability_walk_us=%llu\n"
		 "reachability_walk=%s\n"
		 "reachability_order=%s\n"
		 "reachability_retries=%u\n"
		 "reachability_locked_us=%llu\n"
		 "reachability_sched=%s\n"
		 "reachability_unreachable=%llu bytes in %llu of %llu blocks\n"
		 "reachability_scanned=%llu root bytes, %llu heap bytes\n",
		 saved, (unsigned long long)sh->root_mappings, (unsigned long long)sh->root_bytes,
		 ended, extra, (unsigned long long)(pause_ns / 1000), (unsigned long long)(sh->scan_ns / 1000),
		 (unsigned long long)(sh->scan_cpu_ns / 1000), (unsigned long long)(sh->index_ns / 1000),
		 (unsigned long long)(fork_ns / 1000), (unsigned long long)(st->stop_ns / 1000),
		 (unsigned long long)(st->walk_ns / 1000), st->walk_image ? "image" : "locked",
		 st->locks_first ? "locks-then-threads" : "threads-then-locks", st->retries,
		 (unsigned long long)(st->locked_ns / 1000),
		 st->fifo ? "fifo" : "other",
		 (unsigned long long)sh->unreachable_bytes,
		 (unsigned long long)sh->unreachable_blocks, (unsigned long long)sh->blocks,
		 (unsigned long long)sh->root_bytes, (unsigned long long)sh->marked_bytes);
	/* only when some block lies in pages the program cannot read */
	size_t len_meta = strlen(res->meta);
	if (sh->unreadable_read || sh->unreadable_skipped)
		snprintf(res->meta + len_meta, sizeof(res->meta) - len_meta,
			 "reachability_unreadable=%llu bytes read, %llu bytes skipped\n",
			 (unsigned long long)sh->unreadable_read,
			 (unsigned long long)sh->unreadable_skipped);
}

static void failed(struct reach_result *res, const char *why, uint64_t pause_ns)
{
	if (pause_ns)
		snprintf(res->meta, sizeof(res->meta), "reachability=failed: %s\n"
			 "reachability_pause_us=%llu\n", why, (unsigned long long)(pause_ns / 1000));
	else
		snprintf(res->meta, sizeof(res->meta), "reachability=failed: %s\n", why);
}

/* Wait for the child; 0 when it exited 0, 1 when the program reaped it
 * (its result counts if it got to the end), else -1 with @why. */
static int wait_child(long pid, char *why, size_t why_size)
{
	uint64_t deadline = now_ns() + CHILD_TIMEOUT_NS;
	long sleep_ns = 50000;
	for (;;) {
		int st;
		pid_t r = waitpid((pid_t)pid, &st, __WALL | WNOHANG);
		if (r == (pid_t)pid) {
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				return 0;
			if (WIFSIGNALED(st))
				snprintf(why, why_size, "the scanning child died of signal %d",
					 WTERMSIG(st));
			else
				snprintf(why, why_size, "the scanning child exited with status %d",
					 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return -1;
		}
		if (r < 0 && errno == ECHILD)
			return 1; /* reaped by the program (waitpid with __WALL) */
		if (r < 0 && errno != EINTR) {
			snprintf(why, why_size, "the scanning child was lost: %s", strerror(errno));
			return -1;
		}
		if (now_ns() > deadline) {
			kill((pid_t)pid, SIGKILL);
			waitpid((pid_t)pid, &st, __WALL);
			snprintf(why, why_size, "the scan took longer than %llu s",
				 (unsigned long long)(CHILD_TIMEOUT_NS / 1000000000u));
			return -1;
		}
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		if (sleep_ns < 10000000)
			sleep_ns *= 2;
	}
}

extern atomic_int dump_thread_tid;
extern atomic_uintptr_t dump_thread_stack;

/* The thread list, in the hook's memory, sized for the threads the
 * process has now with room to spare, before anything stops.  It is never
 * unmapped: a handler that runs late may still read it.  @st->threads is
 * NULL when there is none. */
static void prepare_thread_list(struct stopper *st)
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
static int watch_blocking_threads(struct stopper *st)
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

/* What the scanning child is given: the stopped threads, the tables'
 * blocks and records, where to write, and the hook's own memory that is
 * never a root. */
static void child_args(struct reach_child_args *args, const struct stopper *st,
		       const struct table_snapshot *snap, struct reach_shared *sh,
		       size_t map_size)
{
	*args = (struct reach_child_args){
		.glibc_chunks = glibc_chunks,
		.libc_data = {libc_data[0], libc_data[1]},
		.tcb = reach_tcb(),
		.threads = st->threads,
		.blocks = snap->blocks,
		.nblocks = snap->block_count,
		.blocks_diff = snap->blocks_diff,
		.huge = (const uintptr_t(*)[2])snap->huge,
		.nhuge = snap->huge_count,
		.keys = snap->keys,
		.nrec = snap->record_count,
		.hook_stack = atomic_load(&dump_thread_stack),
		.control_stack = atomic_load(&control_thread_stack),
		.out = sh,
		.out_size = map_size,
		.exclude = {
			{(uintptr_t)st->threads, (uintptr_t)st->threads + st->map_size},
			{(uintptr_t)sh, (uintptr_t)sh + map_size},
			{(uintptr_t)snap->records, (uintptr_t)snap->records + snap->map_size},
			{(uintptr_t)snap->keys, (uintptr_t)snap->keys + snap->keys_size},
			{(uintptr_t)snap->blocks, (uintptr_t)snap->blocks + snap->blocks_size},
			{0, 0}, /* (control_own_range's, below) */
		},
	};
	control_own_range(args->exclude[5]);
}

/* The pause: from the first signal to the release (this thread's signals
 * wait meanwhile).  Stops the threads and, when they stopped, forks the
 * image (*@pid: its pid or -errno; the fork's time in *@fork_ns).  Returns
 * stop_threads_now()'s answer, the pause's length in *@pause_ns.
 *
 * The lock order (docs/reachability.md, "Stopping and the table locks"):
 * a thread waits for the table locks, then for anything else -- a fork's
 * handler takes every table lock, then glibc's fork() takes the arena and
 * stdio locks -- never the other way round; and a stopped thread counts
 * as holding every lock of the program's it holds.  So this thread waits
 * for the table locks without a bound only while no thread is stopped:
 *  - threads first (args->walk_fd >= 0, the child walks the tables): a
 *    thread inside the tables finishes there and stops as it leaves them,
 *    unless it takes or holds every lock, which stops at once.  Then the
 *    locks are tried for LOCK_WITHIN_NS; a stop with a thread seen taking
 *    every lock, or whose locks did not come, is given up (the threads
 *    released, nothing held) and tried again, STOP_TRIES times in all;
 *  - then, or where the tables were walked already (their locks held by
 *    the caller), the locks first, waited for with nothing stopped, and
 *    the threads stopped after: none can be inside the tables, and a
 *    thread that wants them waits, stoppable, in their lock's wait.
 * A stop that failed (@st->why) takes no lock at all; threads first, it
 * is tried again too (1 ms after the release), within the same
 * STOP_TRIES: a thread running with the signal blocked is often in a
 * handler of its own that waits for a thread the stop had stopped. */
#define STOP_TRIES 3
#define LOCK_WITHIN_NS 2000000ull   /* for the locks after a stop */

/* The threads of a stop given up are asked again in the next one. */
static void stop_again(struct stopper *st)
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

static void stop_begin(struct stopper *st, bool defer)
{
	st->phase = atomic_load(&stop_phase) + 1; /* odd */
	atomic_store_explicit(&stop_defer_phase, defer ? st->phase : 0, memory_order_release);
	atomic_store_explicit(&stop_phase, st->phase, memory_order_release);
}

static int stop_and_fork(struct stopper *st, struct reach_child_args *args, long *pid,
			 uint64_t *pause_ns, uint64_t *fork_ns)
{
	bool threads_first = args->walk_fd >= 0;
	/* This thread's signals wait from the first stop signal to the
	 * release (faults excepted), as they do while it holds the table
	 * locks: a handler of the program's run meanwhile could wait for a
	 * lock of the program's that a stopped thread holds. */
	sigset_t quiet, old;
	sigfillset(&quiet);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&quiet, faults[i]);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	uint64_t t0 = 0, tf0 = 0, tf1 = 0;
	int stopped = -2;
	bool locked = false;
	*pid = -1;
	for (unsigned attempt = 0; threads_first && attempt < STOP_TRIES; attempt++) {
		if (attempt) {
			stop_again(st);
			/* until the taker is done (a fork takes a fraction
			 * of a millisecond), 20 ms at most */
			for (int i = 0; i < 200 && table_all_takers(); i++) {
				struct timespec ts = {0, 100000};
				nanosleep(&ts, NULL);
			}
		}
		t0 = now_ns();
		stop_begin(st, true);
		stopped = stop_threads_now(st, true);
		st->stop_ns = now_ns() - t0;
		if (stopped == 0) {
			st->lock_t0 = now_ns();
			if (table_lock_all_within(LOCK_WITHIN_NS) == 0) {
				locked = true;
				break;
			}
			stopped = -2;
		}
		atomic_store_explicit(&stop_defer_phase, 0, memory_order_release);
		unboost_all(st);
		release_threads(st);
		if (stopped == -1 && attempt + 1 == STOP_TRIES)
			break; /* failed: no lock taken */
		/* given up: a thread that could not be stopped (one running
		 * with the signal blocked, in a handler of its own that waits
		 * for a thread this stop had stopped) is looked at again after
		 * the release, as is one that took every lock */
		st->retries++;
		if (stopped == -1) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
	}
	if (stopped == -2) {
		/* the locks first, nothing stopped while they are waited for */
		if (threads_first) {
			stop_again(st);
			st->lock_t0 = now_ns();
			table_lock_all();
			locked = true;
		}
		st->locks_first = true;
		t0 = now_ns();
		stop_begin(st, false);
		stopped = stop_threads_now(st, false);
		st->stop_ns = now_ns() - t0;
	}
	if (stopped == 0) {
		for (size_t i = 0; i < st->n; i++) {
			st->frozen += st->threads[i].state == REACH_FROZEN;
			st->blocked += st->threads[i].state == REACH_BLOCKED;
		}
		args->nthreads = st->n;
		tf0 = now_ns();
		*pid = fork_image(args);
		tf1 = now_ns();
	}
	if (locked) {
		/* the image has its copy: the locks go before the threads,
		 * which would otherwise wake only to wait for them */
		table_unlock_all();
		st->locked_ns = now_ns() - st->lock_t0;
	}
	atomic_store_explicit(&stop_defer_phase, 0, memory_order_release);
	unboost_all(st);
	/* (taken before the wake: a dumping thread of normal priority may
	 * be preempted by the threads it wakes) */
	*pause_ns = now_ns() - t0;
	release_threads(st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*fork_ns = tf1 - tf0;
	return stopped;
}

/* The child's answer, or why there is none, into @res. */
static void take_result(struct reach_result *res, const struct stopper *st,
			struct table_snapshot *snap, struct reach_shared *sh, int stopped, long pid,
			uint64_t pause, uint64_t fork_ns)
{
	char why[160];
	if (stopped != 0) {
		failed(res, st->why, pause);
		return;
	}
	if (pid < 0) {
		snprintf(why, sizeof(why), "fork refused: %s", strerror((int)-pid));
		failed(res, why, pause);
		return;
	}
	int w = wait_child(pid, why, sizeof(why));
	table_snapshot_blocks_free(snap);
	if (w < 0) {
		failed(res, why, pause);
	} else if (!atomic_load(&sh->done)) {
		failed(res, w ? "the program reaped the scanning child before its end"
			      : "the scanning child gave no result", pause);
	} else if (sh->error[0]) {
		snprintf(why, sizeof(why), "%s", sh->error);
		failed(res, why, pause);
	} else {
		res->ok = true;
		res->counts = sh->counts;
		res->counts_size = snap->record_count * sizeof(uint32_t);
		describe(res, st, sh, pause, fork_ns);
	}
}

/* The file the child writes the records it walked into (memfd: its size
 * is the child's to choose), or -1 where there is none (the parent then
 * walks the tables itself, every lock held). */
static int walk_file(void)
{
#ifdef SYS_memfd_create
	return (int)syscall(SYS_memfd_create, "leaksnap-reach", 1u /* MFD_CLOEXEC */);
#else
	return -1;
#endif
}

/* The records and counts the child walked into @fd, into @snap and @res
 * (@sh: its word on them).  Returns 0, or -1 (nothing taken). */
static int take_walked(int fd, const struct reach_shared *sh, struct table_snapshot *snap,
		       struct reach_result *res)
{
	size_t counts_off, total;
	size_t info_size = table_info_size();
	if (sh->nrec && sh->records_size != sh->nrec * info_size)
		return -1;
	reach_walk_layout(sh->nrec, sh->records_size, &counts_off, &total);
	struct stat stb;
	if (fstat(fd, &stb) != 0 || (uint64_t)stb.st_size != total)
		return -1;
	size_t rec_map = sh->records_size ? sh->records_size : 1;
	void *rec = sh->records_size ? mmap(NULL, rec_map, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
				     : hook_map(1);
	if (!rec || rec == MAP_FAILED)
		return -1;
	size_t cnt_size = total - counts_off;
	void *cnt = mmap(NULL, cnt_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)counts_off);
	if (cnt == MAP_FAILED) {
		munmap(rec, rec_map);
		return -1;
	}
	memset(snap, 0, sizeof(*snap));
	snap->records = rec;
	snap->map_size = rec_map;
	snap->record_count = sh->nrec;
	snap->records_size = sh->records_size;
	snap->info_size = info_size;
	snap->total_memory = sh->total_memory;
	snap->clamped = sh->clamped;
	res->counts = cnt;
	res->counts_map = cnt;
	res->counts_map_size = cnt_size;
	return 0;
}

/* Walk the tables here, every lock held, before the pause (where no file
 * for the child's walk can be had).  Returns 0 or -1. */
static int walk_here(struct table_snapshot *snap, struct stopper *st, uint64_t tl0)
{
	int walked = table_snapshot_locked(snap, true);
	st->walk_ns = now_ns() - tl0;
	return walked;
}

int reach_snapshot(struct table_snapshot *snap, struct reach_result *res)
{
	memset(res, 0, sizeof(*res));
	memset(snap, 0, sizeof(*snap));
	if (table_busy_here()) {
		errno = EDEADLK;
		return -1;
	}
	if (init_error || !handler_is_ours()) {
		failed(res, init_error ? init_error : "the program replaced the stop signal's handler",
		       0);
		return table_snapshot(snap);
	}
	dump_thread_wait_started(); /* (a hook thread being made: its tid) */
	control_thread_wait_started();
	struct stopper st = {.self = my_tid(),
			     .dump_tid = atomic_load(&dump_thread_tid),
			     .control_tid = atomic_load(&control_thread_tid)};
	prepare_thread_list(&st);
	if (!st.threads) {
		failed(res, "no memory for the thread list", 0);
		return table_snapshot(snap);
	}
	atomic_store(&stop_nthreads, 0);
	atomic_store(&stop_threads, st.threads);
	if (list_threads(&st) < 0 || watch_blocking_threads(&st) < 0) {
		failed(res, st.why, 0);
		atomic_store(&stop_threads, NULL);
		return table_snapshot(snap);
	}

	/* The child walks the tables in its image when it can (a file to
	 * write the records into): the locks are then held for the pause
	 * only, not for the walk before it. */
	int fd = walk_file();
	res->map_size = sizeof(struct reach_shared);
	void *shm = mmap(NULL, res->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	if (shm == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		failed(res, "no shared memory for the result", 0);
		res->map_size = 0;
		atomic_store(&stop_threads, NULL);
		return table_snapshot(snap);
	}
	res->map = shm;
	int policy = 0;
	struct sched_param param;
	st.fifo = boost(&st, &policy, &param);
	uint64_t tl0 = now_ns();
	if (fd < 0)
		table_lock_all();
	if (fd < 0 && walk_here(snap, &st, tl0) != 0) {
		table_unlock_all();
		unboost(st.fifo, policy, &param);
		atomic_store(&stop_threads, NULL);
		return -1;
	}
	if (fd < 0) {
		/* the counts follow the header, one per record */
		size_t want = sizeof(struct reach_shared) + (snap->record_count + 1) * sizeof(uint32_t);
		void *bigger = mremap(shm, res->map_size, want, MREMAP_MAYMOVE);
		if (bigger == MAP_FAILED) {
			table_unlock_all();
			unboost(st.fifo, policy, &param);
			failed(res, "no shared memory for the result", 0);
			atomic_store(&stop_threads, NULL);
			table_snapshot_sort(snap, NULL);
			return 0;
		}
		res->map = shm = bigger;
		res->map_size = want;
	}
	struct reach_child_args args;
	child_args(&args, &st, snap, shm, res->map_size);
	args.walk_fd = fd;
	long pid;
	uint64_t pause, fork_ns;
	int stopped = stop_and_fork(&st, &args, &pid, &pause, &fork_ns);
	if (fd < 0) {
		table_unlock_all();
		st.locked_ns = now_ns() - tl0;
	}
	unboost(st.fifo, policy, &param);
	take_result(res, &st, snap, shm, stopped, pid, pause, fork_ns);
	if (fd >= 0) {
		const struct reach_shared *sh = shm;
		if (res->ok && take_walked(fd, sh, snap, res) == 0) {
			st.walk_ns = sh->walk_ns;
			st.walk_image = true;
			res->counts_size = snap->record_count * sizeof(uint32_t);
			describe(res, &st, sh, pause, fork_ns);
		} else {
			if (res->ok)
				failed(res, "the scanning child's records could not be read", pause);
			res->ok = false;
			res->counts = NULL;
		}
		close(fd);
		if (!res->ok) {
			/* no records from the child: the plain snapshot's */
			atomic_store(&stop_threads, NULL);
			atomic_store(&stop_nthreads, 0);
			return table_snapshot(snap);
		}
	}
	table_snapshot_sort(snap, res->ok ? res->counts : NULL);
	atomic_store(&stop_threads, NULL);
	atomic_store(&stop_nthreads, 0);
	return 0;
}

void reach_result_free(struct reach_result *res)
{
	if (res->map)
		munmap(res->map, res->map_size);
	res->map = NULL;
	if (res->counts_map)
		munmap(res->counts_map, res->counts_map_size);
	res->counts_map = NULL;
	res->counts = NULL;
	res->ok = false;
}
