/* leaksnap hook: writing dumps, and what triggers them.
 *
 * A dump is a LEAKSNAP v1 file (docs/format.md): the 64-byte header, the
 * record area exactly as get_malloc_leak_info() returns it, /proc/self/maps
 * verbatim, then key=value metadata.  The same maps text is written beside
 * it as <stem>.maps.  Both are written under temporary names and published
 * without ever replacing an existing file.
 *
 * Triggers: the exit destructor, leaksnap_dump(), SIGRTMAX-17 and the
 * LEAKSNAP_INTERVAL timer.  The signal handler only posts a semaphore; the
 * dump thread (the hook's own, never tracked) does the work, one dump per
 * signal, while the program keeps running.  A fatal signal's handler
 * (crash.c) is the one caller in a signal handler: what a dump calls is
 * system calls, snprintf of numbers and strings, dl_iterate_phdr and
 * locks of the hook's that crash.c makes sure the thread does not hold; it
 * never calls malloc (whose locks a crash may have left held). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <leaksnap/snapshot.h>

#include "kit_format.h"
#include "dump.h"
#include "unloaded.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

static pthread_mutex_t dump_mutex = PTHREAD_MUTEX_INITIALIZER;
static sem_t dump_sem;
static unsigned dump_seq;        /* last number used; under dump_mutex */
static bool dump_exiting;        /* under dump_mutex */
static atomic_int dump_owner;    /* the thread holding dump_mutex */
static atomic_bool crash_dumped; /* a crash dump was written: no exit dump */
static int crash_signal;         /* under dump_mutex: the crash dump's signal */
atomic_bool dump_thread_missing; /* start a hook thread at the next chance */
static atomic_bool dump_wanted;    /* (the dump thread is one of them) */
static atomic_bool thread_absent;  /* no dump thread in this process yet */
static atomic_bool report_write, report_thread, report_signal;
atomic_int dump_thread_tid; /* the dump thread's, 0 none: never stopped */
atomic_ulong hook_dumps_written; /* files published and dumps sent whole */
atomic_uintptr_t dump_thread_stack; /* an address on its stack: never a root */
/* 1 from before the dump thread is made until it has published its tid
 * and stack: a dump meanwhile waits (dump_thread_wait_started), or it
 * would take the new thread for one of the program's. */
static atomic_uint dump_thread_starting;

/* Files ---------------------------------------------------------------------------- */

/* snprintf into a file-name buffer; -1 (ENAMETOOLONG) if it does not fit. */
static int name_printf(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int name_printf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int write_all(int fd, const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++) {
		const char *p = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			p += w;
			left -= (size_t)w;
		}
	}
	return 0;
}

/* Write @iov to a new temporary file beside @final; its name goes to @tmp. */
static int write_temp(const char *final, const struct iovec *iov, int n, char *tmp, size_t tmp_size)
{
	static atomic_uint tmp_seq;
	for (int attempt = 0; attempt < 100; attempt++) {
		if (name_printf(tmp, tmp_size, "%s.tmp%d.%u", final, (int)getpid(),
				atomic_fetch_add(&tmp_seq, 1)))
			return -1;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -1;
		if (write_all(fd, iov, n) != 0 || close(fd) != 0) {
			int e = errno;
			unlink(tmp);
			errno = e;
			return -1;
		}
		return 0;
	}
	errno = EEXIST;
	return -1;
}

/* Give @tmp the name @final unless something already has it. */
static int publish(const char *tmp, const char *final)
{
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -1;
#endif
	if (link(tmp, final) != 0)
		return -1;
	unlink(tmp);
	return 0;
}

/* A written file waiting for its name: an unnamed O_TMPFILE, so that
 * nothing is left behind if the process dies (exec, _exit, a signal)
 * before it is published; or, where the filesystem has no O_TMPFILE, a
 * temporary name beside the final one. */
struct pending {
	int fd;                  /* O_TMPFILE descriptor, or -1 */
	char tmp[PATH_MAX + 64]; /* temporary name when fd < 0 */
};

