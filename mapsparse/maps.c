/* leaksnap: /proc/<pid>/maps parsing and PC -> module lookup.
 *
 * One pass over a private copy of the text with a hand-rolled scanner (maps
 * of Android processes run to tens of thousands of lines, and sscanf would
 * dominate).  Paths are NUL-terminated in place inside the copy, so the
 * parsed object owns exactly two arrays and one text buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/maps.h>
#include "kit.h"

struct leaksnap_maps {
	char *text;                    /* our copy; paths point into it */
	char *unloaded_text;           /* leaksnap_maps_add_unloaded's copy, likewise */
	struct leaksnap_maps_mapping *mappings; /* file order, which is address order */
	size_t mapping_count;
	struct leaksnap_maps_module *modules;
	size_t module_count;
};

/* Shortest line the grammar accepts: "0-1 ---p 0 0:0 0". */
#define MAPS_MIN_LINE 16

#define DELETED_SUFFIX " (deleted)"
#define DELETED_SUFFIX_LEN (sizeof(DELETED_SUFFIX) - 1)

/* Field widths: addresses and offsets are 64-bit, a device number's halves
 * fit 32 bits each, an inode is a decimal 64-bit number. */
#define ADDR_DIGITS_MAX 16
#define DEV_DIGITS_MAX 8

/* Bytes of a bad token quoted back in an error message. */
#define QUOTE_MAX 32

struct parser {
	struct leaksnap_error *err;
	const char *source;
	uint64_t first_offset;
	unsigned long line; /* number of the line being parsed */
	size_t line_pos;    /* its first byte, relative to the text */
};

static int parse_fail(const struct parser *ps, size_t pos, const char *fmt, ...)
	KIT_PRINTF(3, 4);

/* Report a malformed line.  The line number is what users see; the byte
 * offset (@pos from the start of the text, shifted by first_offset) is
 * recorded as well, since the header promises offsets relative to the
 * enclosing file. */
static int parse_fail(const struct parser *ps, size_t pos, const char *fmt, ...)
{
	struct leaksnap_error *err = ps->err;
	char text[LEAKSNAP_ERROR_TEXT_MAX];
	va_list ap;
	uint64_t off;

	if (err == NULL || err->code != LEAKSNAP_OK)
		return -1;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	kit_error_line(err, LEAKSNAP_ERR_FORMAT, ps->source, ps->line, "%s", text);
	if (kit_add_u64(ps->first_offset, pos, &off) == 0) {
		err->has_offset = true;
		err->offset = off;
	}
	return -1;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A line holding nothing but whitespace is skipped like an empty one. */
static bool blank_line(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (!is_blank(*p) && *p != '\r' && *p != '\v' && *p != '\f')
			return false;
	}
	return true;
}

static int hex_value(unsigned char c)
{
	if ((unsigned)(c - '0') < 10u)
		return c - '0';
	c |= 0x20; /* fold upper case */
	if ((unsigned)(c - 'a') < 6u)
		return c - 'a' + 10;
	return -1;
}

/* 1..@max_digits hex digits.  More digits are an error even when leading
 * zeros would keep the value in range: the kernel never prints them. */
static bool scan_hex(const char **pp, const char *end, unsigned max_digits, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned n = 0;
	int d;

	while (p < end && (d = hex_value((unsigned char)*p)) >= 0) {
		if (++n > max_digits)
			return false;
		v = v << 4 | (uint64_t)d;
		p++;
	}
	if (n == 0)
		return false;
	*pp = p;
	*out = v;
	return true;
}

static bool scan_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;

	while (p < end && (unsigned)(*p - '0') < 10u) {
		if (kit_mul_u64(v, 10, &v) || kit_add_u64(v, (uint64_t)(*p - '0'), &v))
			return false;
		p++;
	}
	if (p == *pp)
		return false;
	*pp = p;
	*out = v;
	return true;
}

