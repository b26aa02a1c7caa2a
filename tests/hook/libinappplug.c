/* The plug-in libinappdl.so loads by bare name from its RUNPATH's sub/
 * (the in-app tests). */
#include <stdlib.h>

void *plug_keep;

__attribute__((noinline)) void *plug_alloc(size_t size)
{
	void *p = malloc(size);
	plug_keep = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
