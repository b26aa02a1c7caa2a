/* leaksnap hook: the program's threads and signal masks.
 *
 * Where nothing needs the hook's dump thread from the start (dump_start),
 * a process keeps one thread until the program makes its second: glibc's
 * malloc takes no lock while a process has one thread, and the hook's
 * thread, even one that only waits, would cost every allocation that
 * (docs/hook.md, "The hook's thread").  So the calls that make threads
 * are interposed: the dump thread starts just before the program's first.
 * A thread made another way (clone() itself) is not seen: the dump signal
 * then starts the dump thread at the next tracked allocation.
 *
 * Meanwhile the process's one thread takes the dump signal, which a dump
 * thread would otherwise take whatever the program blocks: the program's
 * own masks (sigprocmask, pthread_sigmask) leave it open, so that it never
 * waits pending, nor reaches the program's sigwait or signalfd.  The
 * hook's own mask changes go straight to the C library (hook_sigmask).
 * The in-app build interposes nothing. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <pthread.h>
#include <threads.h>

#include "hook_internal.h"

#undef pthread_sigmask
#undef sigprocmask

int hook_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (hook_real.pthread_sigmask)
		return hook_real.pthread_sigmask(how, set, old);
	/* (not resolved yet: the system call, as the C library makes it) */
	if (syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8)) != 0)
		return errno;
	return 0;
}

#ifndef HOOK_INAPP
static void before_thread(void)
{
	/* (the hook's own threads are made with hook_busy raised) */
	if (!hook_busy) {
		int saved = errno;
		dump_program_threads();
		errno = saved;
	}
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*start)(void *), void *arg)
{
	if (!hook_real_ready())
		return EAGAIN;
	if (!hook_real.pthread_create) /* (a libpthread loaded since) */
		*(void **)&hook_real.pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	if (!hook_real.pthread_create)
		return EAGAIN;
	before_thread();
	return hook_real.pthread_create(thread, attr, start, arg);
}

/* C11's, which glibc makes without calling pthread_create through the
 * interposable name. */
typedef int (*thrd_create_fn)(thrd_t *, thrd_start_t, void *);
EXPORT int thrd_create(thrd_t *thread, thrd_start_t start, void *arg)
{
	if (!hook_real_ready())
		return thrd_error;
	if (!hook_real.thrd_create)
		hook_real.thrd_create = dlsym(RTLD_NEXT, "thrd_create");
	if (!hook_real.thrd_create)
		return thrd_error;
	before_thread();
	return ((thrd_create_fn)hook_real.thrd_create)(thread, start, arg);
}

/* @set less the dump signal, in @copy, where it is to be left open. */
static const sigset_t *open_for_dump(int how, const sigset_t *set, sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || hook_busy ||
	    sigismember(set, LEAKSNAP_HOOK_SIG_DUMP) != 1 || !dump_signal_kept_open())
		return set;
	*copy = *set;
	sigdelset(copy, LEAKSNAP_HOOK_SIG_DUMP);
	return copy;
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	return hook_sigmask(how, open_for_dump(how, set, &copy), old);
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	set = open_for_dump(how, set, &copy);
	if (hook_real.sigprocmask)
		return hook_real.sigprocmask(how, set, old);
	int rc = hook_sigmask(how, set, old);
	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}
#endif
