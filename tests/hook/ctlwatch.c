/* A program for the host commands' end-to-end tests against a real hooked
 * process (t-ctl.sh, t-watch.sh, t-adb.sh), run under the hook with
 * LEAKSNAP_CONTROL set:
 *
 *   ctlwatch leak|steady [LIFETIME_MS|-] [RECORDS]
 *
 * At start it keeps 4 blocks of 1000 bytes (keep_start) and RECORDS more
 * blocks (default 0), each a record of its own: sizes 16 to 2015 bytes
 * from keep_many at stack depths 1 to 10 (about 1 KiB each: a heap of
 * many records, whose dumps take a while, in little memory); then it
 * prints "ready <pid>".  Every 20 ms after that, "leak" keeps 16 blocks of 4096
 * bytes more (leak_step: 64 KiB a tick, up to 65,536 blocks), "steady"
 * allocates the same and frees them (churn), so that its live heap stays
 * exactly what it kept at start.  It exits (0) once LIFETIME_MS have
 * passed or, without LIFETIME_MS (or with "-"), when its standard input
 * ends or reads a line "exit".  It writes nothing else and allocates nothing else. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 20
#define PER_TICK 16
#define BLOCK 4096
#define HELD_MAX 65536

static void *start_blocks[4];
static void *held[HELD_MAX];
static size_t nheld;
static volatile int sink;

#define NOTAIL() __asm__ volatile("" ::: "memory"); sink++

__attribute__((noinline)) void keep_start(void)
{
	for (int i = 0; i < 4; i++) {
		start_blocks[i] = malloc(1000);
		NOTAIL();
	}
}

/* A block of @size bytes @depth frames of keep_many below the caller. */
__attribute__((noinline)) void *keep_many(unsigned depth, size_t size)
{
	void *p = depth > 1 ? keep_many(depth - 1, size) : malloc(size);
	NOTAIL();
	return p;
}

__attribute__((noinline)) void leak_step(void)
{
	for (int i = 0; i < PER_TICK && nheld < HELD_MAX; i++) {
		held[nheld++] = malloc(BLOCK);
		NOTAIL();
	}
}

__attribute__((noinline)) void churn(void)
{
	void *p[PER_TICK];
	for (int i = 0; i < PER_TICK; i++) {
		p[i] = malloc(BLOCK);
		NOTAIL();
	}
	for (int i = 0; i < PER_TICK; i++)
		free(p[i]);
}

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4 || (strcmp(argv[1], "leak") && strcmp(argv[1], "steady"))) {
		static const char usage[] = "usage: ctlwatch leak|steady [LIFETIME_MS|-] [RECORDS]\n";
		(void)!write(STDERR_FILENO, usage, sizeof(usage) - 1);
		return 2;
	}
	int leak = strcmp(argv[1], "leak") == 0;
	long long lifetime = argc >= 3 && strcmp(argv[2], "-") ? atoll(argv[2]) : -1;
	long records = argc == 4 ? atol(argv[3]) : 0;
	keep_start();
	for (long i = 0; i < records; i++)
		if (!keep_many(1 + (unsigned)(i / 2000) % 10, 16 + (size_t)(i % 2000)))
			return 3;
	char line[64];
	int n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		return 3;
	long long start = now_ms();
	size_t have = 0;
	for (;;) {
		if (lifetime >= 0) {
			if (now_ms() - start >= lifetime)
				return 0;
			struct timespec ts = {0, TICK_MS * 1000000L};
			nanosleep(&ts, NULL);
		} else {
			struct pollfd p = {STDIN_FILENO, POLLIN, 0};
			int r = poll(&p, 1, TICK_MS);
			if (r < 0 && errno != EINTR)
				return 3;
			if (r > 0) {
				if (have == sizeof(line))
					have = 0;
				ssize_t k = read(STDIN_FILENO, line + have, sizeof(line) - have);
				if (k <= 0)
					return 0;
				have += (size_t)k;
				if (memchr(line, '\n', have)) {
					if (!strncmp(line, "exit\n", 5))
						return 0;
					have = 0;
				}
				continue;
			}
		}
		if (leak)
			leak_step();
		else
			churn();
	}
}
