/* leaksnap diff: name patterns and suppressions files.
 *
 * Patterns follow LeakSanitizer's suppressions: '*' matches any run of
 * characters, '^' at the start and '$' at the end anchor the pattern,
 * and an unanchored pattern may match anywhere.  No other character is
 * special, so C++ names ("operator new[]", "std::map<int, int>") need no
 * quoting. */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

/* Glob match of the pattern P = ['*'] p ['*'] (a star before it when
 * @lead, after it when @trail) against all of @s.  The classic two-cursor
 * algorithm: on a mismatch, go back to the last '*' and let it swallow one
 * more character.  O(|P| * |s|) at worst, no recursion. */
static bool glob(const char *p, size_t pn, bool lead, bool trail, const char *s, size_t sn)
{
	size_t n = pn + lead + trail;
#define PAT(i) ((lead && (i) == 0) || (trail && (i) == n - 1) ? '*' : p[(i) - lead])
	size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;
	while (si < sn) {
		char c = pi < n ? PAT(pi) : 0;
		if (pi < n && c == '*') {
			star = pi++;
			mark = si;
		} else if (pi < n && c == s[si]) {
			pi++;
			si++;
		} else if (star != SIZE_MAX) {
			pi = star + 1;
			si = ++mark;
		} else {
			return false;
		}
	}
	while (pi < n && PAT(pi) == '*')
		pi++;
#undef PAT
	return pi == n;
}

bool leaksnap_diff_pattern_match(const char *pattern, const char *s)
{
	if (!pattern || !s)
		return false;
	size_t pn = strlen(pattern);
	bool start = pn > 0 && pattern[0] == '^';
	bool end = pn > (size_t)start && pattern[pn - 1] == '$';
	return glob(pattern + start, pn - start - end, !start, !end, s, strlen(s));
}

/* Suppressions ------------------------------------------------------------- */

#define SUPP_MAX_PATTERNS 100000

struct leaksnap_diff_suppressions {
	char **patterns;
	uint64_t *hits;
	size_t count;
};

void leaksnap_diff_suppressions_free(struct leaksnap_diff_suppressions *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		free(s->patterns[i]);
	free(s->patterns);
	free(s->hits);
	free(s);
}

size_t leaksnap_diff_suppressions_count(const struct leaksnap_diff_suppressions *s)
{
	return s ? s->count : 0;
}

const char *leaksnap_diff_suppressions_pattern(const struct leaksnap_diff_suppressions *s,
					       size_t index)
{
	return s && index < s->count ? s->patterns[index] : NULL;
}

uint64_t leaksnap_diff_suppressions_hits(const struct leaksnap_diff_suppressions *s, size_t index)
{
	return s && index < s->count ? s->hits[index] : 0;
}

void lsd_suppressions_reset(const struct leaksnap_diff_suppressions *s)
{
	if (s && s->count)
		memset(s->hits, 0, s->count * sizeof(*s->hits));
}

/* The first pattern matching @str, or SIZE_MAX. */
size_t lsd_suppressions_find(const struct leaksnap_diff_suppressions *s, const char *str)
{
	if (!s || !str)
		return SIZE_MAX;
	for (size_t i = 0; i < s->count; i++)
		if (leaksnap_diff_pattern_match(s->patterns[i], str))
			return i;
	return SIZE_MAX;
}

void lsd_suppressions_hit(const struct leaksnap_diff_suppressions *s, size_t index, uint64_t n)
{
	/* the hit counters are bookkeeping of the caller's diff, not part of
	 * the parsed text: kept in a separately allocated array */
	if (s && index < s->count)
		s->hits[index] += n;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

struct leaksnap_diff_suppressions *leaksnap_diff_suppressions_parse(const char *text, size_t len,
						  const char *source, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (len > LEAKSNAP_DIFF_SUPPRESSIONS_MAX) {
		kit_error(err, LEAKSNAP_ERR_LIMIT, source,
			  "suppressions text of %zu bytes (limit %zu)", len,
			  LEAKSNAP_DIFF_SUPPRESSIONS_MAX);
		return NULL;
	}
	struct leaksnap_diff_suppressions *s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	size_t cap = 0;
	unsigned long line = 0;
	for (size_t pos = 0; pos < len;) {
		const char *l = text + pos;
		const char *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		pos += n + (nl != NULL);
		line++;
		if (memchr(l, '\0', n)) {
			kit_error_line(err, LEAKSNAP_ERR_FORMAT, source, line,
				       "NUL byte in a suppressions file");
			goto fail;
		}
		while (n && is_space(*l))
			l++, n--;
		while (n && is_space(l[n - 1]))
			n--;
		if (n == 0 || *l == '#')
			continue;
		const char *colon = memchr(l, ':', n);
		if (!colon) {
			kit_error_line(err, LEAKSNAP_ERR_FORMAT, source, line,
				       "expected 'leak:PATTERN', got '%.*s%s'",
				       (int)(n > 60 ? 60 : n), l, n > 60 ? "..." : "");
			goto fail;
		}
		size_t tn = (size_t)(colon - l);
		if (tn != 4 || memcmp(l, "leak", 4) != 0) {
			kit_error_line(err, LEAKSNAP_ERR_FORMAT, source, line,
				       "unsupported suppression type '%.*s%s' (only 'leak:' "
				       "applies to heap snapshots)",
				       (int)(tn > 40 ? 40 : tn), l, tn > 40 ? "..." : "");
			goto fail;
		}
		const char *p = colon + 1;
		size_t pn = n - tn - 1;
		while (pn && is_space(*p))
			p++, pn--;
		if (pn == 0) {
			kit_error_line(err, LEAKSNAP_ERR_FORMAT, source, line,
				       "empty pattern after 'leak:'");
			goto fail;
		}
		if (s->count == SUPP_MAX_PATTERNS) {
			kit_error_line(err, LEAKSNAP_ERR_LIMIT, source, line,
				       "more than %d suppressions", SUPP_MAX_PATTERNS);
			goto fail;
		}
		if (s->count == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **np = realloc(s->patterns, nc * sizeof(*np));
			if (!np)
				goto nomem;
			s->patterns = np;
			cap = nc;
		}
		char *copy = strndup(p, pn);
		if (!copy)
			goto nomem;
		s->patterns[s->count++] = copy;
	}
	s->hits = calloc(s->count ? s->count : 1, sizeof(*s->hits));
	if (!s->hits)
		goto nomem;
	return s;
nomem:
	kit_error(err, LEAKSNAP_ERR_NOMEM, source, "out of memory");
fail:
	leaksnap_diff_suppressions_free(s);
	return NULL;
}