/* A field must be followed by a separator or the end of the line, so that
 * "1234abc" is not read as 1234. */
static bool field_end(const char *p, const char *end)
{
	return p == end || is_blank(*p);
}

/* Step over the separator before the next field; false when the line ends
 * first (the field is missing). */
static bool next_field(const char **pp, const char *end)
{
	const char *p = *pp;

	while (p < end && is_blank(*p))
		p++;
	*pp = p;
	return p < end;
}

static bool perms_valid(const char *s)
{
	return (s[0] == 'r' || s[0] == '-') && (s[1] == 'w' || s[1] == '-') &&
	       (s[2] == 'x' || s[2] == '-') && (s[3] == 'p' || s[3] == 's');
}

/* Parse one non-blank line [@line, @end) into @m.  Writes the path's
 * terminating NUL into the line (at @end or where " (deleted)" began). */
static int parse_line(const struct parser *ps, char *line, char *end,
		      struct leaksnap_maps_mapping *m)
{
	const char *p = line;
	const char *tok;
	uint64_t v;
	size_t n;

	next_field(&p, end); /* leading blanks tolerated, as sscanf would */
	if (!scan_hex(&p, end, ADDR_DIGITS_MAX, &m->start) || p == end || *p != '-')
		goto bad_range;
	p++;
	if (!scan_hex(&p, end, ADDR_DIGITS_MAX, &m->end) || !field_end(p, end))
		goto bad_range;
	if (m->start >= m->end)
		return parse_fail(ps, ps->line_pos,
				  "malformed maps line: start address not below end address");

