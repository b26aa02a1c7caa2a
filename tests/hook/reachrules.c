/* The scan's rules on glibc's own memory and on pages the program cannot
 * read (tests/t-reach.sh, "issue 27: scan rules"; docs/reachability.md).
 *   reachrules DUMP_PATH top SIZE LIB | bin | fast | thread | protect
 * prints "expect SIZE COUNT UNREACHABLE" per case and "expect-unreachable
 * BYTES BLOCKS", then dumps through leaksnap_dump() (under the hook).
 * 64-bit glibc only (it reads glibc's chunk headers to lay the cases out).
 *
 * Lost blocks whose requested bytes hold the chunk header that follows
 * them (sizes of 16k+1 .. 16k+8), where one of glibc's own pointers
 * points; each unreachable:
 *   top SIZE LIB: before the main arena's top (the last block carved from
 *     it; blocks of SIZE that came from a bin are kept), after blocks held
 *     only by the C library's state, all reachable: stdout's buffer
 *     (setvbuf), setenv's strings and array, a random() state (initstate)
 *     whose only pointers are libc's pointers into it, two FILEs only the
 *     stream list keeps (one with its default buffer, written to), atexit's second list, the locale's names, tzset's
 *     strings, bindtextdomain's and getpwuid's data, LIB dlopen'ed;
 *   bin: 2680 bytes before a chunk in the unsorted bin;
 *   fast: 56 bytes before a chunk in a fast bin (its tcache filled first);
 *   thread: 3080 bytes before a thread arena's top, the arena's header
 *     page holding no live block (the thread freed its first block), so
 *     that the scan reads it as a root.
 * Each runs on its own: a later allocation would take the freed chunk, a
 * large one merge the fast bins.
 *
 * protect: blocks with pages the program made unreadable.  A held buffer
 * (memalign, 4 pages) with its second page PROT_NONE, its third write-only
 * and its fourth execute-only, each page holding the only pointer to a
 * block (2296 from its readable first page; 2312, 2328, 2344): all
 * reachable.  A lost buffer with a PROT_NONE page holding the only pointer
 * to a block (2360): both unreachable.  A held block malloc mapped on its
 * own (256 KiB) with a page PROT_NONE and sealed (mseal): the block after
 * it (2376, held from past that page) reachable, the one held only from
 * it (2392) unreachable, its 4096 bytes skipped. */
#include <dlfcn.h>
#include <libintl.h>
#include <locale.h>
#include <malloc.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_mseal
#define SYS_mseal 462 /* (the same number on every architecture) */
#endif
#define NOINLINE __attribute__((noinline))
#define W sizeof(size_t)

enum {
	S_BIN = 2680,       /* lost, before a chunk in the unsorted bin */
	S_BIN_FREE = 1512,  /* freed into that bin */
	S_GUARD = 168,      /* held: keeps the freed chunks from the top */
	S_FAST = 56,        /* lost, before a chunk in a fast bin */
	S_THREAD = 3080,    /* lost in a thread's arena, before its top */
	S_FIRST = 5000,     /* the thread's first block, freed */
	S_STDOUT = 4008,    /* stdout's buffer, given with setvbuf */
	S_RANDOM = 264,     /* initstate()'s state */
	S_PROT_BUF = 4 * 4096,
	S_P_FIRST = 2296,   /* held from the buffer's readable first page */
	S_P_NONE = 2312,    /* from its PROT_NONE page */
	S_P_WONLY = 2328,   /* from its write-only page */
	S_P_XONLY = 2344,   /* from its execute-only page */
	S_PLOST_BUF = 3 * 4096 + 16, /* lost, a PROT_NONE page inside */
	S_P_LOST = 2360,    /* only from that page */
	S_SEALED = 256 << 10, /* held, mapped on its own, a page sealed unreadable */
	S_P_AFTER = 2376,   /* only from past that page */
	S_P_SEALED = 2392,  /* only from that page */
};

static void *volatile g_keep[64];
static size_t g_nkeep;
static void *volatile g_ptr;

static void keep(void *p)
{
	g_keep[g_nkeep++] = p;
}

/* A block's chunk size (glibc: the word before it, less its flag bits). */
static size_t chunk_size(const void *p)
{
	const size_t *at = (const size_t *)p - 1;
	__asm__ volatile("" : "+r"(at)); /* (the compiler: outside the object) */
	return *at & ~(size_t)7;
}

