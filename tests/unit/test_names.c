/* Unit tests for kit/names.c: function names shortened for reading (every
 * case of names_cases.h, with "…" and with "..."), bounds and the size it
 * promises. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_names.h"

struct name_case {
	const char *full, *short_name;
};

static const struct name_case cases[] = {
#define CASE(a, b) {a, b},
#include "names_cases.h"
#undef CASE
};

/* @s with each "…" as @ellipsis. */
static char *with_ellipsis(const char *s, const char *ellipsis)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;
	assert_non_null(out);
	while (*s) {
		if (strncmp(s, "…", strlen("…")) == 0) {
			o = stpcpy(o, ellipsis);
			s += strlen("…");
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

static void check_all(const char *ellipsis)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *want = with_ellipsis(cases[i].short_name, ellipsis);
		size_t max = kit_name_short_max(cases[i].full, ellipsis);
		char *buf = malloc(max);
		assert_non_null(buf);
		memset(buf, 'x', max);
		size_t n = kit_name_shorten(cases[i].full, ellipsis, buf, max);
		if (strcmp(buf, want) != 0)
			fail_msg("%s\n  got  %s\n  want %s", cases[i].full, buf, want);
		assert_int_equal(n, strlen(want));
		assert_true(n < max);
		free(buf);
		free(want);
	}
}

static void test_unicode_ellipsis(void **state)
{
	(void)state;
	check_all("…");
}

static void test_ascii_ellipsis(void **state)
{
	(void)state;
	check_all("...");
}

/* Too small a buffer: cut and terminated, the whole length returned, no
 * byte written past it. */
static void test_small_buffer(void **state)
{
	(void)state;
	char buf[9];
	memset(buf, '#', sizeof(buf));
	size_t n = kit_name_shorten("std::map<int, int>::at(int const&)", "…", buf, 8);
	assert_int_equal(n, strlen("std::map<…>::at(…)"));
	assert_string_equal(buf, "std::ma");
	assert_int_equal(buf[8], '#');
	assert_int_equal(kit_name_shorten("foo(int)", "…", NULL, 0), strlen("foo(…)"));
	/* a cut fallback: the whole name, cut */
	assert_int_equal(kit_name_shorten("broken(int", "…", buf, 4), strlen("broken(int"));
	assert_string_equal(buf, "bro");
}

/* Nesting deeper than the parser follows: the name is left whole, not
 * read past. */
static void test_deep_nesting(void **state)
{
	(void)state;
	char name[2000], buf[4000];
	size_t k = 0;
	k += (size_t)sprintf(name + k, "f");
	for (int i = 0; i < 300; i++)
		name[k++] = '<';
	for (int i = 0; i < 300; i++)
		name[k++] = '>';
	name[k] = '\0';
	kit_name_shorten(name, "…", buf, sizeof(buf));
	assert_string_equal(buf, name);
	strcpy(name, "a");
	for (int i = 0; i < 100; i++)
		strcat(name, "{b");
	for (int i = 0; i < 100; i++)
		strcat(name, "}");
	kit_name_shorten(name, "…", buf, sizeof(buf));
	assert_string_equal(buf, name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unicode_ellipsis),
		cmocka_unit_test(test_ascii_ellipsis),
		cmocka_unit_test(test_small_buffer),
		cmocka_unit_test(test_deep_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
