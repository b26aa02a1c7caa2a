/* leaksnap hook: running a function on a stack of the hook's own.
 *
 * A dump needs some 40 KiB of stack.  Written from a signal handler (a
 * fatal signal's, or the dump signal's in a process of one thread), it
 * runs on whatever stack the thread was on: a thread of 32 KiB, a
 * coroutine's, an alternate signal stack.  So it runs on a mapping of the
 * hook's, switched to and back with swapcontext (glibc); the C library's
 * context calls are system calls and register moves, nothing that locks or
 * allocates. */
#include <sys/mman.h>
#include <unistd.h>

#include "hook_internal.h"
#include "ownstack.h"

bool hook_stack_map(struct hook_stack *s, size_t size)
{
	if (s->base)
		return true;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = hook_map(size + page);
	if (!p)
		return false;
	mprotect(p, page, PROT_NONE);
	s->size = size;
	s->base = p + page;
	return true;
}

#ifdef __GLIBC__
/* makecontext passes ints: the stack's address comes in two halves. */
static void on_stack(unsigned hi, unsigned lo)
{
	uintptr_t a = (uintptr_t)(((uint64_t)hi << 32) | lo);
	struct hook_stack *s = (struct hook_stack *)a;
	s->fn(s->arg);
	/* returns to s->back (uc_link) */
}
#endif

void hook_stack_run(struct hook_stack *s, void (*fn)(void *), void *arg)
{
#ifdef __GLIBC__
	if (s->base && getcontext(&s->run) == 0) {
		s->fn = fn;
		s->arg = arg;
		s->run.uc_stack.ss_sp = s->base;
		s->run.uc_stack.ss_size = s->size;
		s->run.uc_link = &s->back;
		uint64_t a = (uintptr_t)s;
		makecontext(&s->run, (void (*)(void))on_stack, 2, (unsigned)(a >> 32),
			    (unsigned)(a & 0xffffffffu));
		if (swapcontext(&s->back, &s->run) == 0)
			return;
	}
#endif
	fn(arg);
}
