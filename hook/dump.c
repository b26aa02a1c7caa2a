/* leaksnap hook: writing dumps.
 *
 * A dump is a LEAKSNAP v1 file (docs/format.md): the 64-byte header, the
 * record area exactly as get_malloc_leak_info() returns it, /proc/self/maps
 * verbatim, then key=value metadata.  The same maps text is written beside
 * it as <stem>.maps.  Both are written under temporary names and published
 * without ever replacing an existing file.
 *
 * What triggers them (the signals, the dump thread, the interval, exit) is
 * dump_thread.c's.  A dump may be written in a signal handler (a fatal
 * signal's, crash.c; the dump signal's in a process of one thread,
 * dump_thread.c): what a dump calls is system calls, snprintf of numbers
 * and strings, dl_iterate_phdr and locks of the hook's that the caller
 * makes sure the thread does not hold; it never calls malloc (whose locks
 * the interrupted code may hold). */
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
static unsigned dump_seq;        /* last number used; under dump_mutex */
static bool dump_exiting;        /* under dump_mutex */
static atomic_int dump_owner;    /* the thread holding dump_mutex */
static atomic_bool crash_dumped; /* a crash dump was written: no exit dump */
static int crash_signal;         /* under dump_mutex: the crash dump's signal */
static atomic_bool report_write;
atomic_ulong hook_dumps_written; /* files published and dumps sent whole */

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
	/* (the dump signal came meanwhile, and the thread it needs is missing) */
	if (HOOK_UNLIKELY(atomic_load(&dump_thread_missing)))
		dump_thread_late();
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

bool dump_lock_free(void)
{
	if (pthread_mutex_trylock(&dump_mutex) != 0)
		return false;
	pthread_mutex_unlock(&dump_mutex);
	return true;
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

/* For dump_thread.c ------------------------------------------------------------------ */

bool dump_crash_written(void)
{
	return atomic_load(&crash_dumped);
}

void dump_files_wait(void)
{
	pthread_mutex_lock(&dump_mutex);
	pthread_mutex_unlock(&dump_mutex);
}

void dump_files_end(void)
{
	pthread_mutex_lock(&dump_mutex);
	dump_exiting = true;
	pthread_mutex_unlock(&dump_mutex);
}

void dump_files_after_fork_child(void)
{
	/* a dump in progress in the parent is not ours */
	pthread_mutex_init(&dump_mutex, NULL);
	dump_seq = 0;
	/* (stats' dumps_written: the dumps this process wrote) */
	atomic_store(&hook_dumps_written, 0);
	dump_exiting = false;
	atomic_store(&dump_owner, 0);
	atomic_store(&crash_dumped, false);
}
