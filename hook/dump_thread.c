/* leaksnap hook: what triggers dumps, and the hook's dump thread.
 *
 * Triggers: the exit destructor (dump_at_exit), leaksnap_dump(), the dump
 * signal SIGRTMAX-17 and the LEAKSNAP_INTERVAL timer.  The signal handler
 * posts a semaphore; the dump thread (the hook's own, never tracked) does
 * the work, one dump per signal, while the program keeps running.
 *
 * The dump thread is made when the hook starts only when something needs
 * it at once: an interval, reachability (its stops), the control socket,
 * LEAKSNAP_DUMP_THREAD=1, or the in-app build.  Otherwise it waits for the program's second thread
 * (threads.c: before the program's first pthread_create): a process of one
 * thread keeps glibc's lock-free malloc, and its dump signal is answered in
 * the handler itself, on a stack of the hook's, when the thread holds no
 * lock of the hook's (docs/hook.md, "The hook's thread"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "ownstack.h"
#include "unloaded.h"

static sem_t dump_sem;
atomic_bool dump_thread_missing; /* start a hook thread at the next chance */
static atomic_bool dump_wanted;    /* (the dump thread is one of them) */
static atomic_bool thread_absent;  /* no dump thread in this process yet */
static atomic_bool report_thread, report_signal;
atomic_int dump_thread_tid; /* the dump thread's, 0 none: never stopped */
atomic_uintptr_t dump_thread_stack; /* an address on its stack: never a root */
/* 1 from before the dump thread is made until it has published its tid
 * and stack: a dump meanwhile waits (dump_thread_wait_started), or it
 * would take the new thread for one of the program's. */
static atomic_uint dump_thread_starting;

/* The handlers install() replaced, for dump_stop().  Static memory, which
 * reachability scans as a root: every byte of each is defined
 * (hook_sigaction_now), none a leftover of the stack. */
static struct {
	int sig;
	bool ours;
	struct sigaction old;
} installed[2];

/* Whether the program has the dump signal blocked on its one thread, where
 * the hook keeps it open (dump_signal_kept_open): what the thread's mask
 * becomes when the dump thread starts, and what the program reads back. */
static bool program_blocks_dump;

/* A dump thread is wanted: started at the next chance (ensure_thread). */
static void want_thread(void)
{
	atomic_store(&dump_wanted, true);
	atomic_store(&dump_thread_missing, true);
}

static int sig_dump(void)
{
	return LEAKSNAP_HOOK_SIG_DUMP;
}

static int sig_toggle(void)
{
	return LEAKSNAP_HOOK_SIG_TOGGLE;
}

/* exit() has begun: the dump thread takes no more requests. */
static atomic_bool exit_begun;

/* No dump thread until the program makes a second thread (dump_start). */
static bool lazy;

/* The stack the dump signal's handler writes a dump on (lazy). */
#define HERE_STACK_SIZE (256 * 1024)
static struct hook_stack here_stack;

/* Field 3 on of a /proc stat file @name (the fields after the command),
 * read into @buf, or NULL.  System calls and string scans only (a signal
 * handler's). */
