/* Fuzz the suppressions parser and the pattern matcher.  The input is a
 * suppressions text; when it holds a NUL byte, what follows the first one
 * is also matched, as a function name, against every pattern parsed from
 * what precedes it (so that '*' runs meet long names). */
#include <stdlib.h>
#include <string.h>

#include <leaksnap/diff.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t tlen = nul ? (size_t)(nul - text) : size;
	struct leaksnap_error err;
	fuzz_stale_error(&err);
	struct leaksnap_diff_suppressions *s = leaksnap_diff_suppressions_parse(text, tlen, "fuzz",
										&err);
	if (s == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	FUZZ_CHECK(err.code == LEAKSNAP_OK);
	char *name = NULL;
	if (nul != NULL) {
		size_t nlen = size - tlen - 1;
		name = malloc(nlen + 1);
		if (name == NULL) {
			leaksnap_diff_suppressions_free(s);
			return 0;
		}
		memcpy(name, nul + 1, nlen);
		name[nlen] = '\0';
	}
	size_t n = leaksnap_diff_suppressions_count(s);
	for (size_t i = 0; i < n; i++) {
		const char *p = leaksnap_diff_suppressions_pattern(s, i);
		FUZZ_CHECK(p != NULL);
		FUZZ_CHECK(leaksnap_diff_suppressions_hits(s, i) == 0);
		if (name != NULL)
			(void)leaksnap_diff_pattern_match(p, name);
		(void)leaksnap_diff_pattern_match(p, "operator new(unsigned long)");
		(void)leaksnap_diff_pattern_match(p, "/system/lib64/libc.so");
	}
	free(name);
	leaksnap_diff_suppressions_free(s);
	return 0;
}
