/* leaksnap: binary inputs — LEAKSNAP v1, raw bionic buffers, DDMS NHGT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_format.h"
#include "snapshot_internal.h"

/* Little-endian records of @ptr-byte fields on a little-endian host: the
 * common case, decoded straight into the snapshot's arrays (the generic loop
 * below costs a call per field and a copy per record). */
static void decode_le(struct leaksnap_snapshot *s, const uint8_t *p, unsigned ptr, unsigned frames)
{
	struct leaksnap_snapshot_record *r = &s->records[s->nrecords];
	uint64_t *out = s->frames + s->nframes;
	uint64_t raw_size, count;
	uint32_t nf = 0;
	if (ptr == 8) {
		uint64_t v;
		memcpy(&raw_size, p, 8);
		memcpy(&count, p + 8, 8);
		for (p += 16; nf < frames; nf++, p += 8) {
			memcpy(&v, p, 8);
			if (v == 0)
				break; /* zero padding after the last frame */
			out[nf] = v;
		}
	} else {
		uint32_t v, sz, cnt;
		memcpy(&sz, p, 4);
		memcpy(&cnt, p + 4, 4);
		raw_size = sz;
		count = cnt;
		for (p += 8; nf < frames; nf++, p += 4) {
			memcpy(&v, p, 4);
			if (v == 0)
				break;
			out[nf] = v;
		}
	}
	r->size = raw_size & ~LSP_ZYGOTE_BIT;
	r->count = count;
	r->zygote = (raw_size & LSP_ZYGOTE_BIT) != 0;
	r->frames = NULL;
	r->frame_count = nf;
	r->unreachable = 0;
	s->frame_off[s->nrecords++] = s->nframes;
	s->nframes += nf;
}

/* Decode a get_malloc_leak_info record area into @s. */
int lsp_decode_records(struct leaksnap_snapshot *s, struct kit_blob *blob, const uint8_t *area,
		       uint64_t size, uint64_t base, unsigned ptr, unsigned frames,
		       bool big_endian, struct leaksnap_error *err)
{
	uint64_t info = (uint64_t)ptr * (2 + frames);
	uint64_t n = size / info;
	/* The header's sizes were checked against the file, so these bounds are
	 * at most the input's own size. */
	if (lsp_snapshot_reserve(s, s->nrecords + (size_t)n, s->nframes + (size_t)(n * frames),
				 err))
		return -1;
	const bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	uint64_t (*load)(const uint8_t *, unsigned) = big_endian ? kit_load_be : kit_load_le;
	uint64_t pcs[LSP_MAX_FRAMES];
	if (s->nrecords == 0) {
		s->rec_offset = base + ptr;
		s->rec_stride = info;
	}
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = area + i * info;
		if (host_le && !big_endian) {
			decode_le(s, p, ptr, frames); /* room reserved above */
		} else {
			uint64_t raw_size = load(p, ptr);
			uint64_t count = load(p + ptr, ptr);
			uint32_t nf = 0;
			for (; nf < frames; nf++) {
				uint64_t pc = load(p + (2 + nf) * ptr, ptr);
				if (pc == 0)
					break; /* zero padding after the last frame */
				pcs[nf] = pc;
			}
			if (lsp_snapshot_add(s, raw_size & ~LSP_ZYGOTE_BIT, count,
					     (raw_size & LSP_ZYGOTE_BIT) != 0, pcs, nf, err))
				return -1;
		}
		/* Every 16 MiB, let the kernel drop what is decoded. */
		if ((i & 0xffff) == 0xffff)
			kit_blob_drop(blob, (size_t)(p - blob->data));
	}
	return 0;
}

/* LEAKSNAP v1 --------------------------------------------------------------- */

/* One field of the 64-byte header, and the step that takes it: each step
 * stores the field in the header and checks what can be checked once the
 * fields before it are known.  0, or -1 with @err filled. */
struct field;
typedef int (*field_step)(const struct field *f, const uint8_t *p, uint64_t file_size,
			  struct leaksnap_snapshot_header *h, const char *source,
			  struct leaksnap_error *err);
struct field {
	const char *name;
	unsigned offset, width;
	field_step take;
};

