/* sigsend PID N USEC: send the dump signal (SIGRTMAX-17) to PID N times,
 * USEC microseconds apart, once PID has a handler for it (SigCgt in
 * /proc/PID/status: the hook has started; at most 10 s).  Stops early, with
 * status 0, once PID is gone; status 1 if the handler never came. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int caught(pid_t pid, int sig)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	int yes = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigCgt:", 7))
			yes = (strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1;
	if (f)
		fclose(f);
	return yes;
}

static void pause_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	pid_t pid = (pid_t)atoi(argv[1]);
	long n = atol(argv[2]), us = atol(argv[3]);
	int sig = SIGRTMAX - 17;
	for (int i = 0; !caught(pid, sig); i++) {
		if (i == 10000 || (kill(pid, 0) != 0 && errno == ESRCH)) {
			fprintf(stderr, "sigsend: no handler in %d (%d)\n", (int)pid, i);
			return 1;
		}
		pause_us(1000);
	}
	for (long i = 0; i < n; i++) {
		if (kill(pid, sig) != 0)
			return errno == ESRCH ? 0 : 1;
		pause_us(us);
	}
	return 0;
}
