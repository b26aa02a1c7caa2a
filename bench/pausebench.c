/* The process bench/pause.sh runs under the hook with reachability: a
 * loaded server's shape (memcached's: 11 busy threads on 2 CPUs).
 *   pausebench THREADS SECONDS DUMPS
 * THREADS threads each keep 20000 live blocks of 16..527 bytes, replacing
 * one at random in a loop (with a little computing between), for SECONDS
 * seconds; meanwhile the main thread asks for DUMPS dumps, evenly spread,
 * by the hook's dump signal (SIGRTMAX-17) to the process, and prints
 * "done" at the end.  Each worker times every free + malloc pair: those
 * that took 1 ms or more (a thread waiting for the table locks, or
 * preempted) are printed as "stall US", in no order. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define LIVE 20000
#define STALLS 65536

static atomic_bool stop;
static uint32_t stalls[STALLS];
static atomic_uint nstalls;

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void *worker(void *arg)
{
	uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	void **live = calloc(LIVE, sizeof(void *));
	if (!live)
		return NULL;
	for (int i = 0; i < LIVE; i++)
		live[i] = malloc(16 + (size_t)(i * 7) % 512);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t k = (size_t)(x >> 33) % LIVE;
		uint64_t t0 = now_us();
		free(live[k]);
		live[k] = malloc(16 + (size_t)(x >> 20) % 512);
		uint64_t took = now_us() - t0;
		if (took >= 1000) {
			unsigned i = atomic_fetch_add(&nstalls, 1);
			if (i < STALLS)
				stalls[i] = (uint32_t)took;
		}
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005ULL + 1;
	}
	for (int i = 0; i < LIVE; i++)
		free(live[i]);
	free(live);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int n = atoi(argv[1]);
	double seconds = atof(argv[2]);
	int dumps = atoi(argv[3]);
	pthread_t t[256];
	if (n < 1 || n > 256 || dumps < 1)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0)
			return 2;
	struct timespec gap = {0, 0};
	double each = seconds / dumps;
	gap.tv_sec = (time_t)each;
	gap.tv_nsec = (long)((each - (double)gap.tv_sec) * 1e9);
	for (int d = 0; d < dumps; d++) {
		nanosleep(&gap, NULL);
		kill(getpid(), SIGRTMAX - 17);
	}
	nanosleep(&gap, NULL);
	atomic_store(&stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	unsigned ns = atomic_load(&nstalls);
	for (unsigned i = 0; i < ns && i < STALLS; i++)
		printf("stall %u\n", stalls[i]);
	printf("done\n");
	return 0;
}
