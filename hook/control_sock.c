/* leaksnap hook: the control socket's name, binding and unlinking
 * (control_sock.h, docs/control.md).
 *
 * The abstract name "leaksnap.<pid>" is bound and nothing else.  A path
 * socket is bound at PATH by the process that finds it free (or stale: a
 * socket nobody listens on), at PATH.<pid> by a forked child, and by an
 * exec'd image whose ancestor listens at PATH (it inherited the variable):
 * silently.  Anything else at the path (a regular file, a socket another
 * process listens on) is left as it is and said once.  A file is only ever
 * unlinked when it is still the one looked at (device and inode compared
 * just before), and a stale one only after two probes a moment apart (a
 * process between its bind() and listen() is refused once). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_sock.h"
#include "hook_internal.h"

#define CTL_BACKLOG 128
#define ANCESTORS_MAX 64

char ctl_sock_name[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

static bool path_bound;  /* this process bound a path socket */
static int bound_pid;
static char bound_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static dev_t bound_dev;
static ino_t bound_ino;

/* What is at a path socket's address. */
enum probe_result { P_STALE, P_LIVE, P_DENIED, P_OTHER, P_GONE };

/* One connect() to @a: refused (nobody listens), connected (and the
 * listener's pid), or why not. */
static enum probe_result probe_once(const struct sockaddr_un *a, pid_t *listener, int *err)
{
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (probe < 0) {
		*err = errno;
		return P_OTHER;
	}
	int c = connect(probe, (const struct sockaddr *)a, sizeof(*a));
	int e = errno;
	enum probe_result r;
	if (c == 0 || e == EAGAIN || e == EINPROGRESS) {
		/* (EAGAIN: its backlog is full -- it listens) */
		struct ucred cred;
		socklen_t len = sizeof(cred);
		*listener = 0;
		if (c == 0 && getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		    len == sizeof(cred))
			*listener = cred.pid;
		r = P_LIVE;
	} else if (e == ECONNREFUSED) {
		r = P_STALE;
	} else if (e == EACCES || e == EPERM) {
		r = P_DENIED;
	} else if (e == ENOENT) {
		r = P_GONE;
	} else {
		*err = e;
		r = P_OTHER;
	}
	close(probe);
	return r;
}

/* Whether the file at @path is a socket of device and inode @sb's. */
static bool same_file(const char *path, const struct stat *sb)
{
	struct stat now;
	return lstat(path, &now) == 0 && S_ISSOCK(now.st_mode) && now.st_dev == sb->st_dev &&
	       now.st_ino == sb->st_ino;
}

/* Probe the socket @sb at @a; a refusal is believed when it is refused
 * again 20 ms later and still the same file. */
static enum probe_result probe(const struct sockaddr_un *a, const struct stat *sb, pid_t *listener,
			       int *err)
{
	enum probe_result r = probe_once(a, listener, err);
	if (r != P_STALE)
		return r;
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
	r = probe_once(a, listener, err);
	if (r == P_STALE && !same_file(a->sun_path, sb))
		return P_GONE;
	return r;
}

/* The parent of @pid (0 when unknown), from /proc/PID/stat. */
static pid_t parent_of(pid_t pid)
{
	char path[32], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *close_paren = strrchr(buf, ')');
	int ppid = 0;
	char state;
	if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2)
		return 0;
	return (pid_t)ppid;
}

static bool is_ancestor(pid_t pid)
{
	if (pid <= 1)
		return false;
	pid_t p = getppid();
	for (int i = 0; i < ANCESTORS_MAX && p > 1; i++) {
		if (p == pid)
			return true;
		p = parent_of(p);
	}
	return false;
}

/* Fill @a with PATH's address (PATH.<pid> with @with_pid), and
 * ctl_sock_name; false when it is too long. */
static bool path_addr(struct sockaddr_un *a, bool with_pid)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int k = with_pid ? snprintf(a->sun_path, sizeof(a->sun_path), "%s.%d", hook_cfg.control_path,
				    (int)getpid())
			 : snprintf(a->sun_path, sizeof(a->sun_path), "%s", hook_cfg.control_path);
	snprintf(ctl_sock_name, sizeof(ctl_sock_name), "%.*s", (int)sizeof(a->sun_path) - 1,
		 a->sun_path);
	if (k < 0 || (size_t)k >= sizeof(a->sun_path)) {
		snprintf(ctl_sock_name, sizeof(ctl_sock_name), "%s.%d", hook_cfg.control_path,
			 (int)getpid());
		return false;
	}
	return true;
}

/* listen() on @fd just bound at @a, and the file recorded as this
 * process's. */