static const char *stat_fields(const char *name, char *buf, size_t size)
{
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t got = read(fd, buf, size - 1);
	close(fd);
	if (got <= 0)
		return NULL;
	buf[got] = '\0';
	/* after the command, whose ")" may be in it: the last one */
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

/* Field @n of the fields @p (field 3) starts, or NULL. */
static const char *stat_field(const char *p, int n)
{
	for (int field = 3; p && field < n; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p && *p ? p : NULL;
}

/* The number of this process's tasks (/proc/self/stat, field 20), from a
 * signal handler.  0 if it cannot be read. */
static unsigned long tasks_now(void)
{
	char buf[1024];
	const char *p = stat_field(stat_fields("/proc/self/stat", buf, sizeof(buf)), 20);
	unsigned long v = 0;
	for (; p && *p >= '0' && *p <= '9' && v < 1000000; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	return p && *p == ' ' ? v : 0;
}

/* Whether this thread, the process's only one (tasks_now), holds none of
 * the locks a dump takes, nor is taking or giving one back: the tables'
 * (marked before taking), the dump's and the unloaded libraries' lines'
 * (tried: no other thread could hold them). */
static bool locks_free_here(void)
{
	return !table_busy_here() && !dump_busy_here() && !unloaded_busy_here() &&
	       dump_lock_free() && unloaded_lock_free();
}

/* The dump signals asked of this thread: one dump each, every signal but
 * the faults blocked meanwhile (a handler of the program's that allocated
 * would wait for the tables' locks the dump holds; a fault still reaches
 * the crash handler, which says it came inside a dump), on the hook's own
 * stack (this thread's may be small: a coroutine's, a thread of 32 KiB). */
static void write_here(void *arg)
{
	const bool *one = arg;
	if (*one) /* the handler's own */
		dump_write(NULL, HOOK_TRIGGER_SIGNAL);
	/* and every request posted where a handler could not write (one may
	 * come as this thread leaves the tables or the dump lock in there:
	 * serve_here leaves it to this loop) */
	while (sem_trywait(&dump_sem) == 0)
		dump_write(NULL, HOOK_TRIGGER_SIGNAL);
}

/* This thread is writing on the hook's stack (one user at a time: a
 * second switch would overwrite the first's saved context). */
static atomic_bool writing_here;

/* Whether this code runs on the hook's stack now: writing_here, unless a
 * handler of the program's for a fault left the write by siglongjmp. */
static bool on_here_stack(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	return atomic_load(&writing_here) && here_stack.base && sp >= (uintptr_t)here_stack.base &&
	       sp < (uintptr_t)here_stack.base + here_stack.size;
}

static void write_on_own_stack(bool one)
{
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
	sigset_t quiet, old;
	sigfillset(&quiet);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		sigdelset(&quiet, faults[i]);
	pthread_sigmask(SIG_BLOCK, &quiet, &old);
	hook_busy++;
	atomic_store(&writing_here, true);
	hook_stack_map(&here_stack, HERE_STACK_SIZE);
	hook_stack_run(&here_stack, write_here, &one);
	atomic_store(&writing_here, false);
	hook_busy--;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* In the dump signal's handler of a process without its dump thread:
 * write the dump here and now when this thread is the process's only one
 * (nothing else runs while it does) and holds no lock a dump takes.  False
 * when it cannot be done here. */
static bool dump_here(void)
{
	if (!atomic_load(&hook_active) || atomic_load(&exit_begun) || on_here_stack() ||
	    !locks_free_here() || tasks_now() != 1)
		return false;
	write_on_own_stack(true);
	return true;
}

static void on_signal(int sig)
{
	int saved = errno;
	if (sig == sig_dump()) {
		if (!lazy || !atomic_load(&thread_absent) || !dump_here()) {
			sem_post(&dump_sem);
			/* No dump thread (it waits for a second thread, the program's
			 * of more than one were made unseen, LEAKSNAP_FORK_THREAD=0,
			 * ended for unshare(CLONE_NEWUSER), or it could not be made):
			 * the next tracked allocation starts one, or this thread as it
			 * leaves the tables. */
			if (atomic_load(&thread_absent)) {
				want_thread();
				if (table_busy_here())
					table_defer_start();
			}
		}
	} else {
		atomic_fetch_xor(&hook_capture_on, 1);
	}
	errno = saved;
}

static void timespec_add_ns(struct timespec *t, uint64_t ns)
{
	uint64_t total = (uint64_t)t->tv_nsec + ns % 1000000000u;
	t->tv_sec += (time_t)(ns / 1000000000u + total / 1000000000u);
	t->tv_nsec = (long)(total % 1000000000u);
}

/* The main thread has called pthread_exit(): the process ends when its
 * last thread does, and the dump thread must not be that thread. */
static atomic_bool main_gone;
/* Posts of dump_sem that wake the dump thread without asking for a dump. */
static atomic_int wake_only;
/* dump_stop(): the dump thread ends at its next wake-up. */
static atomic_bool dump_quit;
/* The signal mask of the thread that started the hook (the program's
 * main thread): the dump thread's when it becomes the program's last. */
static sigset_t program_mask;

void dump_main_thread_gone(void)
{
	atomic_store(&main_gone, true);
	if (atomic_load(&thread_absent)) {
		/* no dump thread yet: one started later polls at once; but the
		 * control thread would keep the process alive meanwhile */
		if (atomic_load(&control_thread_tid)) {
			want_thread();
			dump_ensure_thread();
		}
		return;
	}
	atomic_fetch_add(&wake_only, 1);
	sem_post(&dump_sem);
}

/* The state letter and the kernel's flags (field 9) of /proc/self/@path
 * ("stat" or "task/TID/stat").  False if it cannot be read. */
static bool task_stat(const char *path, char *state, unsigned long *flags)
{
	char name[64], buf[1024];
	snprintf(name, sizeof(name), "/proc/self/%s", path);
	const char *p = stat_fields(name, buf, sizeof(buf)), *f = stat_field(p, 9);
	if (!f)
		return false;
	*state = *p;
	*flags = strtoul(f, NULL, 10);
	return true;
}

#define PF_IO_WORKER_ 0x10     /* io_uring's workers: tasks of ours, */
#define PF_USER_WORKER_ 0x4000 /* vhost's too, but no threads of the program */

/* Whether every thread of the program has ended but this one: the main
 * thread, gone by pthread_exit(), is a zombie (until the last one ends),
 * and every other task is a zombie too or a kernel worker.  False when
 * that cannot be read. */
static bool alone(void)
{
	char state;
	unsigned long flags;
	if (!task_stat("stat", &state, &flags) || state != 'Z')
		return false; /* the main thread is still on its way out */
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return false;
	long self = syscall(SYS_gettid), leader = getpid();
	bool only = true;
	for (struct dirent *e; only && (e = readdir(d));) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0 || tid == self || tid == leader ||
		    tid == atomic_load(&control_thread_tid))
			continue;
		char path[64];
		snprintf(path, sizeof(path), "task/%ld/stat", tid);
		if (task_stat(path, &state, &flags) && state != 'Z' && state != 'X' &&
		    !(flags & (PF_IO_WORKER_ | PF_USER_WORKER_)))
			only = false;
	}
	closedir(d);
	return only;
}

/* The program's last thread, made for its exit (dump_main). */
static void *last_exit(void *arg)
{
	(void)arg;
	exit(0);
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

#define ALONE_POLL_NS 100000000u /* once the main thread is gone */

static long futex_u(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, (unsigned *)(uintptr_t)addr, op, val, ts, NULL, 0);
}

/* The dump thread has published its tid and stack: until then the thread
 * that made it, and any dump, wait (at most 5 s: a thread that never
 * runs). */
void dump_thread_wait_started(void)
{
	for (int i = 0; i < 5000 && atomic_load(&dump_thread_starting); i++) {
		struct timespec ts = {0, 1000000};
		futex_u(&dump_thread_starting, FUTEX_WAIT_PRIVATE, 1, &ts);
	}
}

static void *dump_main(void *arg)
{
	(void)arg;
	hook_busy = 1; /* nothing this thread allocates is the program's */
	/* (named from inside: pthread_setname_np on another thread writes
	 * /proc/self/task/TID/comm, and the /proc entries that leaves make
	 * the process's end cost its parent 1-2 ms of CPU in wait()) */
	prctl(PR_SET_NAME, "leaksnap-dump");
	atomic_store(&dump_thread_tid, (int)syscall(SYS_gettid));
	sigset_t set;
	atomic_store(&dump_thread_stack, (uintptr_t)&set);
	if (hook_cfg.reachability)
		reach_learn_thread_layout();
	atomic_store(&dump_thread_starting, 0);
	futex_u(&dump_thread_starting, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	sigfillset(&set);
	sigdelset(&set, sig_dump());
	sigdelset(&set, sig_toggle());
	pthread_sigmask(SIG_SETMASK, &set, NULL);

	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	timespec_add_ns(&deadline, hook_cfg.interval_ns);
	for (;;) {
		bool poll = atomic_load(&main_gone);
		bool timed = hook_cfg.interval_ns != 0;
		struct timespec until = deadline;
		if (poll) {
			struct timespec soon;
			clock_gettime(CLOCK_MONOTONIC, &soon);
			timespec_add_ns(&soon, ALONE_POLL_NS);
			if (!timed || before(&soon, &until))
				until = soon;
			timed = true;
		}
		int r;
		if (timed) {
#if defined(__GLIBC__)
			r = sem_clockwait(&dump_sem, CLOCK_MONOTONIC, &until);
#else
			r = sem_timedwait_monotonic_np(&dump_sem, &until);
#endif
		} else {
			r = sem_wait(&dump_sem);
		}
		int e = errno;
		bool request = false;
		if (r == 0) { /* a dump asked for, unless it was only a wake-up */
			int w = atomic_load(&wake_only);
			while (w > 0 && !atomic_compare_exchange_weak(&wake_only, &w, w - 1))
				;
			request = w <= 0;
		}
		if (poll && alone()) {
			/* The process must end as when its last thread does:
			 * exit(0) (glibc; bionic ends it without exit handlers),
			 * the exit dump written at it.  The program's atexit
			 * handlers then run as on a thread of its own: recorded,
			 * with its signal mask and a stack of the usual size.  So
			 * a thread made for it calls exit(); if none can be made,
			 * this one returns, and the C library calls exit() here. */
			if (request)
				sem_post(&dump_sem); /* (served at exit) */
			atomic_store(&thread_absent, true);
			atomic_store(&dump_thread_tid, 0);
			atomic_store(&dump_thread_stack, 0);
			pthread_sigmask(SIG_SETMASK, &program_mask, NULL);
			pthread_t t;
			pthread_attr_t attr;
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			bool made = pthread_create(&t, &attr, last_exit, NULL) == 0;
			pthread_attr_destroy(&attr);
			if (made) {
				sigset_t all;
				sigfillset(&all);
				pthread_sigmask(SIG_SETMASK, &all, NULL);
				for (;;)
					pause();
			}
			hook_busy = 0;
			return NULL;
		}
		if (atomic_load(&dump_quit)) {
			if (request)
				sem_post(&dump_sem); /* (not this thread's any more) */
			atomic_store(&dump_thread_stack, 0);
			atomic_store(&thread_absent, true);
			hook_busy = 0;
			atomic_store(&dump_thread_tid, 0); /* (last: dump_stop waits for it) */
			return NULL;
		}
		if (request && atomic_load(&exit_begun)) {
			/* the exiting thread serves what is pending */
			sem_post(&dump_sem);
			for (;;)
				pause();
		} else if (request) {
			dump_write(NULL, HOOK_TRIGGER_SIGNAL);
		} else if (r != 0 && e == ETIMEDOUT && hook_cfg.interval_ns) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (before(&now, &deadline))
				continue; /* only the poll's wait ended */
			dump_write(NULL, HOOK_TRIGGER_INTERVAL);
			clock_gettime(CLOCK_MONOTONIC, &now);
			do
				timespec_add_ns(&deadline, hook_cfg.interval_ns);
			while (!before(&now, &deadline));
		}
	}
	return NULL;
}

static int set_dump_signal(bool blocked, sigset_t *old);

/* Start the dump thread if it is wanted and missing; with @wait, return
 * once it has published its tid and stack (else a dump waits for that). */

static void ensure_thread(bool wait)
{
	bool expected = true;
	if (!atomic_compare_exchange_strong(&dump_thread_missing, &expected, false))
		return;
	control_ensure_thread();
	if (!atomic_exchange(&dump_wanted, false) || !atomic_exchange(&thread_absent, false))
		return;
	hook_busy++;
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* The thread starts with every signal blocked, then opens its own. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* The thread is one of the process's from the clone on: it is known
	 * as the hook's before this returns (a dump taken meanwhile on
	 * another thread waits for it), or the exit dump of a short program
	 * could list it as a thread of the program's. */
	atomic_store(&dump_thread_starting, 1);
	int rc = pthread_create(&t, &attr, dump_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		/* (tried again when a dump signal finds it missing: now, if
		 * one came meanwhile) */
		atomic_store(&thread_absent, true);
		atomic_store(&dump_thread_starting, 0);
		int pending = 0;
		if (sem_getvalue(&dump_sem, &pending) == 0 && pending > 0) {
			want_thread();
		}
		hook_report(&report_thread, "cannot start the dump thread: %s; dump signals wait "
			    "for the exit dump unless a thread of the program's can write them",
			    strerror(rc));
	} else {
		/* The dump thread takes the signal from now on: this thread
		 * gets the mask the program asked for while it was the only
		 * one (the threads it makes inherit it). */
		if (lazy && program_blocks_dump)
			set_dump_signal(true, NULL);
		if (wait)
			dump_thread_wait_started();
	}
	hook_busy--;
}

/* Where a dump thread is asked for (dump_thread_missing) in a process of
 * one thread that waits for the program's second (lazy): the dump signals
 * that came where the handler could not write are served here, by this
 * thread, which holds no lock of the hook's, rather than by a thread made
 * for them.  False if the thread is still to be made. */
static bool serve_here(void)
{
	if (on_here_stack()) {
		atomic_store(&dump_thread_missing, false);
		return true; /* (its loop serves them) */
	}
	if (!lazy || !atomic_load(&thread_absent) || !locks_free_here() || tasks_now() != 1)
		return false;
	atomic_store(&dump_thread_missing, false);
	atomic_store(&dump_wanted, false);
	write_on_own_stack(false);
	return true;
}

void dump_ensure_thread(void)
{
	if (!serve_here())
		ensure_thread(true);
}

/* At the thread's leaving the tables, after the dump signal came there
 * (table_defer_start); and after a dump of this thread's (dump.c). */
void dump_thread_late(void)
{
	/* (inside malloc or free, which leave errno alone) */
	int saved = errno;
	if (atomic_load(&dump_thread_missing) && !atomic_load(&exit_begun) && !serve_here())
		ensure_thread(false);
	errno = saved;
}

bool dump_signal_kept_open(void)
{
	return lazy && atomic_load(&thread_absent) && installed[0].ours &&
	       atomic_load(&hook_active);
}

bool dump_signal_program_blocks(void)
{
	return program_blocks_dump;
}

void dump_signal_program_sets(bool blocked)
{
	program_blocks_dump = blocked;
}

/* The dump signal blocked or open on this thread (the hook's own change:
 * the program's wish stays as recorded). */
static int set_dump_signal(bool blocked, sigset_t *old)
{
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig_dump());
	if (!installed[0].ours)
		return -1;
	return pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &one, old);
}

