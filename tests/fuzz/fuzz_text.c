/* Fuzz the Android text dump reader: the input follows the header's first
 * words, "Android Native Heap Dump v", so every run reaches the reader. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define HEADER "Android Native Heap Dump v"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t hl = sizeof(HEADER) - 1;
	uint8_t *buf = malloc(size + hl);
	if (buf == NULL)
		return 0;
	memcpy(buf, HEADER, hl);
	if (size)
		memcpy(buf + hl, data, size);
	fuzz_snapshot(buf, size + hl, NULL);
	free(buf);
	return 0;
}
