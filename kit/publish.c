/* leaksnap kit: temporary names and publishing without replacing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kit_publish.h"

int kit_temp_beside(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, plen = dlen + 48;
	*tmp = malloc(plen);
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int fd = -1;
	for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
		snprintf(*tmp, plen, "%.*s.leaksnap-%ld.%lx.tmp", (int)dlen, path,
			 (long)getpid(), (unsigned long)(ts.tv_nsec + attempt));
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		free(*tmp);
		*tmp = NULL;
		errno = e;
	}
	return fd;
}

int kit_publish_noreplace(const char *tmp, const char *path)
{
	if (link(tmp, path) == 0)
		return 0;
	if (errno == EEXIST)
		return -EEXIST;
	/* a file system without hard links */
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 1;
	return -errno;
}

void kit_temp_mode(int fd)
{
	mode_t mask = umask(0); /* (read: there is no other way) */
	umask(mask);
	(void)fchmod(fd, 0644 & ~mask);
}
