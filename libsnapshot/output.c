/* leaksnap: buffered output for the snapshot writers, published without
 * ever replacing an existing file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kit_publish.h"
#include "write_internal.h"

#define OUT_BUFFER (1u << 20)

static int already_exists(const char *path, struct leaksnap_error *err)
{
	return kit_error(err, LEAKSNAP_ERR_EXISTS, path, KIT_NEVER_OVERWRITES);
}

int lsp_out_open(struct lsp_out *o, const char *path, struct leaksnap_error *err)
{
	bool to_stdout = strcmp(path, "-") == 0;
	*o = (struct lsp_out){.fd = -1, .path = to_stdout ? "<stdout>" : path, .err = err};
	struct stat st;
	if (!to_stdout && lstat(path, &st) == 0)
		return already_exists(path, err);
	o->buf = malloc(OUT_BUFFER);
	if (o->buf == NULL)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, o->path, "out of memory");
	o->cap = OUT_BUFFER;
	if (to_stdout) {
		o->fd = STDOUT_FILENO;
		return 0;
	}

	/* A temporary name beside the target, then link(): the final name
	 * appears complete or not at all, and an existing file is never
	 * replaced (link fails with EEXIST). */
	o->fd = kit_temp_beside(path, &o->tmp);
	if (o->fd < 0) {
		int e = errno;
		free(o->buf);
		if (e == ENOMEM)
			return kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
		return kit_error_errno(err, path, e);
	}
	return 0;
}

static int out_flush(struct lsp_out *o)
{
	size_t done = 0;
	while (done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return kit_error_errno(o->err, o->path, errno);
		}
		done += (size_t)n;
	}
	o->len = 0;
	return 0;
}

int lsp_out_put(struct lsp_out *o, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n > 0) {
		if (o->len == o->cap && out_flush(o))
			return -1;
		size_t k = o->cap - o->len < n ? o->cap - o->len : n;
		memcpy(o->buf + o->len, b, k);
		o->len += k;
		b += k;
		n -= k;
	}
	return 0;
}

int lsp_out_close(struct lsp_out *o, bool ok)
{
	int ret = ok ? out_flush(o) : -1;
	if (o->tmp != NULL) {
		if (ret == 0 && fsync(o->fd) != 0)
			ret = kit_error_errno(o->err, o->path, errno);
		if (close(o->fd) != 0 && ret == 0)
			ret = kit_error_errno(o->err, o->path, errno);
		int pub = ret == 0 ? kit_publish_noreplace(o->tmp, o->path) : 0;
		if (pub == -EEXIST)
			ret = already_exists(o->path, o->err);
		else if (pub < 0)
			ret = kit_error_errno(o->err, o->path, -pub);
		unlink(o->tmp); /* no-op after a successful rename */
		free(o->tmp);
	}
	free(o->buf);
	*o = (struct lsp_out){.fd = -1};
	return ret;
}
