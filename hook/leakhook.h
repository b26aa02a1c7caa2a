/* leaksnap: the API of the malloc hooks libleakhook.so and
 * libleakhook-inapp.so.
 *
 * libleakhook.so is loaded with LD_PRELOAD (or `leaksnap record -- CMD`), so
 * a program normally does not link against it.  To call these functions
 * only when the hook is present, look them up at run time:
 *
 *     int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
 *     if (dump)
 *             dump(NULL);
 *
 * libleakhook-inapp.so (docs/inapp.md) interposes nothing: an app links it
 * or loads it, and calls leaksnap_start(), which patches the GOT slots
 * through which the chosen libraries reach the allocator. */
#ifndef LEAKSNAP_LEAKHOOK_H
#define LEAKSNAP_LEAKHOOK_H

#include <stddef.h>
#include <stdint.h>

/* The hook's runtime contract ------------------------------------------------
 * What a program, `leaksnap record`, `leaksnap adb` and the tests share with
 * the hook: its signals, the environment it reads, the length limit of the
 * output prefix and the names of the files it writes (docs/hook.md). */

/* Signals, as offsets below SIGRTMAX (a run-time value with glibc: the
 * macros below need <signal.h>, and are numbers like SIGRTMAX itself). */
#define LEAKSNAP_HOOK_SIG_DUMP_OFFSET 17   /* write a dump now */
#define LEAKSNAP_HOOK_SIG_STOP_OFFSET 18   /* the reachability pause (taken) */
#define LEAKSNAP_HOOK_SIG_TOGGLE_OFFSET 19 /* capture off and on */
#define LEAKSNAP_HOOK_SIG_DUMP (SIGRTMAX - LEAKSNAP_HOOK_SIG_DUMP_OFFSET)
#define LEAKSNAP_HOOK_SIG_STOP (SIGRTMAX - LEAKSNAP_HOOK_SIG_STOP_OFFSET)
#define LEAKSNAP_HOOK_SIG_TOGGLE (SIGRTMAX - LEAKSNAP_HOOK_SIG_TOGGLE_OFFSET)
/* SIGRTMAX on Android (bionic, every architecture): the numbers a host
 * sends to a device's process, 47 to dump, 45 to toggle (47 is also the
 * number malloc_debug's dump listens to). */
#define LEAKSNAP_HOOK_ANDROID_SIGRTMAX 64
#define LEAKSNAP_HOOK_ANDROID_SIG_DUMP (LEAKSNAP_HOOK_ANDROID_SIGRTMAX - LEAKSNAP_HOOK_SIG_DUMP_OFFSET)
#define LEAKSNAP_HOOK_ANDROID_SIG_TOGGLE \
	(LEAKSNAP_HOOK_ANDROID_SIGRTMAX - LEAKSNAP_HOOK_SIG_TOGGLE_OFFSET)

/* The environment the hook reads when it starts.  LEAKSNAP_ONLY,
 * GLOB[:GLOB...]: only a process whose executable's file name (the last
 * part of /proc/self/exe) matches one records; the others run with the
 * hook inert (no dumps, no signal handlers) and pass it on to children. */
