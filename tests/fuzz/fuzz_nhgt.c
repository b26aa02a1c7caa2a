/* Fuzz the DDMS NHGT reader.  Byte 0, bit 0 set: the rest follows the
 * 4-byte signature (new header); clear: the rest is read as it is, where
 * the old signature-less header is recognised by its sizes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		fuzz_snapshot(data + 1, size - 1, NULL);
		return 0;
	}
	uint8_t *buf = malloc(size + 3);
	if (buf == NULL)
		return 0;
	static const uint8_t sig[4] = {0xdd, 0x45, 0x23, 0x81}; /* 0x812345dd LE */
	memcpy(buf, sig, 4);
	if (size > 1)
		memcpy(buf + 4, data + 1, size - 1);
	fuzz_snapshot(buf, size + 3, NULL);
	free(buf);
	return 0;
}