static int pending_write(const char *final, const struct iovec *iov, int n, struct pending *pf)
{
	pf->fd = -1;
	pf->tmp[0] = '\0';
#ifdef O_TMPFILE
	char dir[PATH_MAX];
	const char *slash = strrchr(final, '/');
	if (name_printf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - final) : 1,
			slash ? final : "."))
		return -1;
	if (!dir[0])
		strcpy(dir, "/");
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write_all(fd, iov, n) != 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		pf->fd = fd;
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -1;
#endif
	return write_temp(final, iov, n, pf->tmp, sizeof(pf->tmp));
}

/* Give the file the name @final unless something already has it. */
static int pending_publish(struct pending *pf, const char *final)
{
	if (pf->fd < 0)
		return publish(pf->tmp, final);
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pf->fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, final, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	/* once the main thread is gone, /proc/self is that zombie's: its fd
	 * directory is empty */
	snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", pf->fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, final, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno == EEXIST)
		return -1;
	/* no /proc: AT_EMPTY_PATH works with CAP_DAC_READ_SEARCH */
	return linkat(pf->fd, "", AT_FDCWD, final, AT_EMPTY_PATH);
}

/* Take back a name just given by pending_publish (it is ours). */
static void pending_unpublish(struct pending *pf, const char *final)
{
	if (pf->fd >= 0 || publish(final, pf->tmp) != 0)
		unlink(final);
}

/* Done with @pf: published (@keep) or not. */
static void pending_close(struct pending *pf, bool keep)
{
	if (pf->fd >= 0)
		close(pf->fd);
	else if (!keep && pf->tmp[0])
		unlink(pf->tmp);
	pf->fd = -1;
	pf->tmp[0] = '\0';
}

/* Publish the dump, then its maps, under the given names.  Returns 0, or
 * -1 with errno (EEXIST when a name is taken; then nothing of ours is left
 * under a final name and both files can be published again). */
static int publish_pair(struct pending *d, struct pending *m, const char *dump, const char *maps)
{
	if (pending_publish(d, dump) != 0)
		return -1;
	if (pending_publish(m, maps) != 0) {
		int e = errno;
		pending_unpublish(d, dump);
		errno = e;
		return -1;
	}
	return 0;
}

/* @path with ".dump" replaced by ".maps", or @path + ".maps". */
static int maps_name_for(const char *dump, char *maps, size_t size)
{
	size_t n = strlen(dump);
	size_t sl = strlen(LEAKSNAP_HOOK_DUMP_SUFFIX);
	if (n >= sl && !strcmp(dump + n - sl, LEAKSNAP_HOOK_DUMP_SUFFIX))
		return name_printf(maps, size, "%.*s" LEAKSNAP_HOOK_MAPS_SUFFIX, (int)(n - sl), dump);
	return name_printf(maps, size, "%s" LEAKSNAP_HOOK_MAPS_SUFFIX, dump);
}

/* Once this process has been refused a dump under LEAKSNAP_OUT (a server's
 * worker that gave up root) and record made a drop box: the drop box's
 * prefix, which its numbered and exit dumps use from then on (under
 * dump_mutex; a forked child inherits it, and its user). */
static char drop_prefix[PATH_MAX];
static bool to_drop;

/* The name of dump @n (0 = the exit or the crash dump, as @trigger says). */
static int numbered_name(char *out, size_t size, unsigned n, enum hook_trigger trigger)
{
	const char *prefix = to_drop ? drop_prefix : hook_cfg.out;
	if (!n)
		return name_printf(out, size,
				   trigger == HOOK_TRIGGER_CRASH ? LEAKSNAP_HOOK_CRASH_DUMP_NAME
								 : LEAKSNAP_HOOK_EXIT_DUMP_NAME,
				   prefix, (int)getpid());
	return name_printf(out, size, LEAKSNAP_HOOK_DUMP_NAME, prefix, (int)getpid(), n);
}

void dump_image_free(struct dump_image *img)
{
	buf_free(&img->maps);
	buf_free(&img->meta);
	table_snapshot_free(&img->snap);
	reach_result_free(&img->reach);
}

/* The snapshot and the parts of the dump file (under dump_mutex).  Returns
 * 0, or -1 with errno and nothing left to free. */
/* The metadata line of a dump whose reachability was refused because the
 * collection is sampled (docs/reachability.md). */
