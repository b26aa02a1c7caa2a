/* leaksnap store: the ClickHouse backend's rows and answers, without the
 * network (ch_codec.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ch_codec.h"

void chbuf_free(struct chbuf *b)
{
	free(b->p);
	*b = (struct chbuf){NULL, 0, 0, false};
}

/* Room for @n more bytes (and a NUL after them). */
static bool room(struct chbuf *b, size_t n)
{
	if (b->nomem)
		return false;
	if (b->n + n + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->n + n + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->nomem = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void chbuf_bytes(struct chbuf *b, const void *p, size_t n)
{
	if (!room(b, n))
		return;
	if (n)
		memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = '\0';
}

void chbuf_str(struct chbuf *b, const char *s)
{
	chbuf_bytes(b, s, strlen(s));
}

/* TabSeparated ------------------------------------------------------------- */

void ch_tsv_text(struct chbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (!room(b, 2 * n))
		return;
	char *o = b->p + b->n;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		switch (*c) {
		case '\\': *o++ = '\\'; *o++ = '\\'; break;
		case '\t': *o++ = '\\'; *o++ = 't'; break;
		case '\n': *o++ = '\\'; *o++ = 'n'; break;
		case '\r': *o++ = '\\'; *o++ = 'r'; break;
		case '\'': *o++ = '\\'; *o++ = '\''; break;
		default: *o++ = (char)*c; break;
		}
	}
	b->n = (size_t)(o - b->p);
	b->p[b->n] = '\0';
}

void ch_tsv_u64(struct chbuf *b, uint64_t v)
{
	char t[24], *e = t + sizeof(t), *q = e;
	do
		*--q = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	chbuf_bytes(b, q, (size_t)(e - q));
}

void ch_tsv_i64(struct chbuf *b, int64_t v)
{
	if (v < 0) {
		chbuf_bytes(b, "-", 1);
		ch_tsv_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		ch_tsv_u64(b, (uint64_t)v);
	}
}

void ch_tsv_end(struct chbuf *b, bool last)
{
	chbuf_bytes(b, last ? "\n" : "\t", 1);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ch_tsv_row(char **p, char *end, char **fields, int max)
{
	char *r = *p;
	if (r >= end)
		return 0;
	int nf = 0;
	char *w = r;
	fields[nf++] = w;
	for (;;) {
		if (r >= end)
			return -1; /* no newline at the row's end */
		char c = *r++;
		if (c == '\n') {
			*w = '\0';
			break;
		}
		if (c == '\t') {
			*w++ = '\0';
			if (nf == max)
				return -1;
			fields[nf++] = w;
			continue;
		}
		if (c != '\\') {
			*w++ = c;
			continue;
		}
		if (r >= end)
			return -1;
		c = *r++;
		switch (c) {
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'r': *w++ = '\r'; break;
		case 'n': *w++ = '\n'; break;
		case 't': *w++ = '\t'; break;
		case 'a': *w++ = '\a'; break;
		case 'v': *w++ = '\v'; break;
		case 'e': *w++ = '\033'; break;
		case '0': return -1; /* a NUL: no C string holds one */
		case 'x': {
			int hi = r + 1 < end ? hexval(r[0]) : -1, lo = hi >= 0 ? hexval(r[1]) : -1;
			if (lo < 0 || (hi == 0 && lo == 0))
				return -1;
			*w++ = (char)(hi << 4 | lo);
			r += 2;
			break;
		}
		default: *w++ = c; break; /* \\ \' \" and any other: the byte */
		}
	}
	*p = r;
	return nf;
}

bool ch_parse_u64(const char *s, uint64_t *v)
{
	if (*s < '0' || *s > '9')
		return false;
	uint64_t x = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

bool ch_parse_i64(const char *s, int64_t *v)
{
	bool neg = *s == '-';
	uint64_t x;
	if (!ch_parse_u64(s + neg, &x) || x > (uint64_t)INT64_MAX + neg)
		return false;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return true;
}

/* RowBinary -------------------------------------------------------------------- */

static void put_le(struct chbuf *b, uint64_t v, unsigned width)
{
	if (!room(b, width))
		return;
	unsigned char *o = (unsigned char *)b->p + b->n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(o, &v, width); /* (the host's order is RowBinary's) */
#else
	for (unsigned i = 0; i < width; i++)
		o[i] = (unsigned char)(v >> (8 * i));
#endif
	b->n += width;
}

void ch_rb_u64(struct chbuf *b, uint64_t v)
{
	put_le(b, v, 8);
}

void ch_rb_u32(struct chbuf *b, uint32_t v)
{
	put_le(b, v, 4);
}

void ch_rb_u8(struct chbuf *b, uint8_t v)
{
	put_le(b, v, 1);
}

void ch_rb_ids(struct chbuf *b, const uint64_t *v, uint32_t n)
{
	if (!room(b, 5 + 8 * (size_t)n))
		return;
	uint64_t len = n;
	do {
		unsigned char byte = len & 0x7f;
		len >>= 7;
		b->p[b->n++] = (char)(byte | (len ? 0x80 : 0));
	} while (len);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n) {
		memcpy(b->p + b->n, v, 8 * (size_t)n);
		b->n += 8 * (size_t)n;
	}
#else
	for (uint32_t i = 0; i < n; i++)
		put_le(b, v[i], 8);
#endif
}

bool ch_rb_get(const char **p, const char *end, unsigned width, uint64_t *v)
{
	if ((size_t)(end - *p) < width)
		return false;
	const unsigned char *c = (const unsigned char *)*p;
	uint64_t x = 0;
	for (unsigned i = 0; i < width; i++)
		x |= (uint64_t)c[i] << (8 * i);
	*p += width;
	*v = x;
	return true;
}

bool ch_rb_len(const char **p, const char *end, uint64_t *n)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return false;
		unsigned char c = (unsigned char)*(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*n = x;
			return true;
		}
	}
	return false;
}

