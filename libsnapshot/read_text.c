/* leaksnap: Android text heap dumps ("Android Native Heap Dump v1.0/1.1/1.2"),
 * as written by bionic malloc_debug and `am dumpheap -n`. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_format.h"
#include "snapshot_internal.h"

struct cursor {
	const char *p, *end;
	unsigned long line;     /* number of the line last returned */
	uint64_t line_off;      /* byte offset of the line last returned */
	const char *base;
};

/* Next line without its "\n" (and "\r"); false at end of input. */
static bool next_line(struct cursor *c, const char **s, size_t *len)
{
	if (c->p >= c->end)
		return false;
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	const char *e = nl ? nl : c->end;
	*s = c->p;
	c->line_off = (uint64_t)(c->p - c->base);
	c->line++;
	c->p = nl ? nl + 1 : c->end;
	if (e > *s && e[-1] == '\r')
		e--;
	*len = (size_t)(e - *s);
	return true;
}

static bool is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && memcmp(s, prefix, n) == 0;
}

/* Token scanner over one line. */
struct tokens {
	const char *p, *end;
};

static bool token_next(struct tokens *t, const char **s, size_t *len)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
	if (t->p >= t->end)
		return false;
	*s = t->p;
	while (t->p < t->end && *t->p != ' ' && *t->p != '\t')
		t->p++;
	*len = (size_t)(t->p - *s);
	return true;
}

static bool token_is(const char *s, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(s, word, len) == 0;
}

static bool parse_dec(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (kit_mul_u64(v, 10, &v) || kit_add_u64(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	*out = v;
	return true;
}

static bool parse_hex(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 16)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		v = (v << 4) | (uint64_t)d;
	}
	*out = v;
	return true;
}

/* "Key: value" header line → value (trimmed); false if not that key. */
static bool header_value(const char *s, size_t len, const char *key, const char **v,
			 size_t *vlen)
{
	if (!starts_with(s, len, key))
		return false;
	size_t i = strlen(key);
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t e = len;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	*v = s + i;
	*vlen = e - i;
	return true;
}

struct text_state {
	struct leaksnap_snapshot *s;
	struct cursor c;
	const char *source;
	struct leaksnap_error *err;
	bool have_bt_size, seen_record, wide;
	uint64_t bt_size, declared_records, nrecords_read;
	bool have_declared;
	unsigned max_frames;
	uint64_t cut_at_zero;      /* records with frames after a zero address */
	unsigned long first_cut;   /* the line of the first */
	bool counts_forced;        /* opts->count_is_frames */
};

static int bad_line(struct text_state *t, const char *what)
{
	return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line, "%s", what);
}