#define REACH_OFF_SAMPLED "reachability=off: sampled collection (LEAKSNAP_SAMPLE)\n"

static int image_build_locked(struct dump_image *img, enum hook_trigger trigger, bool reach_on)
{
	memset(img, 0, sizeof(*img));
	if (reach_on && hook_cfg.sample) {
		/* (a sampled block held only through unsampled blocks would be
		 * counted unreachable: no definite leaks from a sample) */
		reach_on = false;
		hook_cfg.reach_refused_sampled = true;
	}
	struct table_snapshot *snap = &img->snap;
	struct reach_result *reach = &img->reach;
	if ((reach_on ? reach_snapshot(snap, reach) : table_snapshot(snap)) != 0) {
		errno = ENOMEM;
		return -1;
	}
	int err = ENOMEM;
	if (!read_proc("maps", &img->maps)) {
		err = errno ? errno : EIO;
		goto fail;
	}
	dump_build_meta(&img->meta, &img->maps, trigger, crash_signal, snap->clamped);
	dump_fp_meta(&img->meta, snap);
	if (reach_on)
		buf_add(&img->meta, reach->meta, strlen(reach->meta));
	else if (hook_cfg.reach_refused_sampled)
		buf_add(&img->meta, REACH_OFF_SAMPLED, strlen(REACH_OFF_SAMPLED));
	if (img->maps.failed || img->meta.failed || img->meta.len > UINT32_MAX)
		goto fail;

	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct leaksnap_snapshot_header h = {
		.version = LEAKSNAP_VERSION,
		.pointer_size = sizeof(uintptr_t),
		.flags = (uint8_t)((__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN : 0) |
				   (reach->ok ? LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY : 0)),
		.backtrace_size = hook_cfg.frames,
		.pid = (uint32_t)getpid(),
		.meta_size = (uint32_t)img->meta.len,
		.time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
		.total_memory = snap->total_memory,
		.info_size = snap->info_size,
		.records_size = snap->records_size,
		.maps_size = img->maps.len,
	};
	leaksnap_snapshot_header_encode(&h, img->header);
	struct iovec parts[DUMP_IMAGE_PARTS] = {
		{img->header, sizeof(img->header)},
		{snap->records, snap->records_size},
		{img->maps.p, img->maps.len},
		{img->meta.p, img->meta.len},
		/* docs/format.md, reachability section: one u32 per record,
		 * in the records' byte order */
		{reach->counts, reach->ok ? reach->counts_size : 0},
	};
	img->size = 0;
	for (int i = 0; i < DUMP_IMAGE_PARTS; i++) {
		img->iov[i] = parts[i];
		img->size += parts[i].iov_len;
	}
	return 0;
fail:
	dump_image_free(img);
	errno = err;
	return -1;
}

