/* Output files the CLI writes through stdio (HTML reports, pprof
 * profiles): written to a temporary name beside the target, then
 * published in one step, so the final name holds either the old file or
 * the complete new one. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_outfile_open(struct cli_outfile *o, const char *path, bool replace)
{
	*o = (struct cli_outfile){.path = path, .replace = replace};
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->path = "<stdout>";
		return 0;
	}
	if (!*path)
		return cli_fail(NULL, "an empty output file name");
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!replace)
			return cli_fail(path, "already exists (leaksnap never overwrites a file)");
		if (S_ISLNK(st.st_mode))
			return cli_fail(path, "is a symbolic link: not replaced (leaksnap never "
					      "writes through one)");
		if (!S_ISREG(st.st_mode))
			return cli_fail(path, "exists and is not a regular file: not replaced");
		o->mode = st.st_mode & 07777; /* the replacement keeps it */
		o->keep_mode = true;
	} else if (errno != ENOENT) {
		return cli_fail(path, "%s", strerror(errno));
	}

	/* A short temporary name in the target's directory (a target name near
	 * NAME_MAX still works), created exclusively and never through a link. */
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, plen = dlen + 48;
	o->tmp = malloc(plen);
	if (!o->tmp)
		return cli_fail(path, "out of memory");
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int fd = -1;
	for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
		snprintf(o->tmp, plen, "%.*s.leaksnap-%ld.%lx.tmp", (int)dlen, path,
			 (long)getpid(), (unsigned long)(ts.tv_nsec + attempt));
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		return cli_fail(path, "%s", strerror(e));
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return cli_fail(path, "%s", strerror(e));
	}
	return 0;
}

int cli_publish_noreplace(const char *tmp, const char *path)
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

int cli_outfile_close(struct cli_outfile *o, bool ok)
{
	if (!o->f)
		return ok ? EXIT_OK : EXIT_ERROR;
	if (!o->tmp) { /* standard output: flushed, never closed */
		o->f = NULL;
		if (!ok)
			return EXIT_ERROR;
		return cli_finish_stdout(EXIT_OK);
	}
	int e = 0;
	if (ok && (fflush(o->f) != 0 || ferror(o->f)))
		e = errno ? errno : EIO;
	if (ok && !e && o->keep_mode && fchmod(fileno(o->f), o->mode) != 0)
		e = errno;
	if (ok && !e && fsync(fileno(o->f)) != 0)
		e = errno;
	if (fclose(o->f) != 0 && ok && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	int status = EXIT_ERROR;
	if (ok && !e) {
		if (o->replace) {
			/* rename() replaces the directory entry itself: a symlink put
			 * there since the check is replaced, never written through. */
			if (rename(o->tmp, o->path) == 0)
				status = EXIT_OK;
			else
				e = errno;
		} else {
			int r = cli_publish_noreplace(o->tmp, o->path);
			if (r >= 0)
				status = EXIT_OK;
			else if (r == -EEXIST)
				cli_fail(o->path, "already exists (leaksnap never overwrites a file)");
			else
				e = -r;
		}
	}
	if (e)
		cli_fail(o->path, "%s", strerror(e));
	unlink(o->tmp); /* a no-op after a successful rename */
	free(o->tmp);
	o->tmp = NULL;
	return status;
}

int cli_outfile_not_input(const char *path, char *const *inputs, size_t n)
{
	struct stat out, in;
	if (strcmp(path, "-") == 0 || stat(path, &out) != 0)
		return EXIT_OK;
	for (size_t i = 0; i < n; i++)
		if (inputs[i] && strcmp(inputs[i], "-") != 0 && stat(inputs[i], &in) == 0 &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return cli_fail(path, "is also an input (%s): not replaced", inputs[i]);
	return EXIT_OK;
}