	if (!next_field(&p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: missing permissions");
	tok = p;
	while (p < end && !is_blank(*p))
		p++;
	n = (size_t)(p - tok);
	if (n != 4 || !perms_valid(tok))
		return parse_fail(ps, ps->line_pos, "malformed maps line: bad permissions '%.*s%s'",
				  (int)(n < QUOTE_MAX ? n : QUOTE_MAX), tok,
				  n > QUOTE_MAX ? "..." : "");
	memcpy(m->perms, tok, 4);
	m->perms[4] = '\0';

	if (!next_field(&p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: missing offset");
	if (!scan_hex(&p, end, ADDR_DIGITS_MAX, &m->offset) || !field_end(p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: bad offset");

	if (!next_field(&p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: missing device");
	if (!scan_hex(&p, end, DEV_DIGITS_MAX, &v) || p == end || *p != ':')
		goto bad_dev;
	m->dev_major = (uint32_t)v;
	p++;
	if (!scan_hex(&p, end, DEV_DIGITS_MAX, &v) || !field_end(p, end))
		goto bad_dev;
	m->dev_minor = (uint32_t)v;

	if (!next_field(&p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: missing inode");
	if (!scan_dec(&p, end, &m->inode) || !field_end(p, end))
		return parse_fail(ps, ps->line_pos, "malformed maps line: bad inode");

	/* The rest after the padding is the path, verbatim: it may hold
	 * spaces ("[anon:dalvik-main space]"). */
	if (!next_field(&p, end))
		return 0;
	n = (size_t)(end - p);
	if (n > DELETED_SUFFIX_LEN &&
	    memcmp(end - DELETED_SUFFIX_LEN, DELETED_SUFFIX, DELETED_SUFFIX_LEN) == 0) {
		end -= DELETED_SUFFIX_LEN;
		m->deleted = true;
	}
	*end = '\0';
	m->path = p;
	return 0;

bad_range:
	return parse_fail(ps, ps->line_pos, "malformed maps line: bad address range");
bad_dev:
	return parse_fail(ps, ps->line_pos, "malformed maps line: bad device");
}

/* Lines in @len bytes, counting a last line without "\n". */
static size_t count_lines(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		n++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	return n;
}

static bool same_file(const struct leaksnap_maps_mapping *a, const struct leaksnap_maps_mapping *b)
{
	return a->path != NULL && b->path != NULL && a->unloaded == b->unloaded &&
	       a->inode == b->inode &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       strcmp(a->path, b->path) == 0;
}

/* Group runs of consecutive mappings of one file into modules.  A mapping
 * without a path breaks a run, so the same file mapped twice with anything
 * in between yields two modules. */
static int build_modules(struct leaksnap_maps *maps, const char *source, struct leaksnap_error *err)
{
	struct leaksnap_maps_mapping *m = maps->mappings;
	size_t count = 0;

	for (size_t i = 0; i < maps->mapping_count; i++) {
		if (m[i].path == NULL)
			m[i].module = LEAKSNAP_MAPS_NONE;
		else if (i > 0 && same_file(&m[i - 1], &m[i]))
			m[i].module = m[i - 1].module;
		else
			m[i].module = count++;
	}
	if (count == 0)
		return 0;

	maps->modules = calloc(count, sizeof(*maps->modules));
	if (maps->modules == NULL)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
	maps->module_count = count;
	for (size_t i = 0; i < maps->mapping_count; i++) {
		struct leaksnap_maps_module *mod;

		if (m[i].module == LEAKSNAP_MAPS_NONE)
			continue;
		mod = &maps->modules[m[i].module];
		if (mod->mapping_count == 0) {
			mod->path = m[i].path;
			mod->start = m[i].start;
			mod->first_mapping = i;
		}
		mod->end = m[i].end; /* ascending order: the last one is highest */
		mod->mapping_count++;
	}
	return 0;
}

/* Make room for one more mapping.  The initial capacity is already an
 * upper bound; growing is only a safety net. */
static int reserve_mapping(struct leaksnap_maps *maps, size_t *cap)
{
	struct leaksnap_maps_mapping *nm;
	size_t ncap;

	if (maps->mapping_count < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap < *cap || ncap > SIZE_MAX / sizeof(*nm))
		return -1;
	nm = realloc(maps->mappings, ncap * sizeof(*nm));
	if (nm == NULL)
		return -1;
	maps->mappings = nm;
	*cap = ncap;
	return 0;
}

struct leaksnap_maps *leaksnap_maps_parse(const char *text, size_t len, const char *source,
			unsigned long first_line, uint64_t first_offset,
			struct leaksnap_error *err)
{
	struct parser ps = {
		.err = err,
		.source = source,
		.first_offset = first_offset,
		.line = first_line ? first_line : 1,
	};
	struct leaksnap_maps *maps;
	const char *nul;
	size_t cap, pos = 0;

	leaksnap_error_clear(err);
	if (text == NULL && len > 0) {
		kit_error(err, LEAKSNAP_ERR_USAGE, source, "maps text is NULL");
		return NULL;
	}
	if (len == SIZE_MAX)
		goto nomem;
	maps = calloc(1, sizeof(*maps));
	if (maps == NULL)
		goto nomem;
	maps->text = malloc(len + 1);
	if (maps->text == NULL)
		goto nomem_free;
	if (len > 0)
		memcpy(maps->text, text, len);
	maps->text[len] = '\0';

	/* One mapping per line at most, and no more than the shortest valid
	 * line allows: a text of blank lines must not cost 80 bytes a byte. */
	cap = count_lines(maps->text, len);
	if (cap > len / (MAPS_MIN_LINE + 1) + 1)
		cap = len / (MAPS_MIN_LINE + 1) + 1;
	if (cap > SIZE_MAX / sizeof(*maps->mappings))
		goto nomem_free;
	if (cap > 0) {
		maps->mappings = malloc(cap * sizeof(*maps->mappings));
		if (maps->mappings == NULL)
			goto nomem_free;
	}

	nul = memchr(maps->text, '\0', len);
	while (pos < len) {
		char *line = maps->text + pos;
		char *nl = memchr(line, '\n', len - pos);
		char *end = nl ? nl : maps->text + len;
		size_t next = nl ? (size_t)(nl - maps->text) + 1 : len;
		struct leaksnap_maps_mapping *m;

		ps.line_pos = pos;
		/* Lines are visited in order, so the first NUL can only be
		 * in the current line when it lies before its end. */
		if (nul != NULL && nul < end) {
			parse_fail(&ps, (size_t)(nul - maps->text), "nul byte in maps text");
			goto fail;
		}
		if (end > line && end[-1] == '\r')
			end--;
		if (!blank_line(line, end)) {
			if (reserve_mapping(maps, &cap) < 0)
				goto nomem_free;
			m = &maps->mappings[maps->mapping_count];
			memset(m, 0, sizeof(*m));
			if (parse_line(&ps, line, end, m) < 0)
				goto fail;
			if (maps->mapping_count > 0 && m->start < m[-1].end) {
				parse_fail(&ps, pos,
					   "mapping starts below the end of the previous one (line "
					   "%lu)",
					   m[-1].line);
				goto fail;
			}
			m->line = ps.line;
			maps->mapping_count++;
		}
		pos = next;
		if (ps.line < (unsigned long)-1)
			ps.line++;
	}

	/* Return the slack of the capacity estimate. */
	if (maps->mapping_count == 0) {
		free(maps->mappings);
		maps->mappings = NULL;
	} else if (maps->mapping_count < cap) {
		struct leaksnap_maps_mapping *nm =
			realloc(maps->mappings, maps->mapping_count * sizeof(*nm));
		if (nm != NULL)
			maps->mappings = nm;
	}
	if (build_modules(maps, source, err) < 0)
		goto fail;
	return maps;

nomem_free:
	leaksnap_maps_free(maps);
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
	return NULL;
fail:
	leaksnap_maps_free(maps);
	return NULL;
}

static int cmp_start(const void *a, const void *b)
{
	const struct leaksnap_maps_mapping *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* At most this many unloaded lines are taken, the latest (the hook keeps
 * 256 KiB of them, about 2,500): the work, O(lines^2) at worst, is bounded
 * whatever a dump says. */
#define UNLOADED_LINES_MAX 4096

/* A growable array of mappings. */
struct mvec {
	struct leaksnap_maps_mapping *v;
	size_t n, cap;
};

static int mvec_add(struct mvec *a, const struct leaksnap_maps_mapping *m)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct leaksnap_maps_mapping *v = cap <= SIZE_MAX / sizeof(*v)
							  ? realloc(a->v, cap * sizeof(*v))
							  : NULL;
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = *m;
	return 0;
}

/* @m's part [lo, hi) (within it): its file offset moves with the start. */
static struct leaksnap_maps_mapping piece(const struct leaksnap_maps_mapping *m, uint64_t lo,
					  uint64_t hi)
{
	struct leaksnap_maps_mapping p = *m;
	if (m->inode != 0)
		p.offset = m->offset + (lo - m->start);
	p.start = lo;
	p.end = hi;
	return p;
}

/* The first of the @n sorted, disjoint mappings at @v that ends above @addr. */
static size_t first_ending_above(const struct leaksnap_maps_mapping *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether [lo, hi) lies in a hole of the sorted, disjoint @v (@code: the
 * mappings that are not code do not count); else *@next is where the
 * first obstacle ends, *@stop where it starts. */
static bool free_span(const struct leaksnap_maps_mapping *v, size_t n, bool code, uint64_t lo,
		      uint64_t hi, uint64_t *stop, uint64_t *next)
{
	for (size_t i = first_ending_above(v, n, lo); i < n && v[i].start < hi; i++) {
		if (code && v[i].perms[2] != 'x')
			continue;
		*stop = v[i].start > lo ? v[i].start : lo;
		*next = v[i].end;
		return false;
	}
	return true;
}

/* Add to @out the parts of unloaded mapping @u that neither the snapshot's
 * own mappings (@own; for code, only its code) nor the unloaded parts
 * taken already (@taken, kept sorted) cover. */
static int add_free_parts(const struct leaksnap_maps_mapping *u,
			  const struct leaksnap_maps_mapping *own, size_t nown, struct mvec *taken)
{
	bool code = u->perms[2] == 'x';
	uint64_t lo = u->start;
	size_t first_new = taken->n;
	while (lo < u->end) {
		uint64_t stop1 = u->end, next1 = u->end, stop2 = u->end, next2 = u->end;
		bool f1 = free_span(own, nown, code, lo, u->end, &stop1, &next1);
		bool f2 = free_span(taken->v, first_new, false, lo, u->end, &stop2, &next2);
		uint64_t stop = f1 ? stop2 : f2 ? stop1 : (stop1 < stop2 ? stop1 : stop2);
		if (stop > lo) {
			struct leaksnap_maps_mapping p = piece(u, lo, stop);
			p.unloaded = true;
			p.line = 0;
			if (mvec_add(taken, &p))
				return -1;
		}
		if (f1 && f2)
			break;
		/* past the obstacle that starts first */
		uint64_t next = (!f1 && stop1 == stop) ? next1 : next2;
		if (!f2 && stop2 == stop && next2 > next)
			next = next2;
		lo = next;
	}
	/* The new parts, in order, lie in holes of the taken ones: merged in
	 * from the back, the array stays sorted (O(taken) a line). */
	size_t k = taken->n, i = first_new, j = taken->n - first_new;
	if (j == 0 || i == 0)
		return 0;
	struct leaksnap_maps_mapping tmp[8], *fresh = j <= 8 ? tmp : malloc(j * sizeof(*fresh));
	if (!fresh)
		return -1;
	memcpy(fresh, taken->v + first_new, j * sizeof(*fresh));
	while (j > 0) {
		if (i > 0 && taken->v[i - 1].start > fresh[j - 1].start)
			taken->v[--k] = taken->v[--i];
		else
			taken->v[--k] = fresh[--j];
	}
	if (fresh != tmp)
		free(fresh);
	return 0;
}

/* Whether unloaded code @u lies partly under code of another file that
 * the snapshot's own maps hold. */
static bool under_other_code(const struct leaksnap_maps_mapping *u,
			     const struct leaksnap_maps_mapping *own, size_t nown)
{
	if (u->perms[2] != 'x')
		return false;
	for (size_t i = first_ending_above(own, nown, u->start); i < nown && own[i].start < u->end;
	     i++)
		if (own[i].perms[2] == 'x' &&
		    (own[i].inode != u->inode || own[i].dev_major != u->dev_major ||
		     own[i].dev_minor != u->dev_minor || !own[i].path ||
		     strcmp(own[i].path, u->path)))
			return true;
	return false;
}

long leaksnap_maps_add_unloaded(struct leaksnap_maps *maps, const char *text, size_t len,
				const char *source, size_t *shadowed, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (shadowed)
		*shadowed = 0;
	if (maps == NULL || maps->unloaded_text != NULL || (text == NULL && len > 0) ||
	    len == SIZE_MAX)
		return kit_error(err, LEAKSNAP_ERR_USAGE, source,
				 "leaksnap_maps_add_unloaded: bad call");
	if (len == 0)
		return 0;
	if (memchr(text, '\0', len) != NULL)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, source, "nul byte in unloaded mappings");
	size_t lines = count_lines(text, len);
	char *copy = malloc(len + 1);
	struct leaksnap_maps_mapping *cand = calloc(lines, sizeof(*cand));
	struct mvec taken = {NULL, 0, 0}, all = {NULL, 0, 0};
	if (!copy || !cand)
		goto nomem;
	memcpy(copy, text, len);
	copy[len] = '\0';
	struct parser ps = {.err = err, .source = source, .line = 1};
	size_t n = 0, pos = 0;
	while (pos < len) {
		char *line = copy + pos, *nl = memchr(line, '\n', len - pos);
		char *end = nl ? nl : copy + len;
		ps.line_pos = pos;
		if (end > line && end[-1] == '\r')
			end--;
		if (!blank_line(line, end)) {
			memset(&cand[n], 0, sizeof(cand[n]));
			if (parse_line(&ps, line, end, &cand[n]) < 0)
				goto fail;
			n++;
		}
		pos = nl ? (size_t)(nl - copy) + 1 : len;
		ps.line++;
	}
	/* The latest record of an address range wins over earlier ones (a
	 * library loaded where another was before); the snapshot's own
	 * mappings over all of them, but for its mappings that are not code
	 * where an unloaded library's code was. */
	const struct leaksnap_maps_mapping *own = maps->mappings;
	size_t nown = maps->mapping_count;
	for (size_t i = n, k = 0; i-- > 0 && k < UNLOADED_LINES_MAX; k++)
		if (cand[i].path != NULL) {
			if (add_free_parts(&cand[i], own, nown, &taken))
				goto nomem;
			if (shadowed && under_other_code(&cand[i], own, nown))
				(*shadowed)++;
		}
	free(cand);
	cand = NULL;
	if (taken.n == 0) {
		free(copy);
		return 0;
	}
	/* The snapshot's own mappings, less the unloaded code put over them. */
	for (size_t i = 0; i < nown; i++) {
		const struct leaksnap_maps_mapping *m = &own[i];
		uint64_t lo = m->start;
		if (m->perms[2] != 'x')
			for (size_t t = first_ending_above(taken.v, taken.n, lo);
			     t < taken.n && taken.v[t].start < m->end; t++) {
				if (taken.v[t].start > lo) {
					struct leaksnap_maps_mapping p = piece(m, lo,
									       taken.v[t].start);
					if (mvec_add(&all, &p))
						goto nomem;
				}
				lo = taken.v[t].end;
			}
		if (lo < m->end) {
			struct leaksnap_maps_mapping p = piece(m, lo, m->end);
			if (mvec_add(&all, &p))
				goto nomem;
		}
	}
	for (size_t t = 0; t < taken.n; t++)
		if (mvec_add(&all, &taken.v[t]))
			goto nomem;
	long added = (long)taken.n;
	free(taken.v);
	taken.v = NULL;
	qsort(all.v, all.n, sizeof(*all.v), cmp_start);
	struct leaksnap_maps_module *old_modules = maps->modules;
	size_t old_count = maps->module_count;
	struct leaksnap_maps_mapping *old_mappings = maps->mappings;
	size_t old_mapping_count = maps->mapping_count;
	maps->mappings = all.v;
	maps->mapping_count = all.n;
	maps->modules = NULL;
	maps->module_count = 0;
	if (build_modules(maps, source, err) < 0) {
		free(all.v);
		free(copy);
		maps->mappings = old_mappings;
		maps->mapping_count = old_mapping_count;
		maps->modules = old_modules;
		maps->module_count = old_count;
		return -1;
	}
	free(old_modules);
	free(old_mappings);
	maps->unloaded_text = copy;
	return added;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
fail:
	free(copy);
	free(cand);
	free(taken.v);
	free(all.v);
	return -1;
}

long leaksnap_maps_add_snapshot_unloaded(struct leaksnap_maps *maps,
					 const struct leaksnap_snapshot *snap, size_t *shadowed,
					 struct leaksnap_error *err)
{
	size_t n = leaksnap_snapshot_meta_count(snap), len = 0;
	leaksnap_error_clear(err);
	if (shadowed)
		*shadowed = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(leaksnap_snapshot_meta(snap, i)->key, "unloaded") == 0)
			len += strlen(leaksnap_snapshot_meta(snap, i)->value) + 1;
	if (len == 0)
		return 0;
	char *text = malloc(len), *at = text;
	if (!text)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, leaksnap_snapshot_source(snap),
				 "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_snapshot_meta *e = leaksnap_snapshot_meta(snap, i);
		if (strcmp(e->key, "unloaded") == 0) {
			size_t k = strlen(e->value);
			memcpy(at, e->value, k);
			at[k] = '\n';
			at += k + 1;
		}
	}
	long added = leaksnap_maps_add_unloaded(maps, text, len, leaksnap_snapshot_source(snap),
						shadowed, err);
	free(text);
	return added;
}

size_t leaksnap_maps_module_build_id(const struct leaksnap_maps *maps,
				     const struct leaksnap_maps_module *mm,
				     const struct leaksnap_snapshot *snap, uint8_t *out, size_t cap)
{
	const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(maps, mm->first_mapping);
	if (m && m->unloaded)
		return leaksnap_snapshot_unloaded_build_id(snap, mm->path, m->inode, out, cap);
	return leaksnap_snapshot_build_id(snap, mm->path, out, cap);
}

void leaksnap_maps_free(struct leaksnap_maps *maps)
{
	if (maps == NULL)
		return;
	free(maps->modules);
	free(maps->mappings);
	free(maps->text);
	free(maps->unloaded_text);
	free(maps);
}

size_t leaksnap_maps_mapping_count(const struct leaksnap_maps *maps)
{
	return maps ? maps->mapping_count : 0;
}

const struct leaksnap_maps_mapping *leaksnap_maps_mapping(const struct leaksnap_maps *maps,
							  size_t index)
{
	if (maps == NULL || index >= maps->mapping_count)
		return NULL;
	return &maps->mappings[index];
}

size_t leaksnap_maps_module_count(const struct leaksnap_maps *maps)
{
	return maps ? maps->module_count : 0;
}

const struct leaksnap_maps_module *leaksnap_maps_module(const struct leaksnap_maps *maps,
							size_t index)
{
	if (maps == NULL || index >= maps->module_count)
		return NULL;
	return &maps->modules[index];
}

const struct leaksnap_maps_mapping *leaksnap_maps_lookup(const struct leaksnap_maps *maps,
							 uint64_t pc)
{
	if (maps == NULL || maps->mapping_count == 0)
		return NULL;
	/* mappings are sorted and disjoint: only the first that ends above
	 * @pc can cover it */
	size_t i = first_ending_above(maps->mappings, maps->mapping_count, pc);
	return i < maps->mapping_count && maps->mappings[i].start <= pc ? &maps->mappings[i] : NULL;
}

bool leaksnap_maps_locate(const struct leaksnap_maps *maps, uint64_t pc,
			  struct leaksnap_maps_location *out)
{
	const struct leaksnap_maps_mapping *m = leaksnap_maps_lookup(maps, pc);

	if (out == NULL)
		return m != NULL;
	out->mapping = m;
	out->module = NULL;
	out->rel_pc = 0;
	if (m == NULL)
		return false;
	if (m->module != LEAKSNAP_MAPS_NONE)
		out->module = &maps->modules[m->module];
	/* Unsigned arithmetic wraps, which is what a file offset near the top
	 * of the range needs. */
	out->rel_pc = pc - m->start + m->offset;
	return true;
}

bool leaksnap_maps_path_is_file(const char *path)
{
	static const char *const pseudo[] = {"/dev/", "/memfd:", "/proc/", "/sys/", "/SYSV",
					      "/anon_hugepage", "/dmabuf:", "/["};
	if (!path || path[0] != '/')
		return false;
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (strncmp(path, pseudo[i], strlen(pseudo[i])) == 0)
			return false;
	return true;
}

bool leaksnap_maps_path_is_shared_code(const char *path)
{
	static const char *const kernel[] = {"[vdso]", "[vsyscall]", "[vectors]", "[sigpage]"};
	if (leaksnap_maps_path_is_file(path))
		return true;
	for (size_t i = 0; path && i < sizeof(kernel) / sizeof(kernel[0]); i++)
		if (strcmp(path, kernel[i]) == 0)
			return true;
	return false;
}
