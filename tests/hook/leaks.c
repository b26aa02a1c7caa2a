/* Leak program for the hook tests.  Each kind of leak has a size of its
 * own, so a test can find its record in a dump and check its count and
 * stack exactly:
 *   1001 x3  malloc at the end of an 8-deep call chain (level8 ... level1)
 *   1002 x2  calloc(3, 334)                       leak_calloc
 *   4003 x1  realloc growth 16 -> ... -> 4003     leak_realloc
 *   1004     memalign(64)        1005 posix_memalign(128)
 *   1006     aligned_alloc(256)  1007 valloc     1008 pvalloc
 *   1017     reallocarray(NULL, 9, 113)           leak_aligned
 *   1009 x1  in a thread                          thread_leak
 *   1010 x1  in a dlopen'ed library               leaker_alloc (libleaker.so)
 *   1011 x1  in a forked child (zygote bit)       child_leak
 * Blocks of 2000..2999 bytes are all freed before exit.  The program also
 * checks the allocation functions' semantics and prints "semantics ok".
 * Usage: leaks [all] [--thread] [--fork] [--realloc-zero] [--double-free]
 *              [LIBLEAKER.so]
 * "all" = --thread --fork --realloc-zero; a path argument is dlopen()ed.
 * (--realloc-zero frees with realloc(p, 0); heaptrack 1.4 counts those
 * blocks as leaked, so the comparison with it runs without.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *leaks_keep[64]; /* global: the compiler cannot drop the leaks */
static int nkeep;
static volatile int sink;
/* Over PTRDIFF_MAX, which glibc refuses (a 32-bit process could get 2 GiB);
 * hidden from the compiler. */
static volatile size_t huge = (size_t)-1 / 2 + 1;

#define HOLD(p) (leaks_keep[nkeep++ % 64] = (p))
#define NOTAIL() __asm__ volatile("" ::: "memory"); sink++

__attribute__((noinline)) void level8(void) { HOLD(malloc(1001)); NOTAIL(); }
__attribute__((noinline)) void level7(void) { level8(); NOTAIL(); }
__attribute__((noinline)) void level6(void) { level7(); NOTAIL(); }
__attribute__((noinline)) void level5(void) { level6(); NOTAIL(); }
__attribute__((noinline)) void level4(void) { level5(); NOTAIL(); }
__attribute__((noinline)) void level3(void) { level4(); NOTAIL(); }
__attribute__((noinline)) void level2(void) { level3(); NOTAIL(); }
__attribute__((noinline)) void level1(void) { level2(); NOTAIL(); }

__attribute__((noinline)) void run_deep(void)
{
	for (int i = 0; i < 3; i++) {
		level1();
		NOTAIL();
	}
}

__attribute__((noinline)) void leak_calloc(void)
{
	for (int i = 0; i < 2; i++) {
		char *p = calloc(3, 334);
		for (int k = 0; k < 1002; k++)
			if (p[k]) {
				printf("calloc memory not zeroed\n");
				exit(1);
			}
		HOLD(p);
		NOTAIL();
	}
}

__attribute__((noinline)) void leak_realloc(void)
{
	char *p = malloc(16);
	memset(p, 'x', 16);
	for (size_t n = 32; n < 4003; n *= 2) {
		p = realloc(p, n);
		NOTAIL();
	}
	p = realloc(p, 4003);
	if (p[15] != 'x') {
		printf("realloc lost data\n");
		exit(1);
	}
	HOLD(p);
	NOTAIL();
}

static void check_align(void *p, size_t a, const char *what)
{
	if (!p || (uintptr_t)p % a) {
		printf("%s: bad alignment\n", what);
		exit(1);
	}
}

__attribute__((noinline)) void leak_aligned(void)
{
	void *p = memalign(64, 1004);
	check_align(p, 64, "memalign");
	HOLD(p);
	if (posix_memalign(&p, 128, 1005) != 0)
		exit(1);
	check_align(p, 128, "posix_memalign");
	HOLD(p);
	p = aligned_alloc(256, 1006);
	check_align(p, 256, "aligned_alloc");
	HOLD(p);
	p = valloc(1007);
	check_align(p, 4096, "valloc");
	HOLD(p);
	p = pvalloc(1008);
	check_align(p, 4096, "pvalloc");
	HOLD(p);
	HOLD(reallocarray(NULL, 9, 113));
	NOTAIL();
}

