/* inapp_race HOOK LIB MODE ROUNDS PREFIX: start and stop the in-app hook
 * (HOOK, loaded RTLD_LOCAL) ROUNDS times on the main thread while other
 * threads race it: MODE 1, a thread forking (a child that exits at once);
 * MODE 2, a thread loading and unloading LIB; MODE 4, four threads
 * allocating.  Prints "ok" when every round ended (a deadlock never does:
 * the test runs it under a time limit). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leakhook.h"

static atomic_int running = 1;
static const char *lib;

static void *forking(void *arg)
{
	(void)arg;
	while (atomic_load(&running)) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return NULL;
}

static void *loading(void *arg)
{
	(void)arg;
	while (atomic_load(&running)) {
		void *h = dlopen(lib, RTLD_NOW);
		if (h)
			dlclose(h);
	}
	return NULL;
}

static void *allocating(void *arg)
{
	(void)arg;
	while (atomic_load(&running)) {
		void *volatile p = malloc(48);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: inapp_race HOOK LIB MODE ROUNDS PREFIX\n");
		return 2;
	}
	void *hook = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!hook) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	int (*start)(const struct leaksnap_options *) =
		(int (*)(const struct leaksnap_options *))dlsym(hook, "leaksnap_start");
	int (*stop)(void) = (int (*)(void))dlsym(hook, "leaksnap_stop");
	lib = argv[2];
	int mode = atoi(argv[3]), rounds = atoi(argv[4]);
	pthread_t t[6];
	int n = 0;
	if (mode & 1)
		pthread_create(&t[n++], NULL, forking, NULL);
	if (mode & 2)
		pthread_create(&t[n++], NULL, loading, NULL);
	if (mode & 4)
		for (int i = 0; i < 4; i++)
			pthread_create(&t[n++], NULL, allocating, NULL);
	struct leaksnap_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.flags = LEAKSNAP_START_NO_EXIT_DUMP;
	o.out = argv[5];
	int bad = 0;
	for (int i = 0; i < rounds; i++) {
		if (start(&o) != 0) {
			perror("leaksnap_start");
			bad = 1;
			break;
		}
		int left = stop();
		if (left != 0) {
			printf("round %d: stop left %d slots\n", i, left);
			bad = 1;
		}
	}
	atomic_store(&running, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (!bad)
		puts("ok");
	return bad;
}