/* The parent kept the dump signal open when it forked: its wish for the
 * signal came along in program_blocks_dump (dump_after_fork_child). */
static bool kept_open_at_fork;

/* A thread of a process without its dump thread: the dump signal open,
 * whatever mask it was given (the program's, inherited across exec or
 * from a parent that had a dump thread, which is remembered). */
static void open_dump_signal(void)
{
	sigset_t cur;
	if (set_dump_signal(false, &cur) != 0)
		return;
	if (!kept_open_at_fork)
		program_blocks_dump = sigismember(&cur, sig_dump()) == 1;
	kept_open_at_fork = false;
}

void dump_program_threads(void)
{
	if (!lazy || !atomic_load(&thread_absent) || !atomic_load(&hook_active) ||
	    atomic_load(&exit_begun))
		return;
	want_thread();
	ensure_thread(false);
}

void dump_child_start(void)
{
	if (lazy) {
		open_dump_signal(); /* (the child has one thread) */
		return;
	}
	if (!hook_cfg.fork_thread) {
		/* (as before LEAKSNAP_FORK_THREAD: a thread once a dump is
		 * asked for, or with an interval, from the next allocation) */
		if (hook_cfg.interval_ns) {
			want_thread();
		}
		return;
	}
	/* (not waiting for the thread to run: the fork returns at once, and
	 * a dump, or a reachability pause, waits for it meanwhile) */
	want_thread();
	ensure_thread(false);
}