/* The chunk header that follows block @p. */
static char *next_chunk(void *p)
{
	return (char *)p - 2 * W + chunk_size(p);
}

/* A lost block of @size followed by the main arena's top: glibc's top
 * chunk ends at the program break.  Blocks that come from elsewhere (a
 * bin) are kept.  Returns how many were allocated. */
NOINLINE static int lost_before_top(size_t size)
{
	for (int n = 1; n < 32; n++) {
		char *p = malloc(size);
		memset(p, 0x5a, size);
		char *top = next_chunk(p);
		if (top + chunk_size(top + 2 * W) == (char *)sbrk(0)) {
			g_ptr = p;
			g_ptr = NULL;
			return n;
		}
		keep(p);
	}
	return -1;
}

/* A lost block of @size followed by a free chunk of @free_size that a bin
 * holds; @free_size's tcache first filled when it is a fast size.
 * Returns how many blocks of @size were allocated. */
NOINLINE static int lost_before_bin(size_t size, size_t free_size, bool fill_tcache)
{
	void *fill[7];
	if (fill_tcache)
		for (int i = 0; i < 7; i++)
			fill[i] = malloc(free_size);
	for (int n = 1; n < 32; n++) {
		char *p = malloc(size), *f = malloc(free_size);
		keep(malloc(S_GUARD));
		if (next_chunk(p) + 2 * W != f) {
			keep(p);
			keep(f);
			continue;
		}
		memset(p, 0x5a, size);
		if (fill_tcache)
			for (int i = 0; i < 7; i++)
				free(fill[i]);
		free(f);
		g_ptr = p;
		g_ptr = NULL;
		return n;
	}
	return -1;
}

static int thread_pipe[2], done_pipe[2];

NOINLINE static void thread_lose(void)
{
	void *first = malloc(S_FIRST);
	__asm__ volatile("" : : "r"(first) : "memory"); /* (not elided) */
	char *p = malloc(S_THREAD);
	memset(p, 0x5a, S_THREAD);
	free(first);
	g_ptr = p;
	g_ptr = NULL;
}

NOINLINE static void scrub(void)
{
	volatile char junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0;
}

static void *arena_thread(void *arg)
{
	(void)arg;
	thread_lose();
	scrub();
	char c = 1;
	if (write(done_pipe[1], &c, 1) != 1)
		exit(2);
	while (read(thread_pipe[0], &c, 1) < 0)
		;
	return NULL;
}

/* Blocks only the C library's state holds. */
NOINLINE static void libc_state(const char *lib)
{
	setvbuf(stdout, malloc(S_STDOUT), _IOFBF, S_STDOUT);
	setenv("REACHRULES_A", "some value of a variable", 1);
	setenv("REACHRULES_B", "another one", 1);
	initstate(1, malloc(S_RANDOM), S_RANDOM);
	(void)random();
	FILE *out = fopen("/dev/null", "w"); /* its default buffer, data pending */
	if (!out || !fopen("/dev/null", "r") || fputs("pending in the buffer", out) < 0)
		exit(2);
	for (int i = 0; i < 40; i++)
		atexit(scrub);
	setlocale(LC_ALL, "C.UTF-8");
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	bindtextdomain("reachrules", "/nonexistent/locale");
	textdomain("reachrules");
	(void)getpwuid(0);
	if (!dlopen(lib, RTLD_NOW))
		exit(2);
}

/* "top SIZE LIB": the C library's state, then a lost block of SIZE
 * before the main arena's top.  "bin", "fast", "thread": one case each
 * (each run on its own: a later allocation would take the freed chunk, or
 * a large one merge the fast bins). */
NOINLINE static int arena(const char *mode, size_t size, const char *lib)
{
	int n;
	size_t lost;
	if (!strcmp(mode, "top")) {
		libc_state(lib);
		n = lost_before_top(size);
		lost = size;
		printf("expect %d 1 0\n", S_STDOUT);
		printf("expect %d 1 0\n", S_RANDOM);
	} else if (!strcmp(mode, "bin")) {
		n = lost_before_bin(lost = S_BIN, S_BIN_FREE, false);
	} else if (!strcmp(mode, "fast")) {
		n = lost_before_bin(lost = S_FAST, S_FAST, true);
	} else if (!strcmp(mode, "thread")) {
		pthread_t t;
		if (pipe(thread_pipe) || pipe(done_pipe) ||
		    pthread_create(&t, NULL, arena_thread, NULL))
			return 2;
		char c;
		if (read(done_pipe[0], &c, 1) != 1)
			return 2;
		n = 1;
		lost = S_THREAD;
	} else {
		return 2;
	}
	scrub();
	if (n < 0) {
		fprintf(stderr, "reachrules: %s: no such layout found\n", mode);
		return 2;
	}
	printf("expect %zu %d 1\n", lost, n);
	printf("expect-unreachable %zu 1\n", lost);
	return 0;
}

