/* Unit tests for kit/dumpname.c: the hook's dump names read by one parser
 * (leakdiff's ordering and leaksnap record's listing), and the kit's tags
 * the same as the hook's own (leakhook.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <leaksnap/leakhook.h>

#include "kit_dumpname.h"

static void test_tags_agree(void **state)
{
	(void)state;
	assert_string_equal(KIT_DUMP_SUFFIX, LEAKSNAP_HOOK_DUMP_SUFFIX);
	assert_string_equal(KIT_DUMP_EXIT_TAG, LEAKSNAP_HOOK_EXIT_TAG);
	assert_string_equal(KIT_DUMP_CRASH_TAG, LEAKSNAP_HOOK_CRASH_TAG);
	/* the names the hook's own formats make are read back */
	char name[128];
	struct kit_dump_name dn;
	snprintf(name, sizeof(name), LEAKSNAP_HOOK_DUMP_NAME, "app", 4321, 7u);
	assert_string_equal(name, "app.4321.0007.dump");
	assert_int_equal(kit_dump_name(name, &dn), KIT_DUMP_NUMBERED);
	assert_int_equal(dn.pid, 4321);
	assert_int_equal(dn.num, 7);
	assert_int_equal(dn.prefix_len, 3);
	snprintf(name, sizeof(name), LEAKSNAP_HOOK_EXIT_DUMP_NAME, "app", 4321);
	assert_int_equal(kit_dump_name(name, &dn), KIT_DUMP_EXIT);
	assert_int_equal(dn.pid, 4321);
	assert_int_equal(dn.num, 0);
	snprintf(name, sizeof(name), LEAKSNAP_HOOK_CRASH_DUMP_NAME, "app", 4321);
	assert_int_equal(kit_dump_name(name, &dn), KIT_DUMP_CRASH);
}

static void test_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		enum kit_dump_kind kind;
		uint64_t pid, num;
		size_t prefix_len;
	} cases[] = {
		{"leaksnap.12.1.dump", KIT_DUMP_NUMBERED, 12, 1, 8},  /* unpadded: older hooks */
		{"leaksnap.12.10000.dump", KIT_DUMP_NUMBERED, 12, 10000, 8},
		{"a.b.c.12.0002.dump", KIT_DUMP_NUMBERED, 12, 2, 5},  /* dots in the prefix */
		{".99.0001.dump", KIT_DUMP_NUMBERED, 99, 1, 0},       /* LEAKSNAP_OUT a directory */
		{"x.1.exit.dump", KIT_DUMP_EXIT, 1, 0, 1},
		{"x.18446744073709551615.1.dump", KIT_DUMP_NUMBERED, UINT64_MAX, 1, 1},
		{"x.18446744073709551616.1.dump", KIT_DUMP_OTHER, 0, 0, 0}, /* pid past 64 bits */
		{"x.1.0.dump", KIT_DUMP_OTHER, 0, 0, 0},                     /* N = 0 */
		{"x.1.0000.dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1.exits.dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1.Exit.dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1.1.maps", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1.1.dump.tmp", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.-1.1.dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1a.1.dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"x..1.dump", KIT_DUMP_OTHER, 0, 0, 0},  /* no pid */
		{"x.1..dump", KIT_DUMP_OTHER, 0, 0, 0},  /* no N */
		{"1.1.dump", KIT_DUMP_OTHER, 0, 0, 0},   /* no prefix dot: N without a pid */
		{".dump", KIT_DUMP_OTHER, 0, 0, 0},
		{"", KIT_DUMP_OTHER, 0, 0, 0},
		{"x.1. 1.dump", KIT_DUMP_OTHER, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kit_dump_name dn;
		enum kit_dump_kind k = kit_dump_name(cases[i].name, &dn);
		if (k != cases[i].kind)
			fail_msg("%s: kind %d, expected %d", cases[i].name, k, cases[i].kind);
		if (k == KIT_DUMP_OTHER)
			continue;
		assert_int_equal(dn.pid, cases[i].pid);
		assert_int_equal(dn.num, cases[i].num);
		assert_int_equal(dn.prefix_len, cases[i].prefix_len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tags_agree),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
