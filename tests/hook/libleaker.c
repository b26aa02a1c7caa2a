/* A library the leak program dlopen()s: a leak made inside it. */
#include <stdlib.h>

void *leaker_keep;

__attribute__((noinline)) void *leaker_alloc(size_t size)
{
	void *p = malloc(size);
	leaker_keep = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
