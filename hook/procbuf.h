/* leaksnap hook: growable text buffers in the hook's own (mmap'ed) memory,
 * and reading whole /proc files into them.  Used by the dump writer and
 * the record of unloaded libraries; nothing here calls malloc. */
#ifndef LEAKSNAP_HOOK_PROCBUF_H
#define LEAKSNAP_HOOK_PROCBUF_H

#include <stdbool.h>
#include <stddef.h>

/* Text in hook_map()'ed memory; a failed growth sets @failed and every
 * later append is dropped (the writer checks @failed once, at the end). */
struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

/* Room for @more bytes past len; false (and failed set) if none. */
bool buf_reserve(struct buf *b, size_t more);
void buf_add(struct buf *b, const void *data, size_t n);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append @s with every byte but printable ASCII and well-formed, non-C1
 * UTF-8 replaced by '?' (format.h): metadata values are one line of text. */
void buf_add_clean(struct buf *b, const char *s, size_t n);
void buf_free(struct buf *b);

/* Append the whole of /proc/self/@name, or when that is empty
 * /proc/thread-self's (a zombie main thread's /proc/self shows nothing);
 * false on error. */
bool read_proc(const char *name, struct buf *b);

#endif
