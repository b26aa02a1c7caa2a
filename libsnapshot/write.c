/* leaksnap: writing LEAKSNAP v1 files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "snapshot_internal.h"

struct out {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	const char *path;
	struct leaksnap_error *err;
	int failed;
};

static int out_flush(struct out *o)
{
	size_t done = 0;
	while (done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->failed = 1;
			return lsp_error_errno(o->err, o->path, errno);
		}
		done += (size_t)n;
	}
	o->len = 0;
	return 0;
}

static int out_put(struct out *o, const void *p, size_t n)
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

static int put_field(struct out *o, uint64_t v, unsigned width, bool be)
{
	uint8_t b[8];
	if (be)
		lsp_store_be(b, width, v);
	else
		lsp_store_le(b, width, v);
	return out_put(o, b, width);
}

/* Metadata text as written: the snapshot's lines, plus where it came from. */
static int meta_text(const struct snapshot *s, char **text, size_t *len,
		     struct leaksnap_error *err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (f == NULL)
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
	for (size_t i = 0; i < s->nmeta; i++) {
		const char *k = s->meta[i].key, *v = s->meta[i].value;
		if (strchr(k, '\n') || strchr(k, '=') || strchr(v, '\n')) {
			fclose(f);
			free(buf);
			return lsp_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "metadata key '%s' cannot be written as one line", k);
		}
		fprintf(f, "%s=%s\n", k, v);
	}
	if (s->format != SNAPSHOT_FORMAT_LEAKSNAP && snapshot_meta_get(s, "source_format") == NULL)
		fprintf(f, "source_format=%s%s%s\n", snapshot_format_name(s->format),
			s->version[0] ? " " : "", s->version);
	if (fclose(f) != 0) {
		free(buf);
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
	}
	*text = buf;
	*len = size;
	return 0;
}

static int write_body(const struct snapshot *s, struct out *o, unsigned ptr, bool be,
		      const char *meta, size_t meta_len)
{
	unsigned bt = s->backtrace_size ? s->backtrace_size : 1;
	struct snapshot_header h = {
		.version = LEAKSNAP_VERSION,
		.pointer_size = (uint8_t)ptr,
		.flags = be ? SNAPSHOT_FLAG_BIG_ENDIAN : 0,
		.backtrace_size = bt,
		.pid = s->pid > 0 && s->pid <= UINT32_MAX ? (uint32_t)s->pid : 0,
		.meta_size = (uint32_t)meta_len,
		.time_ns = s->has_time ? s->time_ns : 0,
		.total_memory = s->records_bytes,
		.info_size = (uint64_t)ptr * (2 + bt),
		.maps_size = s->maps_len,
	};
	h.records_size = h.info_size * s->nrecords;
	uint8_t hdr[SNAPSHOT_HEADER_SIZE];
	snapshot_header_encode(&h, hdr);
	if (out_put(o, hdr, sizeof(hdr)))
		return -1;
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct snapshot_record *r = &s->records[i];
		uint64_t size = r->size | (r->zygote ? LSP_ZYGOTE_BIT : 0);
		if (put_field(o, size, ptr, be) || put_field(o, r->count, ptr, be))
			return -1;
		for (unsigned f = 0; f < bt; f++)
			if (put_field(o, f < r->frame_count ? r->frames[f] : 0, ptr, be))
				return -1;
	}
	if (out_put(o, s->maps, s->maps_len) || out_put(o, meta, meta_len))
		return -1;
	return out_flush(o);
}

/* Check that every value fits the record format before creating anything. */
static int check_fits(const struct snapshot *s, unsigned ptr, struct leaksnap_error *err)
{
	uint64_t max = ptr == 8 ? UINT64_MAX : UINT32_MAX;
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct snapshot_record *r = &s->records[i];
		if ((r->size & LSP_ZYGOTE_BIT) || r->size > max || r->count > max)
			return lsp_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "record %zu (size %llu, count %llu) does not fit "
					 "%u-byte record fields",
					 i + 1, (unsigned long long)r->size,
					 (unsigned long long)r->count, ptr);
		for (uint32_t f = 0; f < r->frame_count; f++)
			if (r->frames[f] > max)
				return lsp_error(err, LEAKSNAP_ERR_FORMAT, s->source,
						 "frame 0x%llx does not fit %u-byte pointers",
						 (unsigned long long)r->frames[f], ptr);
	}
	if (s->backtrace_size > LSP_MAX_FRAMES)
		return lsp_error(err, LEAKSNAP_ERR_FORMAT, s->source, "backtrace size %u > %u",
				 s->backtrace_size, LSP_MAX_FRAMES);
	return 0;
}

int snapshot_save(const struct snapshot *s, const char *path,
		  const struct snapshot_save_opts *opts, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	static const struct snapshot_save_opts defaults;
	if (opts == NULL)
		opts = &defaults;
	unsigned ptr = opts->pointer_size ? opts->pointer_size : s->pointer_size;
	if (ptr != 4 && ptr != 8)
		return lsp_error(err, LEAKSNAP_ERR_USAGE, path, "pointer size must be 4 or 8");
	if (check_fits(s, ptr, err))
		return -1;
	char *meta = NULL;
	size_t meta_len = 0;
	if (meta_text(s, &meta, &meta_len, err))
		return -1;
	if (meta_len > UINT32_MAX) {
		free(meta);
		return lsp_error(err, LEAKSNAP_ERR_LIMIT, path, "metadata larger than 4 GiB");
	}
	struct stat st;
	if (lstat(path, &st) == 0) {
		free(meta);
		return lsp_error(err, LEAKSNAP_ERR_EXISTS, path,
				 "already exists (leaksnap never overwrites a file)");
	}

	/* A temporary name beside the target, then link(): the final name
	 * appears complete or not at all, and an existing file is never
	 * replaced (link fails with EEXIST). */
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (tmp == NULL) {
		free(meta);
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
	}
	int fd = -1;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
		snprintf(tmp, plen + 32, "%s.tmp.%ld.%lx", path, (long)getpid(),
			 (unsigned long)(ts.tv_nsec + attempt));
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int e = errno;
		free(tmp);
		free(meta);
		return lsp_error_errno(err, path, e);
	}
	struct out o = {.fd = fd, .cap = 1 << 20, .path = path, .err = err};
	o.buf = malloc(o.cap);
	int ret;
	if (o.buf == NULL)
		ret = lsp_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
	else
		ret = write_body(s, &o, ptr, opts->big_endian, meta, meta_len);
	if (ret == 0 && fsync(fd) != 0)
		ret = lsp_error_errno(err, path, errno);
	if (close(fd) != 0 && ret == 0)
		ret = lsp_error_errno(err, path, errno);
	if (ret == 0 && link(tmp, path) != 0) {
		int e = errno;
		if (e == EEXIST)
			ret = lsp_error(err, LEAKSNAP_ERR_EXISTS, path,
					"already exists (leaksnap never overwrites a file)");
		else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0)
			ret = lsp_error_errno(err, path, errno == EEXIST ? EEXIST : e);
	}
	unlink(tmp); /* no-op after a successful rename */
	free(o.buf);
	free(tmp);
	free(meta);
	return ret;
}
