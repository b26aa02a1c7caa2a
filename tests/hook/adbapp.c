/* The "app" that tests/fake-adb starts for tests/t-adb.sh (under the hook,
 * as a wrap property would start it): it leaks 48 bytes from app_leak()
 * every 10 ms and frees everything else it allocates, until it is killed
 * (am force-stop).  Its dumps must show app_leak growing, and nothing
 * else. */
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

__attribute__((noinline)) static void app_churn(void)
{
	void *q = malloc(4096);
	sink = q;
	free(q);
}

int main(void)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	for (;;) {
		sink = app_leak();
		app_churn();
		nanosleep(&ts, NULL);
	}
}
