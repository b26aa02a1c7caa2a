/* leaksnap export: error records, UTF-8 and JSON values. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int lsx_fail(struct leaksnap_error *err, int code, const char *fmt, ...)
{
	if (err == NULL || err->code != LEAKSNAP_OK)
		return -1;
	err->code = code;
	err->source[0] = '\0';
	err->has_offset = false;
	err->offset = 0;
	err->line = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -1;
}

/* No overlong forms, no surrogates, nothing above U+10FFFF. */
size_t lsx_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
					       : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

char *lsx_utf8_fixed(const char *s, size_t *len)
{
	char *t = malloc(3 * strlen(s) + 1);
	if (!t)
		return NULL;
	size_t at = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = lsx_utf8_len(p);
		if (n) {
			memcpy(t + at, p, n);
			at += n;
			p += n;
		} else {
			memcpy(t + at, "\xef\xbf\xbd", 3);
			at += 3;
			p++;
		}
	}
	t[at] = '\0';
	*len = at;
	return t;
}

json_t *lsx_json_addr(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

json_t *lsx_json_text(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	/* not UTF-8: each byte outside a valid sequence becomes U+FFFD */
	size_t len;
	char *t = lsx_utf8_fixed(s, &len);
	if (!t)
		return json_null();
	j = json_stringn(t, len);
	free(t);
	return j ? j : json_null();
}
