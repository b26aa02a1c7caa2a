/* leaksnap kit: text that must be UTF-8 (JSON, protobuf strings) made so. */
#include <stdlib.h>
#include <string.h>

#include "kit_utf8.h"

bool kit_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t at = 0; at < len;) {
		int k = kit_utf8_len(p + at, len - at);
		if (k <= 0)
			return false;
		at += (size_t)k;
	}
	return true;
}

char *kit_utf8_fixed(const char *s, size_t *len)
{
	size_t n = strlen(s);
	if (n > (SIZE_MAX - 1) / 3)
		return NULL;
	char *t = malloc(3 * n + 1);
	if (!t)
		return NULL;
	size_t at = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int k = kit_utf8_len(p, (size_t)-1);
		if (k > 0) {
			memcpy(t + at, p, (size_t)k);
			at += (size_t)k;
			p += k;
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
