/* dlopen / call / dlclose in a loop: the hook must not keep stale unwind
 * state for unloaded code.  dlloop LIB N */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		void *(*fn)(size_t) = (void *(*)(size_t))dlsym(h, "leaker_alloc");
		free(fn(100 + (size_t)i % 50));
		if (dlclose(h) != 0) {
			printf("dlclose: %s\n", dlerror());
			return 1;
		}
	}
	printf("dlloop %d ok\n", n);
	return 0;
}
