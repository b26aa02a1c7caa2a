/* The part of tests/hook/instr.c built without -finstrument-functions: an
 * allocation through it leaves a gap in the shadow stack. */
#include <stdlib.h>

void *plain_alloc(size_t n);

__attribute__((noinline)) void *plain_alloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}