static int parse_record(struct text_state *t, const char *line, size_t len)
{
	struct tokens tk = {line, line + len};
	const char *w;
	size_t wl;
	uint64_t z, size, num;
	if (!token_next(&tk, &w, &wl) || !token_is(w, wl, "z") || !token_next(&tk, &w, &wl) ||
	    !parse_dec(w, wl, &z) || z > 1)
		return bad_line(t, "malformed record: expected 'z 0' or 'z 1'");
	if (!token_next(&tk, &w, &wl) || !token_is(w, wl, "sz") || !token_next(&tk, &w, &wl) ||
	    !parse_dec(w, wl, &size))
		return bad_line(t, "malformed record: expected 'sz <decimal size>'");
	if (!token_next(&tk, &w, &wl) || !token_is(w, wl, "num") || !token_next(&tk, &w, &wl) ||
	    !parse_dec(w, wl, &num))
		return bad_line(t, "malformed record: expected 'num <decimal count>'");
	if (!token_next(&tk, &w, &wl) || !token_is(w, wl, "bt"))
		return bad_line(t, "malformed record: expected 'bt' before the frames");
	/* (only Android 7's v1.0 may hold frame counts there: see the hint in
	 * lsp_read_text; elsewhere a count of 0 is wrong on this very line) */
	if (num == 0 && strcmp(t->s->version, "1.0") != 0 && !t->counts_forced)
		return bad_line(t, "record has an allocation count of 0");
	if (lsp_snapshot_add_begin(t->s, size, num, z == 1, t->err))
		return -1;
	unsigned nf = 0;
	bool ended = false; /* a zero address ends a stack, as in binary dumps */
	while (token_next(&tk, &w, &wl)) {
		uint64_t pc;
		if (!parse_hex(w, wl, &pc))
			return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line,
					      "malformed record: frame %u '%.*s%s' is not a "
					      "hex address", nf + 1, (int)(wl > 40 ? 40 : wl), w,
					      wl > 40 ? "..." : "");
		if (++nf > LSP_MAX_FRAMES)
			return kit_error_line(t->err, LEAKSNAP_ERR_LIMIT, t->source, t->c.line,
					      "record has more than %u frames", LSP_MAX_FRAMES);
		if (t->have_bt_size && nf > t->bt_size)
			return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line,
					      "record has more frames than the backtrace "
					      "size %llu", (unsigned long long)t->bt_size);
		if (wl == 16 || pc > 0xffffffffu)
			t->wide = true;
		if (pc == 0 || ended) {
			if (ended && pc != 0 && !t->cut_at_zero++)
				t->first_cut = t->c.line;
			ended = true;
			continue;
		}
		if (lsp_snapshot_add_frame(t->s, pc, t->err))
			return -1;
	}
	if (nf > t->max_frames)
		t->max_frames = nf;
	t->seen_record = true;
	t->nrecords_read++;
	return 0;
}

/* The MAPS section as the snapshot's maps text, its line ends made LF:
 * a dump saved with CRLF line ends keeps no CR in the maps it hands on
 * (to `convert`, whose text output is LF throughout). */
static int set_maps_lf(struct leaksnap_snapshot *s, const char *text, size_t len,
		       unsigned long line, uint64_t offset, struct leaksnap_error *err)
{
	if (!memchr(text, '\r', len))
		return lsp_snapshot_set_maps(s, text, len, line, offset, err);
	char *lf = malloc(len ? len : 1);
	if (!lf)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, leaksnap_snapshot_source(s),
				 "out of memory");
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (!(text[i] == '\r' && (i + 1 == len || text[i + 1] == '\n')))
			lf[n++] = text[i];
	int rc = lsp_snapshot_set_maps(s, lf, n, line, offset, err);
	free(lf);
	return rc;
}

