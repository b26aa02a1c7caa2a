/* leaksnap: load a whole input file (mmap for regular files, read otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kit.h"
#include "kit_blob.h"

/* Inputs larger than this are refused outright: no real dump comes close,
 * and it keeps a pipe from feeding us unbounded memory. */
#define BLOB_MAX_SIZE ((uint64_t)64 << 30)
/* How far a stream may run past the size its header gives (kit_stream_bound). */
#define STREAM_SLACK ((uint64_t)1 << 20)

static int read_stream(int fd, const char *path, struct kit_blob *blob, kit_stream_bound bound,
		       const void *ctx, struct leaksnap_error *err)
{
	size_t cap = 1 << 16, len = 0;
	uint64_t limit = BLOB_MAX_SIZE;
	bool probed = bound == NULL;
	uint8_t *buf = malloc(cap);
	if (buf == NULL)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
	for (;;) {
		if (len == cap) {
			if (cap >= BLOB_MAX_SIZE) {
				free(buf);
				return kit_error(err, LEAKSNAP_ERR_LIMIT, path,
						 "input larger than %llu bytes",
						 (unsigned long long)BLOB_MAX_SIZE);
			}
			uint8_t *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				return kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return kit_error_errno(err, path, e);
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (!probed && len >= KIT_STREAM_PROBE) {
			probed = true;
			uint64_t most = bound(buf, len, ctx, err);
			if (most == 0) {
				free(buf);
				return -1;
			}
			/* a little past it, so that a few trailing bytes get the
			 * reader's own message, which counts them */
			if (most < limit - STREAM_SLACK)
				limit = most + STREAM_SLACK;
		}
		if (len > limit) {
			free(buf);
			if (limit == BLOB_MAX_SIZE)
				return kit_error(err, LEAKSNAP_ERR_LIMIT, path,
						 "input larger than %llu bytes",
						 (unsigned long long)BLOB_MAX_SIZE);
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, path, limit - STREAM_SLACK,
					    "input goes on past the %llu bytes its header gives",
					    (unsigned long long)(limit - STREAM_SLACK));
		}
	}
	blob->data = buf;
	blob->size = len;
	blob->heap = buf;
	return 0;
}

int kit_blob_load(const char *path, struct kit_blob *blob, kit_stream_bound bound,
		  const void *ctx, struct leaksnap_error *err)
{
	memset(blob, 0, sizeof(*blob));
	int fd;
	const char *name = path;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
		name = "<stdin>";
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return kit_error_errno(err, path, errno);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		if (fd != STDIN_FILENO)
			close(fd);
		return kit_error_errno(err, name, e);
	}
	int ret;
	if (S_ISDIR(st.st_mode)) {
		ret = kit_error(err, LEAKSNAP_ERR_IO, name, "is a directory");
	} else if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uint64_t)st.st_size > BLOB_MAX_SIZE) {
			ret = kit_error(err, LEAKSNAP_ERR_LIMIT, name,
					"input larger than %llu bytes",
					(unsigned long long)BLOB_MAX_SIZE);
		} else {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED) {
				ret = read_stream(fd, name, blob, NULL, NULL, err);
			} else {
				(void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
				blob->data = m;
				blob->size = (size_t)st.st_size;
				blob->mapping = m;
				ret = 0;
			}
		}
	} else {
		ret = read_stream(fd, name, blob, bound, ctx, err);
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

void kit_blob_release(struct kit_blob *blob)
{
	if (blob == NULL)
		return;
	if (blob->mapping)
		munmap(blob->mapping, blob->size);
	free(blob->heap);
	memset(blob, 0, sizeof(*blob));
}

void kit_blob_drop(struct kit_blob *blob, size_t upto)
{
	if (blob->mapping == NULL)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t end = upto / page * page;
	if (end <= blob->dropped)
		return;
	(void)madvise((uint8_t *)blob->mapping + blob->dropped, end - blob->dropped,
		      MADV_DONTNEED);
	blob->dropped = end;
}
