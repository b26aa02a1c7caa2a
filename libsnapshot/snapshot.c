/* leaksnap: the snapshot model — builder, merging, accessors. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kit_format.h"
#include "snapshot_internal.h"

struct leaksnap_snapshot *lsp_snapshot_new(enum leaksnap_snapshot_format format, const char *source)
{
	struct leaksnap_snapshot *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->format = format;
	s->pid = -1;
	snprintf(s->source, sizeof(s->source), "%s", source ? source : "");
	return s;
}

void leaksnap_snapshot_close(struct leaksnap_snapshot *s)
{
	if (s == NULL)
		return;
	free(s->records);
	free(s->frame_off);
	free(s->frames);
	free(s->maps);
	for (size_t i = 0; i < s->nmeta; i++) {
		free((char *)(uintptr_t)s->meta[i].key);
		free((char *)(uintptr_t)s->meta[i].value);
	}
	free(s->meta);
	free(s->bids);
	for (size_t i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	free(s);
}

static int nomem(const struct leaksnap_snapshot *s, struct leaksnap_error *err)
{
	return kit_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
}

int lsp_snapshot_reserve(struct leaksnap_snapshot *s, size_t records, size_t frames,
			 struct leaksnap_error *err)
{
	size_t rcap = s->records_cap;
	if (records > SIZE_MAX / sizeof(struct leaksnap_snapshot_record) ||
	    frames > SIZE_MAX / sizeof(uint64_t))
		return nomem(s, err);
	if (records > rcap) {
		void *r = realloc(s->records, records * sizeof(*s->records));
		if (r == NULL)
			return nomem(s, err);
		s->records = r;
		kit_huge_hint(r, records * sizeof(*s->records));
		void *o = realloc(s->frame_off, records * sizeof(*s->frame_off));
		if (o == NULL)
			return nomem(s, err);
		kit_huge_hint(o, records * sizeof(*s->frame_off));
		s->frame_off = o;
		s->records_cap = records;
	}
	if (frames > s->frames_cap) {
		void *f = realloc(s->frames, frames * sizeof(*s->frames));
		if (f == NULL)
			return nomem(s, err);
		kit_huge_hint(f, frames * sizeof(*s->frames));
		s->frames = f;
		s->frames_cap = frames;
	}
	return 0;
}

int lsp_snapshot_add_begin(struct leaksnap_snapshot *s, uint64_t size, uint64_t count, bool zygote,
			   struct leaksnap_error *err)
{
	if (s->nrecords == s->records_cap) {
		size_t cap = s->records_cap;
		if (kit_grow((void **)&s->records, &cap, s->nrecords + 1, sizeof(*s->records)))
			return nomem(s, err);
		size_t ocap = s->records_cap;
		if (kit_grow((void **)&s->frame_off, &ocap, cap, sizeof(*s->frame_off)) ||
		    ocap < cap)
			return nomem(s, err);
		s->records_cap = cap;
	}
	/* Records' frames are s->frames + offset, even for records without
	 * any: the array exists once a record does. */
	if (s->frames == NULL &&
	    kit_grow((void **)&s->frames, &s->frames_cap, 1, sizeof(*s->frames)))
		return nomem(s, err);
	struct leaksnap_snapshot_record *r = &s->records[s->nrecords];
	r->size = size;
	r->count = count;
	r->zygote = zygote;
	r->frames = NULL;
	r->frame_count = 0;
	r->unreachable = 0;
	s->frame_off[s->nrecords] = s->nframes;
	s->nrecords++;
	return 0;
}

int lsp_snapshot_add_frame(struct leaksnap_snapshot *s, uint64_t pc, struct leaksnap_error *err)
{
	if (s->nframes == s->frames_cap &&
	    kit_grow((void **)&s->frames, &s->frames_cap, s->nframes + 1, sizeof(*s->frames)))
		return nomem(s, err);
	s->frames[s->nframes++] = pc;
	s->records[s->nrecords - 1].frame_count++;
	return 0;
}

