/* leaksnap hook: growable text buffers in the hook's own (mmap'ed) memory,
 * and reading whole /proc files into them.  Used by the dump writer and
 * the record of unloaded libraries; nothing here calls malloc. */
#ifndef LEAKSNAP_HOOK_PROCBUF_H
#define LEAKSNAP_HOOK_PROCBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * UTF-8 replaced by '?' (kit_format.h): metadata values are one line of text. */
void buf_add_clean(struct buf *b, const char *s, size_t n);
void buf_free(struct buf *b);

/* Append the whole of the file @path; false on error. */
bool buf_read_file(const char *path, struct buf *b);
/* Append the whole of /proc/self/@name, or when that is empty
 * /proc/thread-self's (a zombie main thread's /proc/self shows nothing);
 * false on error. */
bool read_proc(const char *name, struct buf *b);

/* Maps lines, as /proc/self/maps prints them: "range perms offset dev
 * inode path".  [@p, @e) is one line, without its newline. */
/* Where field @n (0 the range ... 4 the inode, 5 the path) starts, or @e. */
const char *maps_line_field(const char *p, const char *e, int n);
/* The hex number at @p, stopping at @e or the first other byte (*@after,
 * if not NULL, is set there). */
uintptr_t maps_line_hex(const char *p, const char *e, const char **after);

#endif
