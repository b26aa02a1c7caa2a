/* A library for the in-app tests, built with RUNPATH $ORIGIN/sub: it
 * dlopen()s libinappplug.so by its bare name, which only that RUNPATH finds
 * (the loader searches the caller's path: the in-app hook's dlopen slot
 * must keep it the caller). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *inappdl_keep[4];

/* Pointers to malloc taken in data: an absolute relocation in writable
 * data, and one in a table that is read-only after relocation (RELRO). */
void *(*inappdl_fp)(size_t) = malloc;
void *(*const inappdl_table[2])(size_t) = {malloc, malloc};
volatile int inappdl_index = 1;

__attribute__((noinline)) void *inappdl_alloc(size_t size)
{
	void *p = malloc(size);
	inappdl_keep[0] = p;
	__asm__ volatile("" ::: "memory");
	return p;
}

/* Through a pointer taken in code (a GLOB_DAT slot). */
__attribute__((noinline)) void *inappdl_alloc_ptr(size_t size)
{
	void *(*volatile f)(size_t) = malloc;
	void *p = f(size);
	__asm__ volatile("" ::: "memory");
	return p;
}

/* Through the pointers in data. */
__attribute__((noinline)) void *inappdl_alloc_data(size_t size)
{
	void *p = inappdl_fp(size);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *inappdl_alloc_relro(size_t size)
{
	void *p = inappdl_table[inappdl_index](size);
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
