/* leaksnap hook: system calls that need the process single-threaded.
 *
 * unshare(CLONE_NEWUSER), and setns() into a user namespace, fail with
 * EINVAL in a process of more than one thread.  A program that makes them
 * (a sandbox, often in a child it has just forked) has, under the hook, the
 * hook's dump thread too, and its control thread with LEAKSNAP_CONTROL:
 * both end first (dump_threads_suspend), and start again with the next
 * tracked allocation.  The in-app build interposes nothing. */
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hook_internal.h"

#ifndef HOOK_INAPP
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif

static void make_single_threaded(void)
{
	if (!atomic_load(&hook_active))
		return;
	hook_busy++;
	dump_threads_suspend();
	hook_busy--;
}

/* (the C library's unshare and setns are the bare system calls) */
EXPORT int unshare(int flags)
{
	if (flags & CLONE_NEWUSER)
		make_single_threaded();
	return (int)syscall(SYS_unshare, flags);
}

EXPORT int setns(int fd, int nstype)
{
	/* (0: any kind, a user namespace among them) */
	if (nstype == 0 || (nstype & CLONE_NEWUSER))
		make_single_threaded();
	return (int)syscall(SYS_setns, fd, nstype);
}
#endif
