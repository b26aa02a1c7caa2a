/* leaksnap: private helpers shared by the library modules (never installed).
 * Everything here has hidden visibility; names carry the lsp_ prefix. */
#ifndef LEAKSNAP_INTERNAL_H
#define LEAKSNAP_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/snapshot.h>

#define LSP_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Set @err (if non-NULL and still clear) to @code for @source.  The _at form
 * records a byte offset, the _line form a line number. Always returns -1 so
 * callers can `return lsp_error(...)`. */
int lsp_error(struct leaksnap_error *err, int code, const char *source,
	      const char *fmt, ...) LSP_PRINTF(4, 5);
int lsp_error_at(struct leaksnap_error *err, int code, const char *source,
		 uint64_t offset, const char *fmt, ...) LSP_PRINTF(5, 6);
int lsp_error_line(struct leaksnap_error *err, int code, const char *source,
		   unsigned long line, const char *fmt, ...) LSP_PRINTF(5, 6);
/* Error from errno of a failed system call on @source. */
int lsp_error_errno(struct leaksnap_error *err, const char *source, int errnum);

/* Grow the array *@arr (capacity *@cap elements of @elsize bytes) to hold
 * at least @need, doubling.  0, or -1 (out of memory or overflow) with the
 * array unchanged. */
int lsp_grow(void **arr, size_t *cap, size_t need, size_t elsize);

/* Ask for transparent huge pages over a freshly allocated block of @bytes
 * at @p (only blocks of a few MiB and up; a hint, never an error).  Big
 * tables read at random then take far fewer TLB misses and page faults.
 * lsp_grow gives the hint itself. */
void lsp_huge_hint(void *p, size_t bytes);

/* Overflow-checked arithmetic: return 0 on success, -1 on overflow. */
static inline int lsp_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out) ? -1 : 0;
}
static inline int lsp_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Load/store fixed-width integers of either byte order. */
static inline uint64_t lsp_load_le(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = width; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}
static inline uint64_t lsp_load_be(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v = (v << 8) | p[i];
	return v;
}
static inline void lsp_store_le(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}
static inline void lsp_store_be(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = width; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

/* A file's whole content, mapped or read; released with lsp_blob_release. */
struct lsp_blob {
	const uint8_t *data;
	size_t size;
	void *mapping;   /* mmap'ed region, or NULL */
	void *heap;      /* malloc'ed copy (stdin, pipes), or NULL */
	size_t dropped;  /* bytes already returned to the kernel */
};
/* What a stream (a pipe, a device) may still be, from its first bytes:
 * returns 0 when it is no input the caller reads (an error, with @err
 * filled), or the most bytes it can hold (UINT64_MAX: no bound known). */
typedef uint64_t (*lsp_stream_bound)(const uint8_t *data, size_t len, const void *ctx,
				     struct leaksnap_error *err);
/* Read all of @path ("-" = stdin): regular files are mmap'ed, anything else
 * is read into memory.  A directory is an error.  For a stream, @bound
 * (may be NULL) is asked once its first LSP_STREAM_PROBE bytes are in, so
 * that an endless or foreign stream (/dev/zero, a pipe of something else)
 * is refused early, not after gigabytes. */
#define LSP_STREAM_PROBE 64
int lsp_blob_load(const char *path, struct lsp_blob *blob, lsp_stream_bound bound,
		  const void *ctx, struct leaksnap_error *err);
void lsp_blob_release(struct lsp_blob *blob);
/* Hint that bytes before @upto will not be read again: a mapped file's pages
 * are dropped from this process (they stay in the page cache), so reading a
 * large dump costs no resident memory for the part already decoded. */
void lsp_blob_drop(struct lsp_blob *blob, size_t upto);

#endif /* LEAKSNAP_INTERNAL_H */