int lsp_snapshot_add(struct leaksnap_snapshot *s, uint64_t size, uint64_t count, bool zygote,
		     const uint64_t *frames, uint32_t nframes, struct leaksnap_error *err)
{
	if (lsp_snapshot_add_begin(s, size, count, zygote, err))
		return -1;
	if (kit_grow((void **)&s->frames, &s->frames_cap, s->nframes + nframes, sizeof(*s->frames)))
		return nomem(s, err);
	memcpy(s->frames + s->nframes, frames, nframes * sizeof(*frames));
	s->nframes += nframes;
	s->records[s->nrecords - 1].frame_count = nframes;
	return 0;
}

int lsp_snapshot_set_maps(struct leaksnap_snapshot *s, const char *text, size_t len,
			  unsigned long line, uint64_t offset, struct leaksnap_error *err)
{
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return nomem(s, err);
	memcpy(copy, text, len);
	copy[len] = '\0';
	free(s->maps);
	s->maps = copy;
	s->maps_len = len;
	s->maps_line = line;
	s->maps_offset = offset;
	return 0;
}

int lsp_snapshot_add_meta(struct leaksnap_snapshot *s, const char *key, size_t key_len,
			  const char *value, size_t value_len, struct leaksnap_error *err)
{
	if (kit_grow((void **)&s->meta, &s->meta_cap, s->nmeta + 1, sizeof(*s->meta)))
		return nomem(s, err);
	char *k = strndup(key, key_len);
	char *v = strndup(value, value_len);
	if (k == NULL || v == NULL) {
		free(k);
		free(v);
		return nomem(s, err);
	}
	s->meta[s->nmeta].key = k;
	s->meta[s->nmeta].value = v;
	s->nmeta++;
	return 0;
}

int lsp_snapshot_warn(struct leaksnap_snapshot *s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **w = realloc(s->warnings, (s->nwarnings + 1) * sizeof(*w));
	if (w == NULL)
		return -1;
	s->warnings = w;
	if ((w[s->nwarnings] = strdup(buf)) == NULL)
		return -1;
	s->nwarnings++;
	return 0;
}

/* Merging ------------------------------------------------------------------ */

static inline uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t record_hash(const struct leaksnap_snapshot_record *r, const uint64_t *frames)
{
	uint64_t h = mix64(r->size, r->zygote ? 0x5a5a : 0xa5a5);
	h = mix64(h, r->frame_count);
	for (uint32_t i = 0; i < r->frame_count; i++)
		h = mix64(h, frames[i]);
	return h;
}

/* Android 7 wrote the number of frames (or the backtrace size) where the
 * count belongs.  Recognise it only when every record fits that pattern and
 * at least one "count" exceeds 1: a real dump with all counts equal to the
 * stack depth is implausible. */
static bool counts_look_like_frames(const struct leaksnap_snapshot *s)
{
	bool above_one = false;
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct leaksnap_snapshot_record *r = &s->records[i];
		if (r->count != r->frame_count && r->count != s->backtrace_size)
			return false;
		if (r->count > 1)
			above_one = true;
	}
	return above_one;
}

static int merge_records(struct leaksnap_snapshot *s, struct leaksnap_error *err)
{
	size_t n = s->nrecords;
	if (n == 0)
		return 0;
	size_t cap = 16;
	while (cap < n * 2)
		cap *= 2;
	uint32_t *slots = malloc(cap * sizeof(*slots));
	if (slots == NULL)
		return nomem(s, err);
	kit_huge_hint(slots, cap * sizeof(*slots));
	memset(slots, 0xff, cap * sizeof(*slots));

	size_t out = 0, fout = 0;
	for (size_t i = 0; i < n; i++) {
		struct leaksnap_snapshot_record r = s->records[i];
		const uint64_t *fr = s->frames + s->frame_off[i];
		uint64_t h = record_hash(&r, fr);
		size_t slot = h & (cap - 1);
		bool merged = false;
		while (slots[slot] != UINT32_MAX) {
			struct leaksnap_snapshot_record *o = &s->records[slots[slot]];
			if (o->size == r.size && o->zygote == r.zygote &&
			    o->frame_count == r.frame_count &&
			    memcmp(s->frames + s->frame_off[slots[slot]], fr,
				   r.frame_count * sizeof(*fr)) == 0) {
				/* unreachable <= count, so it cannot overflow first */
				if (kit_add_u64(o->count, r.count, &o->count) ||
				    kit_add_u64(o->unreachable, r.unreachable, &o->unreachable)) {
					free(slots);
					return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
							 "allocation counts overflow when merging "
							 "duplicate records");
				}
				merged = true;
				break;
			}
			slot = (slot + 1) & (cap - 1);
		}
		if (merged)
			continue;
		/* Compact in place: out <= i and fout <= frame_off[i]. */
		if (fout != s->frame_off[i])
			memmove(s->frames + fout, fr, r.frame_count * sizeof(*fr));
		s->records[out] = r;
		s->frame_off[out] = fout;
		slots[slot] = (uint32_t)out;
		fout += r.frame_count;
		out++;
	}
	free(slots);
	s->nrecords = out;
	s->nframes = fout;
	return 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
					 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int cmp_build_id(const void *a, const void *b)
{
	const struct lsp_build_id *x = a, *y = b;
	int c = strcmp(x->path, y->path);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* Index the metadata's well-formed "build_id=HEX PATH" lines (at most 64
 * bytes of ID) by path, so that leaksnap_snapshot_build_id() is a binary search. */
