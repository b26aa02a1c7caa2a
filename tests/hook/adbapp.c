/* The "app" that tests/fake-adb starts for tests/t-adb.sh (under the hook,
 * as a wrap property would start it): it leaks 48 bytes from app_leak()
 * every 10 ms, and allocates nothing else, until it is killed (am
 * force-stop).  Its dumps must show app_leak growing, and nothing else. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;

__attribute__((noinline)) void *app_leak(void)
{
	void *p = malloc(48); /* the leak */
	if (p)
		memset(p, 0x5a, 48);
	return p;
}

int main(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	for (;;) {
		sink = app_leak();
		nanosleep(&ts, NULL);
	}
}
