/* leaksnap: error records: the public functions (the constructors every
 * stage fills them with are the kit's, kit/error.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <leaksnap/snapshot.h>

static const char *const code_strings[] = {
#define LEAKSNAP_X_STRING(code, text) text,
	LEAKSNAP_ERRORS(LEAKSNAP_X_STRING)
#undef LEAKSNAP_X_STRING
};

void leaksnap_error_clear(struct leaksnap_error *err)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
}

const char *leaksnap_code_string(int code)
{
	if (code < 0 || code >= LEAKSNAP_ERR__COUNT)
		return "unknown error";
	return code_strings[code];
}

char *leaksnap_error_format(const struct leaksnap_error *err, char *buf, size_t size)
{
	if (size == 0)
		return buf;
	if (err == NULL) {
		buf[0] = '\0';
		return buf;
	}
	const char *text = err->text[0] ? err->text : leaksnap_code_string(err->code);
	const char *src = err->source[0] ? err->source : "<input>";
	if (err->line)
		snprintf(buf, size, "%s: line %lu: %s", src, err->line, text);
	else if (err->has_offset)
		snprintf(buf, size, "%s: byte offset %llu: %s", src,
			 (unsigned long long)err->offset, text);
	else
		snprintf(buf, size, "%s: %s", src, text);
	return buf;
}