void dump_threads_suspend(void)
{
	control_end_thread();
	dump_thread_wait_started();
	int tid = atomic_load(&dump_thread_tid);
	dump_thread_end();
	atomic_store(&dump_quit, false);
	/* (its tid is 0 just before it returns: the kernel's task goes a
	 * little later, and only then is the process single-threaded) */
	for (int i = 0; tid && i < 2000 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; i++) {
		struct timespec ms = {0, 500000};
		nanosleep(&ms, NULL);
	}
	if (tid && !lazy) {
		/* back with the next tracked allocation, or a dump signal */
		want_thread();
	} else if (lazy) {
		/* one thread, no dump thread: the signal open again (the
		 * program's wish kept), until its next thread */
		set_dump_signal(false, NULL);
	}
}

static void install(int sig)
{
	struct sigaction old, sa;
	if (hook_sigaction_now(sig, &old) != 0)
		return;
	unsigned k = sig == sig_dump() ? 0 : 1;
	installed[k].sig = sig;
	installed[k].old = old;
	installed[k].ours = false;
	if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
		hook_report(&report_signal, "signal %d already has a handler; not installing ours",
			    sig);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	installed[k].ours = sigaction(sig, &sa, NULL) == 0;
}

void dump_start(void)
{
	pthread_sigmask(SIG_SETMASK, NULL, &program_mask);
	sem_init(&dump_sem, 0, 0);
	hook_cfg.reach_refused_sampled = false;
	if (hook_cfg.reachability && hook_cfg.sample) {
		static atomic_bool once;
		hook_report(&once, "reachability is off with LEAKSNAP_SAMPLE: a sampled block held "
			    "only through unsampled blocks would be counted unreachable");
		hook_cfg.reachability = false;
		hook_cfg.reach_refused_sampled = true;
	}
	if (hook_cfg.reachability)
		reach_init();
	install(sig_dump());
	install(sig_toggle());
	if (hook_cfg.dump_on_crash)
		crash_start();
	atomic_store(&thread_absent, true);
	table_deferred_start = dump_thread_late;
	/* (what needs a thread from the start; the in-app build is loaded
	 * into processes of many threads) */
#ifdef HOOK_INAPP
	lazy = false;
#else
	lazy = !hook_cfg.dump_thread && !hook_cfg.interval_ns && !hook_cfg.reachability &&
	       hook_cfg.control == HOOK_CONTROL_OFF;
#endif
	if (lazy) {
		open_dump_signal();
		return;
	}
	want_thread();
	dump_ensure_thread();
}