static int index_build_ids(struct leaksnap_snapshot *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nmeta; i++)
		n += strcmp(s->meta[i].key, "build_id") == 0;
	if (n == 0)
		return 0;
	s->bids = malloc(n * sizeof(*s->bids));
	if (!s->bids)
		return -1;
	for (size_t i = 0; i < s->nmeta; i++) {
		const char *v = s->meta[i].value, *sp = strchr(v, ' ');
		if (strcmp(s->meta[i].key, "build_id") != 0 || !sp || !sp[1])
			continue;
		struct lsp_build_id *b = &s->bids[s->nbids];
		size_t hex = (size_t)(sp - v);
		bool ok = hex > 0 && hex % 2 == 0 && hex / 2 <= sizeof(b->id);
		for (size_t k = 0; ok && k < hex / 2; k++) {
			int hi = hex_digit(v[2 * k]), lo = hex_digit(v[2 * k + 1]);
			ok = hi >= 0 && lo >= 0;
			if (ok)
				b->id[k] = (uint8_t)(hi << 4 | lo);
		}
		if (!ok)
			continue;
		b->path = sp + 1;
		b->line = i;
		b->len = hex / 2;
		s->nbids++;
	}
	qsort(s->bids, s->nbids, sizeof(*s->bids), cmp_build_id);
	return 0;
}

int lsp_snapshot_finalize(struct leaksnap_snapshot *s,
			  const struct leaksnap_snapshot_open_opts *opts, bool flagged,
			  enum lsp_count_hint hint, struct leaksnap_error *err)
{
	bool force = opts->count_is_frames;
	if (s->nrecords > UINT32_MAX - 1)
		return kit_error(err, LEAKSNAP_ERR_LIMIT, s->source, "more than %u records",
				 UINT32_MAX - 1);
	if (force)
		s->count_mode = LEAKSNAP_SNAPSHOT_COUNTS_FORCED;
	else if (flagged)
		s->count_mode = LEAKSNAP_SNAPSHOT_COUNTS_FLAGGED;
	else if (hint == LSP_COUNTS_MAY_DETECT && counts_look_like_frames(s))
		s->count_mode = LEAKSNAP_SNAPSHOT_COUNTS_DETECTED;
	else
		s->count_mode = LEAKSNAP_SNAPSHOT_COUNTS_REAL;