NOINLINE static int protect(void)
{
	size_t pg = 4096;
	char *buf = memalign(pg, S_PROT_BUF);
	keep(buf);
	void *ptrs[4] = {malloc(S_P_FIRST), malloc(S_P_NONE), malloc(S_P_WONLY), malloc(S_P_XONLY)};
	for (int i = 0; i < 4; i++)
		memcpy(buf + i * pg + 24 * (i + 1), &ptrs[i], sizeof(void *));
	if (mprotect(buf + pg, pg, PROT_NONE) || mprotect(buf + 2 * pg, pg, PROT_WRITE) ||
	    mprotect(buf + 3 * pg, pg, PROT_EXEC))
		return 2;

	char *lost = memalign(pg, S_PLOST_BUF);
	void *inner = malloc(S_P_LOST);
	memcpy(lost + pg + 40, &inner, sizeof(inner));
	if (mprotect(lost + pg, pg, PROT_NONE))
		return 2;
	g_ptr = lost;
	g_ptr = NULL;

	/* A page the image cannot make readable either: PROT_NONE, then
	 * sealed (mseal, Linux 6.10 and later, 64-bit), in a block malloc
	 * mapped on its own.  A block held only from that page cannot be
	 * seen: unreachable (the cost of skipping). */
	char *sealed = malloc(S_SEALED);
	keep(sealed);
	char *page = (char *)(((uintptr_t)sealed + 16 * pg) & ~(uintptr_t)(pg - 1));
	void *after = malloc(S_P_AFTER), *in_sealed = malloc(S_P_SEALED);
	memcpy(page + 3 * pg, &after, sizeof(after));
	memcpy(page + 8, &in_sealed, sizeof(in_sealed));
	bool seal = mprotect(page, pg, PROT_NONE) == 0;
	seal = seal && syscall(SYS_mseal, page, pg, 0UL) == 0;
	if (!seal) /* no mseal: an ordinary PROT_NONE page, read in the image */
		printf("mseal: unavailable\n");
	memset(ptrs, 0, sizeof(ptrs));
	inner = after = in_sealed = NULL;
	scrub();
	printf("expect %d 1 0\n", S_PROT_BUF);
	printf("expect %d 1 0\n", S_P_FIRST);
	printf("expect %d 1 0\n", S_P_NONE);
	printf("expect %d 1 0\n", S_P_WONLY);
	printf("expect %d 1 0\n", S_P_XONLY);
	printf("expect %d 1 1\n", S_PLOST_BUF);
	printf("expect %d 1 1\n", S_P_LOST);
	printf("expect %d 1 0\n", S_SEALED);
	printf("expect %d 1 0\n", S_P_AFTER);
	printf("expect %d 1 %d\n", S_P_SEALED, seal);
	printf("expect-unreachable %d %d\n", S_PLOST_BUF + S_P_LOST + (seal ? S_P_SEALED : 0),
	       2 + seal);
	/* read in the image: the three protected pages of the held buffer and
	 * the PROT_NONE page of the lost one; skipped: the sealed page */
	printf("expect-meta reachability_unreadable=%zu bytes read, %zu bytes skipped\n",
	       (4 + !seal) * pg, seal * pg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: reachrules DUMP_PATH top SIZE LIB | bin | fast | thread | protect\n");
		return 2;
	}
	int st;
	if (!strcmp(argv[2], "protect")) {
		setvbuf(stdout, NULL, _IONBF, 0);
		st = protect();
	} else {
		if (strcmp(argv[2], "top"))
			setvbuf(stdout, NULL, _IONBF, 0);
		st = arena(argv[2], argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 0,
			   argc > 4 ? argv[4] : "");
	}
	if (st)
		return st;
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (dump && dump(argv[1]) != 0) {
		perror("leaksnap_dump");
		return 1;
	}
	return 0;
}
