/* leaksnap hook: its life in the process -- start-up and the last dump,
 * the fork handlers, exit(), and the calls a program makes to it (bionic's
 * get_malloc_leak_info, leaksnap_dump).  The allocation entry points are
 * hook.c's. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "table_internal.h"
#include "reach.h"
#include "sample.h"
#include "leakhook.h"
#include "unloaded.h"

/* bionic API ------------------------------------------------------------------ */

EXPORT void get_malloc_leak_info(uint8_t **info, size_t *overall_size, size_t *info_size,
				 size_t *total_memory, size_t *backtrace_size)
{
	if (!info || !overall_size || !info_size || !total_memory || !backtrace_size)
		return;
	*info = NULL;
	*overall_size = 0;
	*info_size = sizeof(uintptr_t) * (2 + hook_cfg.frames);
	*total_memory = 0;
	*backtrace_size = hook_cfg.frames;
	if (!atomic_load(&hook_active) || table_busy_here())
		return;
	hook_busy++;
	struct table_snapshot snap;
	if (table_snapshot(&snap) == 0) {
		if (snap.records_size) {
			/* From the allocator underneath, so that both
			 * free_malloc_leak_info() and free() release it. */
			uint8_t *buf = hook_real.malloc(snap.records_size);
			if (buf) {
				table_note_untracked(buf);
				memcpy(buf, snap.records, snap.records_size);
				*info = buf;
				*overall_size = snap.records_size;
				*total_memory = (size_t)snap.total_memory;
			}
		}
		table_snapshot_free(&snap);
	}
	hook_busy--;
}

EXPORT void free_malloc_leak_info(uint8_t *info)
{
	free(info);
}

EXPORT int leaksnap_dump(const char *path)
{
	if (!atomic_load(&hook_active)) {
		errno = ENOSYS;
		return -1;
	}
	REACH_ENTER();
	int rc = dump_write(path, HOOK_TRIGGER_API);
	reach_entry_sp = 0;
	return rc;
}

/* exit() ------------------------------------------------------------------------ */

/* Where the program entered exit(), and on which thread: the exit dump
 * takes that thread's stack from there up (docs/reachability.md, "the exit
 * dump").  The frames below it are finished: exit's own path (its
 * handlers, the destructors, the dump) runs over their slots without
 * writing them all, and what the program left there must not be a root. */
static atomic_uintptr_t exit_entry_sp;
static atomic_int exit_entry_tid;

uintptr_t hook_exit_entry_sp(void)
{
	return atomic_load(&exit_entry_tid) == (int)syscall(SYS_gettid) ? atomic_load(&exit_entry_sp)
									 : 0;
}

typedef void (*exit_fn)(int);
static _Atomic(exit_fn) real_exit;


#ifdef HOOK_INAPP
HIDDEN void hook_exit(int status)
#else
EXPORT void exit(int status)
#endif
{
	uintptr_t sp = caller_sp();
	int tid = (int)syscall(SYS_gettid);
	/* the first call on a thread (one from an atexit handler is deeper,
	 * and a forked child's thread has a tid of its own) */
	if (atomic_load(&exit_entry_tid) != tid) {
		atomic_store(&exit_entry_sp, sp);
		atomic_store(&exit_entry_tid, tid);
	}
	exit_fn real = atomic_load(&real_exit);
	if (!real) {
#ifdef HOOK_INAPP
		real = (exit_fn)hook_resolve("exit");
#else
		real = (exit_fn)dlsym(RTLD_NEXT, "exit");
#endif
		atomic_store(&real_exit, real);
	}
	if (real)
		real(status);
	_exit(status); /* (not reached; also keeps the call above a call) */
}

/* Start-up, fork, exit -------------------------------------------------------- */

/* The main thread may end by pthread_exit() or be cancelled, and leave the
 * process to the other threads: once they have ended too, the dump thread
 * must end, or the process would never exit.  A thread-specific value of
 * the main thread's tells: its destructor runs on either way out (not on a
 * return from main(), which is exit()). */
static pthread_key_t main_key;
static bool main_key_ok;

static void main_leaving(void *v)
{
	(void)v;
	dump_main_thread_gone();
}

