/* leaksnap: snapshot_open — detect the format from the content and read. */
#include <string.h>

#include "format.h"
#include "snapshot_internal.h"

/* Skip a UTF-8 BOM and blank lines, then look for the text dump header. */
static bool looks_like_text(const struct lsp_blob *b)
{
	size_t i = 0, n = b->size;
	if (n >= 3 && memcmp(b->data, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (b->data[i] == ' ' || b->data[i] == '\t' || b->data[i] == '\r' ||
			 b->data[i] == '\n'))
		i++;
	size_t hl = strlen(LEAKSNAP_TEXT_HEADER);
	return n - i >= hl && memcmp(b->data + i, LEAKSNAP_TEXT_HEADER, hl) == 0;
}

static struct snapshot *open_blob(struct lsp_blob *blob, const char *source,
				  const struct snapshot_open_opts *opts,
				  struct leaksnap_error *err)
{
	static const struct snapshot_open_opts defaults;
	if (opts == NULL)
		opts = &defaults;
	bool raw_opts = opts->pointer_size != 0 || opts->frames != 0;
	if (blob->size == 0) {
		lsp_error(err, LEAKSNAP_ERR_FORMAT, source, "empty file");
		return NULL;
	}
	struct snapshot *s = NULL;
	const char *what = NULL;
	size_t m = blob->size < LEAKSNAP_MAGIC_LEN ? blob->size : LEAKSNAP_MAGIC_LEN;
	if (memcmp(blob->data, LEAKSNAP_MAGIC, m) == 0) {
		s = lsp_read_leaksnap(blob, source, opts, err);
		what = "a leaksnap dump";
	} else if (blob->size >= 4 && lsp_load_le(blob->data, 4) == LEAKSNAP_NHGT_SIGNATURE) {
		s = lsp_read_nhgt(blob, source, false, opts, err);
		what = "an NHGT payload";
	} else if (looks_like_text(blob)) {
		s = lsp_read_text(blob, source, opts, err);
		what = "a text dump";
	} else if (raw_opts) {
		return lsp_read_raw(blob, source, opts, err);
	} else if (lsp_nhgt_old_matches(blob)) {
		s = lsp_read_nhgt(blob, source, true, opts, err);
		what = "an NHGT payload";
	} else {
		lsp_error_at(err, LEAKSNAP_ERR_UNKNOWN_FORMAT, source, 0,
			     "unrecognized format: not a LEAKSNAP dump (bad magic), Android text "
			     "dump or NHGT payload; a raw bionic buffer needs --pointer-size and "
			     "--frames");
		return NULL;
	}
	if (s != NULL && raw_opts)
		lsp_snapshot_warn(s, "--pointer-size and --frames ignored: the input is %s", what);
	return s;
}

struct snapshot *snapshot_open(const char *path, const struct snapshot_open_opts *opts,
			       struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct lsp_blob blob;
	const char *source = strcmp(path, "-") == 0 ? "<stdin>" : path;
	if (lsp_blob_load(path, &blob, err))
		return NULL;
	struct snapshot *s = open_blob(&blob, source, opts, err);
	lsp_blob_release(&blob);
	return s;
}

struct snapshot *snapshot_open_memory(const void *data, size_t size, const char *source,
				      const struct snapshot_open_opts *opts,
				      struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct lsp_blob blob = {.data = data, .size = size};
	return open_blob(&blob, source ? source : "<memory>", opts, err);
}