/* magic, version, pointer_size, flags, backtrace_size: what the records are. */
static int take_layout(const struct field *f, const uint8_t *p, uint64_t file_size,
		       struct leaksnap_snapshot_header *h, const char *source,
		       struct leaksnap_error *err)
{
	(void)file_size;
	switch (f->offset) {
	case 0:
		if (memcmp(p, LEAKSNAP_MAGIC, LEAKSNAP_MAGIC_LEN) != 0)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 0,
					    "bad magic (expected 'LEAKSNAP')");
		break;
	case 8:
		h->version = (uint16_t)kit_load_le(p, 2);
		if (h->version != LEAKSNAP_VERSION)
			return kit_error_at(err, LEAKSNAP_ERR_VERSION, source, 8,
					    "unsupported LEAKSNAP version %u "
					    "(this reader knows version %u)",
					    h->version, LEAKSNAP_VERSION);
		break;
	case 10:
		h->pointer_size = p[0];
		if (h->pointer_size != 4 && h->pointer_size != 8)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 10,
					    "bad pointer_size %u (must be 4 or 8)",
					    h->pointer_size);
		break;
	case 11:
		h->flags = p[0];
		if (h->flags &
		    ~(LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN | LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES |
		      LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY))
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 11,
					    "unknown flag bits 0x%02x", h->flags);
		if ((h->flags & LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES) &&
		    (h->flags & LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY))
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 11,
					    "flag bits 1 (Android 7 counts) and 2 "
					    "(reachability) are never set together");
		break;
	case 12:
		h->backtrace_size = (uint32_t)kit_load_le(p, 4);
		if (h->backtrace_size < 1 || h->backtrace_size > LSP_MAX_FRAMES)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 12,
					    "bad backtrace_size %u (must be 1..%u)",
					    h->backtrace_size, LSP_MAX_FRAMES);
		break;
	}
	return 0;
}

/* pid, meta_size, time_ns, total_memory: taken as they are (meta_size is
 * checked with the sections, once the sizes before it are known). */
static int take_plain(const struct field *f, const uint8_t *p, uint64_t file_size,
		      struct leaksnap_snapshot_header *h, const char *source,
		      struct leaksnap_error *err)
{
	(void)file_size, (void)source, (void)err;
	switch (f->offset) {
	case 16: h->pid = (uint32_t)kit_load_le(p, 4); break;
	case 20: h->meta_size = (uint32_t)kit_load_le(p, 4); break;
	case 24: h->time_ns = kit_load_le(p, 8); break;
	case 32: h->total_memory = kit_load_le(p, 8); break;
	}
	return 0;
}

/* info_size, records_size, maps_size: against the layout and the file. */
static int take_size(const struct field *f, const uint8_t *p, uint64_t file_size,
		     struct leaksnap_snapshot_header *h, const char *source,
		     struct leaksnap_error *err)
{
	switch (f->offset) {
	case 40:
		h->info_size = kit_load_le(p, 8);
		if (h->info_size != (uint64_t)h->pointer_size * (2 + h->backtrace_size))
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 40,
					    "info_size %llu is inconsistent: pointer_size %u "
					    "x (2 + backtrace_size %u) is %u",
					    (unsigned long long)h->info_size, h->pointer_size,
					    h->backtrace_size,
					    h->pointer_size * (2 + h->backtrace_size));
		break;
	case 48:
		h->records_size = kit_load_le(p, 8);
		if (file_size < LEAKSNAP_SNAPSHOT_HEADER_SIZE)
			break; /* reported as a truncated header */
		if (h->records_size % h->info_size != 0)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 48,
					    "records_size %llu is not a multiple of "
					    "info_size %llu",
					    (unsigned long long)h->records_size,
					    (unsigned long long)h->info_size);
		if (h->records_size > file_size - LEAKSNAP_SNAPSHOT_HEADER_SIZE)
			return kit_error_at(
				err, LEAKSNAP_ERR_FORMAT, source, 48,
				"records_size %llu runs past the end of the file "
				"(%llu bytes follow the header)",
				(unsigned long long)h->records_size,
				(unsigned long long)(file_size - LEAKSNAP_SNAPSHOT_HEADER_SIZE));
		break;
	case 56:
		h->maps_size = kit_load_le(p, 8);
		if (h->maps_size > file_size - LEAKSNAP_SNAPSHOT_HEADER_SIZE - h->records_size)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 56,
					    "maps_size %llu runs past the end of the file "
					    "(%llu bytes follow the records)",
					    (unsigned long long)h->maps_size,
					    (unsigned long long)(file_size -
								 LEAKSNAP_SNAPSHOT_HEADER_SIZE -
								 h->records_size));
		break;
	}
	return 0;
}

