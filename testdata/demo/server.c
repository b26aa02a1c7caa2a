/* The demo's program: a request handler that forgets to free on its error
 * path (a real leak: it grows with every batch of requests), and a bounded
 * cache of sessions (it grows until it is full, then stays the same size:
 * not a leak).  After each batch it asks the leaksnap hook for a snapshot
 * (leaksnap_dump, found with dlsym so the program also runs without the
 * hook).  `make demo` builds it, runs it under `leaksnap record` and
 * compares the snapshots with leakdiff. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SLOTS 64
#define BATCHES 3
#define REQUESTS_PER_BATCH 50

struct session {
	char user[40];
	unsigned hits;
	struct session *newer, *older;
};

/* Least recently used first out, at most CACHE_SLOTS sessions. */
static struct session *newest, *oldest;
static unsigned sessions;

static void unlink_session(struct session *s)
{
	if (s->newer)
		s->newer->older = s->older;
	else
		newest = s->older;
	if (s->older)
		s->older->newer = s->newer;
	else
		oldest = s->newer;
}

static void push_newest(struct session *s)
{
	s->older = newest;
	s->newer = NULL;
	if (newest)
		newest->newer = s;
	newest = s;
	if (!oldest)
		oldest = s;
}

__attribute__((noinline)) static struct session *session_get(const char *user)
{
	for (struct session *s = newest; s; s = s->older)
		if (strcmp(s->user, user) == 0) {
			unlink_session(s);
			push_newest(s);
			s->hits++;
			return s;
		}
	if (sessions == CACHE_SLOTS) { /* full: evict the least recently used */
		struct session *victim = oldest;
		unlink_session(victim);
		free(victim);
		sessions--;
	}
	struct session *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	snprintf(s->user, sizeof(s->user), "%s", user);
	push_newest(s);
	sessions++;
	return s;
}

__attribute__((noinline)) static int handle_request(int id)
{
	char *body = malloc(512);
	if (!body)
		return -1;
	snprintf(body, 512, "request %d", id);
	if (id % 10 == 0)
		return -1; /* the error path forgets to free body: a leak */
	free(body);
	return 0;
}

int main(void)
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	int errors = 0, id = 0;
	char user[32];
	for (int batch = 1; batch <= BATCHES; batch++) {
		for (int i = 0; i < REQUESTS_PER_BATCH; i++, id++) {
			snprintf(user, sizeof(user), "user-%d", id);
			session_get(user);
			errors += handle_request(id) != 0;
		}
		if (dump && dump(NULL) != 0)
			fprintf(stderr, "server: snapshot %d failed\n", batch);
	}
	printf("served %d requests in %d batches, %d errors, %u sessions cached%s\n", id, BATCHES,
	       errors, sessions, dump ? "" : " (no leaksnap hook: no snapshots)");
	return 0;
}
