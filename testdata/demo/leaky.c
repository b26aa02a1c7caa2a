/* The demo's leaking program: a cache that never evicts, and a request
 * handler that forgets to free on one path.  `make demo` builds it and runs
 * it under `leaksnap record`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char key[48];
	struct entry *next;
};

static struct entry *cache;

__attribute__((noinline)) static void cache_put(const char *key)
{
	struct entry *e = malloc(sizeof(*e));
	snprintf(e->key, sizeof(e->key), "%s", key);
	e->next = cache; /* never evicted */
	cache = e;
}

__attribute__((noinline)) static int handle_request(int id)
{
	char *body = malloc(512);
	snprintf(body, 512, "request %d", id);
	if (id % 10 == 0)
		return -1; /* error path: body leaks */
	free(body);
	return 0;
}

int main(void)
{
	char key[32];
	int errors = 0;
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "user-%d", i % 40);
		cache_put(key);
		errors += handle_request(i) != 0;
	}
	printf("served 100 requests, %d errors\n", errors);
	return 0;
}