static int write_locked(const char *path, enum hook_trigger trigger)
{
	struct dump_image img;
	char dump_name[PATH_MAX] = "", maps_name[PATH_MAX];
	int rc = -1, err;

	bool fixed = path || trigger == HOOK_TRIGGER_EXIT || trigger == HOOK_TRIGGER_CRASH;
	/* (no reachability from a fatal signal's handler: it would stop the
	 * other threads with a signal and wait for them) */
	bool reach_on = hook_cfg.reachability && trigger != HOOK_TRIGGER_CRASH;
	if (image_build_locked(&img, trigger, reach_on) != 0) {
		err = errno;
		goto out;
	}
	struct iovec maps_iov[] = {img.iov[2]};

	/* The first candidate name decides the directory of the temp files. */
	unsigned n = fixed ? 0 : dump_seq + 1;
	if (path ? name_printf(dump_name, sizeof(dump_name), "%s", path)
		 : numbered_name(dump_name, sizeof(dump_name), n, trigger)) {
		err = errno;
		goto out_img;
	}
	struct pending pd, pm;
	if (pending_write(dump_name, img.iov, DUMP_IMAGE_PARTS, &pd) != 0) {
		err = errno;
		if (path || to_drop || (err != EACCES && err != EPERM) ||
		    !hook_drop_prefix(drop_prefix, sizeof(drop_prefix)))
			goto out_img;
		to_drop = true;
		if (numbered_name(dump_name, sizeof(dump_name), n, trigger) != 0 ||
		    pending_write(dump_name, img.iov, DUMP_IMAGE_PARTS, &pd) != 0) {
			err = errno;
			to_drop = false;
			goto out_img;
		}
	}
	if (pending_write(dump_name, maps_iov, 1, &pm) != 0) {
		err = errno;
		pending_close(&pd, false);
		goto out_img;
	}
	for (unsigned tries = 0;; tries++) {
		if (maps_name_for(dump_name, maps_name, sizeof(maps_name)) == 0 &&
		    publish_pair(&pd, &pm, dump_name, maps_name) == 0) {
			rc = 0;
			if (!fixed)
				dump_seq = n;
			atomic_fetch_add(&hook_dumps_written, 1);
			break;
		}
		err = errno;
		/* A numbered name already taken (a pid reused since an old
		 * run): take the next number rather than lose the dump. */
		if (err != EEXIST || fixed || tries >= 1000)
			break;
		if (numbered_name(dump_name, sizeof(dump_name), ++n, trigger) != 0) {
			err = errno;
			break;
		}
	}
	pending_close(&pd, rc == 0);
	pending_close(&pm, rc == 0);
out_img:
	dump_image_free(&img);
out:
	if (rc != 0) {
		if (trigger != HOOK_TRIGGER_API) {
			hook_report(&report_write, "cannot write %s: %s",
				    dump_name[0] ? dump_name : hook_cfg.out, strerror(err));
			hook_note_write_failure(dump_name[0] ? dump_name : hook_cfg.out, err);
		}
		errno = err;
	}
	return rc;
}

/* dump_mutex, and the thread's mark as its owner (hook_busy raised). */
static void dump_lock(void)
{
	hook_busy++;
	pthread_mutex_lock(&dump_mutex);
	atomic_store(&dump_owner, (int)syscall(SYS_gettid));
}

static void dump_unlock(void)
{
	int e = errno;
	atomic_store(&dump_owner, 0);
	pthread_mutex_unlock(&dump_mutex);
	hook_busy--;
	errno = e;
}

int dump_write(const char *path, enum hook_trigger trigger)
{
	if (table_busy_here()) {
		/* Called from a signal handler that interrupted this thread
		 * inside the tables: the dump would wait for a lock we hold. */
		errno = EDEADLK;
		return -1;
	}
	dump_lock();
	int rc;
	if (dump_exiting && trigger != HOOK_TRIGGER_EXIT) {
		errno = ECANCELED;
		rc = -1;
	} else {
		rc = write_locked(path, trigger);
	}
	dump_unlock();
	return rc;
}

int dump_take(struct dump_image *img, enum hook_trigger trigger, bool reach)
{
	memset(img, 0, sizeof(*img));
	if (table_busy_here()) {
		errno = EDEADLK;
		return -1;
	}
	dump_lock();
	int rc;
	if (dump_exiting) {
		errno = ECANCELED;
		rc = -1;
	} else {
		rc = image_build_locked(img, trigger, reach || hook_cfg.reachability);
	}
	dump_unlock();
	return rc;
}

bool dump_busy_here(void)
{
	int owner = atomic_load(&dump_owner);
	return owner && owner == (int)syscall(SYS_gettid);
}

/* How long a crash dump waits for a dump another thread is writing. */
#define CRASH_WAIT_S 10

int dump_write_crash(int sig)
{
	hook_busy++;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CRASH_WAIT_S;
	int rc = pthread_mutex_timedlock(&dump_mutex, &until);
	if (rc != 0) {
		hook_busy--;
		errno = rc;
		return -1;
	}
	atomic_store(&dump_owner, (int)syscall(SYS_gettid));
	if (dump_exiting) {
		errno = ECANCELED;
		rc = -1;
	} else {
		crash_signal = sig;
		rc = write_locked(NULL, HOOK_TRIGGER_CRASH);
		if (rc == 0)
			atomic_store(&crash_dumped, true);
	}
	int e = errno;
	atomic_store(&dump_owner, 0);
	pthread_mutex_unlock(&dump_mutex);
	hook_busy--;
	errno = e;
	return rc;
}

