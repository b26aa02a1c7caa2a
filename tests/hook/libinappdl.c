/* A library for the in-app tests, built with RUNPATH $ORIGIN/sub: it
 * dlopen()s libinappplug.so by its bare name, which only that RUNPATH finds
 * (the loader searches the caller's path: the in-app hook's dlopen slot
 * must keep it the caller). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *inappdl_keep[4];

__attribute__((noinline)) void *inappdl_alloc(size_t size)
{
	void *p = malloc(size);
	inappdl_keep[0] = p;
	__asm__ volatile("" ::: "memory");
	return p;
}

/* Load the plug-in, call its plug_alloc(@size); NULL if it cannot be had. */
__attribute__((noinline)) void *inappdl_call_plug(size_t size)
{
	void *h = dlopen("libinappplug.so", RTLD_NOW);
	if (!h) {
		printf("dlopen libinappplug.so: %s\n", dlerror());
		return NULL;
	}
	void *(*fn)(size_t) = (void *(*)(size_t))dlsym(h, "plug_alloc");
	if (!fn)
		return NULL;
	void *p = fn(size);
	inappdl_keep[1] = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