/* The URL ---------------------------------------------------------------------- */

void ch_url_free(struct ch_url *u)
{
	free(u->host);
	free(u->user);
	free(u->password);
	free(u->database);
	memset(u, 0, sizeof(*u));
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		if (n)
			memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* @n bytes at @s with their %XX escapes decoded, a string of its own;
 * NULL with *@bad set when an escape is not two hex digits or is %00. */
static char *pct_decode(const char *s, size_t n, bool *bad)
{
	char *d = malloc(n + 1), *o = d;
	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
		int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
		if (lo < 0 || (hi | lo) == 0) {
			free(d);
			*bad = true;
			return NULL;
		}
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return d;
}

/* Where a URL's USER[:PASSWORD] ends: its last '@' (a password may hold
 * '@' and '/'; nothing after it may), else NULL. */
static const char *userinfo_end(const char *a)
{
	return strrchr(a, '@');
}

char *ch_url_redacted(const char *url)
{
	const char *a = strstr(url, "://");
	if (!a)
		return strdup(url);
	a += 3;
	const char *at = userinfo_end(a);
	const char *colon = at ? memchr(a, ':', (size_t)(at - a)) : NULL;
	if (!colon)
		return strdup(url);
	size_t head = (size_t)(colon + 1 - url);
	char *r = malloc(head + 3 + strlen(at) + 1);
	if (r) {
		memcpy(r, url, head);
		memcpy(r + head, "***", 3);
		strcpy(r + head + 3, at);
	}
	return r;
}

bool ch_url_parse(const char *url, struct ch_url *u, const char **why)
{
	memset(u, 0, sizeof(*u));
	static const char scheme[] = "clickhouse://";
	if (strncasecmp(url, scheme, sizeof(scheme) - 1) != 0) {
		*why = "not a clickhouse:// URL";
		return false;
	}
	const char *a = url + sizeof(scheme) - 1;
	const char *at = userinfo_end(a);
	const char *h = at ? at + 1 : a;
	const char *slash = strchr(h, '/');
	if (!slash) {
		*why = "no /DATABASE in the URL (clickhouse://HOST[:PORT]/DATABASE)";
		return false;
	}
	if (at) {
		const char *colon = memchr(a, ':', (size_t)(at - a));
		bool bad = false;
		u->user = pct_decode(a, (size_t)((colon ? colon : at) - a), &bad);
		if (u->user)
			u->password = colon ? pct_decode(colon + 1, (size_t)(at - colon - 1), &bad)
					    : dup_n("", 0);
		if (bad) {
			*why = "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)";
			goto bad;
		}
		if (!u->user || !u->password)
			goto nomem;
		if (!*u->user) {
			*why = "an empty user name in the URL";
			goto bad;
		}
	}
	const char *hend = slash, *port = NULL;
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(slash - h));
		if (!close) {
			*why = "no ']' after the IPv6 address in the URL";
			goto bad;
		}
		u->host = dup_n(h, (size_t)(close + 1 - h));
		if (close + 1 < slash) {
			if (close[1] != ':') {
				*why = "not a HOST[:PORT] in the URL";
				goto bad;
			}
			port = close + 2;
		}
	} else {
		const char *colon = memchr(h, ':', (size_t)(slash - h));
		if (colon) {
			hend = colon;
			port = colon + 1;
		}
		u->host = dup_n(h, (size_t)(hend - h));
	}
	if (!u->host)
		goto nomem;
	if (!*u->host) {
		*why = "no HOST in the URL";
		goto bad;
	}
	/* a name (letters, digits, '-', '.', '_') or [an IPv6 address] */
	bool v6 = *u->host == '[';
	for (const char *c = u->host + v6; *c && !(v6 && c[1] == '\0'); c++)
		if (!(v6 ? isxdigit((unsigned char)*c) || *c == ':' || *c == '.'
			 : isalnum((unsigned char)*c) || *c == '-' || *c == '.' || *c == '_')) {
			*why = "not a host name in the URL";
			goto bad;
		}
	u->port = 8123;
	if (port) {
		unsigned long v = 0;
		const char *c = port;
		for (; c < slash && *c >= '0' && *c <= '9' && v <= 65535; c++)
			v = v * 10 + (unsigned long)(*c - '0');
		if (c == port || c != slash || v == 0 || v > 65535) {
			*why = "not a port number (1 to 65535) in the URL";
			goto bad;
		}
		u->port = (unsigned)v;
	}
	const char *db = slash + 1;
	size_t n = strlen(db);
	if (n && db[n - 1] == '/')
		n--;
	if (n == 0) {
		*why = "no DATABASE in the URL (clickhouse://HOST[:PORT]/DATABASE)";
		goto bad;
	}
	for (size_t i = 0; i < n; i++) {
		char c = db[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		      (i && c >= '0' && c <= '9'))) {
			*why = "a DATABASE name is letters, digits and '_', not starting with a digit";
			goto bad;
		}
	}
	if (!(u->database = dup_n(db, n)))
		goto nomem;
	return true;
