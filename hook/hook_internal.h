/* leaksnap hook: declarations shared by the files of hook/.  Nothing here is
 * exported from libleakhook.so (see libleakhook.sym). */
#ifndef LEAKSNAP_HOOK_INTERNAL_H
#define LEAKSNAP_HOOK_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leakhook.h"
#include "unwind.h"

#ifdef __GLIBC__
#include <malloc.h> /* memalign, pvalloc, malloc_usable_size */
#else
void *memalign(size_t align, size_t size);
void *pvalloc(size_t size);
size_t malloc_usable_size(void *p);
#endif

/* What libleakhook.so exports (the rest is hidden: libleakhook.sym). */
#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* Thread-local storage: initial-exec, a read at a fixed offset from the
 * thread pointer.  The in-app build may be dlopen()ed: glibc then places its
 * TLS in the small surplus it keeps for that (the hook's is under 128
 * bytes: per-thread tables live elsewhere); bionic refuses initial-exec TLS
 * in a dlopen()ed library, so there it is dynamic (TLS descriptors). */
#if defined(HOOK_INAPP) && defined(__BIONIC__)
#define HOOK_TLS_MODEL
#else
#define HOOK_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
#define HOOK_TLS __thread HOOK_TLS_MODEL
#define HOOK_LIKELY(x) __builtin_expect(!!(x), 1)
#define HOOK_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define HOOK_MAX_FRAMES 256
/* The zygote-child flag: bit 31 of the size in the on-disk records; the
 * top bit of the size inside the tables (so sizes of 2 GiB and more stay
 * what they are until they are written). */
#define HOOK_ZYGOTE_BIT ((uintptr_t)1 << 31)
#define HOOK_ZYGOTE_FLAG ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))

/* The allocator underneath (the next definition after ours). */
struct hook_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	int (*dlclose)(void *);
	int (*pthread_getattr_np)(pthread_t, pthread_attr_t *);
	int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	void *thrd_create; /* (threads.c: C11's, where the C library has it) */
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
};
extern struct hook_real hook_real;

/* The hook's own changes of a thread's signal mask go to the C library's
 * calls, never to the interposed ones (threads.c), and work before those
 * are resolved.  Returns 0 or an error number, as pthread_sigmask. */
int hook_sigmask(int how, const sigset_t *set, sigset_t *old);
#define pthread_sigmask(how, set, old) hook_sigmask(how, set, old)
#define sigprocmask(how, set, old) hook_sigmask(how, set, old)

enum hook_unwind_mode { HOOK_UNWIND_AUTO, HOOK_UNWIND_FP, HOOK_UNWIND_DWARF,
			HOOK_UNWIND_INSTRUMENT /* unwind_instr.c */ };

/* Settings read once from the environment (see docs/hook.md). */
struct hook_config {
	unsigned frames;             /* LEAKSNAP_FRAMES, 1..256 */
	enum hook_unwind_mode unwind;
	const char *unwinder_name;   /* what the metadata records */
	char out[PATH_MAX];          /* LEAKSNAP_OUT */
	bool dump_on_exit;           /* LEAKSNAP_DUMP_ON_EXIT */
	bool dump_on_exit_forked;    /* LEAKSNAP_DUMP_ON_EXIT=all: forked children's too */
	bool fork_thread;            /* LEAKSNAP_FORK_THREAD: a child's thread at fork */
	bool dump_thread;            /* LEAKSNAP_DUMP_THREAD: the dump thread at once */
	bool dump_on_crash;          /* LEAKSNAP_DUMP_ON_CRASH (crash.c) */
	uint64_t interval_ns;        /* LEAKSNAP_INTERVAL, 0 = off */
	bool start_disabled;         /* LEAKSNAP_START_DISABLED */
	bool reachability;           /* LEAKSNAP_REACHABILITY (reach.c) */
	bool keep_unloaded;          /* LEAKSNAP_KEEP_UNLOADED (unloaded.c) */
	/* LEAKSNAP_CONTROL (control.c): no socket, the abstract
	 * "leaksnap.<pid>", or a path socket at @control_path (absolute) */
	enum { HOOK_CONTROL_OFF, HOOK_CONTROL_ABSTRACT, HOOK_CONTROL_PATH } control;
	char control_path[108];      /* (a sockaddr_un's sun_path) */
	uint64_t sample;             /* LEAKSNAP_SAMPLE bytes, 0 = every block (sample.h) */
	uint64_t sample_seed;        /* LEAKSNAP_SAMPLE_SEED, 0 = a seed of the moment */
	/* reachability was asked for with sampling and refused (dump_start):
	 * a sampled block held only through unsampled ones would be called
	 * unreachable */
	bool reach_refused_sampled;
};
extern struct hook_config hook_cfg;