bool lsp_text_maps_wide(const char *p, size_t len)
{
	const char *end = p + len;
	while (p < end) {
		while (p < end && *p == '0')
			p++; /* leading zeros are not significant */
		size_t digits = 0;
		while (p + digits < end && isxdigit((unsigned char)p[digits]))
			digits++;
		if (digits > 8)
			return true;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	return false;
}

/* The first line that is not blank must be the header with a known
 * version: a new snapshot of that version, or NULL with t->err filled. */
static struct leaksnap_snapshot *read_title(struct text_state *t, const struct kit_blob *blob)
{
	const char *source = t->source, *line;
	size_t len;
	if (memchr(blob->data, '\0', blob->size) != NULL) {
		const uint8_t *nul = memchr(blob->data, '\0', blob->size);
		kit_error_at(t->err, LEAKSNAP_ERR_FORMAT, source, (uint64_t)(nul - blob->data),
			     "NUL byte in a text dump");
		return NULL;
	}
	do {
		if (!next_line(&t->c, &line, &len)) {
			kit_error(t->err, LEAKSNAP_ERR_FORMAT, source, "empty text dump");
			return NULL;
		}
	} while (is_blank(line, len));

	size_t hl = strlen(LEAKSNAP_TEXT_HEADER);
	if (!starts_with(line, len, LEAKSNAP_TEXT_HEADER)) {
		kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, source, t->c.line,
			       "not an Android text heap dump (expected '%sX.Y')",
			       LEAKSNAP_TEXT_HEADER);
		return NULL;
	}
	const char *ver = line + hl;
	size_t vlen = len - hl;
	while (vlen > 0 && (ver[vlen - 1] == ' ' || ver[vlen - 1] == '\t'))
		vlen--;
	if (!(vlen == 3 && (memcmp(ver, "1.0", 3) == 0 || memcmp(ver, "1.1", 3) == 0 ||
			    memcmp(ver, "1.2", 3) == 0))) {
		kit_error_line(t->err, LEAKSNAP_ERR_VERSION, source, t->c.line,
			       "unsupported text dump version 'v%.*s%s' (known: v1.0, v1.1, v1.2)",
			       (int)(vlen > 20 ? 20 : vlen), ver, vlen > 20 ? "..." : "");
		return NULL;
	}
	struct leaksnap_snapshot *s = lsp_snapshot_new(LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT,
						       source);
	if (s == NULL) {
		kit_error(t->err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
		return NULL;
	}
	memcpy(s->version, ver, 3);
	return s;
}

/* A line of the header block (before the first record): 0, or -1 with
 * t->err filled. */
static int read_header_line(struct text_state *t, const char *line, size_t len)
{
	struct leaksnap_snapshot *s = t->s;
	const char *v;
	size_t vl;
	if (header_value(line, len, "Build fingerprint:", &v, &vl)) {
		if (vl >= 2 && v[0] == '\'' && v[vl - 1] == '\'') {
			v++;
			vl -= 2;
		}
		return lsp_snapshot_add_meta(s, "build_fingerprint", 17, v, vl, t->err);
	}
	if (header_value(line, len, "Total memory:", &v, &vl)) {
		if (!parse_dec(v, vl, &s->producer_total))
			return bad_line(t, "'Total memory:' is not a decimal number");
		s->has_producer_total = true;
		return 0;
	}
	if (header_value(line, len, "Allocation records:", &v, &vl)) {
		if (!parse_dec(v, vl, &t->declared_records))
			return bad_line(t, "'Allocation records:' is not a decimal number");
		t->have_declared = true;
		return 0;
	}
	if (header_value(line, len, "Backtrace size:", &v, &vl)) {
		if (!parse_dec(v, vl, &t->bt_size) || t->bt_size < 1 || t->bt_size > LSP_MAX_FRAMES)
			return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line,
					      "'Backtrace size:' must be a number from 1 to %u",
					      LSP_MAX_FRAMES);
		t->have_bt_size = true;
		return 0;
	}
	return bad_line(t, "unexpected line in the text dump header");
}

/* The MAPS section, its "MAPS" line just read, up to its END line: 0, or
 * -1 with t->err filled. */
static int read_maps_section(struct text_state *t)
{
	const char *start = t->c.p, *stop = start, *line;
	unsigned long first = t->c.line + 1;
	uint64_t first_off = (uint64_t)(t->c.p - t->c.base);
	size_t len;
	while (next_line(&t->c, &line, &len)) {
		if (len == 3 && memcmp(line, "END", 3) == 0)
			return set_maps_lf(t->s, start, (size_t)(stop - start), first, first_off,
					   t->err);
		stop = t->c.p;
	}
	return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line,
			      "truncated: the MAPS section has no END line");
}

/* Whether @line is a bt_info line (device-side symbolization, skipped:
 * leaksnap symbolizes itself). */
static bool is_bt_info(const char *line, size_t len)
{
	if (line[0] != ' ' && line[0] != '\t')
		return false;
	struct tokens tk = {line, line + len};
	const char *w;
	size_t wl;
	return token_next(&tk, &w, &wl) && token_is(w, wl, "bt_info");
}

/* Header lines, records and their bt_info lines, the MAPS section, then
 * nothing but blank lines: 0, or -1 with t->err filled. */
