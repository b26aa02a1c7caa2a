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
 * own masks (sigprocmask, pthread_sigmask) leave it open, so that it does
 * not wait pending for as long as the program keeps it blocked; the mask
 * the program reads back is the one it asked for, and becomes the
 * thread's when the dump thread starts.  The hook's own mask changes go
 * straight to the C library (hook_sigmask).
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
	/* Not resolved yet: the system call, as the C library makes it (the
	 * C library's own signals, glibc's first two real-time ones, never
	 * blocked), errno untouched. */
	sigset_t copy;
	if (set && how != SIG_UNBLOCK) {
		copy = *set;
#ifdef __GLIBC__
		/* (sigdelset refuses them: the bits themselves) */
		unsigned long *w = (unsigned long *)(void *)&copy;
		const unsigned bits = 8 * sizeof(unsigned long);
		for (unsigned sig = 32; sig <= 33; sig++)
			w[(sig - 1) / bits] &= ~(1ul << ((sig - 1) % bits));
#endif
		set = &copy;
	}
	int saved = errno, rc = 0;
	if (syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8)) != 0)
		rc = errno;
	errno = saved;
	return rc;
}

#ifndef HOOK_INAPP
/* @name where the hook's start did not find it: in a libpthread loaded
 * since (glibc before 2.34 keeps the thread calls there), or loaded only
 * in a library's own scope (dlopen with RTLD_LOCAL), which RTLD_NEXT does
 * not search. */
static void *find_next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	void *lib = dlopen("libpthread.so.0", RTLD_LAZY | RTLD_NOLOAD);
	if (lib) {
		p = dlsym(lib, name);
		dlclose(lib);
	}
	return p;
}

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
	if (!hook_real.pthread_create)
		*(void **)&hook_real.pthread_create = find_next("pthread_create");
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
		hook_real.thrd_create = find_next("thrd_create");
	if (!hook_real.thrd_create)
		return thrd_error;
	before_thread();
	return ((thrd_create_fn)hook_real.thrd_create)(thread, start, arg);
}

/* A mask change of the program's, with the dump signal left open where
 * the process has one thread and no dump thread to take it: the program's
 * wish for the signal is kept (and read back in @old), and becomes the
 * thread's mask when the dump thread starts (dump_program_threads). */
/* @rc (0 or an error number) as pthread_sigmask answers it, or as
 * sigprocmask (-1 and errno). */
static int mask_answer(int rc, bool procmask)
{
	if (procmask && rc) {
		errno = rc;
		return -1;
	}
	return rc;
}

static int program_mask(int how, const sigset_t *set, sigset_t *old, bool procmask)
{
	int (*real)(int, const sigset_t *, sigset_t *) =
		procmask ? hook_real.sigprocmask : hook_real.pthread_sigmask;
	if (hook_busy || !dump_signal_kept_open() ||
	    (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)) {
		return real ? real(how, set, old) : mask_answer(hook_sigmask(how, set, old), procmask);
	}
	const int sig = LEAKSNAP_HOOK_SIG_DUMP;
	bool before = dump_signal_program_blocks(), after = before;
	bool named = set && sigismember(set, sig) == 1;
	sigset_t copy;
	if (set) {
		if (how == SIG_SETMASK)
			after = named;
		else if (named)
			after = how == SIG_BLOCK;
		if (named && how != SIG_UNBLOCK) {
			copy = *set;
			sigdelset(&copy, sig);
			set = &copy;
		}
	}
	int rc = hook_sigmask(how, set, old);
	if (rc)
		return mask_answer(rc, procmask);
	if (old) { /* (the program's wish, whatever the mask is in fact) */
		if (before)
			sigaddset(old, sig);
		else
			sigdelset(old, sig);
	}
	dump_signal_program_sets(after);
	return 0;
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return program_mask(how, set, old, false);
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return program_mask(how, set, old, true);
}
#endif