#define LEAKSNAP_HOOK_ENV_ONLY "LEAKSNAP_ONLY"
#define LEAKSNAP_HOOK_ENV_OUT "LEAKSNAP_OUT"                       /* dump prefix */
#define LEAKSNAP_HOOK_ENV_FRAMES "LEAKSNAP_FRAMES"                 /* 1..256, 16 */
#define LEAKSNAP_HOOK_ENV_UNWIND "LEAKSNAP_UNWIND"                 /* auto, fp, dwarf */
#define LEAKSNAP_HOOK_ENV_INTERVAL "LEAKSNAP_INTERVAL"             /* seconds, 0.001..1e6 */
#define LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT "LEAKSNAP_DUMP_ON_EXIT"     /* 0, 1 (default) or all */
#define LEAKSNAP_HOOK_ENV_START_DISABLED "LEAKSNAP_START_DISABLED" /* 0 (default) or 1 */
#define LEAKSNAP_HOOK_ENV_REACHABILITY "LEAKSNAP_REACHABILITY"     /* 0 (default) or 1 */
#define LEAKSNAP_HOOK_ENV_KEEP_UNLOADED "LEAKSNAP_KEEP_UNLOADED"   /* 0 or 1 (default) */
#define LEAKSNAP_HOOK_ENV_DUMP_ON_CRASH "LEAKSNAP_DUMP_ON_CRASH"   /* 0 or 1 (default) */
/* 1 (default): a forked child that needs its dump thread from the start
 * starts it at fork; 0: when a dump is asked of it, at its next allocation
 * (for qemu-user, whose forked children of a threaded process crash when
 * they start a thread). */
#define LEAKSNAP_HOOK_ENV_FORK_THREAD "LEAKSNAP_FORK_THREAD"
/* 0 (default): the dump thread waits for the program's second thread
 * unless the interval, reachability or the control socket needs it at
 * once, and a process of one thread writes its dumps on that thread; 1:
 * the dump thread from the start, in every process (docs/hook.md, "The
 * hook's thread"). */
#define LEAKSNAP_HOOK_ENV_DUMP_THREAD "LEAKSNAP_DUMP_THREAD"
/* Sampled collection: record a block under BYTES when a sample point of a
 * per-thread walk of mean spacing BYTES falls in it, and every block of
 * BYTES or more (0 or unset: every block).  The seed makes the draws
 * repeatable (0 or unset: a seed of the moment). */
#define LEAKSNAP_HOOK_ENV_SAMPLE "LEAKSNAP_SAMPLE"                 /* bytes, 0..2^30 */
#define LEAKSNAP_HOOK_ENV_SAMPLE_SEED "LEAKSNAP_SAMPLE_SEED"       /* 0..2^64-1 */
#define LEAKSNAP_HOOK_SAMPLE_MAX 1073741824ULL
/* The control socket (docs/control.md): unset, empty or 0: none; 1: the
 * abstract socket LEAKSNAP_HOOK_CONTROL_PREFIX "<pid>"; anything else: a
 * path socket there (a forked child's: that path + ".<pid>"). */
#define LEAKSNAP_HOOK_ENV_CONTROL "LEAKSNAP_CONTROL"
#define LEAKSNAP_HOOK_CONTROL_PREFIX "leaksnap."
/* libleakhook-inapp.so only: set (to a POSIX extended regular expression
 * on library paths, "" = every library), it starts collection when loaded,
 * with the settings above, as leaksnap_start() with those options. */
#define LEAKSNAP_HOOK_ENV_LIBS "LEAKSNAP_LIBS"

/* Set by leaksnap record (docs/hook.md, "Processes that change user"):
 * LEAKSNAP_RUN, RUN[:RUN...]: a process that cannot write a dump says so,
 * besides on stderr, in a datagram to the abstract Unix socket
 * LEAKSNAP_HOOK_NOTE_PREFIX "<last RUN>": "cannot-write PID UID ERRNO
 * PATH".  LEAKSNAP_DROP, a directory: where a dump goes when the process
 * may not create it under LEAKSNAP_OUT (EACCES, EPERM), under the same
 * file name; record moves it beside the others. */
#define LEAKSNAP_HOOK_ENV_RUN "LEAKSNAP_RUN"
#define LEAKSNAP_HOOK_NOTE_PREFIX "leaksnap-run."
#define LEAKSNAP_HOOK_NOTE_WRITE "cannot-write"
#define LEAKSNAP_HOOK_ENV_DROP "LEAKSNAP_DROP"

/* The file names of the two builds of the hook. */
#define LEAKSNAP_HOOK_LIB "libleakhook.so"
#define LEAKSNAP_HOOK_INAPP_LIB "libleakhook-inapp.so"

