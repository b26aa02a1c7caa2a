/* Loaded by tests/hook/reach.c with dlopen: a block held by a static of
 * a dlopen'ed library, and one held by a thread-local of it (dynamic TLS:
 * glibc allocates this module's TLS block for a thread on first use). */
#include <stddef.h>

void reach_keep_static(void *p);
void reach_keep_tls(void *p);

static void *volatile keep;
static __thread void *volatile keep_tls;

void reach_keep_static(void *p)
{
	keep = p;
}

void reach_keep_tls(void *p)
{
	keep_tls = p;
}
