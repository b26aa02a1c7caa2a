/* leaksnap kit: filling an error record (the first error wins). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kit.h"

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
