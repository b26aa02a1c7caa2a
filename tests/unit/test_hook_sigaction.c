/* Unit test of the hook's query of a signal's action (hook_sigaction_now,
 * hook/hook_internal.h): the struct it fills holds the handler, the flags
 * and the kernel's part of the mask, and zero in every other byte --
 * nothing of what the caller's memory or the C library's own frame held
 * (glibc copies a 128-byte sa_mask of which the kernel wrote 8 bytes).
 * The hook keeps such a struct in its static memory, a root of
 * reachability: an address left there by a dead frame made a lost block
 * reachable (tests/t-reach.sh "huge", in some builds of the hook). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>

#include "hook_internal.h"

#define JUNK 0xa5

static void noop(int sig)
{
	(void)sig;
}

/* The stack below: every byte JUNK, as dead frames leave it. */
static void __attribute__((noinline)) dirty_stack(void)
{
	volatile unsigned char junk[65536];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = JUNK;
}

/* Query @sig into a struct of JUNK over a stack of JUNK. */
static void __attribute__((noinline)) query(int sig, struct sigaction *got)
{
	memset(got, JUNK, sizeof(*got));
	dirty_stack();
	assert_int_equal(hook_sigaction_now(sig, got), 0);
}

/* The kernel's part of the mask: the signals below NSIG, in words. */
static size_t kernel_mask_bytes(void)
{
	size_t word = sizeof(unsigned long);
	size_t n = (NSIG - 1 + 8 * word - 1) / (8 * word) * word;
	return n < sizeof(sigset_t) ? n : sizeof(sigset_t);
}

/* Every byte but the handler, the flags and the kernel's mask: zero. */
static void assert_rest_zero(const struct sigaction *got)
{
	const unsigned char *g = (const unsigned char *)got;
	size_t h = offsetof(struct sigaction, sa_handler), f = offsetof(struct sigaction, sa_flags),
	       m = offsetof(struct sigaction, sa_mask);
	for (size_t i = 0; i < sizeof(*got); i++) {
		if ((i >= h && i < h + sizeof(got->sa_handler)) ||
		    (i >= f && i < f + sizeof(got->sa_flags)) || (i >= m && i < m + kernel_mask_bytes()))
			continue;
		if (g[i])
			fail_msg("byte %zu of the action (of %zu): %#x, expected 0", i, sizeof(*got), g[i]);
	}
}

/* The default action: its handler, and zero elsewhere. */
static void test_default_action(void **state)
{
	(void)state;
	struct sigaction dfl, got;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	assert_int_equal(sigaction(SIGUSR2, &dfl, NULL), 0);
	query(SIGUSR2, &got);
	assert_true(got.sa_handler == SIG_DFL);
	assert_false(sigismember(&got.sa_mask, SIGINT));
	assert_rest_zero(&got);
}

/* A handler with flags and a mask: those, and zero elsewhere. */
static void test_handler_action(void **state)
{
	(void)state;
	struct sigaction sa, got;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = noop;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaddset(&sa.sa_mask, SIGRTMAX);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
	query(SIGUSR1, &got);
	assert_true(got.sa_handler == noop);
	assert_true(got.sa_flags & SA_RESTART);
	assert_true(sigismember(&got.sa_mask, SIGUSR2));
	assert_true(sigismember(&got.sa_mask, SIGRTMAX));
	assert_false(sigismember(&got.sa_mask, SIGINT));
	assert_rest_zero(&got);
	/* given back as it was: the same handler, flags and mask */
	assert_int_equal(sigaction(SIGUSR1, &got, NULL), 0);
	struct sigaction again;
	query(SIGUSR1, &again);
	assert_memory_equal(&again, &got, sizeof(got));
}

/* A signal that does not exist: -1, and the struct all zero. */
static void test_bad_signal(void **state)
{
	(void)state;
	struct sigaction got;
	memset(&got, JUNK, sizeof(got));
	assert_int_equal(hook_sigaction_now(NSIG + 10, &got), -1);
	const unsigned char *g = (const unsigned char *)&got;
	for (size_t i = 0; i < sizeof(got); i++)
		assert_int_equal(g[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_action),
		cmocka_unit_test(test_handler_action),
		cmocka_unit_test(test_bad_signal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