/* True once the tables exist and allocations are being tracked. */
extern atomic_bool hook_active;
/* The hook's signals (leakhook.h): a dump, the stop of a reachability
 * pause (its handler saves the thread's registers and waits on a futex,
 * taking no lock), capture on and off. */
_Static_assert(PATH_MAX == LEAKSNAP_HOOK_PATH_MAX, "leakhook.h: LEAKSNAP_HOOK_PATH_MAX is PATH_MAX");

/* SIGRTMAX-19 toggles this; off = new allocations are not recorded. */
extern atomic_int hook_capture_on;
/* Set in a child after fork(): its allocations carry the zygote-child bit. */
extern atomic_bool hook_zygote_child;
/* Invalid or double frees of tracked pointers. */
extern atomic_ulong hook_invalid_frees;

/* Per thread: >0 while the hook itself runs (its allocations go untracked),
 * and for the hook's own threads for their whole life. */
extern HOOK_TLS int hook_busy;

/* Start-up (hook.c) ---------------------------------------------------------- */

/* Read hook_cfg from the environment (LEAKSNAP_*). */
void hook_read_config(void);
/* Set hook_cfg's unwinder ("auto", "fp", "dwarf", "instrument": not in the
 * in-app build); -1 if @mode is none of them. */
int hook_config_unwind(const char *mode);
/* Set hook_cfg.out to @out made absolute; -1 if it is too long. */
int hook_config_out(const char *out);
/* Register the fork handlers (the tables', then the in-app build's), once. */
void hook_register_atfork(void);
/* The allocator underneath is found (hook.c); false while it is being
 * looked up (the static pool serves meanwhile). */
bool hook_real_ready(void);
/* The static pool's bytes (hook.c), {start, end}: what the allocator
 * lookup's calls allocated, which may hold the program's blocks. */
void hook_pool_range(uintptr_t r[2]);
/* Make the tables, the fork handlers, the dump thread and the signal
 * handlers, and turn tracking on.  Returns 0, or -1 (no memory). */
int hook_collect_begin(void);
/* The reverse, once nothing runs in the entry points any more (in-app
 * stop): tracking off, the dump thread and the signal handlers gone, the
 * tables emptied. */
void hook_collect_end(void);

/* The caller's stack pointer at the call: this frame's canonical frame
 * address.  (Not this frame's own stack pointer: the frame has slots it
 * never writes, which the program's finished frames left values in.) */
