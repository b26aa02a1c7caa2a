/* leaksnap hook: growable text buffers in mmap'ed memory, and whole /proc
 * files read into them (procbuf.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kit_format.h"
#include "hook_internal.h"
#include "procbuf.h"

bool buf_reserve(struct buf *b, size_t more)
{
	if (b->failed)
		return false;
	if (b->len + more <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64 * 1024;
	while (cap < b->len + more)
		cap *= 2;
	void *p = b->p ? mremap(b->p, b->cap, cap, MREMAP_MAYMOVE) : hook_map(cap);
	if (!p || p == MAP_FAILED) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void buf_add(struct buf *b, const void *data, size_t n)
{
	if (buf_reserve(b, n)) {
		memcpy(b->p + b->len, data, n);
		b->len += n;
	}
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	for (size_t want = 256;; ) {
		if (!buf_reserve(b, want))
			return;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		want = (size_t)n + 1;
	}
}

/* Append @s with every byte but printable ASCII and well-formed, non-C1
 * UTF-8 replaced by '?' (kit_format.h): metadata values are one line of
 * text. */
void buf_add_clean(struct buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned keep = kit_meta_keep(u, n, i);
		if (!keep) {
			b->p[b->len++] = '?';
			i++;
			continue;
		}
		memcpy(b->p + b->len, s + i, keep);
		b->len += keep;
		i += keep;
	}
}

void buf_free(struct buf *b)
{
	hook_unmap(b->p, b->cap);
	memset(b, 0, sizeof(*b));
}

bool buf_read_file(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	for (;;) {
		if (!buf_reserve(b, 64 * 1024))
			break;
		ssize_t n = read(fd, b->p + b->len, b->cap - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return n == 0;
		}
		b->len += (size_t)n;
	}
	close(fd);
	return false;
}

/* The whole of /proc/self/@name, or when that is empty /proc/thread-self's:
 * once the main thread has ended by pthread_exit(), /proc/self is that
 * zombie's, whose maps and cmdline are empty.  (/proc/self first: qemu-user
 * shows the guest's maps there, not under /proc/thread-self.) */
bool read_proc(const char *name, struct buf *b)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/%s", name);
	size_t start = b->len;
	if (buf_read_file(path, b) && b->len > start)
		return true;
	b->len = start;
	snprintf(path, sizeof(path), "/proc/thread-self/%s", name);
	return buf_read_file(path, b);
}

const char *maps_line_field(const char *p, const char *e, int n)
{
	for (int field = 0; field < n; field++) {
		while (p < e && *p != ' ')
			p++;
		while (p < e && *p == ' ')
			p++;
	}
	return p;
}

uintptr_t maps_line_hex(const char *p, const char *e, const char **after)
{
	uintptr_t v = 0;
	for (; p < e; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
			   : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10) : 16;
		if (d == 16)
			break;
		v = v << 4 | d;
	}
	if (after)
		*after = p;
	return v;
}
