/* leaksnap kit: a file's whole content, mapped or read. */
#ifndef LEAKSNAP_KIT_BLOB_H
#define LEAKSNAP_KIT_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>

/* A file's whole content, mapped or read; released with kit_blob_release. */
struct kit_blob {
	const uint8_t *data;
	size_t size;
	void *mapping;   /* mmap'ed region, or NULL */
	void *heap;      /* malloc'ed copy (stdin, pipes), or NULL */
	size_t dropped;  /* bytes already returned to the kernel */
};
/* What a stream (a pipe, a device) may still be, from its first bytes:
 * returns 0 when it is no input the caller reads (an error, with @err
 * filled), or the most bytes it can hold (UINT64_MAX: no bound known). */
typedef uint64_t (*kit_stream_bound)(const uint8_t *data, size_t len, const void *ctx,
				     struct leaksnap_error *err);
/* Read all of @path ("-" = stdin): regular files are mmap'ed, anything else
 * is read into memory.  A directory is an error.  For a stream, @bound
 * (may be NULL) is asked once its first KIT_STREAM_PROBE bytes are in, so
 * that an endless or foreign stream (/dev/zero, a pipe of something else)
 * is refused early, not after gigabytes. */
#define KIT_STREAM_PROBE 64
int kit_blob_load(const char *path, struct kit_blob *blob, kit_stream_bound bound,
		  const void *ctx, struct leaksnap_error *err);
void kit_blob_release(struct kit_blob *blob);
/* Hint that bytes before @upto will not be read again: a mapped file's pages
 * are dropped from this process (they stay in the page cache), so reading a
 * large dump costs no resident memory for the part already decoded. */
void kit_blob_drop(struct kit_blob *blob, size_t upto);

#endif /* LEAKSNAP_KIT_BLOB_H */
