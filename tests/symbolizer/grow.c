/* A program that grows: tests/t-symbolize-debugonly.sh runs it under the
 * hook, dumping once midway (leaksnap_dump, looked up at run time) and at
 * exit, then symbolizes the dumps from its debug-only file alone. */
#include <dlfcn.h>
#include <stdlib.h>

static void *kept[200];

__attribute__((noinline)) static void *grow_one(int i)
{
	return malloc(64 + (size_t)(i % 2)); /* grow-alloc */
}

__attribute__((noinline)) static void grow(int from, int to)
{
	for (int i = from; i < to; i++)
		kept[i] = grow_one(i); /* grow-call */
}

int main(int argc, char **argv)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	grow(0, 20);
	if (argc > 1 && dump && dump(argv[1]) != 0)
		return 1;
	grow(20, 200); /* main-call */
	return 0;
}