/* The dump thread and the signals ---------------------------------------------- */

static int sig_dump(void)
{
	return LEAKSNAP_HOOK_SIG_DUMP;
}

static int sig_toggle(void)
{
	return LEAKSNAP_HOOK_SIG_TOGGLE;
}

static void on_signal(int sig)
{
	int saved = errno;
	if (sig == sig_dump()) {
		sem_post(&dump_sem);
		/* No dump thread (LEAKSNAP_FORK_THREAD=0, ended for
		 * unshare(CLONE_NEWUSER), or it could not be made): the next
		 * allocation starts one. */
		if (atomic_load(&thread_absent)) {
			atomic_store(&dump_wanted, true);
			atomic_store(&dump_thread_missing, true);
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

/* exit() has begun: the dump thread takes no more requests. */
static atomic_bool exit_begun;
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
			atomic_store(&dump_wanted, true);
			atomic_store(&dump_thread_missing, true);
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
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* the fields after the command, whose ")" may be in it: the last one */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return false;
	*state = p[2];
	p += 2;
	for (int field = 3; p && field < 9; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return false;
	*flags = strtoul(p + 1, NULL, 10);
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
		atomic_store(&dump_thread_starting, 0);
		hook_report(&report_thread, "cannot start the dump thread: %s; no dumps on signal",
			    strerror(rc));
	} else {
		if (wait)
			dump_thread_wait_started();
	}
	hook_busy--;
}

void dump_ensure_thread(void)
{
	ensure_thread(true);
}

void dump_child_start(void)
{
	if (!hook_cfg.fork_thread) {
		/* (as before LEAKSNAP_FORK_THREAD: a thread once a dump is
		 * asked for, or with an interval, from the next allocation) */
		if (hook_cfg.interval_ns) {
			atomic_store(&dump_wanted, true);
			atomic_store(&dump_thread_missing, true);
		}
		return;
	}
	/* (not waiting for the thread to run: the fork returns at once, and
	 * a dump, or a reachability pause, waits for it meanwhile) */
	atomic_store(&dump_wanted, true);
	atomic_store(&dump_thread_missing, true);
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
	if (tid) {
		/* back with the next tracked allocation, or a dump signal */
		atomic_store(&dump_wanted, true);
		atomic_store(&dump_thread_missing, true);
	}
}

/* The handlers install() replaced, for dump_stop().  Static memory, which
 * reachability scans as a root: every byte of each is defined
 * (hook_sigaction_now), none a leftover of the stack. */
static struct {
	int sig;
	bool ours;
	struct sigaction old;
} installed[2];

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
	atomic_store(&dump_wanted, true);
	atomic_store(&dump_thread_missing, true);
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
	pthread_mutex_lock(&dump_mutex);
	pthread_mutex_unlock(&dump_mutex);
	atomic_store(&dump_quit, false);
	atomic_store(&wake_only, 0);
	sem_destroy(&dump_sem);
}

void dump_after_fork_child(void)
{
	/* Only this thread exists now: the dump thread did not come along,
	 * and a dump in progress in the parent is not ours. */
	pthread_mutex_init(&dump_mutex, NULL);
	sem_init(&dump_sem, 0, 0);
	atomic_store(&dump_thread_tid, 0);
	atomic_store(&dump_thread_stack, 0);
	atomic_store(&dump_thread_starting, 0);
	dump_seq = 0;
	/* (stats' dumps_written: the dumps this process wrote) */
	atomic_store(&hook_dumps_written, 0);
	dump_exiting = false;
	atomic_store(&dump_owner, 0);
	atomic_store(&crash_dumped, false);
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
	if (atomic_load(&crash_dumped))
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
	pthread_mutex_lock(&dump_mutex);
	dump_exiting = true;
	pthread_mutex_unlock(&dump_mutex);
	/* (not a forked child's, unless asked: a server that forks a child
	 * per connection would write one per connection) */
	if (hook_cfg.dump_on_exit &&
	    (hook_cfg.dump_on_exit_forked || !atomic_load(&hook_zygote_child)))
		dump_write(NULL, HOOK_TRIGGER_EXIT);
	hook_busy--;
}