void dump_thread_end(void)
{
	/* (it may be writing a dump, or about to) */
	atomic_store(&dump_thread_missing, false);
	if (atomic_load(&dump_thread_tid) || atomic_load(&dump_thread_starting)) {
		dump_thread_wait_started();
		atomic_store(&dump_quit, true);
		atomic_fetch_add(&wake_only, 1);
		sem_post(&dump_sem);
		struct timespec ms = {0, 1000000};
		while (atomic_load(&dump_thread_tid))
			nanosleep(&ms, NULL);
	}
	atomic_store(&dump_thread_missing, false);
	atomic_store(&dump_wanted, false);
	atomic_store(&thread_absent, true);
}

void dump_stop(void)
{
	/* the dump thread first: it may be writing a dump, or about to */
	if (dump_signal_kept_open() && program_blocks_dump)
		set_dump_signal(true, NULL); /* (as the program asked) */
	dump_thread_end();
	/* the handlers: each put back unless another was installed since */
	for (unsigned k = 0; k < 2; k++) {
		struct sigaction cur;
		if (installed[k].ours && sigaction(installed[k].sig, NULL, &cur) == 0 &&
		    !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == on_signal)
			sigaction(installed[k].sig, &installed[k].old, NULL);
		installed[k].ours = false;
	}
	crash_stop();
	if (hook_cfg.reachability)
		reach_stop();
	/* a dump another thread is writing (leaksnap_dump) ends first */
	dump_files_wait();
	atomic_store(&dump_quit, false);
	atomic_store(&wake_only, 0);
	sem_destroy(&dump_sem);
}