static const struct field header_fields[] = {
	{"magic", 0, 8, take_layout},         {"version", 8, 2, take_layout},
	{"pointer_size", 10, 1, take_layout}, {"flags", 11, 1, take_layout},
	{"backtrace_size", 12, 4, take_layout}, {"pid", 16, 4, take_plain},
	{"meta_size", 20, 4, take_plain},     {"time_ns", 24, 8, take_plain},
	{"total_memory", 32, 8, take_plain},  {"info_size", 40, 8, take_size},
	{"records_size", 48, 8, take_size},   {"maps_size", 56, 8, take_size},
};

/* What follows the maps: the metadata, then the reachability section when
 * flag bit 2 says so, and nothing after them. */
static int check_sections(const struct leaksnap_snapshot_header *h, uint64_t file_size,
			  const char *source, struct leaksnap_error *err)
{
	uint64_t rest = file_size - LEAKSNAP_SNAPSHOT_HEADER_SIZE - h->records_size - h->maps_size;
	if (h->meta_size > rest)
		return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 20,
				    "meta_size %u runs past the end of the file "
				    "(%llu bytes follow the maps)",
				    h->meta_size, (unsigned long long)rest);
	uint64_t after = rest - h->meta_size, start = file_size - after;
	if (!(h->flags & LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY)) {
		if (after > 0)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, start,
					    "%llu trailing bytes after the metadata section",
					    (unsigned long long)after);
		return 0;
	}
	uint64_t reach = LEAKSNAP_SNAPSHOT_REACHABILITY_SIZE(h->records_size, h->info_size);
	if (after < reach)
		return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, start,
				    "truncated reachability section: %llu records need %llu bytes, "
				    "%llu follow the metadata",
				    (unsigned long long)(reach / 4), (unsigned long long)reach,
				    (unsigned long long)after);
	if (after > reach)
		return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, start + reach,
				    "%llu trailing bytes after the reachability section",
				    (unsigned long long)(after - reach));
	return 0;
}

int leaksnap_snapshot_header_decode(const uint8_t *buf, size_t len, uint64_t file_size,
			   struct leaksnap_snapshot_header *h, const char *source,
			   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	memset(h, 0, sizeof(*h));
	/* Check each complete field in order; stop at the first incomplete one. */
	for (size_t i = 0; i < sizeof(header_fields) / sizeof(header_fields[0]); i++) {
		const struct field *f = &header_fields[i];
		if (len < (size_t)f->offset + f->width)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, len,
					    "truncated header: field '%s' needs bytes %u-%u, "
					    "file ends after %zu bytes",
					    f->name, f->offset, f->offset + f->width - 1, len);
		if (f->take(f, buf + f->offset, file_size, h, source, err))
			return -1;
	}
	return check_sections(h, file_size, source, err);
}

/* Metadata: "key=value\n" lines. */
static int parse_meta(struct leaksnap_snapshot *s, const uint8_t *p, uint64_t size, uint64_t base,
		      struct leaksnap_error *err)
{
	uint64_t i = 0;
	while (i < size) {
		const uint8_t *line = p + i;
		const uint8_t *nl = memchr(line, '\n', size - i);
		if (nl == NULL)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source, base + i,
					    "metadata line does not end with a newline");
		size_t len = (size_t)(nl - line);
		if (memchr(line, '\0', len) != NULL)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source, base + i,
					    "NUL byte in metadata");
		const uint8_t *eq = memchr(line, '=', len);
		if (eq == NULL || eq == line)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source, base + i,
					    "metadata line is not 'key=value'");
		if (lsp_snapshot_add_meta(s, (const char *)line, (size_t)(eq - line),
					  (const char *)eq + 1, len - (size_t)(eq - line) - 1, err))
			return -1;
		i += len + 1;
	}
	return 0;
}