static int listen_path(int fd, const struct sockaddr_un *a, const char **why)
{
	struct stat sb;
	if (lstat(a->sun_path, &sb) != 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	if (listen(fd, CTL_BACKLOG) != 0) {
		*why = strerror(errno);
		if (same_file(a->sun_path, &sb))
			unlink(a->sun_path);
		close(fd);
		return -1;
	}
	path_bound = true;
	bound_pid = (int)getpid();
	bound_dev = sb.st_dev;
	bound_ino = sb.st_ino;
	memcpy(bound_path, a->sun_path, sizeof(bound_path));
	return fd;
}

/* Bind a path socket at PATH (or PATH.<pid> with @with_pid).  *@fallback
 * is set when PATH is live and its listener an ancestor: the caller tries
 * PATH.<pid>. */
static int open_path(bool with_pid, const char **why, bool *fallback)
{
	struct sockaddr_un a;
	*fallback = false;
	if (!path_addr(&a, with_pid)) {
		*why = "longer than a socket address holds";
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	for (int tries = 0; tries < 3; tries++) {
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return listen_path(fd, &a, why);
		if (errno != EADDRINUSE)
			break;
		/* A socket nobody listens on (a process that died) is
		 * replaced; anything else at the path is left as it is. */
		struct stat sb;
		if (lstat(a.sun_path, &sb) != 0) {
			if (errno == ENOENT)
				continue; /* (gone meanwhile: bind again) */
			break;
		}
		if (!S_ISSOCK(sb.st_mode)) {
			*why = "exists and is not a socket; left as it is";
			close(fd);
			return -1;
		}
		pid_t listener = 0;
		int err = 0;
		switch (probe(&a, &sb, &listener, &err)) {
		case P_STALE:
			if (same_file(a.sun_path, &sb) && unlink(a.sun_path) != 0 && errno != ENOENT) {
				*why = strerror(errno);
				close(fd);
				return -1;
			}
			continue;
		case P_GONE:
			continue;
		case P_LIVE:
			close(fd);
			if (!with_pid && is_ancestor(listener)) {
				*fallback = true;
				*why = NULL;
			} else {
				*why = "a process listens on it; left as it is";
			}
			return -1;
		case P_DENIED:
			*why = "no permission to connect to the socket there; left as it is";
			close(fd);
			return -1;
		case P_OTHER:
			errno = err;
			break;
		}
		break;
	}
	*why = errno == EADDRINUSE ? "the name is taken" : strerror(errno);
	close(fd);
	return -1;
}

int ctl_sock_open(bool forked, const char **why)
{
	*why = NULL;
	if (hook_cfg.control == HOOK_CONTROL_PATH) {
		bool fallback;
		int fd = open_path(forked, why, &fallback);
		if (fd < 0 && fallback)
			fd = open_path(true, why, &fallback);
		return fd;
	}
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	int k = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, LEAKSNAP_HOOK_CONTROL_PREFIX "%d",
			 (int)getpid());
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
	snprintf(ctl_sock_name, sizeof(ctl_sock_name), "@%s", a.sun_path + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&a, alen) != 0 || listen(fd, CTL_BACKLOG) != 0) {
		*why = errno == EADDRINUSE ? "the name is taken" : strerror(errno);
		close(fd);
		return -1;
	}
	return fd;
}

void ctl_sock_unlink_ours(void)
{
	if (path_bound && bound_pid == (int)getpid()) {
		struct stat sb = {.st_dev = bound_dev, .st_ino = bound_ino};
		if (same_file(bound_path, &sb))
			unlink(bound_path);
	}
	path_bound = false;
}

void ctl_sock_forget(void)
{
	path_bound = false;
}

void ctl_sock_sweep(void)
{
	if (hook_cfg.control != HOOK_CONTROL_PATH)
		return;
	char dir[sizeof(hook_cfg.control_path)];
	snprintf(dir, sizeof(dir), "%s", hook_cfg.control_path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	const char *base = hook_cfg.control_path + (slash - dir) + 1;
	size_t blen = strlen(base);
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (strncmp(n, base, blen) != 0 || n[blen] != '.' || !n[blen + 1] ||
		    strspn(n + blen + 1, "0123456789") != strlen(n + blen + 1) ||
		    strlen(n + blen + 1) > 9)
			continue;
		pid_t pid = (pid_t)atoi(n + blen + 1);
		if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue; /* (alive, or not ours to know) */
		struct sockaddr_un a;
		memset(&a, 0, sizeof(a));
		a.sun_family = AF_UNIX;
		int k = snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", slash == dir ? "" : dir, n);
		if (k < 0 || (size_t)k >= sizeof(a.sun_path))
			continue;
		struct stat sb;
		pid_t listener;
		int err;
		if (lstat(a.sun_path, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
		    probe(&a, &sb, &listener, &err) != P_STALE)
			continue;
		if (same_file(a.sun_path, &sb))
			unlink(a.sun_path);
	}
	closedir(d);
}
