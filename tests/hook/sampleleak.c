/* Sampled-mode program for the hook tests (t-sample.sh).
 *
 *   sampleleak accuracy DIR
 *       Writes DIR/a.dump after a warm-up, then allocates 100 MB of churn
 *       (blocks of 16..1023 bytes, at most 256 of them live at a time, so
 *       that the live churn does not grow) among which it leaks 1 MiB in
 *       4096 blocks of 256 bytes (leak_site), and writes DIR/b.dump.  The
 *       warm-up and the churn are one call site (churn_site via churn,
 *       from one line of main): one stack in both dumps.
 *   sampleleak big
 *       Leaks one block of each size 65536, 100000 and 1000000 (big_site)
 *       and 1000 blocks of 64 bytes (small_site), frees 10000 blocks of
 *       100 bytes and exits (the exit dump).
 *   sampleleak fork DIR
 *       Leaks 100 blocks of 64 bytes (small_site), forks, and then parent
 *       and child each leak 2000 more there and write DIR/parent.dump and
 *       DIR/child.dump (each draws its own samples after the fork).
 */
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int (*dump)(const char *);
void *sampleleak_ring[256];
void *sampleleak_kept[8192]; /* global: the compiler cannot drop them */
static int nkept;
static uint64_t rs = 88172645463325252ULL;

static unsigned next_rand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (unsigned)(rs >> 32);
}

__attribute__((noinline)) static void *churn_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) static void leak_site(void)
{
	sampleleak_kept[nkept++] = malloc(256);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void big_site(size_t n)
{
	sampleleak_kept[nkept++] = malloc(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void small_site(void)
{
	sampleleak_kept[nkept++] = malloc(64);
	__asm__ volatile("" ::: "memory");
}

/* Step @k of the churn: k < 0 the warm-up (4 MB), else one 4096th of the
 * 100 MB.  Not inlined, and called from one place in main for both: the
 * warm-up's blocks and the churn's have one stack. */
__attribute__((noinline)) static uint64_t churn(int k)
{
	uint64_t bytes = k < 0 ? 4 << 20 : 100000000 / 4096, done = 0;
	while (done < bytes) {
		unsigned i = next_rand() % 256;
		size_t n = 16 + next_rand() % 1008;
		free(sampleleak_ring[i]);
		sampleleak_ring[i] = churn_site(n);
		done += n;
	}
	return done;
}

static int write_dump(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!dump || dump(path) != 0) {
		perror(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	dump = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (argc == 3 && !strcmp(argv[1], "accuracy")) {
		/* 4 MB of warm-up, then 100 MB of churn with a leak every 25 KB
		 * of it: the warm-up and the churn come from one call site,
		 * one stack in both dumps, as a program's steady churn is */
		for (int k = -1; k < 4096; k++) {
			/* k opaque: the compiler must not peel the warm-up into
			 * a call of its own (another return address) */
			__asm__ volatile("" : "+r"(k));
			churn(k);
			if (k < 0 && write_dump(argv[2], "a.dump"))
				return 1;
			if (k >= 0)
				leak_site();
		}
		if (write_dump(argv[2], "b.dump"))
			return 1;
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "big")) {
		big_site(65536);
		big_site(100000);
		big_site(1000000);
		for (int k = 0; k < 1000; k++)
			small_site();
		for (int k = 0; k < 10000; k++)
			free(churn_site(100));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "fork")) {
		for (int k = 0; k < 100; k++)
			small_site();
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		for (int k = 0; k < 2000; k++)
			small_site();
		if (pid == 0)
			_exit(write_dump(argv[2], "child.dump") ? 1 : 0);
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		return write_dump(argv[2], "parent.dump") ? 1 : 0;
	}
	fprintf(stderr, "usage: sampleleak accuracy DIR | big | fork DIR\n");
	return 2;
}