/* The output prefix: LEAKSNAP_OUT, else the default.  The hook keeps
 * LEAKSNAP_HOOK_OUT_RESERVE bytes of a PATH_MAX (4096 on Linux and
 * Android) path for ".PID.N.dump" and a temporary suffix: a longer
 * LEAKSNAP_OUT (more than LEAKSNAP_HOOK_OUT_MAX bytes, made absolute)
 * makes it use its default. */
#define LEAKSNAP_HOOK_PATH_MAX 4096
#define LEAKSNAP_HOOK_OUT_RESERVE 64
#define LEAKSNAP_HOOK_OUT_MAX (LEAKSNAP_HOOK_PATH_MAX - LEAKSNAP_HOOK_OUT_RESERVE - 1)
#define LEAKSNAP_HOOK_DEFAULT_OUT "/tmp/leaksnap"
#define LEAKSNAP_HOOK_ANDROID_DEFAULT_OUT "/data/local/tmp/leaksnap"
/* The in-app build on Android, in an app's process (its command line names
 * a package, "com.acme.app" or "com.acme.app:service"): the app's own data
 * directory, which it can write (/data/local/tmp it cannot).  The format
 * takes the package. */
#define LEAKSNAP_HOOK_ANDROID_INAPP_APP_OUT "/data/data/%s/leaksnap"

/* The files: PREFIX.PID.NNNN.dump (N = 1, 2, ... zero-padded to 4 digits,
 * wider past 9999, so that a shell glob lists them in capture order: 0001,
 * 0002, ..., 9999, 10000), PREFIX.PID.exit.dump, PREFIX.PID.crash.dump (the
 * program died of a fatal signal), and beside each STEM.dump its maps,
 * STEM.maps.  Hooks before the padding wrote PREFIX.PID.N.dump;
 * readers accept both.  The formats take (const char *prefix, int pid,
 * unsigned n) and (const char *prefix, int pid). */
#define LEAKSNAP_HOOK_DUMP_SUFFIX ".dump"
#define LEAKSNAP_HOOK_MAPS_SUFFIX ".maps"
#define LEAKSNAP_HOOK_EXIT_TAG "exit"
#define LEAKSNAP_HOOK_CRASH_TAG "crash"
#define LEAKSNAP_HOOK_DUMP_NAME "%s.%d.%04u" LEAKSNAP_HOOK_DUMP_SUFFIX
#define LEAKSNAP_HOOK_EXIT_DUMP_NAME "%s.%d." LEAKSNAP_HOOK_EXIT_TAG LEAKSNAP_HOOK_DUMP_SUFFIX
#define LEAKSNAP_HOOK_CRASH_DUMP_NAME "%s.%d." LEAKSNAP_HOOK_CRASH_TAG LEAKSNAP_HOOK_DUMP_SUFFIX

