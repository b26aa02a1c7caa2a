/* leaksnap hook: a dump when the program dies of a fatal signal.
 *
 * A program that leaks and then crashes would leave nothing: no exit dump
 * is written when a signal ends the process.  So the hook takes the fatal
 * signals whose disposition is the default when it starts (a program that
 * installs a handler later replaces ours, and gets its own called; one that
 * chains to the handler it found gets ours as well), and its handler writes
 * PREFIX.PID.crash.dump, then lets the signal end the process as it would
 * have: the default disposition back, the signal sent again to the thread
 * (blocked while the handler runs, it is delivered as the handler returns,
 * in the context that took it: the exit status is 128+N, the core dump
 * what it was).
 *
 * The handler does not write when the crashing thread holds a lock of the
 * hook's own (the tables, the dump, the unloaded libraries' lines): the dump
 * would wait for itself.  It says so in one line on stderr instead.  A
 * second thread that crashes while the first writes waits for it. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hook_internal.h"
#include "ownstack.h"
#include "unloaded.h"

static const struct {
	int sig;
	const char *name;
} fatal[] = {
	{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"}, {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
	{SIGABRT, "SIGABRT"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
};

/* The thread writing the crash dump (0: none yet); then the dump is over. */
static atomic_int crash_tid;
static atomic_bool crash_over;

/* The main thread's alternate signal stack (when it had none), so that a
 * stack overflow there still gets its handler, with a guard page below. */
#define ALT_STACK_SIZE (64 * 1024)

/* The dump itself runs on a stack of its own (the crashing thread's may be
 * small: a thread of 32 KiB would overflow in the dump, and a SIGABRT then
 * end as a SIGSEGV; ownstack.c).  One crash dump per process: one user. */
#define CRASH_STACK_SIZE (256 * 1024)
static struct hook_stack crash_stack;

static const char *fatal_name(int sig)
{
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i].sig == sig)
			return fatal[i].name;
	return "signal";
}

/* End the process by @sig as if no handler had been there. */
static void die_by(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	/* Pending until the handler returns (the signal is blocked in it),
	 * then delivered where the program was: a fault is not run again, a
	 * signal sent by raise() or kill() is not lost. */
	syscall(SYS_tgkill, (long)getpid(), syscall(SYS_gettid), (long)sig);
}

static void crash_dump(int sig)
{
	if (!atomic_load(&hook_active))
		return;
	if (table_busy_here() || dump_busy_here() || unloaded_busy_here()) {
		hook_report(NULL, "%s (signal %d) inside the hook's own locked section: no crash dump",
			    fatal_name(sig), sig);
		return;
	}
	if (dump_write_crash(sig) != 0 && errno == ETIMEDOUT)
		hook_report(NULL, "%s (signal %d): a dump in progress did not end; no crash dump",
			    fatal_name(sig), sig);
	/* (write failures are reported by the dump itself; ECANCELED: the
	 * process was exiting, its exit dump written or being written) */
}

static void crash_dump_arg(void *arg)
{
	crash_dump(*(const int *)arg);
}

static void on_fatal(int sig, siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	int saved = errno;
	int self = (int)syscall(SYS_gettid), none = 0;
	if (atomic_compare_exchange_strong(&crash_tid, &none, self)) {
		/* Every other signal waits for the dump: a handler of the
		 * program's with SA_ONSTACK would run at the top of the
		 * alternate stack this handler is on while the dump runs on
		 * its own stack, over this handler's frames.  (The mask comes
		 * back when the handler returns.) */
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		hook_busy++;
		hook_stack_run(&crash_stack, crash_dump_arg, &sig);
		hook_busy--;
		atomic_store(&crash_over, true);
	} else if (none != self) {
		/* another thread's crash is being dumped: the process ends once
		 * it is written */
		struct timespec ms = {0, 1000000};
		while (!atomic_load(&crash_over))
			nanosleep(&ms, NULL);
	}
	/* (none == self: a fault inside the dump; end at once) */
	die_by(sig);
	errno = saved;
}

static void alt_stack(void)
{
	stack_t cur;
	if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
		return; /* the program's own, or none can be had */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = hook_map(ALT_STACK_SIZE + page);
	if (!p)
		return;
	mprotect(p, page, PROT_NONE);
	stack_t ss = {.ss_sp = p + page, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0)
		hook_unmap(p, ALT_STACK_SIZE + page);
}

/* The signals whose handler crash_start() set (for crash_stop). */
static bool crash_ours[sizeof(fatal) / sizeof(fatal[0])];

void crash_stop(void)
{
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction cur;
		if (!crash_ours[i])
			continue;
		crash_ours[i] = false;
		if (sigaction(fatal[i].sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
		    cur.sa_sigaction == on_fatal) {
			struct sigaction dfl;
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			sigemptyset(&dfl.sa_mask);
			sigaction(fatal[i].sig, &dfl, NULL);
		}
	}
}

void crash_start(void)
{
	bool any = false;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction old, sa;
		if (sigaction(fatal[i].sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler != SIG_DFL)
			continue; /* ignored, or a handler of the program's (or a preloaded library's) */
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fatal;
		/* (no SA_RESETHAND: another thread's crash meanwhile waits in
		 * the handler for the dump; a fault of the same signal inside
		 * the handler, blocked there, ends the process at once) */
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (sigaction(fatal[i].sig, &sa, NULL) == 0)
			any = crash_ours[i] = true;
	}
	if (!any)
		return;
	alt_stack();
	hook_stack_map(&crash_stack, CRASH_STACK_SIZE);
}
