/* leaksnap hook: running a function on a stack of the hook's own, from a
 * signal handler whose thread's stack may be small (ownstack.c).  Internal
 * to hook/. */
#ifndef LEAKSNAP_HOOK_OWNSTACK_H
#define LEAKSNAP_HOOK_OWNSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __GLIBC__
#include <ucontext.h>
#endif

struct hook_stack {
	uint8_t *base; /* the usable bytes, above a guard page; NULL: none */
	size_t size;
	void (*fn)(void *);
	void *arg;
#ifdef __GLIBC__
	ucontext_t back, run;
#endif
};

/* Map @s's stack of @size bytes (and a guard page below it), once: a
 * system call, no allocation.  False if it cannot be had. */
bool hook_stack_map(struct hook_stack *s, size_t size);

/* Call @fn(@arg) on @s's stack, switched to with swapcontext where the C
 * library has it; on the current stack where it has not, or @s has none.
 * One caller at a time per @s. */
void hook_stack_run(struct hook_stack *s, void (*fn)(void *), void *arg);

#endif
