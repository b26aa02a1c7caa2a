/* Test program for the HTML report (tests/t-report.sh): three snapshots
 * (leaksnap_dump through dlsym) with growth of known size per round:
 *   leak_inline        3000 bytes a round, through an inlined je_wrap()
 *                      (an allocation wrapper by its name: the site is the
 *                      inline level under it, leak_inline)
 *   leak_steady        2000 bytes a round
 *   leak_hostile_file  900 bytes a round, from a source file whose name is
 *                      markup (#line)
 *   hostile.c's function, renamed to markup by objcopy: 700 bytes a round
 *   cache_fill         500 bytes in rounds 1 and 2 only: a cache
 * Every block is kept in a global, so nothing is freed before exit. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *keep[64];
int nkeep;
extern void (*hostile_entry)(int round, void **keep, int *nkeep);

static inline __attribute__((always_inline)) void *je_wrap(size_t n)
{
	return malloc(n);
}

__attribute__((noinline)) void leak_inline(void)
{
	keep[nkeep++] = je_wrap(3000);
}

__attribute__((noinline)) void leak_steady(void)
{
	keep[nkeep++] = malloc(2000);
}

__attribute__((noinline)) void cache_fill(int round)
{
	if (round < 3)
		keep[nkeep++] = malloc(500);
}

void leak_hostile_file(void);

int main(void)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (!dump) {
		fprintf(stderr, "grow: not run under the leaksnap hook\n");
		return 1;
	}
	for (int round = 1; round <= 3; round++) {
		leak_inline();
		leak_steady();
		leak_hostile_file();
		hostile_entry(round, keep, &nkeep);
		cache_fill(round);
		if (dump(NULL) != 0)
			return 1;
	}
	return 0;
}

/* Last, so the other lines keep their own file name. */
#line 1000 "</script><img src=x onerror=alert(3)>.c"
__attribute__((noinline)) void leak_hostile_file(void)
{
	keep[nkeep++] = malloc(900);
}