	if (s->has_reach && s->count_mode != LEAKSNAP_SNAPSHOT_COUNTS_REAL) {
		/* counts of blocks against frame counts mean nothing */
		s->has_reach = false;
		for (size_t i = 0; i < s->nrecords; i++)
			s->records[i].unreachable = 0;
		lsp_snapshot_warn(s, "the unreachable counts are ignored: the second field is "
				  "read as a frame count");
	}
	for (size_t i = 0; i < s->nrecords; i++) {
		if (s->count_mode != LEAKSNAP_SNAPSHOT_COUNTS_REAL)
			s->records[i].count = 1; /* each record was one allocation */
		else if (s->records[i].count == 0 && s->rec_stride)
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source,
					    s->rec_offset + i * s->rec_stride,
					    "record %zu has an allocation count of 0", i + 1);
		else if (s->records[i].count == 0)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "record %zu has an allocation count of 0", i + 1);
		uint64_t bytes;
		const struct leaksnap_snapshot_record *r = &s->records[i];
		if (s->rec_stride && kit_mul_u64(r->size, r->count, &bytes))
			return kit_error_at(err, LEAKSNAP_ERR_FORMAT, s->source,
					    s->rec_offset + i * s->rec_stride,
					    "record %zu: size %llu x count %llu overflows 64 bits",
					    i + 1, (unsigned long long)r->size,
					    (unsigned long long)r->count);
	}
	if (!opts->keep_duplicates && merge_records(s, err))
		return -1;

	s->records_bytes = 0;
	s->allocation_count = 0;
	s->unreachable_bytes = 0;
	s->unreachable_count = 0;
	for (size_t i = 0; i < s->nrecords; i++) {
		struct leaksnap_snapshot_record *r = &s->records[i];
		uint64_t bytes;
		if (kit_mul_u64(r->size, r->count, &bytes) ||
		    kit_add_u64(s->records_bytes, bytes, &s->records_bytes) ||
		    kit_add_u64(s->allocation_count, r->count, &s->allocation_count))
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "record sizes overflow 64 bits (size %llu x count %llu)",
					 (unsigned long long)r->size,
					 (unsigned long long)r->count);
		r->frames = s->frames + s->frame_off[i];
		/* unreachable <= count: neither sum can overflow now */
		s->unreachable_bytes += r->size * r->unreachable;
		s->unreachable_count += r->unreachable;
	}
	if (s->records_bytes > (uint64_t)INT64_MAX || s->allocation_count > (uint64_t)INT64_MAX)
		return kit_error(err, LEAKSNAP_ERR_LIMIT, s->source,
				 "absurd totals: %llu bytes in %llu allocations (limit 2^63)",
				 (unsigned long long)s->records_bytes,
				 (unsigned long long)s->allocation_count);
	if (s->has_producer_total && s->producer_total > (uint64_t)INT64_MAX)
		return kit_error(err, LEAKSNAP_ERR_LIMIT, s->source,
				 "absurd total memory %llu (limit 2^63)",
				 (unsigned long long)s->producer_total);
	free(s->frame_off);
	s->frame_off = NULL;
	/* Give back what merging and trimming zero padding freed. */
	if (s->nframes < s->frames_cap / 2 && s->nframes > 0) {
		uint64_t *f = realloc(s->frames, s->nframes * sizeof(*f));
		if (f != NULL) {
			for (size_t i = 0; i < s->nrecords; i++)
				s->records[i].frames = f + (s->records[i].frames - s->frames);
			s->frames = f;
			s->frames_cap = s->nframes;
		}
	}
	if (s->has_producer_total && s->producer_total != s->records_bytes &&
	    s->count_mode == LEAKSNAP_SNAPSHOT_COUNTS_REAL)
		lsp_snapshot_warn(s, "total memory %llu differs from the records' sum %llu",
				  (unsigned long long)s->producer_total,
				  (unsigned long long)s->records_bytes);
	return index_build_ids(s) ? nomem(s, err) : 0;
}

/* Accessors ---------------------------------------------------------------- */

const char *leaksnap_snapshot_format_name(enum leaksnap_snapshot_format format)
{
	switch (format) {
	case LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP: return "leaksnap";
	case LEAKSNAP_SNAPSHOT_FORMAT_BIONIC_RAW: return "bionic-raw";
	case LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT: return "android-text";
	case LEAKSNAP_SNAPSHOT_FORMAT_DDMS_NHGT: return "ddms-nhgt";
	}
	return "unknown";
}