static inline __attribute__((always_inline)) uintptr_t caller_sp(void)
{
#if defined(__clang__)
	/* clang keeps the frame record (fp, return address) at the top of
	 * the frame on every ABI it builds the hook for */
	return (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(uintptr_t);
#else
	return (uintptr_t)__builtin_dwarf_cfa();
#endif
}

/* Report a problem once per @once flag: "leaksnap: <msg>" on stderr, built
 * without allocating. */
void hook_report(atomic_bool *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* only.c: false when LEAKSNAP_ONLY names globs and the executable's file
 * name matches none of them: the process then stays inert. */
bool hook_only_wanted(void);

/* mmap-backed memory for the hook's own use (never the hooked allocator). */
void *hook_map(size_t size);
void hook_unmap(void *p, size_t size);

/* Signal @sig's action now, into *@old, every byte of it defined: the
 * handler, the flags and the kernel's part of the mask (the signals up to
 * NSIG), zero elsewhere.  sigaction() alone leaves the rest of a struct
 * as it was or fills it with whatever its own frame held (glibc copies a
 * 128-byte sa_mask from a struct of its stack into which the kernel wrote
 * 8 bytes), and a copy kept in the hook's static memory (dump.c's saved
 * handlers) is a root of reachability: an address left there by a dead
 * frame made a lost block reachable (docs/reachability.md).  Returns
 * sigaction()'s answer. */
static inline int hook_sigaction_now(int sig, struct sigaction *old)
{
	struct sigaction got;
	__builtin_memset(old, 0, sizeof(*old));
	if (sigaction(sig, NULL, &got) != 0)
		return -1;
	/* (the handler's union: sa_handler or sa_sigaction, one pointer) */
	__builtin_memcpy(&old->sa_handler, &got.sa_handler, sizeof(got.sa_handler));
	old->sa_flags = got.sa_flags;
	size_t word = sizeof(unsigned long), kernel = (NSIG - 1 + 8 * word - 1) / (8 * word) * word;
	__builtin_memcpy(&old->sa_mask, &got.sa_mask,
			 kernel < sizeof(got.sa_mask) ? kernel : sizeof(got.sa_mask));
	return 0;
}

/* Live-allocation tables (table.c) --------------------------------------- */

/* Make the tables for stacks of @frames frames (again after table_reset:
 * then the memory they kept is reused). */
int table_init(unsigned frames);
/* Forget every block and every stack (in-app stop: nothing else may be
 * inside the tables). */
void table_reset(void);
/* Record the allocation @p of @size made at @pcs[0..n).  @stack_slot:
 * unwind_cfi_stack_slot() for these pcs, or NULL.  @run: their running
 * hash (unwind_fp_hashed), or NULL. */
void table_insert(void *p, size_t size, bool zygote, const uintptr_t *pcs, unsigned n,
		  uint64_t *stack_slot, const uint64_t *run);

/* An allocation the hook does not record (its own, or capture off): its
 * address must no longer count as recently freed. */
void table_note_untracked(void *p);

enum table_remove_result { TABLE_UNTRACKED, TABLE_REMOVED, TABLE_DOUBLE_FREE };
/* A removed allocation's record, for putting it back (realloc failure):
 * its stack by number, not by frames, so that realloc keeps no copy of a
 * whole stack on the program's stack (threads may have 16 KiB of it). */
struct table_key {
	uintptr_t size;  /* with HOOK_ZYGOTE_FLAG */
	uint32_t stack;  /* its number in the stack store */
	uint32_t gen;    /* the store's numbering then */
};
/* Forget @p.  With @key, the allocation's record is kept there. */
enum table_remove_result table_remove(void *p, struct table_key *key);
/* A block realloc() took out of the table and has not put back yet: its
 * bytes {start, end} in two words in realloc's frame, which this points
 * to (NULL elsewhere).  table_remove() with a @key puts the old block's
 * there before it leaves the tables (so before a reachability stop can
 * come); realloc puts the new block's (as much of it as it kept of the
 * old) once the allocator returned it.  A stop in between saves them with
 * the thread's registers, and the scan takes those words as roots: the
 * blocks they hold are not lost meanwhile (docs/reachability.md).  (A
 * pointer, not the words: the in-app build's thread-local storage is kept
 * within 128 bytes, t-inapp.sh.) */
extern HOOK_TLS volatile uintptr_t *table_inflight;
/* Record @p again as table_remove() gave @key.  Should the stack store have
 * been renumbered in between (a rebuild may drop a stack no live block
 * uses), the block goes unrecorded. */
void table_restore(void *p, const struct table_key *key);

/* Take every table lock (fork, consistent snapshots).  The thread holding
 * them may still call malloc and free: it works on the tables directly. */
void table_lock_all(void);
/* This thread is inside the tables (a signal handler interrupted it). */
bool table_busy_here(void);
void table_unlock_all(void);
/* table_lock_all, bounded: gives up after @ns, or at once when another
 * thread takes or holds every lock; 0 (held) or -1 (nothing held).  For
 * a reachability pause that stopped the threads first (reach.c). */
int table_lock_all_within(uint64_t ns);
/* This thread is taking or holds every lock (a fork's handler, a
 * snapshot, a rebuild of the stack store). */
bool table_takes_all_here(void);
/* Threads taking or holding every lock now. */
unsigned table_all_takers(void);
/* From a reachability stop's handler on a thread inside the tables: the
 * thread is to stop when it leaves them, by calling table_deferred_stop
 * (set by reach.c) there. */
void table_defer_stop(void);
extern void (*table_deferred_stop)(void);
/* From the dump signal's handler on a thread inside the tables, in a
 * process without its dump thread: the thread starts it when it leaves
 * them, by calling table_deferred_start (set by dump_thread.c). */
void table_defer_start(void);
extern void (*table_deferred_start)(void);
/* In a forked child, before table_unlock_all. */
void table_fork_child(void);

#define TABLE_HUGE_MAX 64

/* A live block (reachability): its address, size (32 bits of it, as the
 * tables keep it) and @tag, from which table_block_key() makes its
 * record's key. */
struct table_block {
	uintptr_t start;
	uint32_t tag;
	uint32_t size;
};

/* A snapshot in get_malloc_leak_info's layout, in hook_map()'ed memory. */
struct table_snapshot {
	uint8_t *records;       /* bionic record area */
	size_t records_size;    /* bytes */
	size_t record_count;
	size_t info_size;       /* sizeof(uintptr_t) * (2 + frames) */
	size_t map_size;        /* bytes mapped at @records */
	uint64_t total_memory;  /* sum of size * count */
	size_t clamped;         /* records of 2 GiB or more, written as 2 GiB - 1 */
	uint64_t *keys;         /* table_snapshot_locked(.., true): each record's key */
	size_t keys_size;       /* bytes mapped at @keys */
	struct table_block *blocks; /* table_snapshot_locked(.., true): the live blocks */
	size_t block_count;
	size_t blocks_size;     /* bytes mapped at @blocks */
	uintptr_t blocks_diff;  /* the OR of every start XOR the first one's (the
				 * address bits in which the blocks differ) */
	/* Blocks of 4 GiB or more among them, whose sizes the tables keep
	 * saturated (UINT32_MAX): {start, the allocator's usable size}. */
	uintptr_t huge[TABLE_HUGE_MAX][2];
	size_t huge_count;
};
/* Take a consistent snapshot of the live allocations, records sorted by
 * size, then count, then stack (descending).  Returns 0 or -1 (no memory). */
int table_snapshot(struct table_snapshot *snap);
void table_snapshot_free(struct table_snapshot *snap);
/* The same in two steps, for reachability: with every table lock held
 * (table_lock_all), the records unsorted; with @want_keys, @keys[i] is
 * record i's key (stack number and size, as table_block_key makes them),
 * in ascending order, and @blocks lists the live blocks.  Then, locks or
 * not, sort the records, permuting @aux (one u32 per record, or NULL)
 * alike. */
int table_snapshot_locked(struct table_snapshot *snap, bool want_keys);
void table_snapshot_sort(struct table_snapshot *snap, uint32_t *aux);
/* Unmap @snap's block list early (table_snapshot_free does it too). */
void table_snapshot_blocks_free(struct table_snapshot *snap);

size_t table_live_count(void);
/* Bytes of one record of a snapshot (its info_size). */
size_t table_info_size(void);
uint64_t table_block_key(uint32_t tag, uint32_t size);
/* The tables' own memory that holds block addresses (or hashes that look
 * like them): never a root. */
size_t table_own_ranges(uintptr_t (*out)[2], size_t cap);
/* The calling thread's memo of stacks ({0, 0}: none): hashes, which on
 * 32-bit look like addresses as often as any word; never a root.  Safe in
 * a signal handler. */
void table_memo_range(uintptr_t range[2]);

/* Dumps (dump.c) ---------------------------------------------------------- */

enum hook_trigger {
	HOOK_TRIGGER_EXIT,
	HOOK_TRIGGER_SIGNAL,
	HOOK_TRIGGER_API,
	HOOK_TRIGGER_INTERVAL,
	HOOK_TRIGGER_CRASH,
	HOOK_TRIGGER_CONTROL,
};

/* Dumps this process wrote: files published, and dumps sent whole over the
 * control socket. */
extern atomic_ulong hook_dumps_written;

/* The metadata lines of a dump (dump_meta.c), from the maps text @maps
 * it holds; @crash_signal for a crash dump. */
struct buf;
void dump_build_meta(struct buf *meta, const struct buf *maps, enum hook_trigger trigger,
		     int crash_signal, size_t clamped);
/* Write a dump.  @path = NULL: the next numbered name (or the exit name).
 * Returns 0, or -1 with errno set. */
int dump_write(const char *path, enum hook_trigger trigger);
/* Start the dump thread and the signal handlers (after the tables exist). */
void dump_start(void);
/* The reverse (in-app stop): end the dump thread, put back the signal
 * handlers dump_start() installed, wait for a dump in progress. */
void dump_stop(void);
/* dump_stop()'s first step alone: no interval or signal dump after it. */
void dump_thread_end(void);
/* In a child after fork(): numbering restarts and the thread is restarted. */
void dump_after_fork_child(void);
/* The dump thread is not running in this process (after fork). */
void dump_ensure_thread(void);
/* Before the program makes a thread (threads.c): the dump thread, where
 * it waited for the program's second thread, starts. */
void dump_program_threads(void);
/* Whether the program's blocking of the dump signal is to be left out: its
 * process has one thread and no dump thread to take the signal (threads.c). */
bool dump_signal_kept_open(void);
/* Whether the program asked for the dump signal blocked on that thread,
 * and its asking so (threads.c keeps the record; the thread's mask is set
 * so when the dump thread starts). */
bool dump_signal_program_blocks(void);
void dump_signal_program_sets(bool blocked);
/* After a dump written on a program's thread: a dump thread asked for
 * meanwhile starts. */
void dump_thread_late(void);
/* In a child after fork(), last of the fork handlers: start its dump
 * thread (and its control socket's) now, so that a child that never
 * allocates again still answers a dump signal or a control request. */
void dump_child_start(void);
/* End the hook's threads (dump, control) for a system call that needs the
 * process single-threaded (ns.c); they start again with the next tracked
 * allocation. */
void dump_threads_suspend(void);
/* Where this thread entered exit() (its stack pointer there), or 0. */
uintptr_t hook_exit_entry_sp(void);
/* Wait until a dump thread being made has published its tid. */
void dump_thread_wait_started(void);
extern atomic_bool dump_thread_missing;
/* At exit: wait for a dump in progress, write the exit dump, stop dumping. */
void dump_at_exit(void);
/* The main thread is ending by pthread_exit() or cancellation: the dump
 * thread ends once it is the only thread left, so that the process ends
 * as it would without it. */
void dump_main_thread_gone(void);
/* From the handler of fatal signal @sig: write PREFIX.PID.crash.dump (no
 * reachability), waiting at most a few seconds for a dump in progress in
 * another thread.  Afterwards no exit dump is written.  Returns 0, or -1
 * with errno (ECANCELED: the process is already exiting; ETIMEDOUT). */
int dump_write_crash(int sig);
/* This thread is writing a dump (holds the dump lock). */
bool dump_busy_here(void);
/* In a process of one thread (a dump signal's handler there): whether the
 * dump lock is free, not even being taken or given back by this thread,
 * the only one that could.  (dump_busy_here has a moment either side of
 * the lock when the owner is not marked yet, or any more.) */
bool dump_lock_free(void);

/* What leaksnap record learns (runnote.c) ------------------------------------- */

/* Read LEAKSNAP_RUN and LEAKSNAP_DROP (from hook_read_config). */
void hook_runnote_config(void);
/* Tell the run's record that the dump @path could not be written (errno
 * @err); nothing without a run.  Async-signal-safe, allocates nothing. */
void hook_note_write_failure(const char *path, int err);
/* The prefix LEAKSNAP_DROP gives for hook_cfg.out's file-name part, in
 * @out; false without a drop box (or when it does not fit). */
bool hook_drop_prefix(char *out, size_t size);

/* The control socket (control.c) --------------------------------------------- */

/* Set hook_cfg's control socket from a LEAKSNAP_CONTROL value (NULL, "" or
 * "0": none; "1": abstract; else a path, made absolute).  Returns 0, or -1
 * when the path does not fit a socket address (the setting is then off). */
int hook_config_control(const char *value);
/* Open the socket hook_cfg asks for and start its thread (after
 * dump_start).  A socket that cannot be had is said once on stderr. */
void control_start(void);
/* The reverse (in-app stop): the thread ends, every connection is closed,
 * a path socket is unlinked. */
void control_stop(void);
/* At exit: a path socket of this process's is unlinked. */
void control_at_exit(void);
/* In a child after fork(), from the fork handler: close what the parent's
 * control had open; the child's own socket opens with its dump thread
 * (control_ensure_thread, from dump_child_start). */
void control_after_fork_child(void);
/* fork()'s prepare and parent handlers: the control's descriptors held
 * still across the fork (control_after_fork_child finds them all). */
void control_fork_prepare(void);
void control_fork_parent(void);
/* Open the child's socket and start its thread, if it is wanted and
 * missing (called where dump_ensure_thread is). */
void control_ensure_thread(void);
/* End the control thread and close its socket, to be opened again by
 * control_ensure_thread() (dump_threads_suspend). */
void control_end_thread(void);
/* The metadata line "control=@leaksnap.<pid>\n" or "control=<path>\n"
 * while a socket is open. */
void control_meta(struct buf *meta);
/* The control thread's tid (0 none) and an address on its stack below
 * which it holds nothing of the program's: never stopped, never a root
 * (reach.c). */
extern atomic_int control_thread_tid;
extern atomic_uintptr_t control_thread_stack;
/* Wait until a control thread being made has published its tid. */
void control_thread_wait_started(void);
/* The control's own memory (its connections' buffers, the dumps it
 * holds): never a root.  {0, 0} when there is none. */
void control_own_range(uintptr_t range[2]);
/* The memory of the dumps the control holds while streaming them (their
 * records, maps, metadata, reachability counts): up to @cap ranges into
 * @out, how many.  Never roots. */
size_t control_image_ranges(uintptr_t (*out)[2], size_t cap);

/* Crash dumps (crash.c) ---------------------------------------------------- */

/* Install the fatal-signal handlers (LEAKSNAP_DUMP_ON_CRASH), after
 * dump_start. */
void crash_start(void);
/* Put back the handlers crash_start() installed (those still ours). */
void crash_stop(void);

/* The in-app build (inapp*.c) ---------------------------------------------- */

#ifdef HOOK_INAPP
/* Collection is on: the hidden entry points track.  Each entry point first
 * counts itself in on its thread's stripe (INAPP_ENTER, out again when it
 * returns), then reads inapp_on: leaksnap_stop() clears inapp_on, puts the
 * slots back and waits for every stripe to drain before it drops the
 * tables.  An entry that finds it off calls the allocator directly.
 *
 * A stripe belongs to one thread at a time (a cache line of its own), so
 * its count is written by that thread alone, with plain stores; between
 * that store and the read of inapp_on, leaksnap_stop()'s membarrier()
 * stands for the full barrier each entry would otherwise pay (as the
 * tables' biased locks do).  Without membarrier (old kernels, valgrind)
 * the count is a sequentially consistent read-modify-write. */
extern atomic_bool inapp_on;
struct stack_memo;
struct inapp_stripe {
	atomic_long in;             /* its thread's entries inside now */
	struct inapp_stripe *next;  /* every stripe (never freed) */
	atomic_int owner;           /* its thread's id, 0 = free */
	bool shared;                /* the spare that threads share (no memo) */
	/* The stack table's memo for its thread (table.c; NULL: none yet),
	 * here rather than in TLS, which the in-app build keeps small. */
	uint32_t memo_gen;
	struct stack_memo *memo;
} __attribute__((aligned(64)));
extern HOOK_TLS struct inapp_stripe *inapp_mine;
extern atomic_bool inapp_fenced; /* no membarrier: read-modify-writes */
struct inapp_stripe *inapp_stripe_get(void);

static inline struct inapp_stripe *inapp_enter(void)
{
	struct inapp_stripe *s = inapp_mine;
	if (HOOK_UNLIKELY(!s))
		s = inapp_stripe_get();
	if (HOOK_LIKELY(!atomic_load_explicit(&inapp_fenced, memory_order_relaxed))) {
		/* (a signal handler nesting here leaves the count as it found it) */
		atomic_store_explicit(&s->in, atomic_load_explicit(&s->in, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
	} else {
		atomic_fetch_add(&s->in, 1);
	}
	return s;
}

static inline void inapp_leave(struct inapp_stripe **sp)
{
	struct inapp_stripe *s = *sp;
	atomic_store_explicit(&s->in, atomic_load_explicit(&s->in, memory_order_relaxed) - 1,
			      memory_order_release);
}

#define INAPP_ENTER() \
	struct inapp_stripe *inapp_stripe_ __attribute__((cleanup(inapp_leave))) = inapp_enter()
#define INAPP_LIVE() atomic_load(&inapp_on)

/* The definition of @name the loader binds a module's reference to (not an
 * executable's PLT entry that stands for it), or NULL (hook.c). */
void *hook_resolve(const char *name);
/* A C++ runtime's allocation slot was entered with stack pointer @sp:
 * true (once) when a watched library's operator new is what called it. */
bool inapp_cxx_claim(uintptr_t sp);
/* After a dlclose(): forget the slots of the modules gone. */
void inapp_after_dlclose(void);
/* inapp.c's fork handlers (hook_register_atfork registers them). */
void inapp_register_atfork(void);
/* At load: LEAKSNAP_LIBS starts collection. */
void inapp_load(void);
/* The in-app metadata lines of a dump (collector=inapp, inapp_*=). */
struct buf;
void inapp_meta(struct buf *meta);

/* The hidden entry points (hook.c) the slots are pointed at. */
void *hook_malloc(size_t size);
void hook_free(void *p);
void *hook_calloc(size_t n, size_t size);
void *hook_realloc(void *old, size_t size);
void *hook_reallocarray(void *old, size_t n, size_t size);
void *hook_realloc_forget(void *old, size_t size);
/* (counted in, collection on) @p leaves the table and the filter */
void hook_forget(void *p);
void *hook_reallocarray_forget(void *old, size_t n, size_t size);
void *hook_memalign(size_t align, size_t size);
int hook_posix_memalign(void **out, size_t align, size_t size);
void *hook_aligned_alloc(size_t align, size_t size);
void *hook_valloc(size_t size);
void *hook_pvalloc(size_t size);
size_t hook_malloc_usable_size(void *p);
int hook_dlclose(void *handle);
void hook_exit(int status);
void *hook_cxx_malloc(size_t size);
void *hook_cxx_memalign(size_t align, size_t size);
int hook_cxx_posix_memalign(void **out, size_t align, size_t size);
void *hook_cxx_aligned_alloc(size_t align, size_t size);
#endif

#endif
