/* Allocation functions looked up by name, for tests/t-hook-dlsym.sh.
 *   dlsymuser libc   dlopen()s libc.so.6 and leaks through the functions
 *                    dlsym() and dlvsym() give: 3 x 1234 bytes (malloc,
 *                    dl_leak_malloc), 1 x 2345 (calloc, dl_leak_calloc),
 *                    1 x 3456 (realloc, dl_leak_realloc), 1 x 4567
 *                    (RTLD_DEFAULT, dl_leak_default), 1 x 5678 (RTLD_NEXT,
 *                    dl_leak_next), 1 x 6789 (dlvsym, dl_leak_vsym), 1 x 8192
 *                    (posix_memalign, dl_leak_aligned); a block of 1111 bytes
 *                    from malloc() freed with the looked-up free, one of
 *                    2222 from the looked-up malloc freed with free().
 *                    Prints whether dlsym(handle, "malloc") is the malloc
 *                    the program calls.
 *   dlsymuser next   with libnexta.so and libnextb.so preloaded after the
 *                    hook: prints what RTLD_NEXT lookups give, from the
 *                    program and from libnexta.so, whether open() went
 *                    through libnexta's and malloc() through libnextb's;
 *                    leaks 1 x 7777 (next_leak). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*malloc_fn)(size_t);

void *volatile dl_sink[16];
static void *libc;

#if defined(__x86_64__)
#define MALLOC_VERSION "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define MALLOC_VERSION "GLIBC_2.17"
#elif defined(__arm__)
#define MALLOC_VERSION "GLIBC_2.4"
#else
#define MALLOC_VERSION "GLIBC_2.0"
#endif

__attribute__((noinline)) void dl_leak_malloc(int i)
{
	malloc_fn m = (malloc_fn)dlsym(libc, "malloc");
	dl_sink[i] = m(1234);
}

__attribute__((noinline)) void dl_leak_calloc(void)
{
	void *(*c)(size_t, size_t) = (void *(*)(size_t, size_t))dlsym(libc, "calloc");
	dl_sink[3] = c(1, 2345);
}

__attribute__((noinline)) void dl_leak_realloc(void)
{
	void *(*r)(void *, size_t) = (void *(*)(void *, size_t))dlsym(libc, "realloc");
	dl_sink[4] = r(malloc(16), 3456);
}

__attribute__((noinline)) void dl_leak_default(void)
{
	malloc_fn m = (malloc_fn)dlsym(RTLD_DEFAULT, "malloc");
	dl_sink[5] = m(4567);
}

__attribute__((noinline)) void dl_leak_next(void)
{
	malloc_fn m = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	dl_sink[6] = m(5678);
}

__attribute__((noinline)) void dl_leak_vsym(void)
{
	malloc_fn m = (malloc_fn)dlvsym(libc, "malloc", MALLOC_VERSION);
	dl_sink[7] = m ? m(6789) : NULL;
}

__attribute__((noinline)) void dl_leak_aligned(void)
{
	int (*pm)(void **, size_t, size_t) =
		(int (*)(void **, size_t, size_t))dlsym(libc, "posix_memalign");
	void *p = NULL;
	if (pm(&p, 64, 8192) == 0)
		dl_sink[8] = p;
}

static int mode_libc(void)
{
	libc = dlopen("libc.so.6", RTLD_NOW);
	if (!libc) {
		fprintf(stderr, "dlsymuser: %s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 3; i++)
		dl_leak_malloc(i);
	dl_leak_calloc();
	dl_leak_realloc();
	dl_leak_default();
	dl_leak_next();
	dl_leak_vsym();
	dl_leak_aligned();
	void (*f)(void *) = (void (*)(void *))dlsym(libc, "free");
	dl_sink[9] = malloc(1111);
	f(dl_sink[9]);
	dl_sink[9] = ((malloc_fn)dlsym(libc, "malloc"))(2222);
	free(dl_sink[9]);
	dl_sink[9] = NULL;
	printf("same malloc: %s\n", dlsym(libc, "malloc") == (void *)malloc ? "yes" : "no");
	printf("missing: %s\n", dlsym(libc, "no_such_function_here") ? "found" : "not found");
	return 0;
}

__attribute__((noinline)) void next_leak(void)
{
	dl_sink[10] = malloc(7777);
}

static int mode_next(void)
{
	const char *(*fwd)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "next_a_forward");
	const char *(*probe)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "next_probe");
	volatile int *opens = dlsym(RTLD_DEFAULT, "next_a_opens");
	volatile long *mallocs = dlsym(RTLD_DEFAULT, "next_b_mallocs");
	if (!fwd || !probe || !opens || !mallocs) {
		fprintf(stderr, "dlsymuser: libnexta.so and libnextb.so are not loaded\n");
		return 1;
	}
	printf("from libnexta: %s\n", fwd());
	printf("from the program: %s\n", probe());
	int before = *opens;
	int fd = open("/dev/null", O_RDONLY);
	printf("open: %s, through libnexta: %s\n", fd >= 0 ? "ok" : "failed", *opens > before ? "yes" : "no");
	if (fd >= 0)
		close(fd);
	long m = *mallocs;
	next_leak();
	printf("malloc through libnextb: %s\n", *mallocs > m ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "libc"))
		return mode_libc();
	if (argc == 2 && !strcmp(argv[1], "next"))
		return mode_next();
	fprintf(stderr, "usage: dlsymuser libc|next\n");
	return 2;
}
