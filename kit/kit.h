/* leaksnap kit: the small helpers every part of leaksnap shares (never
 * installed, never public API; hidden in libleaksnap).  Names carry the
 * kit_ prefix.  The error constructors fill the caller's record as every
 * stage's API promises: the first error wins. */
#ifndef LEAKSNAP_KIT_H
#define LEAKSNAP_KIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>

#include "kit_hash.h"

#define KIT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Set @err (if non-NULL and still clear) to @code for @source.  The _at form
 * records a byte offset, the _line form a line number. Always returns -1 so
 * callers can `return kit_error(...)`. */
int kit_error(struct leaksnap_error *err, int code, const char *source,
	      const char *fmt, ...) KIT_PRINTF(4, 5);
int kit_error_at(struct leaksnap_error *err, int code, const char *source,
		 uint64_t offset, const char *fmt, ...) KIT_PRINTF(5, 6);
int kit_error_line(struct leaksnap_error *err, int code, const char *source,
		   unsigned long line, const char *fmt, ...) KIT_PRINTF(5, 6);
/* Error from errno of a failed system call on @source. */
int kit_error_errno(struct leaksnap_error *err, const char *source, int errnum);

/* Copy the options @opts (NULL: all defaults, zero), a struct whose first
 * field is its size as its caller knew it (LEAKSNAP_OPTS), into @dst, the
 * @size bytes this library knows: fields the caller did not know stay zero.
 * -1 with @err filled (naming @what) when the size is absurd or the caller
 * set fields past the ones this library knows. */
int kit_opts(void *dst, size_t size, const void *opts, const char *what,
	     struct leaksnap_error *err);

/* Grow the array *@arr (capacity *@cap elements of @elsize bytes) to hold
 * at least @need, doubling.  0, or -1 (out of memory or overflow) with the
 * array unchanged. */
int kit_grow(void **arr, size_t *cap, size_t need, size_t elsize);

/* Ask for transparent huge pages over a freshly allocated block of @bytes
 * at @p (only blocks of a few MiB and up; a hint, never an error).  Big
 * tables read at random then take far fewer TLB misses and page faults.
 * kit_grow gives the hint itself. */
void kit_huge_hint(void *p, size_t bytes);

/* Overflow-checked arithmetic: return 0 on success, -1 on overflow. */
static inline int kit_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}
static inline int kit_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Load/store fixed-width integers of either byte order. */
static inline uint64_t kit_load_le(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = width; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}
static inline uint64_t kit_load_be(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v = (v << 8) | p[i];
	return v;
}
static inline void kit_store_le(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}
static inline void kit_store_be(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = width; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

#endif /* LEAKSNAP_KIT_H */