static int realloc_zero;

/* Allocations freed before exit, in every way there is. */
__attribute__((noinline)) void churn(void)
{
	for (int round = 0; round < 1000; round++) {
		void *a = malloc(2000 + round % 100);
		void *b = calloc(1, 2100);
		void *c = realloc(NULL, 2200);
		c = realloc(c, 2300);
		void *d;
		if (posix_memalign(&d, 64, 2400))
			exit(1);
		void *e = memalign(32, 2500);
		void *f = aligned_alloc(64, 2560);
		void *g = malloc(2600);
		if (realloc_zero) {
			g = realloc(g, 0); /* glibc: frees, returns NULL */
			if (g)
				free(g);
		} else {
			free(g);
		}
		free(a);
		free(b);
		free(c);
		free(d);
		free(e);
		free(f);
	}
	char *s = strdup("freed string of 2700 bytes? no: short");
	free(s);
}

__attribute__((noinline)) void *thread_leak(void *arg)
{
	(void)arg;
	HOLD(malloc(1009));
	NOTAIL();
	return NULL;
}

__attribute__((noinline)) void child_leak(void)
{
	HOLD(malloc(1011));
	NOTAIL();
}

static void semantics(void)
{
	errno = 0;
	if (calloc(huge, 4) != NULL || errno != ENOMEM) {
		printf("calloc overflow: not NULL/ENOMEM\n");
		exit(1);
	}
	errno = 0;
	if (reallocarray(NULL, huge, 4) != NULL || errno != ENOMEM) {
		printf("reallocarray overflow: not NULL/ENOMEM\n");
		exit(1);
	}
	void *p = malloc(100);
	if (malloc_usable_size(p) < 100) {
		printf("malloc_usable_size too small\n");
		exit(1);
	}
	errno = EDOM;
	free(p);
	free(NULL);
	if (errno != EDOM) {
		printf("free changed errno\n");
		exit(1);
	}
	if (posix_memalign(&p, 3, 10) != EINVAL) {
		printf("posix_memalign(3): not EINVAL\n");
		exit(1);
	}
	p = malloc(0);
	if (!p) {
		printf("malloc(0) returned NULL\n");
		exit(1);
	}
	free(p);
	p = malloc(huge);
	if (p || errno != ENOMEM) {
		printf("huge malloc: not NULL/ENOMEM\n");
		exit(1);
	}
	printf("semantics ok\n");
}

int main(int argc, char **argv)
{
	int all = argc > 1 && !strcmp(argv[1], "all");
	int double_free = 0, thread = all, do_fork = all;
	const char *lib = NULL;
	realloc_zero = all;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--double-free"))
			double_free = 1;
		else if (!strcmp(argv[i], "--thread"))
			thread = 1;
		else if (!strcmp(argv[i], "--fork"))
			do_fork = 1;
		else if (!strcmp(argv[i], "--realloc-zero"))
			realloc_zero = 1;
		else if (strchr(argv[i], '/'))
			lib = argv[i];
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	semantics();
	run_deep();
	leak_calloc();
	leak_realloc();
	leak_aligned();
	churn();
	if (double_free) {
		char *volatile p = malloc(2900); /* volatile: keep both frees */
		p[0] = 1;
		free(p);
		free(p);
	}
	if (thread) {
		pthread_t t;
		pthread_create(&t, NULL, thread_leak, NULL);
		pthread_join(t, NULL);
	}
	if (lib) {
		void *h = dlopen(lib, RTLD_NOW);
		void *(*fn)(size_t) = h ? (void *(*)(size_t))dlsym(h, "leaker_alloc") : NULL;
		if (!fn) {
			printf("dlopen %s: %s\n", lib, dlerror());
			return 1;
		}
		fn(1010);
	}
	if (do_fork) {
		pid_t pid = fork();
		if (pid == 0) {
			child_leak();
			exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		printf("child %d\n", (int)(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0));
	}
	printf("done\n");
	return 7;
}
