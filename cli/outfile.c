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

#include <leaksnap/export.h>

#include "cli.h"
#include "report.h"
#include "kit_publish.h"

/* Whether the regular file at @path is one leaksnap wrote, of the kind
 * @replace names: its first bytes say so. */
static bool written_by_us(const char *path, enum cli_replace replace)
{
	unsigned char head[1024];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	if (n <= 0)
		return false;
	if (replace == CLI_REPLACE_OWN_HTML)
		return memmem(head, (size_t)n, REPORT_GENERATOR, strlen(REPORT_GENERATOR)) != NULL;
	if (replace != CLI_REPLACE_OWN_PPROF)
		return false;
	/* gzip (RFC 1952): magic, deflate, flags, mtime, xfl, os, then the
	 * optional extra field and name before the comment */
	size_t at = 10;
	if (n < 10 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 || !(head[3] & 0x10))
		return false;
	if (head[3] & 0x04) {
		if ((size_t)n < at + 2)
			return false;
		at += 2 + (size_t)(head[at] | head[at + 1] << 8);
	}
	if (head[3] & 0x08) {
		while (at < (size_t)n && head[at])
			at++;
		at++;
	}
	/* (a snapshot profile, convert --to pprof's, carries another comment:
	 * it is data, not a report, and is never replaced) */
	size_t clen = strlen(LEAKSNAP_EXPORT_PPROF_DIFF_COMMENT) + 1;
	return at + clen <= (size_t)n &&
	       memcmp(head + at, LEAKSNAP_EXPORT_PPROF_DIFF_COMMENT, clen) == 0;
}

/* Whether @path may be written as @replace allows: 0, or -1 (said); *@st is its status when it exists (@exists). */
static int may_write(const char *path, enum cli_replace replace, struct stat *st, bool *exists)
{
	*exists = false;
	if (!*path)
		return cli_fail(NULL, "an empty output file name");
	if (lstat(path, st) != 0) {
		if (errno != ENOENT)
			return cli_fail(path, "%s", strerror(errno));
		return 0;
	}
	*exists = true;
	if (replace == CLI_REPLACE_NONE)
		return cli_fail(path, KIT_NEVER_OVERWRITES);
	if (S_ISLNK(st->st_mode))
		return cli_fail(path, "is a symbolic link: not replaced (leaksnap never "
				      "writes through one)");
	if (!S_ISREG(st->st_mode))
		return cli_fail(path, "exists and is not a regular file: not replaced");
	if (!written_by_us(path, replace))
		return cli_fail(path, "already exists and is not %s leaksnap wrote: not replaced "
				      "(leaksnap never overwrites a file of yours)",
				replace == CLI_REPLACE_OWN_HTML ? "a report" : "a growth profile");
	return 0;
}

int cli_outfile_check(const char *path, enum cli_replace replace)
{
	if (strcmp(path, "-") == 0)
		return 0;
	struct stat st;
	bool exists;
	if (may_write(path, replace, &st, &exists))
		return -1;
	char *tmp;
	int fd = kit_temp_beside(path, &tmp);
	if (fd < 0)
		return cli_fail(path, "%s", strerror(errno));
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

int cli_outfile_open(struct cli_outfile *o, const char *path, enum cli_replace replace)
{
	*o = (struct cli_outfile){.path = path, .replace = replace};
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->path = "<stdout>";
		return 0;
	}
	struct stat st;
	bool exists;
	if (may_write(path, replace, &st, &exists))
		return -1;
	if (exists) {
		o->mode = st.st_mode & 07777; /* the replacement keeps it */
		o->keep_mode = true;
	}
	int fd = kit_temp_beside(path, &o->tmp);
	if (fd < 0)
		return cli_fail(path, "%s", strerror(errno));
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

int cli_outfile_close(struct cli_outfile *o, bool ok)
{
	if (!o->f)
		return ok ? 0 : -1;
	if (!o->tmp) { /* standard output: flushed, never closed */
		o->f = NULL;
		if (!ok)
			return -1;
		return cli_finish_stdout(EXIT_OK) == EXIT_OK ? 0 : -1;
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
	int status = -1;
	if (ok && !e) {
		struct stat st;
		bool exists;
		if (o->replace != CLI_REPLACE_NONE) {
			/* looked at again: what is there now may be replaced too;
			 * rename() replaces the directory entry itself, a symlink
			 * put there since is replaced, never written through */
			if (may_write(o->path, o->replace, &st, &exists))
				;
			else if (rename(o->tmp, o->path) == 0)
				status = 0;
			else
				e = errno;
		} else {
			int r = kit_publish_noreplace(o->tmp, o->path);
			if (r >= 0)
				status = 0;
			else if (r == -EEXIST)
				cli_fail(o->path, KIT_NEVER_OVERWRITES);
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
		return 0;
	for (size_t i = 0; i < n; i++)
		if (inputs[i] && strcmp(inputs[i], "-") != 0 && stat(inputs[i], &in) == 0 &&
		    in.st_dev == out.st_dev && in.st_ino == out.st_ino)
			return cli_fail(path, "is also an input (%s): not replaced", inputs[i]);
	return 0;
}
