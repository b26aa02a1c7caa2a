/* Fuzz the LEAKSNAP v1 reader: the input follows the 8-byte magic, so every
 * run reaches the header decoder and the sections after it. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 8);
	if (buf == NULL)
		return 0;
	memcpy(buf, "LEAKSNAP", 8);
	if (size)
		memcpy(buf + 8, data, size);
	fuzz_snapshot(buf, size + 8, NULL);
	free(buf);
	return 0;
}
