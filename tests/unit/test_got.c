/* Unit tests for hook/got.c and hook/got_aps2.c: the GOT slots of the
 * allocation functions in libraries of every relocation format, swapping
 * them, and corrupt modules.  The checks are in tests/got/gotcases.c,
 * shared with the arm64 and 32-bit ARM runs under qemu-user
 * (tests/t-got-cross.sh); the libraries are in tests/got/ beside this
 * program (the Makefile's GOT block builds them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gotcases.h"

void gotcase_fail(const char *file, int line, const char *what)
{
	print_error("check failed: %s\n", what);
	_fail(file, line);
}

void gotcase_note(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	print_message("(%s)\n", buf);
}

/* One cmocka test per case and variant: the state is the variant. */
static void t_list(void **state) { gotcase_list((unsigned)(uintptr_t)*state); }
static void t_swap(void **state) { gotcase_swap((unsigned)(uintptr_t)*state); }
static void t_selfload(void **state) { gotcase_selfload((unsigned)(uintptr_t)*state); }
static void t_corrupt(void **state) { gotcase_corrupt((unsigned)(uintptr_t)*state); }
static void t_none(void **state) { (void)state; gotcase_none(); }
static void t_loaded(void **state) { (void)state; gotcase_loaded(); }
static void t_stop(void **state) { (void)state; gotcase_stop(); }
static void t_swap_errors(void **state) { (void)state; gotcase_swap_errors(); }
static void t_swap_threads(void **state) { (void)state; gotcase_swap_threads(); }
static void t_swap_pages(void **state) { (void)state; gotcase_swap_pages(); }
static void t_swap_partial(void **state) { (void)state; gotcase_swap_partial(); }
static void t_bias(void **state) { (void)state; gotcase_bias(); }

#define MAX_TESTS 64

int main(void)
{
	static char names[MAX_TESTS][48];
	struct CMUnitTest tests[MAX_TESTS];
	static const struct {
		const char *name;
		CMUnitTestFunction fn;
	} per_variant[] = {
		{ "list", t_list }, { "swap", t_swap }, { "selfload", t_selfload }, { "corrupt", t_corrupt },
	};
	char self[PATH_MAX], dir[PATH_MAX + 8];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	unsigned nt = 0;

	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s/got", dirname(self));
	gotcase_set_dir(dir);
	for (unsigned v = 0; v < gotcase_variants(); v++) {
		/* glibc loads some formats only by hand: no list or swap there */
		for (unsigned c = gotcase_variant_loadable(v) ? 0 : 2; c < 4 && nt < MAX_TESTS; c++, nt++) {
			snprintf(names[nt], sizeof(names[nt]), "%s_%s", per_variant[c].name,
				 gotcase_variant_name(v));
			tests[nt] = (struct CMUnitTest){ names[nt], per_variant[c].fn, NULL, NULL,
							 (void *)(uintptr_t)v };
		}
	}
	if (nt + 8 > MAX_TESTS)
		return 1;
	tests[nt++] = (struct CMUnitTest){ "none", t_none, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "loaded", t_loaded, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "stop", t_stop, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "swap_errors", t_swap_errors, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "swap_threads", t_swap_threads, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "swap_pages", t_swap_pages, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "swap_partial", t_swap_partial, NULL, NULL, NULL };
	tests[nt++] = (struct CMUnitTest){ "bias", t_bias, NULL, NULL, NULL };
	return _cmocka_run_group_tests("got", tests, nt, NULL, NULL);
}
