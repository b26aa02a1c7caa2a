/* Fuzz the shortening of function names (kit/names.c): names come from the
 * symbol tables and DWARF of any ELF file.  The input is one name (up to
 * its first NUL).  The short name fits kit_name_short_max(), a buffer too
 * small gets a prefix of it, and the length returned is the same. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "kit_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	static const char *const ellipses[] = {"\xe2\x80\xa6", "..."};
	for (size_t e = 0; e < 2; e++) {
		size_t max = kit_name_short_max(name, ellipses[e]);
		char *a = malloc(max), *b = malloc(max);
		if (!a || !b) {
			free(a);
			free(b);
			break;
		}
		size_t n = kit_name_shorten(name, ellipses[e], a, max);
		FUZZ_CHECK(n < max && strlen(a) == n);
		size_t cut = n / 2 + 1;
		FUZZ_CHECK(kit_name_shorten(name, ellipses[e], b, cut) == n);
		FUZZ_CHECK(strlen(b) == cut - 1 && memcmp(a, b, cut - 1) == 0);
		FUZZ_CHECK(kit_name_shorten(name, ellipses[e], NULL, 0) == n);
		free(b);
		free(a);
	}
	free(name);
	return 0;
}
