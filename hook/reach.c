/* leaksnap hook: reachability at capture time -- the snapshot: the
 * copy-on-write image, what the scanning child is given, its result
 * (docs/reachability.md).  The threads are stopped and released by the
 * stopper (reach_stop.c); the child's scan is reach_scan.c's.
 *
 * With every thread stopped and every table lock held (in the order
 * stop_and_fork explains: no unbounded wait for the locks while a thread
 * is stopped), one raw clone() without CLONE_VM and without an exit
 * signal makes a copy-on-write image of the process, the locks are given
 * back and the threads released: the pause is the signals, the handlers'
 * answers and the clone.  The child walks the tables and marks from the
 * roots in its image (reach_scan.c), writes the records and one
 * unreachable count per record into memory shared with this process, and
 * _exits.
 *
 * Nothing from the first signal to the release calls malloc or takes a
 * lock that another thread may hold; the child only makes system calls
 * and reads memory. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reach_stop.h"

#define CHILD_TIMEOUT_NS 300000000000ull /* for the scan */

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

/* The hook's own writable segment (.data, .bss, what relocation left
 * writable), less the start-up pool: never a root.  It holds the hook's
 * state, and copies the hook made of what it was given (a struct glibc
 * filled from its own stack, say: the saved signal handlers' masks held
 * such leftovers) are not the program's pointers.  The pool is, in part:
 * the allocator lookup's allocations.  Found once, at start, as
 * libc_data. */
static uintptr_t own_data[2];
static int find_own_data(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t me = (uintptr_t)&own_data, lo_all = 0, hi_all = 0;
	bool mine = false;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
		uintptr_t hi = lo + (uintptr_t)ph->p_memsz;
		mine |= me >= lo && me < hi;
		if (!(ph->p_flags & PF_W))
			continue;
		if (!hi_all || lo < lo_all)
			lo_all = lo;
		if (hi > hi_all)
			hi_all = hi;
	}
	if (!mine)
		return 0;
	own_data[0] = lo_all;
	own_data[1] = hi_all;
	return 1;
}

void reach_init(void)
{
	glibc_chunks = glibc_malloc();
	if (glibc_chunks)
		dl_iterate_phdr(find_libc_data, NULL);
	dl_iterate_phdr(find_own_data, NULL);
	reach_stop_install();
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
	uint64_t deadline = reach_now_ns() + CHILD_TIMEOUT_NS;
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
		if (reach_now_ns() > deadline) {
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
	uintptr_t pool[2];
	hook_pool_range(pool);
	if (own_data[0] <= pool[0] && pool[1] <= own_data[1]) {
		args->exclude[6][0] = own_data[0];
		args->exclude[6][1] = pool[0];
		args->exclude[7][0] = pool[1];
		args->exclude[7][1] = own_data[1];
	}
}

/* The pause: from the first signal to the release (this thread's signals
 * wait meanwhile).  Stops the threads and, when they stopped, forks the
 * image (*@pid: its pid or -errno; the fork's time in *@fork_ns).  Returns
 * reach_stop_threads()'s answer, the pause's length in *@pause_ns.
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
			reach_stop_again(st);
			/* until the taker is done (a fork takes a fraction
			 * of a millisecond), 20 ms at most */
			for (int i = 0; i < 200 && table_all_takers(); i++) {
				struct timespec ts = {0, 100000};
				nanosleep(&ts, NULL);
			}
		}
		t0 = reach_now_ns();
		reach_stop_begin(st, true);
		stopped = reach_stop_threads(st, true);
		st->stop_ns = reach_now_ns() - t0;
		if (stopped == 0) {
			st->lock_t0 = reach_now_ns();
			if (table_lock_all_within(LOCK_WITHIN_NS) == 0) {
				locked = true;
				break;
			}
			stopped = -2;
		}
		reach_stop_end_defer();
		reach_stop_unboost_all(st);
		reach_stop_release(st);
		if (stopped == -1 && (attempt + 1 == STOP_TRIES || st->full))
			break; /* failed: no lock taken (the list full: at once) */
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
			reach_stop_again(st);
			st->lock_t0 = reach_now_ns();
			table_lock_all();
			locked = true;
		}
		st->locks_first = true;
		t0 = reach_now_ns();
		reach_stop_begin(st, false);
		stopped = reach_stop_threads(st, false);
		st->stop_ns = reach_now_ns() - t0;
	}
	if (stopped == 0) {
		for (size_t i = 0; i < st->n; i++) {
			st->frozen += st->threads[i].state == REACH_FROZEN;
			st->blocked += st->threads[i].state == REACH_BLOCKED;
		}
		args->nthreads = st->n;
		tf0 = reach_now_ns();
		*pid = fork_image(args);
		tf1 = reach_now_ns();
	}
	if (locked) {
		/* the image has its copy: the locks go before the threads,
		 * which would otherwise wake only to wait for them */
		table_unlock_all();
		st->locked_ns = reach_now_ns() - st->lock_t0;
	}
	reach_stop_end_defer();
	reach_stop_unboost_all(st);
	/* (taken before the wake: a dumping thread of normal priority may
	 * be preempted by the threads it wakes) */
	*pause_ns = reach_now_ns() - t0;
	reach_stop_release(st);
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
	st->walk_ns = reach_now_ns() - tl0;
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
	const char *unusable = reach_stop_unusable();
	if (unusable) {
		failed(res, unusable, 0);
		return table_snapshot(snap);
	}
	dump_thread_wait_started(); /* (a hook thread being made: its tid) */
	control_thread_wait_started();
	struct stopper st = {.self = reach_my_tid(),
			     .dump_tid = atomic_load(&dump_thread_tid),
			     .control_tid = atomic_load(&control_thread_tid)};
	reach_stop_prepare(&st);
	if (!st.threads) {
		failed(res, "no memory for the thread list", 0);
		return table_snapshot(snap);
	}
	reach_stop_publish(&st);
	if (reach_stop_list(&st) < 0 || reach_stop_watch_blocking(&st) < 0) {
		failed(res, st.why, 0);
		reach_stop_unpublish();
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
		reach_stop_unpublish();
		return table_snapshot(snap);
	}
	res->map = shm;
	int policy = 0;
	struct sched_param param;
	st.fifo = reach_stop_boost_self(&st, &policy, &param);
	uint64_t tl0 = reach_now_ns();
	if (fd < 0)
		table_lock_all();
	if (fd < 0 && walk_here(snap, &st, tl0) != 0) {
		table_unlock_all();
		reach_stop_unboost_self(st.fifo, policy, &param);
		reach_stop_unpublish();
		return -1;
	}
	if (fd < 0) {
		/* the counts follow the header, one per record */
		size_t want = sizeof(struct reach_shared) + (snap->record_count + 1) * sizeof(uint32_t);
		void *bigger = mremap(shm, res->map_size, want, MREMAP_MAYMOVE);
		if (bigger == MAP_FAILED) {
			table_unlock_all();
			reach_stop_unboost_self(st.fifo, policy, &param);
			failed(res, "no shared memory for the result", 0);
			reach_stop_unpublish();
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
		st.locked_ns = reach_now_ns() - tl0;
	}
	reach_stop_unboost_self(st.fifo, policy, &param);
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
			reach_stop_unpublish();
			return table_snapshot(snap);
		}
	}
	table_snapshot_sort(snap, res->ok ? res->counts : NULL);
	reach_stop_unpublish();
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