/* Reachability section: one u32 per record, in the records' byte order,
 * each at most that record's count (read before merging, so record i is
 * the file's record i). */
static int read_reachability(struct leaksnap_snapshot *s, const uint8_t *p, uint64_t base,
			     struct leaksnap_error *err)
{
	for (size_t i = 0; i < s->nrecords; i++, p += 4) {
		uint64_t n = s->big_endian ? kit_load_be(p, 4) : kit_load_le(p, 4);
		struct leaksnap_snapshot_record *r = &s->records[i];
		if (n > r->count)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source, base + 4 * i,
					    "record %zu: %llu unreachable allocations, more than "
					    "its %llu",
					    i + 1, (unsigned long long)n,
					    (unsigned long long)r->count);
		r->unreachable = n;
	}
	s->has_reach = true;
	return 0;
}


/* The hook writes a block of 2 GiB or more as 2 GiB - 1 bytes (bit 31 of
 * the size field is the zygote flag) and counts them in clamped_sizes=N:
 * the records' sizes are then lower bounds, which the reader says. */
static int warn_clamped(struct leaksnap_snapshot *s)
{
	const char *v = leaksnap_snapshot_meta_get(s, "clamped_sizes");
	if (!v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n == 0)
		return 0;
	return lsp_snapshot_warn(s, "%llu allocation%s of 2 GiB or more %s recorded as "
			       "2147483647 bytes (clamped_sizes=%llu: the size field keeps 31 "
			       "bits): sizes and totals that include %s are lower bounds",
			       n, n == 1 ? "" : "s", n == 1 ? "is" : "are", n,
			       n == 1 ? "it" : "them");
}

/* A frame-pointer walk (unwinder=fp) through code built without frame
 * pointers stops after a frame or two: the hook counts such stacks in
 * fp_shallow=N/M and says frame_pointers=missing when they are most of
 * them; the reader says what to do. */
static int warn_no_frame_pointers(struct leaksnap_snapshot *s)
{
	const char *v = leaksnap_snapshot_meta_get(s, "frame_pointers");
	if (!v || strcmp(v, "missing") != 0)
		return 0;
	const char *counts = leaksnap_snapshot_meta_get(s, "fp_shallow");
	unsigned long long n = 0, m = 0;
	char tail;
	if (!counts || sscanf(counts, "%llu/%llu%c", &n, &m, &tail) != 2 || n > m)
		n = m = 0;
	if (m)
		return lsp_snapshot_warn(s, "the program seems to lack frame pointers: %llu of "
				       "%llu stacks end after their first frame under --unwind fp "
				       "(frame_pointers=missing); record with --unwind auto "
				       "(LEAKSNAP_UNWIND=auto) for whole stacks",
				       n, m);
	return lsp_snapshot_warn(s, "the program seems to lack frame pointers "
			       "(frame_pointers=missing); record with --unwind auto "
			       "(LEAKSNAP_UNWIND=auto) for whole stacks");
}

/* sample_interval=BYTES (a sampled dump): a decimal from 1 to 2^40. */
static int read_sample_interval(struct leaksnap_snapshot *s, const char *source,
				struct leaksnap_error *err)
{
	const char *v = leaksnap_snapshot_meta_get(s, "sample_interval");
	if (!v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v < '0' || *v > '9' || n == 0 || n > (1ULL << 40))
		return kit_error(err, LEAKSNAP_ERR_FORMAT, source,
				 "metadata sample_interval=%s: not a number of bytes from 1 to "
				 "1099511627776", v);
	s->sample_interval = n;
	return 0;
}

