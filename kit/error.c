/* leaksnap kit: error records -- the public functions that read them
 * (<leaksnap/error.h>), and the constructors every part fills them with
 * (kit.h: the first error wins). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kit.h"

static const char *const code_strings[] = {
#define LEAKSNAP_X_STRING(code, text) text,
	LEAKSNAP_ERRORS(LEAKSNAP_X_STRING)
#undef LEAKSNAP_X_STRING
};

void leaksnap_error_clear(struct leaksnap_error *err)
{
	if (err == NULL)
		return;
	/* (field by field: the resolver clears one per frame, and the record
	 * is half a kilobyte) */
	err->code = LEAKSNAP_OK;
	err->source[0] = '\0';
	err->has_offset = false;
	err->offset = 0;
	err->line = 0;
	err->text[0] = '\0';
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

static int error_vset(struct leaksnap_error *err, int code, const char *source,
		      int has_offset, uint64_t offset, unsigned long line,
		      const char *fmt, va_list ap) __attribute__((format(printf, 7, 0)));

static int error_vset(struct leaksnap_error *err, int code, const char *source,
		      int has_offset, uint64_t offset, unsigned long line,
		      const char *fmt, va_list ap)
{
	if (err == NULL || err->code != LEAKSNAP_OK)
		return -1;
	err->code = code;
	snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
	err->has_offset = has_offset != 0;
	err->offset = offset;
	err->line = line;
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	return -1;
}

int kit_error(struct leaksnap_error *err, int code, const char *source, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(err, code, source, 0, 0, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int kit_error_at(struct leaksnap_error *err, int code, const char *source, uint64_t offset,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(err, code, source, 1, offset, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int kit_error_line(struct leaksnap_error *err, int code, const char *source,
		   unsigned long line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	error_vset(err, code, source, 0, 0, line, fmt, ap);
	va_end(ap);
	return -1;
}

int kit_error_errno(struct leaksnap_error *err, const char *source, int errnum)
{
	int code = errnum == ENOMEM ? LEAKSNAP_ERR_NOMEM
		   : errnum == EEXIST ? LEAKSNAP_ERR_EXISTS
				      : LEAKSNAP_ERR_IO;
	return kit_error(err, code, source, "%s", strerror(errnum));
}
