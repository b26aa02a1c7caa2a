/* leaksnap: leaksnap_snapshot_open — detect the format from the content and read. */
#include <string.h>

#include "kit_format.h"
#include "snapshot_internal.h"

/* Skip a UTF-8 BOM and blank lines, then look for the text dump header. */
static bool looks_like_text(const struct kit_blob *b)
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

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_xdigit(uint8_t c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

/* Whether the @len bytes at @p begin like a /proc/PID/maps file: a first
 * line "START-END PERMS OFFSET MAJOR:MINOR INODE", in hex but the inode,
 * as far as it is there (a stream is probed on its first bytes), at least
 * up to the permissions. */
static bool maps_prefix(const uint8_t *p, size_t len)
{
	size_t i = 0;
	/* the fields, then the separator after each */
	static const char *const fields[] = {"x-", "x ", "p ", "x ", "x:", "x ", "d"};
	for (size_t f = 0; f < sizeof(fields) / sizeof(*fields); f++) {
		size_t start = i;
		char kind = fields[f][0], sep = fields[f][1];
		if (kind == 'p') {
			static const char *const perms[] = {"r-", "w-", "xs-", "psP-"};
			for (size_t k = 0; k < 4 && i < len; k++, i++)
				if (!memchr(perms[k], p[i], strlen(perms[k])))
					return false;
		} else {
			while (i < len && i - start < 16 &&
			       (kind == 'd' ? is_digit(p[i]) : is_xdigit(p[i])))
				i++;
			if (i == start && i < len)
				return false;
		}
		if (i == len)
			return f >= 3; /* the probe ended in the line: past the perms */
		if (sep && p[i++] != sep)
			return false;
	}
	return p[i] == ' ' || p[i] == '\n' || p[i] == '\r';
}

static const char maps_file[] =
	"a /proc/PID/maps file, not a heap snapshot";

static const char unrecognized[] =
	"unrecognized format: not a LEAKSNAP dump (bad magic), Android text dump or NHGT "
	"payload; a raw bionic buffer needs opts.pointer_size and opts.frames";

struct bound_ctx {
	const struct leaksnap_snapshot_open_opts *opts;
	const char *source;
};

/* Whether @len bytes at @p can begin a text dump: a BOM and blank lines,
 * then as much of the header as is there. */
static bool text_prefix(const uint8_t *p, size_t len)
{
	size_t i = len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	size_t hl = strlen(LEAKSNAP_TEXT_HEADER), n = len - i < hl ? len - i : hl;
	return memcmp(p + i, LEAKSNAP_TEXT_HEADER, n) == 0;
}

/* kit_stream_bound for snapshots: the formats with a header say their
 * size, text and raw buffers are unbounded, and anything else is refused
 * now (an old NHGT header says little, but its size exactly). */
static uint64_t snapshot_stream_bound(const uint8_t *p, size_t len, const void *ctx,
				      struct leaksnap_error *err)
{
	const struct bound_ctx *c = ctx;
	uint64_t total;
	if (memcmp(p, LEAKSNAP_MAGIC, LEAKSNAP_MAGIC_LEN) == 0) {
		if (p[11] & LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY)
			return UINT64_MAX; /* 4 bytes a record more: the reader checks */
		if (kit_add_u64(LEAKSNAP_SNAPSHOT_HEADER_SIZE, kit_load_le(p + 48, 8), &total) ||
		    kit_add_u64(total, kit_load_le(p + 56, 8), &total) ||
		    kit_add_u64(total, kit_load_le(p + 20, 4), &total))
			return UINT64_MAX; /* absurd: the reader says so */
		return total;
	}
	if (text_prefix(p, len) || (c->opts && (c->opts->pointer_size || c->opts->frames)))
		return UINT64_MAX;
	if (kit_load_le(p, 4) == LEAKSNAP_NHGT_SIGNATURE) {
		unsigned ptr = (unsigned)kit_load_le(p + 6, 2);
		if (ptr != 4 && ptr != 8)
			return UINT64_MAX; /* the reader says what is wrong */
		if (kit_add_u64(8 + 5 * (uint64_t)ptr, kit_load_le(p + 8, ptr), &total) ||
		    kit_add_u64(total, kit_load_le(p + 8 + ptr, ptr), &total))
			return UINT64_MAX;
		return total;
	}
	if (maps_prefix(p, len)) {
		kit_error_at(err, LEAKSNAP_ERR_MAPS_FILE, c->source, 0, "%s", maps_file);
		return 0;
	}
	uint64_t map = kit_load_le(p, 4), alloc = kit_load_le(p + 4, 4);
	uint64_t info = kit_load_le(p + 8, 4), bt = kit_load_le(p + 16, 4);
	if ((info == 0 && alloc == 0) ||
	    (bt >= 1 && bt <= LSP_MAX_FRAMES && info == 4 * (2 + bt) && alloc % info == 0))
		return 20 + map + alloc;
	kit_error_at(err, LEAKSNAP_ERR_UNKNOWN_FORMAT, c->source, 0, "%s", unrecognized);
	return 0;
}

static struct leaksnap_snapshot *open_blob(struct kit_blob *blob, const char *source,
				  const struct leaksnap_snapshot_open_opts *opts,
				  struct leaksnap_error *err)
{
	struct leaksnap_snapshot_open_opts known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_snapshot_open_opts", err) != 0)
		return NULL;
	opts = &known;
	bool raw_opts = opts->pointer_size != 0 || opts->frames != 0;
	if (blob->size == 0) {
		kit_error(err, LEAKSNAP_ERR_FORMAT, source, "empty file");
		return NULL;
	}
	struct leaksnap_snapshot *s = NULL;
	const char *what = NULL;
	size_t m = blob->size < LEAKSNAP_MAGIC_LEN ? blob->size : LEAKSNAP_MAGIC_LEN;
	if (memcmp(blob->data, LEAKSNAP_MAGIC, m) == 0) {
		s = lsp_read_leaksnap(blob, source, opts, err);
		what = "a leaksnap dump";
	} else if (blob->size >= 4 && kit_load_le(blob->data, 4) == LEAKSNAP_NHGT_SIGNATURE) {
		s = lsp_read_nhgt(blob, source, false, opts, err);
		what = "an NHGT payload";
	} else if (looks_like_text(blob)) {
		s = lsp_read_text(blob, source, opts, err);
		what = "a text dump";
	} else if (maps_prefix(blob->data, blob->size)) {
		kit_error_at(err, LEAKSNAP_ERR_MAPS_FILE, source, 0, "%s", maps_file);
		return NULL;
	} else if (raw_opts) {
		return lsp_read_raw(blob, source, opts, err);
	} else if (lsp_nhgt_old_matches(blob)) {
		s = lsp_read_nhgt(blob, source, true, opts, err);
		what = "an NHGT payload";
	} else {
		kit_error_at(err, LEAKSNAP_ERR_UNKNOWN_FORMAT, source, 0, "%s", unrecognized);
		return NULL;
	}
	if (s != NULL && raw_opts)
		lsp_snapshot_warn(s, "opts.pointer_size and opts.frames ignored: the input is %s",
				  what);
	return s;
}

struct leaksnap_snapshot *leaksnap_snapshot_open(const char *path,
						 const struct leaksnap_snapshot_open_opts *opts,
						 struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct kit_blob blob;
	const char *source = strcmp(path, "-") == 0 ? "<stdin>" : path;
	struct bound_ctx ctx = {opts, source};
	if (kit_blob_load(path, &blob, snapshot_stream_bound, &ctx, err))
		return NULL;
	struct leaksnap_snapshot *s = open_blob(&blob, source, opts, err);
	kit_blob_release(&blob);
	return s;
}

struct leaksnap_snapshot *leaksnap_snapshot_open_memory(
	const void *data, size_t size, const char *source,
	const struct leaksnap_snapshot_open_opts *opts, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct kit_blob blob = {.data = data, .size = size};
	return open_blob(&blob, source ? source : "<memory>", opts, err);
}