enum leaksnap_snapshot_format leaksnap_snapshot_format(const struct leaksnap_snapshot *s)
{
	return s->format;
}
const char *leaksnap_snapshot_source(const struct leaksnap_snapshot *s) { return s->source; }
const char *leaksnap_snapshot_version(const struct leaksnap_snapshot *s)
{
	return s->version[0] ? s->version : NULL;
}
unsigned leaksnap_snapshot_pointer_size(const struct leaksnap_snapshot *s)
{
	return s->pointer_size;
}
unsigned leaksnap_snapshot_pointer_size_known(const struct leaksnap_snapshot *s)
{
	return s->pointer_size_guessed ? 0 : s->pointer_size;
}
unsigned leaksnap_snapshot_backtrace_size(const struct leaksnap_snapshot *s)
{
	return s->backtrace_size;
}
bool leaksnap_snapshot_big_endian(const struct leaksnap_snapshot *s) { return s->big_endian; }
int64_t leaksnap_snapshot_pid(const struct leaksnap_snapshot *s) { return s->pid; }
bool leaksnap_snapshot_time_ns(const struct leaksnap_snapshot *s, uint64_t *out)
{
	if (out)
		*out = s->time_ns;
	return s->has_time;
}
uint64_t leaksnap_snapshot_total_memory(const struct leaksnap_snapshot *s)
{
	return s->has_producer_total ? s->producer_total : s->records_bytes;
}
uint64_t leaksnap_snapshot_records_bytes(const struct leaksnap_snapshot *s)
{
	return s->records_bytes;
}
uint64_t leaksnap_snapshot_allocation_count(const struct leaksnap_snapshot *s)
{
	return s->allocation_count;
}
enum leaksnap_snapshot_count_mode leaksnap_snapshot_count_mode(const struct leaksnap_snapshot *s)
{
	return s->count_mode;
}
bool leaksnap_snapshot_has_reachability(const struct leaksnap_snapshot *s) { return s->has_reach; }
uint64_t leaksnap_snapshot_unreachable_bytes(const struct leaksnap_snapshot *s)
{
	return s->unreachable_bytes;
}
uint64_t leaksnap_snapshot_unreachable_count(const struct leaksnap_snapshot *s)
{
	return s->unreachable_count;
}
size_t leaksnap_snapshot_record_count(const struct leaksnap_snapshot *s) { return s->nrecords; }

const struct leaksnap_snapshot_record *leaksnap_snapshot_record(const struct leaksnap_snapshot *s,
								size_t index)
{
	return index < s->nrecords ? &s->records[index] : NULL;
}

const char *leaksnap_snapshot_maps(const struct leaksnap_snapshot *s, size_t *len,
				   unsigned long *line, uint64_t *offset)
{
	if (len)
		*len = s->maps_len;
	if (line)
		*line = s->maps_line;
	if (offset)
		*offset = s->maps_offset;
	return s->maps;
}

int leaksnap_snapshot_set_maps(struct leaksnap_snapshot *s, const char *text, size_t len,
		      struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return lsp_snapshot_set_maps(s, text, len, 1, 0, err);
}

