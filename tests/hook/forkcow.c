/* forkcow DUMP_PREFIX: a fork-per-request child's tables (tests/t-hook-servers.sh).
 * The parent keeps 20000 blocks of 48 bytes and 10 of 3000, then forks a
 * child that, like a short-lived server child, allocates 200 blocks of
 * 1000 bytes and frees half of them, frees 5 of the inherited 3000-byte
 * blocks and one of them again (a double free), and prints "faults N":
 * the page faults those calls took (getrusage).  A thread it starts then
 * allocates 4 blocks of 2500 bytes and frees one more inherited block.
 * Then it dumps (DUMP_PREFIX.1.leakhook, through leaksnap_dump), allocates
 * 3 blocks of 2000 bytes, frees 2 more inherited ones and dumps again
 * (.2), and exits.  Expected in .1: 48 x 20000, 3000 x 4, 1000 x 100,
 * 2500 x 4, invalid_frees=1; in .2: the same with 2000 x 3 and 3000 x 2. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leakhook.h"

enum { HELD = 20000, SHARED = 10, MINE = 200 };

static void *volatile held[HELD];
static void *volatile shared[SHARED];
static void *volatile mine[MINE];
static void *volatile later[3];
static void *volatile threads[4];

static void *thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		threads[i] = malloc(2500);
	free(shared[7]);
	return NULL;
}

static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

int main(int argc, char **argv)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (argc != 2 || !dump) {
		fprintf(stderr, "usage: forkcow DUMP_PREFIX (under the hook)\n");
		return 2;
	}
	for (int i = 0; i < HELD; i++)
		held[i] = malloc(48);
	for (int i = 0; i < SHARED; i++)
		shared[i] = malloc(3000);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		char path[4096];
		/* (the page of this array and the arena's are the child's own
		 * faults, whatever the hook does: touched first) */
		for (int i = 0; i < MINE; i++)
			mine[i] = NULL;
		long f0 = faults();
		for (int i = 0; i < MINE; i++)
			mine[i] = malloc(1000);
		for (int i = 0; i < MINE; i += 2)
			free(mine[i]);
		for (int i = 0; i < 5; i++)
			free(shared[i]);
		long f1 = faults();
		free(shared[0]); /* again: kept from the allocator, counted */
		printf("faults %ld\n", f1 - f0);
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
			_exit(3);
		snprintf(path, sizeof(path), "%s.1" LEAKSNAP_HOOK_DUMP_SUFFIX, argv[1]);
		if (dump(path) != 0)
			_exit(3);
		for (int i = 0; i < 3; i++)
			later[i] = malloc(2000);
		free(shared[5]);
		free(shared[6]);
		snprintf(path, sizeof(path), "%s.2" LEAKSNAP_HOOK_DUMP_SUFFIX, argv[1]);
		if (dump(path) != 0)
			_exit(3);
		fflush(stdout);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 3;
	return 0;
}