struct leaksnap_snapshot *lsp_read_leaksnap(struct kit_blob *blob, const char *source,
				   const struct leaksnap_snapshot_open_opts *opts,
				   struct leaksnap_error *err)
{
	struct leaksnap_snapshot_header h;
	if (leaksnap_snapshot_header_decode(blob->data, blob->size, blob->size, &h, source, err))
		return NULL;
	struct leaksnap_snapshot *s = lsp_snapshot_new(LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP, source);
	if (s == NULL) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
		return NULL;
	}
	snprintf(s->version, sizeof(s->version), "%u", h.version);
	s->pointer_size = h.pointer_size;
	s->backtrace_size = h.backtrace_size;
	s->big_endian = (h.flags & LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN) != 0;
	s->pid = h.pid ? (int64_t)h.pid : -1;
	s->has_time = h.time_ns != 0;
	s->time_ns = h.time_ns;
	s->has_producer_total = true;
	s->producer_total = h.total_memory;

	uint64_t off = LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	if (lsp_decode_records(s, blob, blob->data + off, h.records_size, off, h.pointer_size,
			       h.backtrace_size, s->big_endian, err))
		goto fail;
	off += h.records_size;
	if (h.maps_size &&
	    lsp_snapshot_set_maps(s, (const char *)blob->data + off, (size_t)h.maps_size, 0, off,
				  err))
		goto fail;
	off += h.maps_size;
	if (parse_meta(s, blob->data + off, h.meta_size, off, err))
		goto fail;
	off += h.meta_size;
	if (warn_clamped(s) || warn_no_frame_pointers(s)) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
		goto fail;
	}
	if (read_sample_interval(s, source, err))
		goto fail;
	if ((h.flags & LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY) &&
	    read_reachability(s, blob->data + off, off, err))
		goto fail;
	if (lsp_snapshot_finalize(s, opts,
				  (h.flags & LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES) != 0,
				  LSP_COUNTS_NEVER_DETECT, err))
		goto fail;
	return s;
fail:
	leaksnap_snapshot_close(s);
	return NULL;
}

/* Raw bionic buffer ---------------------------------------------------------- */

struct leaksnap_snapshot *lsp_read_raw(struct kit_blob *blob, const char *source,
				       const struct leaksnap_snapshot_open_opts *opts,
				       struct leaksnap_error *err)
{
	unsigned ptr = opts->pointer_size, frames = opts->frames;
	if (ptr != 4 && ptr != 8) {
		kit_error(err, LEAKSNAP_ERR_USAGE, source, "opts.pointer_size must be 4 or 8");
		return NULL;
	}
	if (frames < 1 || frames > LSP_MAX_FRAMES) {
		kit_error(err, LEAKSNAP_ERR_USAGE, source, "opts.frames must be 1..%u",
			  LSP_MAX_FRAMES);
		return NULL;
	}
	uint64_t info = (uint64_t)ptr * (2 + frames);
	if (blob->size % info != 0) {
		kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, blob->size / info * info,
			     "size %zu is not a multiple of the record size %llu "
			     "(pointer size %u, %u frames): truncated or wrong opts.frames",
			     blob->size, (unsigned long long)info, ptr, frames);
		return NULL;
	}
	struct leaksnap_snapshot *s = lsp_snapshot_new(LEAKSNAP_SNAPSHOT_FORMAT_BIONIC_RAW, source);
	if (s == NULL) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
		return NULL;
	}
	s->pointer_size = ptr;
	s->backtrace_size = frames;
	if (lsp_decode_records(s, blob, blob->data, blob->size, 0, ptr, frames, false, err) ||
	    lsp_snapshot_finalize(s, opts, false, LSP_COUNTS_MAY_DETECT, err)) {
		leaksnap_snapshot_close(s);
		return NULL;
	}
	return s;
}

/* DDMS NHGT ------------------------------------------------------------------
 * New header: u32 signature, u16 version, u16 pointerSize, then five size_t
 * (mapSize, allocSize, allocInfoSize, totalMemory, backtraceSize) of
 * pointerSize bytes.  Old 32-bit header: the five fields only, 4 bytes each.
 * Then mapSize bytes of maps text, then the record area. */

static const char *const nhgt_fields[] = {"mapSize", "allocSize", "allocInfoSize",
					  "totalMemory", "backtraceSize"};

