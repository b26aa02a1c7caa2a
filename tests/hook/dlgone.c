/* A block allocated by a library that is then dlclose()d: dlgone LIB A B
 * loads LIB, keeps leaker_alloc(1234)'s block (reachable from here), dumps
 * to A, unloads LIB, dumps to B, then loads and unloads LIB three more
 * times.  Later dumps must still place the block's frames in LIB. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *dlgone_keep;

static int dump(const char *path)
{
	int (*fn)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	return fn ? fn(path) : -1;
}

static void *load(const char *lib, void *(**alloc)(size_t))
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	*alloc = h ? (void *(*)(size_t))dlsym(h, "leaker_alloc") : NULL;
	if (!*alloc) {
		printf("dlopen %s: %s\n", lib, dlerror());
		exit(1);
	}
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	void *(*alloc)(size_t);
	void *h = load(argv[1], &alloc);
	dlgone_keep = alloc(1234);
	if (dump(argv[2]) != 0 || dlclose(h) != 0 || dump(argv[3]) != 0) {
		printf("dump or dlclose failed\n");
		return 1;
	}
	for (int i = 0; i < 3; i++)
		if (dlclose(load(argv[1], &alloc)) != 0)
			return 1;
	printf("dlgone ok\n");
	return 0;
}
