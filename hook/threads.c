/* leaksnap hook: the program's first thread.
 *
 * Where nothing needs the hook's dump thread from the start (dump_start),
 * a process keeps one thread until the program makes its second: glibc's
 * malloc takes no lock while a process has one thread, and the hook's
 * thread, even one that only waits, would cost every allocation that
 * (docs/hook.md, "The hook's thread").  So the calls that make threads
 * are interposed: the dump thread starts just before the program's first.
 * A thread made another way (clone() itself) is not seen: the dump signal
 * then starts the dump thread at the next tracked allocation.  The in-app
 * build interposes nothing. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <threads.h>

#include "hook_internal.h"

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
#endif
