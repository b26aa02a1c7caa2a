/* A library that reaches the allocator in every way a GOT slot serves
 * (tests/unit/test_got.c, tests/got/gotcases.c): calls through the PLT
 * (JUMP_SLOT; GNU ld on x86 routes a call to a function whose address
 * is also loaded from the GOT through that GOT slot instead), the address
 * of malloc loaded from the GOT in code (GLOB_DAT) and stored in data
 * (an absolute relocation).  It never names aligned_alloc or strdup. */
#include <stdlib.h>

#define API __attribute__((visibility("default")))

typedef void *(*malloc_fn)(size_t);
typedef void *(*realloc_fn)(void *, size_t);

API void *got_use_malloc(size_t n);
API void got_use_free(void *p);
API void *got_use_calloc(size_t n, size_t size);
API malloc_fn got_code_malloc(void);
API malloc_fn got_data_malloc(void);
API realloc_fn got_code_realloc(void);

void *got_use_malloc(size_t n)
{
	return malloc(n);
}

void got_use_free(void *p)
{
	free(p);
}

void *got_use_calloc(size_t n, size_t size)
{
	return calloc(n, size);
}

malloc_fn got_code_malloc(void)
{
	return malloc;
}

static malloc_fn const data_malloc = malloc;

malloc_fn got_data_malloc(void)
{
	/* read the word, not what the compiler knows it was initialized to */
	return *(malloc_fn const volatile *)&data_malloc;
}

realloc_fn got_code_realloc(void)
{
	return realloc;
}

/* Pointers to its own data: relative relocations (packed into RELR by
 * the relr formats). */
static int cells[8];
API int *got_cells[8] = { &cells[0], &cells[1], &cells[2], &cells[3],
			  &cells[4], &cells[5], &cells[6], &cells[7] };
