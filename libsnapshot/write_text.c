/* leaksnap: writing Android text heap dumps v1.2, byte for byte as bionic's
 * malloc_debug writes them (write_dump / PointerData::DumpLiveToFile). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_format.h"
#include "write_internal.h"

/* A record's place in bionic's order, compact so that sorting a million
 * of them does not chase pointers into the records. */
struct order_key {
	uint64_t size;
	uint32_t index;      /* in the snapshot */
	uint16_t frames;     /* <= LSP_MAX_FRAMES */
	uint8_t zygote;
};

/* bionic's order (PointerData::GetList): app records before zygote ones,
 * larger sizes first, longer stacks first; where bionic then compares the
 * blocks' addresses, which a snapshot does not keep, the snapshot's own
 * order decides. */
static int bionic_order(const void *pa, const void *pb)
{
	const struct order_key *a = pa, *b = pb;
	if (a->zygote != b->zygote)
		return a->zygote ? 1 : -1;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	if (a->frames != b->frames)
		return a->frames > b->frames ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Lower-case hex without padding (PRIxPTR); returns the length. */
static size_t put_hex(char *out, uint64_t v)
{
	char tmp[16];
	size_t n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* What the text cannot hold at all: refuse before anything is written.
 * (A fingerprint cannot hold a line break: every reader takes it from one
 * line.) */
static int check_expressible(const struct leaksnap_snapshot *s, struct leaksnap_error *err)
{
	if (s->maps == NULL)
		return 0;
	if (memchr(s->maps, '\0', s->maps_len))
		return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
				 "the maps hold a NUL byte: a text dump cannot carry it");
	const char *p = s->maps, *end = s->maps + s->maps_len;
	for (unsigned long line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		size_t len = (size_t)(e - p) - (e > p && e[-1] == '\r');
		if (len == 3 && memcmp(p, "END", 3) == 0)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "maps line %lu reads 'END': in a text dump it would "
					 "end the maps", line);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static void tell(const struct leaksnap_snapshot_save_opts *opts, const char *fmt, ...)
	KIT_PRINTF(2, 3);
static void tell(const struct leaksnap_snapshot_save_opts *opts, const char *fmt, ...)
{
	if (opts->dropped == NULL)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	opts->dropped(opts->dropped_ctx, msg);
}

/* Is @key one of the ", "-separated names in @list? */
static bool key_listed(const char *list, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = list; *p;) {
		const char *e = strstr(p, ", ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && memcmp(p, key, n) == 0)
			return true;
		if (!e)
			break;
		p = e + 2;
	}
	return false;
}

/* Report what the text format leaves out, one sentence each. */
static void report_dropped(const struct leaksnap_snapshot *s,
			   const struct leaksnap_snapshot_save_opts *opts)
{
	if (s->pid >= 0)
		tell(opts, "the pid (%lld) is not written: the text format has no place for it",
		     (long long)s->pid);
	if (s->has_time)
		tell(opts, "the capture time is not written: the text format has no place for it");
	if (s->has_reach)
		tell(opts, "the unreachable counts (%llu bytes in %llu allocations) are not "
		     "written: the text format has no place for them",
		     (unsigned long long)s->unreachable_bytes,
		     (unsigned long long)s->unreachable_count);

	/* Metadata other than the fingerprint: how many lines, which keys. */
	char keys[256] = "";
	size_t lines = 0, used = 0;
	bool more = false, fingerprint_kept = false;
	for (size_t i = 0; i < s->nmeta; i++) {
		const char *k = s->meta[i].key;
		if (!fingerprint_kept && strcmp(k, "build_fingerprint") == 0) {
			fingerprint_kept = true; /* the first one is written */
			continue;
		}
		lines++;
		if (more || key_listed(keys, k)) /* bounded by the list's size */
			continue;
		size_t n = strlen(k);
		if (used + n + 2 + 5 >= sizeof(keys)) {
			more = true;
			continue;
		}
		used += (size_t)snprintf(keys + used, sizeof(keys) - used, "%s%s",
					 used ? ", " : "", k);
	}
	if (lines > 0)
		tell(opts, "%zu metadata line%s not written: the text format keeps only the "
		     "build fingerprint (%s%s)", lines, lines == 1 ? " is" : "s are", keys,
		     more ? ", ..." : "");

	/* The reader infers the pointer size from the PCs and maps. */
	bool wide = s->maps && lsp_text_maps_wide(s->maps, s->maps_len);
	for (size_t i = 0; i < s->nframes && !wide; i++)
		wide = s->frames[i] > 0xffffffffu;
	if (s->pointer_size == 8 && !wide)
		tell(opts, "pointer size 8 is not carried: no PC or maps address is above 4 GiB, "
		     "so the text reads back as 4-byte pointers");
	else if (s->pointer_size == 4 && wide)
		tell(opts, "pointer size 4 is not carried: addresses above 4 GiB make the text "
		     "read back as 8-byte pointers");
	if (s->backtrace_size == 0)
		tell(opts, "backtrace size 0 is written as 1, the smallest a text dump states");
}

static int write_records(const struct leaksnap_snapshot *s, const struct order_key *order,
			 struct lsp_out *o)
{
	char line[64 + 17 * 16];
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct leaksnap_snapshot_record *r = &s->records[order[i].index];
		int n = snprintf(line, sizeof(line), "z %d  sz %8llu  num    %llu  bt",
				 r->zygote ? 1 : 0, (unsigned long long)r->size,
				 (unsigned long long)r->count);
		size_t len = (size_t)n;
		for (uint32_t f = 0; f < r->frame_count; f++) {
			if (len > sizeof(line) - 18) {
				if (lsp_out_put(o, line, len))
					return -1;
				len = 0;
			}
			line[len++] = ' ';
			len += put_hex(line + len, r->frames[f]);
		}
		line[len++] = '\n';
		if (lsp_out_put(o, line, len))
			return -1;
	}
	return 0;
}

static int write_text(const struct leaksnap_snapshot *s,
		      const struct leaksnap_snapshot_save_opts *opts, const char *fingerprint,
		      const struct order_key *order, struct lsp_out *o, struct leaksnap_error *err)
{
	char head[128];
	if (lsp_out_str(o, LEAKSNAP_TEXT_HEADER "1.2\n\nBuild fingerprint: '") ||
	    lsp_out_str(o, fingerprint ? fingerprint : "unknown"))
		return -1;
	snprintf(head, sizeof(head),
		 "'\n\nTotal memory: %llu\nAllocation records: %zu\nBacktrace size: %u\n\n",
		 (unsigned long long)s->records_bytes, s->nrecords,
		 s->backtrace_size ? s->backtrace_size : 1);
	if (lsp_out_str(o, head) || write_records(s, order, o) || lsp_out_str(o, "MAPS\n"))
		return -1;
	uint64_t size;
	if (lsp_rewrite_maps(s, opts, o, &size, err))
		return -1;
	if (s->maps_len > 0 && s->maps[s->maps_len - 1] != '\n' && lsp_out_str(o, "\n"))
		return -1;
	return lsp_out_str(o, "END\n");
}

int leaksnap_snapshot_save_text(const struct leaksnap_snapshot *s, const char *path,
		       const struct leaksnap_snapshot_save_opts *opts, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_snapshot_save_opts known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_snapshot_save_opts", err) != 0)
		return -1;
	opts = &known;
	if (opts->big_endian || opts->pointer_size)
		return kit_error(err, LEAKSNAP_ERR_USAGE, path,
				 "a text dump has no byte order or pointer size to choose");
	const char *fingerprint = leaksnap_snapshot_meta_get(s, "build_fingerprint");
	uint64_t maps_size;
	if (lsp_rewrite_check(opts, path, err) || check_expressible(s, err) ||
	    lsp_rewrite_maps(s, opts, NULL, &maps_size, err))
		return -1;
	/* finalize caps the records below 2^32, backtrace sizes at 256 */
	struct order_key *order = malloc((s->nrecords ? s->nrecords : 1) * sizeof(*order));
	if (order == NULL)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
	for (size_t i = 0; i < s->nrecords; i++)
		order[i] = (struct order_key){.size = s->records[i].size,
					      .index = (uint32_t)i,
					      .frames = (uint16_t)s->records[i].frame_count,
					      .zygote = s->records[i].zygote};
	qsort(order, s->nrecords, sizeof(*order), bionic_order);
	report_dropped(s, opts);

	struct lsp_out o;
	int ret = lsp_out_open(&o, path, err);
	if (ret == 0)
		ret = lsp_out_close(&o, write_text(s, opts, fingerprint, order, &o, err) == 0);
	free(order);
	return ret;
}
