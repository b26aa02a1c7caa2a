/* leaksnap kit: growing arrays, and huge pages for big ones. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kit.h"

int kit_grow(void **arr, size_t *cap, size_t need, size_t elsize)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 64;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elsize)
			return -1;
		ncap *= 2;
	}
	void *n = realloc(*arr, ncap * elsize);
	if (n == NULL)
		return -1;
	kit_huge_hint(n, ncap * elsize);
	*arr = n;
	*cap = ncap;
	return 0;
}

#define HUGE_HINT_MIN ((size_t)4 << 20)

void kit_huge_hint(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	if (bytes < HUGE_HINT_MIN)
		return;
	/* From the page the block starts in to the end of its last page: for a
	 * block malloc mapped by itself, its whole mapping (no split). */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(page - 1);
	uintptr_t e = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);
	(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}