void dump_after_fork_child(void)
{
	/* (the parent's state, as the fork copied it) */
	kept_open_at_fork = dump_signal_kept_open();
	/* Only this thread exists now: the dump thread did not come along,
	 * and a dump in progress in the parent is not ours. */
	dump_files_after_fork_child();
	sem_init(&dump_sem, 0, 0);
	atomic_store(&dump_thread_tid, 0);
	atomic_store(&dump_thread_stack, 0);
	atomic_store(&dump_thread_starting, 0);
	atomic_store(&exit_begun, false);
	atomic_store(&main_gone, false);
	atomic_store(&wake_only, 0);
	/* The child's own thread is started by dump_child_start(), once
	 * every fork handler of the hook's has run. */
	atomic_store(&thread_absent, true);
	atomic_store(&dump_wanted, false);
	atomic_store(&dump_thread_missing, false);
}

void dump_at_exit(void)
{
	static atomic_bool report_exit;
	if (dump_crash_written())
		return; /* a handler the program chained to ours calls exit() */
	if (table_busy_here()) {
		hook_report(&report_exit, "exit() inside the allocator (from a signal handler): "
			    "no exit dump");
		return;
	}
	hook_busy++;
	/* Signals that arrived but were not served yet are served here, all
	 * by one dump (they ask for the same state): signals that keep coming
	 * must not hold the exit up, as one dump each would.  The dump thread
	 * takes no more of them (a dump it has begun is waited for, once). */
	atomic_store(&exit_begun, true);
	int pending = 0;
	if (sem_getvalue(&dump_sem, &pending) != 0)
		pending = 0;
	int asked = 0;
	for (int i = 0; i < pending && sem_trywait(&dump_sem) == 0; i++)
		asked++;
	if (asked > atomic_load(&wake_only))
		dump_write(NULL, HOOK_TRIGGER_SIGNAL);
	dump_files_end();
	/* (not a forked child's, unless asked: a server that forks a child
	 * per connection would write one per connection) */
	if (hook_cfg.dump_on_exit &&
	    (hook_cfg.dump_on_exit_forked || !atomic_load(&hook_zygote_child)))
		dump_write(NULL, HOOK_TRIGGER_EXIT);
	hook_busy--;
}
