/* dlopen(RTLD_NOW | RTLD_LOCAL) each argument in turn, printing "PATH: ok"
 * or "PATH: dlerror's text" (t-inapp.sh, the static TLS surplus). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			printf("%s: ok\n", argv[i]);
		} else {
			printf("%s\n", dlerror());
			failed = 1;
		}
	}
	return failed;
}