bool lsp_nhgt_old_matches(const struct kit_blob *blob)
{
	if (blob->size < 20)
		return false;
	uint64_t v[5];
	for (int i = 0; i < 5; i++)
		v[i] = kit_load_le(blob->data + 4 * i, 4);
	uint64_t map = v[0], alloc = v[1], info = v[2], bt = v[4];
	if (20 + map + alloc != blob->size)
		return false;
	if (info == 0)
		return alloc == 0;
	if (bt < 1 || bt > LSP_MAX_FRAMES || info != 4 * (2 + bt) || alloc % info)
		return false;
	/* Maps text starts with a hex address. */
	if (map > 0) {
		uint8_t c = blob->data[20];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

struct leaksnap_snapshot *lsp_read_nhgt(struct kit_blob *blob, const char *source, bool old_header,
					const struct leaksnap_snapshot_open_opts *opts,
					struct leaksnap_error *err)
{
	unsigned ptr = 4, version = 0;
	uint64_t off = 0;
	if (!old_header) {
		if (blob->size < 8) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, blob->size,
				     "truncated NHGT header (%zu of 8 bytes)", blob->size);
			return NULL;
		}
		version = (unsigned)kit_load_le(blob->data + 4, 2);
		ptr = (unsigned)kit_load_le(blob->data + 6, 2);
		if (ptr != 4 && ptr != 8) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, 6,
				     "bad NHGT pointerSize %u (must be 4 or 8)", ptr);
			return NULL;
		}
		off = 8;
	}
	uint64_t v[5];
	for (int i = 0; i < 5; i++) {
		if (blob->size < off + ptr) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, blob->size,
				     "truncated NHGT header: field '%s' at byte offset %llu "
				     "needs %u bytes",
				     nhgt_fields[i], (unsigned long long)off, ptr);
			return NULL;
		}
		v[i] = kit_load_le(blob->data + off, ptr);
		off += ptr;
	}
	uint64_t map = v[0], alloc = v[1], info = v[2], total = v[3], bt = v[4];
	uint64_t hdr = off, field_base = old_header ? 0 : 8;
	if (info != 0 || alloc != 0) {
		if (bt < 1 || bt > LSP_MAX_FRAMES) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, field_base + 4 * ptr,
				     "bad backtraceSize %llu (must be 1..%u)",
				     (unsigned long long)bt, LSP_MAX_FRAMES);
			return NULL;
		}
		if (info != ptr * (2 + bt)) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, field_base + 2 * ptr,
				     "allocInfoSize %llu is inconsistent: pointer size %u x "
				     "(2 + backtraceSize %llu) is %llu",
				     (unsigned long long)info, ptr, (unsigned long long)bt,
				     (unsigned long long)(ptr * (2 + bt)));
			return NULL;
		}
		if (alloc % info) {
			kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, field_base + ptr,
				     "allocSize %llu is not a multiple of allocInfoSize %llu",
				     (unsigned long long)alloc, (unsigned long long)info);
			return NULL;
		}
	}
	uint64_t avail = blob->size - hdr;
	if (map > avail) {
		kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, field_base,
			     "mapSize %llu runs past the end of the file (%llu bytes follow the "
			     "header)", (unsigned long long)map, (unsigned long long)avail);
		return NULL;
	}
	if (alloc > avail - map) {
		kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, field_base + ptr,
			     "allocSize %llu runs past the end of the file (%llu bytes follow "
			     "the maps)", (unsigned long long)alloc,
			     (unsigned long long)(avail - map));
		return NULL;
	}
	if (alloc < avail - map) {
		kit_error_at(err, LEAKSNAP_ERR_FORMAT, source, hdr + map + alloc,
			     "%llu trailing bytes after the record area",
			     (unsigned long long)(avail - map - alloc));
		return NULL;
	}
	struct leaksnap_snapshot *s = lsp_snapshot_new(LEAKSNAP_SNAPSHOT_FORMAT_DDMS_NHGT, source);
	if (s == NULL) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
		return NULL;
	}
	if (!old_header)
		snprintf(s->version, sizeof(s->version), "%u", version);
	s->pointer_size = ptr;
	s->backtrace_size = (unsigned)bt;
	s->has_producer_total = true;
	s->producer_total = total;
	if ((map && lsp_snapshot_set_maps(s, (const char *)blob->data + hdr, (size_t)map, 0, hdr,
					  err)) ||
	    (alloc && lsp_decode_records(s, blob, blob->data + hdr + map, alloc, hdr + map, ptr,
					 (unsigned)bt, false, err)) ||
	    lsp_snapshot_finalize(s, opts, false, LSP_COUNTS_MAY_DETECT, err)) {
		leaksnap_snapshot_close(s);
		return NULL;
	}
	return s;
}
