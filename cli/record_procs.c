/* leaksnap record: the processes of one run, found in /proc by the mark
 * record puts in their environment, and signalled (record.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record.h"

/* An environment larger than this is not searched (the kernel allows a
 * quarter of the stack limit for arguments and environment together). */
#define ENVIRON_MAX (8u << 20)

/* Read all of @name in the directory @dir into a new buffer, NULL when it
 * holds more than @max bytes.  NUL-terminated; *len excludes the NUL. */
static char *read_at(int dir, const char *name, size_t max, size_t *len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max)
				break;
			size_t ncap = cap ? cap * 2 : 4096;
			char *b = realloc(buf, ncap);
			if (b == NULL)
				break;
			buf = b;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			close(fd);
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	close(fd);
	return NULL;
}

/* Whether the process catches @sig: a handler is installed (SigCgt in
 * /proc/PID/status, a mask whose bit N-1 is signal N). */
static bool catches(int dir, int sig)
{
	size_t len;
	char *st = read_at(dir, "status", 1u << 20, &len);
	if (st == NULL)
		return false;
	bool yes = false;
	const char *line = strstr(st, "\nSigCgt:");
	if (line && sig >= 1 && sig <= 64) {
		char *end;
		unsigned long long mask = strtoull(line + 8, &end, 16);
		yes = end != line + 8 && (mask >> (sig - 1)) & 1;
	}
	free(st);
	return yes;
}

/* Whether the process's environment (as it was given at its exec) marks
 * it as one of @run_id's. */
static bool carries(int dir, const char *run_id)
{
	size_t len, klen = strlen(RECORD_RUN_ENV "="), idlen = strlen(run_id);
	char *env = read_at(dir, "environ", ENVIRON_MAX, &len);
	if (env == NULL)
		return false;
	bool yes = false;
	for (const char *e = env; e < env + len && !yes; e += strlen(e) + 1) {
		if (strncmp(e, RECORD_RUN_ENV "=", klen) != 0)
			continue;
		for (const char *id = e + klen; *id;) {
			size_t n = strcspn(id, ":");
			if (n == idlen && memcmp(id, run_id, n) == 0)
				yes = true;
			id += n + (id[n] == ':');
		}
	}
	free(env);
	return yes;
}

/* A pidfd for @pid, or -1 (no pidfds here: @pid is used as it is). */
static int pid_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int send_signal(pid_t pid, int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#endif
	(void)pidfd;
	return kill(pid, sig);
}

size_t record_procs_signal(const char *run_id, pid_t child, int sig, unsigned times)
{
	DIR *d = opendir("/proc");
	if (d == NULL)
		return 0;
	size_t reached = 0;
	pid_t self = getpid();
	uid_t euid = geteuid();
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		/* Another user's process cannot be signalled: not read either
		 * (an undumpable one's directory is root's: record's own child
		 * may be one) */
		struct stat st;
		if (pid != child && (fstatat(dirfd(d), de->d_name, &st, 0) != 0 ||
				     (euid != 0 && st.st_uid != euid)))
			continue;
		/* The pidfd first: the checks below then read the process it
		 * names, or one that took the pid after it ended, which the
		 * pidfd's signal does not reach. */
		int pidfd = pid_open((pid_t)pid);
		if (pidfd < 0 && errno != ENOSYS)
			continue; /* gone */
		int dir = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* (record's own child needs no mark: one that made itself
		 * undumpable has an environment only root may read) */
		if (dir >= 0 && catches(dir, sig) && (pid == child || carries(dir, run_id))) {
			bool ok = false;
			for (unsigned i = 0; i < times; i++)
				ok |= send_signal((pid_t)pid, pidfd, sig) == 0;
			reached += ok;
		}
		if (dir >= 0)
			close(dir);
		if (pidfd >= 0)
			close(pidfd);
	}
	closedir(d);
	return reached;
}
