/* Preloaded after the hook and libnexta.so by tests/t-hook-dlsym.sh: its
 * next_probe() says "b", and its malloc() is a second malloc interposer that
 * counts its calls and takes the next malloc with dlsym(RTLD_NEXT): it must
 * get the C library's, not the hook's (which calls this one: an endless
 * recursion). */
#include <dlfcn.h>
#include <stddef.h>

const char *next_probe(void);
void *malloc(size_t size);

long next_b_mallocs;

const char *next_probe(void)
{
	return "b";
}

void *malloc(size_t size)
{
	static void *(*next)(size_t);
	if (!next)
		next = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	__atomic_add_fetch(&next_b_mallocs, 1, __ATOMIC_RELAXED);
	return next(size);
}
