/* reachdump: print the reachability section of a LEAKSNAP dump.
 *
 * A reader written independently of libsnapshot (it includes none of its
 * headers), from docs/format.md (LEAKSNAP v1 and its reachability
 * section) alone, so that the hook's writer is
 * checked against the layout rather than against the host readers.
 *
 * Output, one line each:
 *   flags <header flags byte>
 *   meta <line>                    for every metadata line
 *   rec <size> <count> <unreachable> <pc> ...   per record, in file order
 *                                               (<size> without the zygote bit;
 *                                               "-" as unreachable without bit 2)
 *   total <bytes> <allocations> unreachable <bytes> <allocations>
 * Exit 0; 2 with one line "reachdump: FILE: what (at offset N)" for a file
 * that breaks the layout (including a count above its record's).
 *
 * Usage: reachdump FILE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *path;

static void bad(const char *what, uint64_t off)
{
	fprintf(stderr, "reachdump: %s: %s (at offset %llu)\n", path, what,
		(unsigned long long)off);
	exit(2);
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static uint64_t field(const uint8_t *p, unsigned n, int big)
{
	if (!big)
		return le(p, n);
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: reachdump FILE\n");
		return 2;
	}
	path = argv[1];
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 2;
	}
	size_t cap = 1 << 20, len = 0;
	uint8_t *d = malloc(cap);
	for (size_t r; d && (r = fread(d + len, 1, cap - len, f)) > 0;) {
		len += r;
		if (len == cap)
			d = realloc(d, cap *= 2);
	}
	fclose(f);
	if (!d)
		bad("out of memory", 0);
	if (len < 64 || memcmp(d, "LEAKSNAP", 8))
		bad("not a LEAKSNAP dump", 0);
	unsigned psz = d[10], flags = d[11];
	int big = flags & 1;
	uint64_t frames = le(d + 12, 4), meta_size = le(d + 20, 4), info = le(d + 40, 8);
	uint64_t rsize = le(d + 48, 8), msize = le(d + 56, 8);
	if ((psz != 4 && psz != 8) || frames < 1 || frames > 256 || info != psz * (2 + frames))
		bad("bad header", 8);
	if (rsize % info || rsize > len || msize > len || meta_size > len ||
	    64 + rsize + msize + meta_size > len)
		bad("sizes run past the end", 48);
	uint64_t n = rsize / info, sec = 64 + rsize + msize + meta_size;
	if (flags & 4) {
		if ((flags & 2))
			bad("flag bits 1 and 2 together", 11);
		if (len != sec + 4 * n)
			bad("file size is not that of the reachability section", sec);
	} else if (len != sec) {
		bad("trailing bytes", sec);
	}
	printf("flags %u\n", flags);
	const char *m = (const char *)d + 64 + rsize + msize, *mend = m + meta_size;
	while (m < mend) {
		const char *nl = memchr(m, '\n', (size_t)(mend - m));
		const char *e = nl ? nl : mend;
		printf("meta %.*s\n", (int)(e - m), m);
		m = e + 1;
	}
	uint64_t tb = 0, ta = 0, ub = 0, ua = 0;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *r = d + 64 + i * info;
		uint64_t size = field(r, psz, big) & ~(uint64_t)0x80000000u;
		uint64_t count = field(r + psz, psz, big);
		tb += size * count;
		ta += count;
		printf("rec %llu %llu ", (unsigned long long)size, (unsigned long long)count);
		if (flags & 4) {
			uint64_t u = field(d + sec + 4 * i, 4, big);
			if (u > count)
				bad("unreachable count above the record's", sec + 4 * i);
			ub += u * size;
			ua += u;
			printf("%llu", (unsigned long long)u);
		} else {
			printf("-");
		}
		for (uint64_t k = 0; k < frames; k++) {
			uint64_t pc = field(r + psz * (2 + k), psz, big);
			if (!pc)
				break;
			printf(" 0x%llx", (unsigned long long)pc);
		}
		printf("\n");
	}
	printf("total %llu %llu unreachable %llu %llu\n", (unsigned long long)tb,
	       (unsigned long long)ta, (unsigned long long)ub, (unsigned long long)ua);
	free(d);
	return 0;
}
