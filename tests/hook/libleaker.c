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

/* Free a block someone else allocated (the in-app tests: a watched
 * module's block freed by a module not watched). */
__attribute__((noinline)) void leaker_free(void *p)
{
	free(p);
	__asm__ volatile("" ::: "memory");
}
