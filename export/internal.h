/* leaksnap export: helpers private to the export library (lsx_). */
#ifndef LEAKSNAP_EXPORT_INTERNAL_H
#define LEAKSNAP_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <leaksnap/snapshot.h>

/* Fill @err (NULL-safe; the first error stays) with @code and the message,
 * an empty source: the output the caller named.  Returns -1. */
int lsx_fail(struct leaksnap_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct leaksnap_export_pprof;
/* Fill @err with the error of profile @p (out of memory, or the write
 * error).  Returns -1. */
int lsx_pprof_fail(struct leaksnap_error *err, const struct leaksnap_export_pprof *p);

/* The length of the valid UTF-8 sequence at @p (RFC 3629), or 0. */
size_t lsx_utf8_len(const unsigned char *p);
/* @s with each byte outside a valid UTF-8 sequence replaced by U+FFFD, in
 * a new string (*@len its length); NULL when out of memory. */
char *lsx_utf8_fixed(const char *s, size_t *len);

/* JSON values: "0x..." (NULL when out of memory); a string from an input,
 * made UTF-8 as above (NULL: null). */
json_t *lsx_json_addr(uint64_t v);
json_t *lsx_json_text(const char *s);

#endif