static void main_key_set(void)
{
	if (main_key_ok && syscall(SYS_gettid) == getpid())
		pthread_setspecific(main_key, (void *)1);
}

static void fork_prepare(void)
{
	control_fork_prepare();
	unloaded_fork_prepare();
	table_lock_all();
}

/* (the tables last: giving them back unblocks the signals, and a dump
 * signal's handler there must find every lock a dump takes free) */
static void fork_parent(void)
{
	unloaded_fork_parent();
	table_unlock_all();
	control_fork_parent();
	if (atomic_load(&dump_thread_missing))
		dump_thread_late(); /* (errno kept) */
}

static void fork_child(void)
{
	table_fork_child();
	unloaded_fork_child();
	/* (the child's own state before the signals are unblocked: a dump
	 * signal's handler then finds it a process of its own) */
	sample_fork_child();
	atomic_store(&hook_zygote_child, true);
	dump_after_fork_child();
	table_unlock_all();
	control_after_fork_child();
	main_key_set(); /* the forking thread is the child's main thread */
	dump_child_start();
}

/* Zero the stack below the caller's frame: the start-up runs before main()
 * and deeper than main's frames will be, and what it leaves there (values
 * of its own, of the C library's) would lie in main's uninitialized slots,
 * false roots for reachability. */
static void __attribute__((noinline)) scrub_below(void)
{
	volatile char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

/* The table's fork handlers and the main thread's key, once.  In the
 * in-app build its own handlers are registered after these: its prepare
 * runs first, so that fork takes the in-app lock before the table locks,
 * in the order leaksnap_stop() takes them. */
static void register_atfork(void)
{
	main_key_ok = pthread_key_create(&main_key, main_leaving) == 0;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
#ifdef HOOK_INAPP
	inapp_register_atfork();
#endif
}

void hook_register_atfork(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_atfork);
}

int hook_collect_begin(void)
{
	if (table_init(hook_cfg.frames) != 0 || sample_begin() != 0)
		return -1;
	unwind_fp_exclude_self();
	atomic_store(&hook_capture_on, !hook_cfg.start_disabled);
	hook_register_atfork();
	main_key_set();
	atomic_store(&hook_active, true);
	dump_start();
	control_start();
	return 0;
}

void hook_collect_end(void)
{
	atomic_store(&hook_active, false);
	control_stop();
	dump_stop();
	table_reset();
	atomic_store(&hook_invalid_frees, 0);
}

static void __attribute__((constructor)) hook_start(void)
{
	if (!hook_real_ready())
		return;
#ifdef HOOK_INAPP
	inapp_load();
	scrub_below();
#else
	if (getauxval(AT_SECURE))
		return; /* setuid/setgid: stay out of the way */
	if (!hook_only_wanted())
		return; /* LEAKSNAP_ONLY: inert, only passed on to children */
	hook_busy++;
	hook_read_config();
	if (hook_collect_begin() != 0) {
		hook_report(NULL, "cannot map the allocation tables; not tracking");
		hook_busy--;
		return;
	}
	hook_busy--;
	scrub_below();
#endif
}

#ifndef HOOK_INAPP
/* (the in-app API, so that code looking it up works under either build) */
EXPORT int leaksnap_start(const struct leaksnap_options *opts)
{
	(void)opts;
	errno = ENOSYS;
	return -1;
}

EXPORT int leaksnap_stop(void)
{
	errno = ENOSYS;
	return -1;
}
#endif

static void __attribute__((destructor)) hook_stop(void)
{
	if (!atomic_load(&hook_active))
		return;
	hook_busy++;
	REACH_ENTER();
	/* Entered from exit() on this thread, or by a return from main():
	 * the stack from exit's entry up (below it, exit's path runs over
	 * finished frames). */
	uintptr_t entered = hook_exit_entry_sp();
	if (!entered)
		entered = reach_main_exit_sp(); /* (a return from main) */
	if (entered > reach_entry_sp)
		reach_entry_sp = entered;
	dump_at_exit();
	control_at_exit();
	reach_entry_sp = 0;
	hook_busy--;
}
