/* The checks of hook/got.c (gotcases.c) as a plain program, for the
 * architectures that have no cmocka here: arm64 and 32-bit ARM under
 * qemu-user (tests/t-got-cross.sh).  Usage: gotcross DIR (the directory
 * of the libgot*.so libraries).  Prints each failed check and
 * "gotcross: N checks failed"; exits 1 if any failed. */
#include <stdarg.h>
#include <stdio.h>

#include "gotcases.h"

static unsigned failures;
static const char *current;

void gotcase_fail(const char *file, int line, const char *what)
{
	printf("FAIL %s: %s:%d: %s\n", current, file, line, what);
	failures++;
}

void gotcase_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("  note: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

int main(int argc, char **argv)
{
	unsigned cases = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gotcross DIR\n");
		return 2;
	}
	gotcase_set_dir(argv[1]);
	for (unsigned v = 0; v < gotcase_variants(); v++) {
		current = gotcase_variant_name(v);
		if (gotcase_variant_loadable(v)) {
			gotcase_list(v);
			gotcase_swap(v);
			cases += 2;
		}
		gotcase_selfload(v);
		gotcase_corrupt(v);
		cases += 2;
	}
	current = "none";
	gotcase_none();
	current = "loaded";
	gotcase_loaded();
	current = "stop";
	gotcase_stop();
	current = "swap_errors";
	gotcase_swap_errors();
	current = "swap_threads";
	gotcase_swap_threads();
	current = "swap_pages";
	gotcase_swap_pages();
	current = "swap_partial";
	gotcase_swap_partial();
	current = "bias";
	gotcase_bias();
	cases += 8;
	printf("gotcross: %u cases, %u checks failed\n", cases, failures);
	return failures != 0;
}
