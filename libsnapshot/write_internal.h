/* leaksnap: what the two snapshot writers share (private to libsnapshot):
 * the buffered output that publishes a file without replacing anything,
 * and the --rewrite-prefix rules applied to module paths. */
#ifndef LEAKSNAP_WRITE_INTERNAL_H
#define LEAKSNAP_WRITE_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include "snapshot_internal.h"

/* A file being written: bytes are buffered, written to a temporary name
 * beside @path and published with link() when complete.  The path "-" is
 * standard output (written directly, nothing published). */
struct lsp_out {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	const char *path;   /* as given, for errors ("<stdout>" for "-") */
	char *tmp;          /* the temporary name; NULL for standard output */
	struct leaksnap_error *err;
};

/* Start writing @path: an existing file or symlink there is refused with
 * LEAKSNAP_ERR_EXISTS before anything is created.  Returns 0, or -1 with
 * @err filled (nothing is left behind). */
int lsp_out_open(struct lsp_out *o, const char *path, struct leaksnap_error *err);
/* Append @n bytes.  Returns 0, or -1 with the error record filled. */
int lsp_out_put(struct lsp_out *o, const void *p, size_t n);
static inline int lsp_out_str(struct lsp_out *o, const char *s)
{
	return lsp_out_put(o, s, strlen(s));
}
/* Finish: when @ok, flush, fsync and publish under the final name (an
 * existing file is never replaced); otherwise, or when that fails, remove
 * the temporary file.  Releases @o.  Returns 0, or -1: with @ok, after
 * filling the error record; without, at once (the caller's error stands). */
int lsp_out_close(struct lsp_out *o, bool ok);

/* Check @opts' rewrite rules (a non-empty old prefix; no newline in either
 * prefix) and zero their match counts.  Returns 0, or -1 with @err filled
 * (LEAKSNAP_ERR_USAGE). */
int lsp_rewrite_check(const struct leaksnap_snapshot_save_opts *opts, const char *source,
		      struct leaksnap_error *err);
/* The first rule of @opts whose old prefix starts the @len bytes at @path
 * (its match count incremented when @count), or NULL. */
struct leaksnap_snapshot_rewrite *lsp_rewrite_match(const struct leaksnap_snapshot_save_opts *opts,
					   const char *path, size_t len, bool count);
/* Emit the snapshot's maps text with each line's path rewritten by the
 * first matching rule.  With @o NULL, only measure: *@size receives the
 * output's length, the rules' match counts are incremented and a rewrite
 * that would leave a line without a path is an error.  With @o, write.
 * Returns 0, or -1 with @err filled. */
int lsp_rewrite_maps(const struct leaksnap_snapshot *s,
		     const struct leaksnap_snapshot_save_opts *opts, struct lsp_out *o,
		     uint64_t *size, struct leaksnap_error *err);

/* Where the path of the maps line [@p, @end) starts: after the five fields
 * (range, perms, offset, dev, inode) and the padding; @end when it has
 * none. */
const char *lsp_maps_line_path(const char *p, const char *end);

#endif