size_t leaksnap_snapshot_meta_count(const struct leaksnap_snapshot *s) { return s->nmeta; }
const struct leaksnap_snapshot_meta *leaksnap_snapshot_meta(const struct leaksnap_snapshot *s,
							    size_t index)
{
	return index < s->nmeta ? &s->meta[index] : NULL;
}
const char *leaksnap_snapshot_meta_get(const struct leaksnap_snapshot *s, const char *key)
{
	for (size_t i = 0; i < s->nmeta; i++)
		if (strcmp(s->meta[i].key, key) == 0)
			return s->meta[i].value;
	return NULL;
}
/* The build_id= entry of exactly @path, or NULL. */
static const struct lsp_build_id *find_build_id(const struct leaksnap_snapshot *s, const char *path)
{
	size_t lo = 0, hi = s->nbids; /* the first entry not below @path */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(s->bids[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nbids && strcmp(s->bids[lo].path, path) == 0 ? &s->bids[lo] : NULL;
}

/* @path (@n bytes) as the hook writes it in metadata (format.h) into @buf
 * (@n + 1 bytes); with @ascii_only as hooks before it did, replacing the
 * ASCII controls only.  False when that spelling is @path itself. */
static bool meta_spelling(const char *path, size_t n, bool ascii_only, char *buf)
{
	const unsigned char *u = (const unsigned char *)path;
	bool differs = false;
	for (size_t i = 0; i < n;) {
		unsigned keep = kit_meta_keep(u, n, i);
		if (keep) {
			memcpy(buf + i, path + i, keep);
			i += keep;
			continue;
		}
		bool control = u[i] < 0x20 || u[i] == 0x7f;
		buf[i] = ascii_only && !control ? path[i] : '?';
		differs |= buf[i] != path[i];
		i++;
	}
	buf[n] = '\0';
	return differs;
}

size_t leaksnap_snapshot_build_id(const struct leaksnap_snapshot *s, const char *path, uint8_t *out,
				  size_t cap)
{
	const struct lsp_build_id *b = find_build_id(s, path);
	if (!b && s->nbids) {
		/* the metadata may spell the path with some bytes as '?' */
		size_t n = strlen(path);
		char *buf = malloc(n + 1);
		if (buf && meta_spelling(path, n, false, buf))
			b = find_build_id(s, buf);
		if (buf && !b && meta_spelling(path, n, true, buf))
			b = find_build_id(s, buf);
		free(buf);
	}
	if (!b)
		return 0;
	memcpy(out, b->id, b->len < cap ? b->len : cap);
	return b->len;
}

size_t leaksnap_snapshot_unloaded_build_id(const struct leaksnap_snapshot *s, const char *path,
					   uint64_t inode, uint8_t *out, size_t cap)
{
	/* "unloaded_build_id=HEX INODE PATH": few lines, read as asked */
	for (size_t i = 0; i < s->nmeta; i++) {
		if (strcmp(s->meta[i].key, "unloaded_build_id") != 0)
			continue;
		const char *v = s->meta[i].value, *sp = strchr(v, ' ');
		if (!sp)
			continue;
		char *end;
		errno = 0;
		unsigned long long ino = strtoull(sp + 1, &end, 10);
		if (errno || end == sp + 1 || *end != ' ' || ino != inode ||
		    strcmp(end + 1, path) != 0)
			continue;
		size_t hex = (size_t)(sp - v);
		if (hex == 0 || hex % 2 || hex / 2 > 64)
			continue;
		uint8_t id[64];
		bool ok = true;
		for (size_t k = 0; ok && k < hex / 2; k++) {
			int hi = hex_digit(v[2 * k]), lo = hex_digit(v[2 * k + 1]);
			ok = hi >= 0 && lo >= 0;
			if (ok)
				id[k] = (uint8_t)(hi << 4 | lo);
		}
		if (!ok)
			continue;
		memcpy(out, id, hex / 2 < cap ? hex / 2 : cap);
		return hex / 2;
	}
	return 0;
}

size_t leaksnap_snapshot_warning_count(const struct leaksnap_snapshot *s) { return s->nwarnings; }
const char *leaksnap_snapshot_warning(const struct leaksnap_snapshot *s, size_t index)
{
	return index < s->nwarnings ? s->warnings[index] : NULL;
}

/* Sampled snapshots ------------------------------------------------------- */

uint64_t leaksnap_snapshot_sample_interval(const struct leaksnap_snapshot *s)
{
	return s->sample_interval;
}

double leaksnap_sample_weight(uint64_t size, uint64_t interval)
{
	if (interval == 0 || size == 0 || size >= interval)
		return 1.0;
	/* 1 / (1 - e^-x), with expm1 for the small x of small blocks */
	return -1.0 / expm1(-(double)size / (double)interval);
}

/* @x rounded to the nearest whole number, within [0, UINT64_MAX] (llround
 * takes only what a long holds: a double of 2^63 or more is a whole
 * number already). */
static uint64_t round_u64(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0) /* 2^64 */
		return UINT64_MAX;
	if (x >= 9223372036854775808.0) /* 2^63 */
		return (uint64_t)x;
	return (uint64_t)llround(x);
}

static uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void leaksnap_sample_estimate(uint64_t size, uint64_t count, uint64_t interval, uint64_t *bytes,
			      uint64_t *est_count)
{
	double w = leaksnap_sample_weight(size, interval);
	if (bytes)
		*bytes = round_u64((double)count * w * (double)size);
	if (est_count)
		*est_count = round_u64((double)count * w);
}

void leaksnap_snapshot_record_estimate(const struct leaksnap_snapshot *s,
				       const struct leaksnap_snapshot_record *r, uint64_t *bytes,
				       uint64_t *count, uint64_t *unreachable_bytes,
				       uint64_t *unreachable_count)
{
	leaksnap_sample_estimate(r->size, r->count, s->sample_interval, bytes, count);
	leaksnap_sample_estimate(r->size, r->unreachable, s->sample_interval, unreachable_bytes,
				 unreachable_count);
}

void leaksnap_snapshot_estimate(const struct leaksnap_snapshot *s, uint64_t *bytes,
				uint64_t *count, uint64_t *unreachable_bytes,
				uint64_t *unreachable_count)
{
	/* the sums of the records' rounded estimates (the one rule every
	 * reader follows: a record's figures add up to the totals, and
	 * leakdiff's sums of the same records are the same numbers) */
	uint64_t b = 0, c = 0, ub = 0, uc = 0;
	for (size_t i = 0; i < s->nrecords; i++) {
		uint64_t rb, rc, rub, ruc;
		leaksnap_snapshot_record_estimate(s, &s->records[i], &rb, &rc, &rub, &ruc);
		b = sat_add_u64(b, rb);
		c = sat_add_u64(c, rc);
		ub = sat_add_u64(ub, rub);
		uc = sat_add_u64(uc, ruc);
	}
	if (bytes)
		*bytes = b;
	if (count)
		*count = c;
	if (unreachable_bytes)
		*unreachable_bytes = ub;
	if (unreachable_count)
		*unreachable_count = uc;
}

/* Ranking ------------------------------------------------------------------ */

/* > 0 when record a ranks before record b (@interval: the snapshot's
 * sampling interval, by whose estimates it ranks). */
static int rank_cmp_in(uint64_t interval, const struct leaksnap_snapshot_record *a, size_t ia,
		       const struct leaksnap_snapshot_record *b, size_t ib)
{
	if (interval) {
		double ea = (double)(a->size * a->count) * leaksnap_sample_weight(a->size, interval);
		double eb = (double)(b->size * b->count) * leaksnap_sample_weight(b->size, interval);
		if (ea != eb)
			return ea > eb ? 1 : -1;
	}
	uint64_t ta = a->size * a->count, tb = b->size * b->count; /* checked at finalize */
	if (ta != tb)
		return ta > tb ? 1 : -1;
	if (a->size != b->size)
		return a->size > b->size ? 1 : -1;
	if (a->count != b->count)
		return a->count > b->count ? 1 : -1;
	if (a->zygote != b->zygote)
		return a->zygote ? -1 : 1;
	uint32_t n = a->frame_count < b->frame_count ? a->frame_count : b->frame_count;
	for (uint32_t i = 0; i < n; i++)
		if (a->frames[i] != b->frames[i])
			return a->frames[i] < b->frames[i] ? 1 : -1;
	if (a->frame_count != b->frame_count)
		return a->frame_count < b->frame_count ? 1 : -1;
	return ia < ib ? 1 : (ia > ib ? -1 : 0);
}
#define rank_cmp(a, ia, b, ib) rank_cmp_in(s->sample_interval, a, ia, b, ib)

/* Min-heap on rank: the root is the weakest of the current top. */
static void heap_sift_down(const struct leaksnap_snapshot *s, size_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && rank_cmp(&s->records[h[l]], h[l], &s->records[h[m]], h[m]) < 0)
			m = l;
		if (r < n && rank_cmp(&s->records[h[r]], h[r], &s->records[h[m]], h[m]) < 0)
			m = r;
		if (m == i)
			return;
		size_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

size_t leaksnap_snapshot_records_top(const struct leaksnap_snapshot *s, size_t limit, size_t *out)
{
	size_t n = limit < s->nrecords ? limit : s->nrecords;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		out[i] = i;
	for (size_t i = n / 2; i-- > 0;)
		heap_sift_down(s, out, n, i);
	for (size_t i = n; i < s->nrecords; i++) {
		if (rank_cmp(&s->records[i], i, &s->records[out[0]], out[0]) > 0) {
			out[0] = i;
			heap_sift_down(s, out, n, 0);
		}
	}
	/* Heap sort in place: repeatedly move the weakest to the end. */
	for (size_t end = n; end > 1; end--) {
		size_t t = out[0];
		out[0] = out[end - 1];
		out[end - 1] = t;
		heap_sift_down(s, out, end - 1, 0);
	}
	return n;
}