static int read_body(struct text_state *t, struct kit_blob *blob)
{
	const char *line;
	size_t len;
	bool maps_done = false;
	while (!maps_done && next_line(&t->c, &line, &len)) {
		if (is_blank(line, len))
			continue;
		if (line[0] == 'z' && len > 1 && (line[1] == ' ' || line[1] == '\t')) {
			if (parse_record(t, line, len))
				return -1;
			/* Records are copied into the model: let the kernel drop the
			 * mapped text behind us (a no-op for inputs read into memory). */
			if ((t->nrecords_read & 0xffff) == 0)
				kit_blob_drop(blob, (size_t)t->c.line_off);
			continue;
		}
		if (is_bt_info(line, len)) {
			if (!t->seen_record)
				return bad_line(t, "bt_info line before any record");
			continue;
		}
		if (len == 4 && memcmp(line, "MAPS", 4) == 0) {
			if (read_maps_section(t))
				return -1;
			maps_done = true;
		} else if (t->seen_record) {
			return bad_line(t, "unexpected line (expected a record, bt_info or MAPS)");
		} else if (read_header_line(t, line, len)) {
			return -1;
		}
	}
	if (!maps_done)
		return kit_error_line(t->err, LEAKSNAP_ERR_FORMAT, t->source, t->c.line + 1,
				      "truncated: no MAPS section (the dump ends after line %lu)",
				      t->c.line);
	while (next_line(&t->c, &line, &len))
		if (!is_blank(line, len))
			return bad_line(t, "unexpected text after the END line");
	return 0;
}

/* What the whole dump says: its warnings, backtrace and pointer sizes, and
 * whether its counts may be Android 7's frame counts. */
static int text_finish(struct text_state *t, const struct leaksnap_snapshot_open_opts *opts)
{
	struct leaksnap_snapshot *s = t->s;
	if (t->cut_at_zero)
		lsp_snapshot_warn(s,
				  "%llu record(s) list frames after a zero address (first at line "
				  "%lu): each stack ends at its zero, as in binary dumps",
				  (unsigned long long)t->cut_at_zero, t->first_cut);
	if (t->have_declared && t->declared_records != t->nrecords_read)
		lsp_snapshot_warn(s, "'Allocation records:' says %llu but the dump lists %llu",
				  (unsigned long long)t->declared_records,
				  (unsigned long long)t->nrecords_read);
	s->backtrace_size = t->have_bt_size ? (unsigned)t->bt_size : t->max_frames;
	s->pointer_size =
		(t->wide || lsp_text_maps_wide(s->maps ? s->maps : "", s->maps_len)) ? 8 : 4;
	/* 4 only because no address needs more: a 64-bit process whose
	 * addresses all lie below 4 GiB looks the same */
	s->pointer_size_guessed = s->pointer_size == 4;
	/* Only Android 7's v1.0 writer (the first with "Backtrace size:") had the
	 * count bug; older dumps and v1.1+ are never reinterpreted unless forced. */
	enum lsp_count_hint hint = (t->have_bt_size && strcmp(s->version, "1.0") == 0)
					   ? LSP_COUNTS_MAY_DETECT
					   : LSP_COUNTS_NEVER_DETECT;
	return lsp_snapshot_finalize(s, opts, false, hint, t->err);
}

struct leaksnap_snapshot *lsp_read_text(struct kit_blob *blob, const char *source,
					const struct leaksnap_snapshot_open_opts *opts,
					struct leaksnap_error *err)
{
	struct text_state t = {0};
	t.source = source;
	t.err = err;
	t.counts_forced = opts && opts->count_is_frames;
	t.c.base = (const char *)blob->data;
	t.c.p = t.c.base;
	t.c.end = t.c.base + blob->size;
	if (blob->size >= 3 && memcmp(t.c.p, "\xef\xbb\xbf", 3) == 0)
		t.c.p += 3; /* UTF-8 byte order mark */
	t.s = read_title(&t, blob);
	if (t.s == NULL)
		return NULL;
	if (read_body(&t, blob) || text_finish(&t, opts)) {
		leaksnap_snapshot_close(t.s);
		return NULL;
	}
	return t.s;
}
