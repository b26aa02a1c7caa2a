/* Symbolizer fixture: C across two units (with plain2.c), static inline
 * helpers and a function called through a pointer.  The LINE markers name
 * lines the test looks for. */
#include <stdio.h>
#include <stdlib.h>

int plain_other(int x);

static inline int square(int x)
{
	return x * x + (x >> 3); /* LINE square */
}

__attribute__((noinline)) int plain_leaf(int x) /* LINE plain_leaf */
{
	return square(x) + plain_other(x);
}

static int (*volatile fp)(int) = plain_leaf;

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", fp(argc));
	return 0;
}
