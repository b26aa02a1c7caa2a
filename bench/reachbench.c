/* reachbench: the process bench/reach.sh dumps.
 *   reachbench BLOCKS DUMPS PREFIX
 * Builds BLOCKS live blocks of 24..183 bytes (about 100 MB for 1M), as
 * 1024 binary trees hanging from a global array; the roots of 100 trees
 * are then dropped (about 10% of the blocks unreachable).  Then, DUMPS
 * times: leaksnap_dump(PREFIX.N.dump) when the hook is loaded, timed; and
 * a bare fork() of the same process (clone without CLONE_VM, the child
 * _exits at once, waited for), timed, as the floor of the pause.
 * Prints "heap BYTES BLOCKS", "expect-unreachable BYTES BLOCKS" (the
 * dropped trees), then "dump_us N" and "fork_us N" lines. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TREES 1024
#define DROPPED 100

static void *volatile roots[TREES];

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: reachbench BLOCKS DUMPS PREFIX\n");
		return 2;
	}
	size_t n = strtoul(argv[1], NULL, 10), per = n / TREES;
	int dumps = atoi(argv[2]);
	if (per < 1)
		per = 1;
	/* the nodes of one tree at a time, in memory that is no root later */
	void ***tmp = mmap(NULL, per * sizeof(void *), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return 2;
	uint64_t bytes = 0, blocks = 0, lost_bytes = 0, lost_blocks = 0;
	for (size_t t = 0; t < TREES; t++) {
		for (size_t k = 0; k < per; k++) {
			size_t size = 24 + (t * per + k) * 7 % 160;
			void **b = malloc(size);
			if (!b)
				return 2;
			memset(b, 0x5a, size);
			b[0] = b[1] = NULL;
			tmp[k] = b;
			bytes += size;
			blocks++;
			if (t % (TREES / DROPPED) == 0 && t / (TREES / DROPPED) < DROPPED) {
				lost_bytes += size;
				lost_blocks++;
			}
		}
		for (size_t k = 1; k < per; k++)
			tmp[(k - 1) / 2][(k - 1) % 2] = tmp[k];
		roots[t] = tmp[0];
	}
	memset(tmp, 0, per * sizeof(void *));
	munmap(tmp, per * sizeof(void *));
	for (size_t t = 0; t < DROPPED; t++)
		roots[t * (TREES / DROPPED)] = NULL;
	printf("heap %llu %llu\n", (unsigned long long)bytes, (unsigned long long)blocks);
	printf("expect-unreachable %llu %llu\n", (unsigned long long)lost_bytes,
	       (unsigned long long)lost_blocks);

	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	char path[4096];
	for (int i = 1; i <= dumps; i++) {
		if (dump) {
			snprintf(path, sizeof(path), "%s.%d.dump", argv[3], i);
			uint64_t t0 = now_us();
			if (dump(path) != 0) {
				perror("leaksnap_dump");
				return 1;
			}
			printf("dump_us %llu\n", (unsigned long long)(now_us() - t0));
		}
		uint64_t t0 = now_us();
		long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (pid == 0)
			_exit(0);
		uint64_t t1 = now_us();
		if (pid < 0 || waitpid((pid_t)pid, NULL, 0) != pid)
			return 1;
		printf("fork_us %llu\n", (unsigned long long)(t1 - t0));
	}
	return 0;
}
