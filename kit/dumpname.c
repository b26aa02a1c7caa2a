/* leaksnap kit: reading the hook's dump names (kit_dumpname.h). */
#include <string.h>

#include "kit_dumpname.h"

/* The decimal digits @s[0..n): false when empty, not all digits, or past
 * 64 bits. */
static int digits(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = v;
	return 1;
}

static int is(const char *s, size_t n, const char *tag)
{
	return strlen(tag) == n && memcmp(s, tag, n) == 0;
}

enum kit_dump_kind kit_dump_name(const char *name, struct kit_dump_name *out)
{
	static const char suffix[] = KIT_DUMP_SUFFIX;
	size_t len = strlen(name), sl = sizeof(suffix) - 1;
	memset(out, 0, sizeof(*out));
	if (len <= sl || memcmp(name + len - sl, suffix, sl) != 0)
		return KIT_DUMP_OTHER;
	len -= sl;
	/* from the end: TAG, then PID, then the prefix (which may hold dots) */
	const char *dot = memrchr(name, '.', len);
	if (!dot || dot == name)
		return KIT_DUMP_OTHER;
	const char *tag = dot + 1, *pdot = memrchr(name, '.', (size_t)(dot - name));
	size_t tag_len = len - (size_t)(tag - name);
	if (!pdot || !digits(pdot + 1, (size_t)(dot - pdot - 1), &out->pid))
		return KIT_DUMP_OTHER;
	out->prefix_len = (size_t)(pdot - name);
	if (is(tag, tag_len, KIT_DUMP_EXIT_TAG))
		return KIT_DUMP_EXIT;
	if (is(tag, tag_len, KIT_DUMP_CRASH_TAG))
		return KIT_DUMP_CRASH;
	if (digits(tag, tag_len, &out->num) && out->num > 0)
		return KIT_DUMP_NUMBERED;
	out->num = 0;
	return KIT_DUMP_OTHER;
}
