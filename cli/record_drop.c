/* leaksnap record: processes that change user (docs/hook.md, "Processes
 * that change user").
 *
 * A server's workers give up root for an unprivileged user and may then
 * not create files in the output directory.  Two things here:
 *  - The notes: record listens on an abstract datagram socket named after
 *    its run; a process that cannot write a dump says so there (hook
 *    runnote.c), whatever its user and wherever its stderr goes, and record
 *    lists each with the reason and what to do.
 *  - The drop box: when record makes the output directory itself, running
 *    as root, it makes it 0711 (others may pass through, not list it) with
 *    a drop box inside, .leaksnap-drop.<128 random bits>, mode 1733: any
 *    user may create files there, none but root may list it or remove
 *    another's file.  Its name is known only to the processes of the run
 *    (LEAKSNAP_DROP in their environment) and to root.  A process refused
 *    a dump in the directory writes it there; record moves each dump and
 *    maps file into the directory, under the same name, as it sees them
 *    and at the end, and removes the drop box. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "cli.h"
#include "record.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int record_drop_make(struct record_prefix *p, const char *dir)
{
	unsigned char rnd[16];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return errno ? errno : EIO;
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/.leaksnap-drop.", dir);
	for (size_t i = 0; i < sizeof(rnd) && n > 0 && (size_t)n + 3 < sizeof(path); i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", rnd[i]);
	if (n <= 0 || (size_t)n + 3 >= sizeof(path))
		return ENAMETOOLONG;
	/* made private, then opened up: no moment with looser bits than asked */
	if (mkdir(path, 0700) != 0)
		return errno;
	if (chmod(path, 01733) != 0) {
		int e = errno;
		rmdir(path);
		return e;
	}
	if ((p->drop = strdup(path)) == NULL) {
		rmdir(path);
		return ENOMEM;
	}
	return 0;
}

/* Whether @name is a file of the run's to move: a dump of @p's prefix, or
 * the maps file beside one. */
static bool drop_name_ok(const struct record_prefix *p, const char *name)
{
	uint64_t pid, num;
	char dump[NAME_MAX + 1];
	size_t n = strlen(name), ms = strlen(LEAKSNAP_HOOK_MAPS_SUFFIX);
	if (record_dump_parse(name, p->base, &pid, &num))
		return true;
	if (n <= ms || strcmp(name + n - ms, LEAKSNAP_HOOK_MAPS_SUFFIX) != 0 ||
	    n - ms + strlen(LEAKSNAP_HOOK_DUMP_SUFFIX) >= sizeof(dump))
		return false;
	snprintf(dump, sizeof(dump), "%.*s" LEAKSNAP_HOOK_DUMP_SUFFIX, (int)(n - ms), name);
	return record_dump_parse(dump, p->base, &pid, &num);
}

size_t record_drop_collect(const struct record_prefix *p)
{
	if (p->drop == NULL)
		return 0;
	int dfd = open(p->drop, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	char *slash = strrchr(p->abs, '/');
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%.*s", slash && slash != p->abs ? (int)(slash - p->abs) : 1,
		 p->abs);
	int tfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = tfd >= 0 ? fdopendir(dfd) : NULL;
	size_t moved = 0;
	if (d == NULL) {
		close(dfd);
		if (tfd >= 0)
			close(tfd);
		return 0;
	}
	/* Maps files first: a dump is listed as soon as it is seen, and its
	 * maps should be beside it by then. */
	for (int pass = 0; pass < 2; pass++) {
		rewinddir(d);
		for (struct dirent *e; (e = readdir(d)) != NULL;) {
			struct stat st;
			size_t n = strlen(e->d_name), ms = strlen(LEAKSNAP_HOOK_MAPS_SUFFIX);
			bool maps = n > ms && strcmp(e->d_name + n - ms, LEAKSNAP_HOOK_MAPS_SUFFIX) == 0;
			/* (a regular file of one link: not a symbolic or hard
			 * link someone made to a file of another's) */
			if (maps != (pass == 0) || !drop_name_ok(p, e->d_name) ||
			    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISREG(st.st_mode) || st.st_nlink != 1)
				continue;
			if (syscall(SYS_renameat2, dfd, e->d_name, tfd, e->d_name,
				    RENAME_NOREPLACE) != 0)
				continue;
			/* what was moved is what was looked at (the name may
			 * have been given to something else in between) */
			struct stat now;
			if (fstatat(tfd, e->d_name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
			    now.st_ino != st.st_ino || now.st_dev != st.st_dev ||
			    !S_ISREG(now.st_mode) || now.st_nlink != 1) {
				unlinkat(tfd, e->d_name, 0);
				continue;
			}
			moved++;
		}
	}
	closedir(d);
	close(tfd);
	return moved;
}

void record_drop_finish(const struct record_prefix *p)
{
	if (p->drop == NULL)
		return;
	record_drop_collect(p);
	if (rmdir(p->drop) != 0 && (errno == ENOTEMPTY || errno == EEXIST))
		cli_warn(p->shown, "files left in the drop box '%s' (a name already taken in the "
			 "directory, or not a dump): look at them, then remove it", p->drop);
}

int record_notes_open(const char *run_id)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, LEAKSNAP_HOOK_NOTE_PREFIX "%s",
			 run_id);
	if (n <= 0 || (size_t)n >= sizeof(a.sun_path) - 1)
		return -1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* (each note comes with its sender's credentials, from the kernel) */
	int on = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) {
		close(fd);
		return -1;
	}
	/* (room for many notes: a whole pool of workers may fail at once) */
	int size = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&a,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One note seen: a process and why it could not write. */
struct note_seen {
	long pid;
	unsigned uid;
	int err;
};

size_t record_notes_report(int fd, const struct record_prefix *p)
{
	if (fd < 0)
		return 0;
	struct note_seen seen[256];
	size_t nseen = 0, said = 0;
	char msg[PATH_MAX + 128];
	for (;;) {
		union {
			struct cmsghdr h;
			char space[CMSG_SPACE(sizeof(struct ucred))];
		} ctl;
		struct iovec iov = {msg, sizeof(msg) - 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl,
				    .msg_controllen = sizeof(ctl)};
		ssize_t r = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		msg[r] = '\0';
		long pid;
		unsigned uid;
		int err, off = 0;
		if (sscanf(msg, LEAKSNAP_HOOK_NOTE_WRITE " %ld %u %d %n", &pid, &uid, &err, &off) != 3 ||
		    off <= 0 || pid <= 0)
			continue;
		/* Only a process's note about itself (anyone may send to the
		 * socket): the kernel's credentials must name that pid, and
		 * the uid shown is theirs. */
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS)
			continue;
		struct ucred cred;
		memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		if ((long)cred.pid != pid)
			continue;
		uid = (unsigned)cred.uid;
		bool dup = false;
		for (size_t i = 0; i < nseen && !dup; i++)
			dup = seen[i].pid == pid && seen[i].err == err;
		if (dup)
			continue;
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = (struct note_seen){pid, uid, err};
		const char *shown = msg + off; /* (cli_warn escapes what it prints) */
		if (err == EACCES || err == EPERM || err == EROFS)
			cli_warn(p->shown, "process %ld (uid %u) could not write its dump %s: %s; "
				 "give --out a directory that does not exist yet (record makes it "
				 "so that every process of the run can write its dumps there), or "
				 "one that uid %u may write to",
				 pid, uid, shown, strerror(err), uid);
		else
			cli_warn(p->shown, "process %ld (uid %u) could not write its dump %s: %s",
				 pid, uid, shown, strerror(err));
		said++;
	}
	close(fd);
	return said;
}