nomem:
	*why = "out of memory";
bad:
	ch_url_free(u);
	return false;
}

/* Errors ------------------------------------------------------------------------ */

/* @s without the text @t at its start: the rest, else NULL. */
static const char *skip(const char *s, const char *t)
{
	size_t n = strlen(t);
	return strncmp(s, t, n) == 0 ? s + n : NULL;
}

int ch_error_text(const char *body, size_t len, char *out, size_t size)
{
	char *t = dup_n(body ? body : "", body ? len : 0);
	int code = 0;
	if (!t) {
		snprintf(out, size, "out of memory");
		return 0;
	}
	char *line = t, *nl = strchr(t, '\n');
	if (nl)
		*nl = '\0';
	const char *m = line, *r;
	/* "Code: 81, e.displayText() = DB::Exception: MSG, e.what() = ..." (18.x)
	 * "Code: 81. DB::Exception: MSG. (UNKNOWN_DATABASE) (version ...)" (now) */
	if ((r = skip(m, "Code: ")) != NULL) {
		code = atoi(r);
		while (*r >= '0' && *r <= '9')
			r++;
		if (*r == ',' || *r == '.')
			r++;
		while (*r == ' ')
			r++;
		m = r;
	}
	if ((r = skip(m, "e.displayText() = ")) != NULL)
		m = r;
	while ((r = skip(m, "DB::Exception: ")) != NULL || (r = skip(m, "DB::Exception:")) != NULL)
		m = r;
	char *e = strstr(m, ", e.what() = ");
	if (e)
		*e = '\0';
	if ((e = strstr(m, " (version ")) != NULL)
		*e = '\0';
	/* newer servers end with ". (NAME)": the name goes */
	size_t n = strlen(m);
	if (n > 2 && m[n - 1] == ')') {
		char *open = strrchr(m, '(');
		if (open && open > m + 1 && open[-1] == ' ' && open[-2] == '.') {
			bool name = true;
			for (char *c = open + 1; c < m + n - 1; c++)
				name &= (*c >= 'A' && *c <= 'Z') || *c == '_';
			if (name) {
				open[-2] = '\0';
				n = strlen(m);
			}
		}
	}
	while (n && (m[n - 1] == ' ' || m[n - 1] == '\r' || m[n - 1] == ':'))
		n--;
	/* one line of printable text */
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned char c = (unsigned char)m[i];
		out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	if (size)
		out[o] = '\0';
	if (o == 0)
		snprintf(out, size, "the server answered with an error%s", code ? "" : " it did not say");
	free(t);
	return code;
}