#ifdef __cplusplus
extern "C" {
#endif

/* Write a LEAKSNAP v1 dump of the live allocations now, in the calling
 * thread.  @path = NULL writes the next numbered dump,
 * LEAKSNAP_OUT.<pid>.<nnnn>.dump; otherwise exactly @path.  The maps are
 * written beside it (@path with ".dump" replaced by ".maps", else
 * @path + ".maps").  No existing file is ever replaced.
 * Returns 0, or -1 with errno set: EEXIST (a file of that name exists),
 * ENOSYS (not collecting: the in-app build before leaksnap_start() or
 * after leaksnap_stop(), or a process LEAKSNAP_ONLY left inert), EDEADLK
 * (called from a signal handler that interrupted this thread inside the
 * hook), or what writing the files failed with. */
int leaksnap_dump(const char *path);

/* bionic's API, with its signatures and semantics: *info receives a buffer
 * of *overall_size bytes holding *overall_size / *info_size records of
 * {size_t size (bit 31 = zygote child), size_t allocations,
 *  uintptr_t pc[*backtrace_size]}; *total_memory is the live bytes.
 * Release it with free_malloc_leak_info() (free() also works).  With no
 * live allocations, *info is NULL and *overall_size 0. */
void get_malloc_leak_info(uint8_t **info, size_t *overall_size, size_t *info_size,
			  size_t *total_memory, size_t *backtrace_size);
void free_malloc_leak_info(uint8_t *info);

/* In-app collection (libleakhook-inapp.so only) ------------------------------ */

/* leaksnap_start()'s options.  Set @size to sizeof(struct leaksnap_options):
 * the structure may grow at its end, and the hook reads only the fields
 * that @size covers (the others take their defaults).  Zero (NULL) in a
 * field means its default: the environment's setting (LEAKSNAP_FRAMES,
 * LEAKSNAP_UNWIND, LEAKSNAP_OUT, LEAKSNAP_INTERVAL, LEAKSNAP_REACHABILITY,
 * LEAKSNAP_DUMP_ON_EXIT, LEAKSNAP_CONTROL) when there is one, else the
 * built-in default.  On Android, an app's default prefix is
 * LEAKSNAP_HOOK_ANDROID_INAPP_APP_OUT (its data directory), where
 * `leaksnap adb snapshot` looks. */
struct leaksnap_options {
	size_t size;
	/* The libraries to watch: a POSIX extended regular expression,
	 * searched for in each loaded library's path (as /proc/self/maps
	 * names it; the main executable's path too).  NULL or "": every
	 * loaded library except the C library, the dynamic loader and the
	 * hook itself (those three are never watched). */
	const char *libs;
	unsigned frames;      /* 1..256, default 16 */
	const char *unwind;   /* "auto" (default), "fp", "dwarf" */
	const char *out;      /* the dump prefix (as LEAKSNAP_OUT), default as there */
	double interval;      /* seconds between dumps, 0.001..1e6; 0 = none */
	unsigned flags;       /* LEAKSNAP_START_* */
	/* The control socket, as LEAKSNAP_CONTROL: NULL the environment's,
	 * "0" none, "1" the abstract "leaksnap.<pid>", else a path socket
	 * (a path longer than a socket address holds: EINVAL). */
	const char *control;
	/* Sampled collection, as LEAKSNAP_SAMPLE: the mean spacing of sample
	 * points in bytes, 1..LEAKSNAP_HOOK_SAMPLE_MAX; 0: the environment's
	 * (else every block). */
	uint64_t sample;
};
#define LEAKSNAP_START_REACHABILITY 0x1u /* every dump classifies the blocks */
#define LEAKSNAP_START_DUMP_ON_STOP 0x2u /* leaksnap_stop() writes a last dump */
#define LEAKSNAP_START_NO_EXIT_DUMP 0x4u /* no dump at exit (default: one) */

/* Start collecting: patch the GOT slots of the watched libraries (and of
 * libraries loaded later that match), start the dump signal and interval.
 * @opts = NULL: the defaults.  Only allocations made after this call are
 * known.  Returns 0, or -1 with errno: EALREADY (already started: nothing
 * changes), EINVAL (bad options: nothing changes), EDEADLK (called from a
 * signal handler that interrupted this thread inside the hook), ENOMEM, ENOSYS (a
 * setuid program, or libleakhook.so, which is always on). */
int leaksnap_start(const struct leaksnap_options *opts);

/* Stop collecting: put back every GOT slot leaksnap_start() changed,
 * stop the dump signal and interval, and drop the tables (after a last
 * dump with LEAKSNAP_START_DUMP_ON_STOP).  A slot that something else has
 * changed since is left as it is.  Returns how many slots were left so
 * (0: every one was put back), or -1 with errno EINVAL (not started) or
 * EDEADLK (as for leaksnap_start). */
int leaksnap_stop(void);

#ifdef __cplusplus
}
#endif

#endif
