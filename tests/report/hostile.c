/* Compiled without debug information, then its function renamed by
 * `objcopy --redefine-sym hostile_leak='</script><img src=x onerror=alert(1)>'`:
 * the symbolizer names the frame from the symbol table (tests/t-report.sh). */
#include <stdlib.h>

__attribute__((noinline)) static void hostile_leak(int round, void **keep, int *nkeep)
{
	(void)round;
	keep[(*nkeep)++] = malloc(700);
}

void (*hostile_entry)(int, void **, int *) = hostile_leak;
