/* leaksnap hook: the scanning child's /proc/self/maps, as areas: what is
 * read, written, shared, a heap or a stack (docs/reachability.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reach_child.h"

static uintptr_t hex(const char **s)
{
	uintptr_t v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

static bool starts(const char *s, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);
	return (size_t)(end - s) >= n && !memcmp(s, prefix, n);
}

/* Read and parse /proc/self/maps; the text buffer is excluded from roots. */
struct area *rc_read_maps(size_t *count)
{
	size_t cap = 1 << 20, len = 0;
	char *text = rc_map(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (!text || fd < 0)
		rc_give_up("cannot read /proc/self/maps in the image");
	for (;;) {
		if (cap - len < 65536) {
			char *t = mremap(text, cap, cap * 2, MREMAP_MAYMOVE);
			if (t == MAP_FAILED)
				rc_give_up("no memory for the maps");
			text = t;
			cap *= 2;
		}
		ssize_t r = read(fd, text + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	rc_exclude((uintptr_t)text, (uintptr_t)text + cap);
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	struct area *a = rc_map(lines * sizeof(*a));
	if (!a)
		rc_give_up("no memory for the maps");
	size_t n = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *s = p;
		struct area *m = &a[n];
		m->lo = hex(&s);
		if (*s == '-')
			s++;
		m->hi = hex(&s);
		while (s < eol && *s == ' ')
			s++;
		m->flags = 0;
		if (eol - s >= 4) {
			m->flags |= s[0] == 'r' ? A_READ : 0;
			m->flags |= s[1] == 'w' ? A_WRITE : 0;
			m->flags |= s[3] == 's' ? A_SHARED : 0;
		}
		/* the path: after perms, offset, dev and inode */
		for (int field = 0; s < eol && field < 4; field++) {
			while (s < eol && *s == ' ')
				s++;
			while (s < eol && *s != ' ')
				s++;
		}
		while (s < eol && *s == ' ')
			s++;
		bool anon_shared = s == eol || starts(s, eol, "/dev/zero") ||
				   starts(s, eol, "/SYSV") || starts(s, eol, "/memfd:") ||
				   starts(s, eol, "[anon_shmem");
		if (starts(s, eol, "[vvar") || starts(s, eol, "[vsyscall]") ||
		    starts(s, eol, "[vdso]") || (starts(s, eol, "/dev/") && !anon_shared) ||
		    ((m->flags & A_SHARED) && !anon_shared))
			m->flags |= A_SKIP; /* kernel pages, devices, shared files */
		if (starts(s, eol, "[anon:libc_malloc") || starts(s, eol, "[anon:scudo:") ||
		    starts(s, eol, "[anon:GWP-ASan"))
			m->flags |= A_HEAP; /* the allocator's, even with no live block */
		if ((s == eol || starts(s, eol, "[anon:")) && !(m->flags & A_SHARED))
			m->flags |= A_ANON;
		if (m->hi > m->lo)
			n++;
		p = eol + 1;
	}
	*count = n;
	return a;
}

struct area *rc_area_of(struct area *a, size_t n, uintptr_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo].lo <= addr && addr < a[lo].hi ? &a[lo] : NULL;
}

