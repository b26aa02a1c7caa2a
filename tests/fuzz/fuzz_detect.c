/* Fuzz the format detector: any bytes, no options, as `leaksnap show FILE`
 * reads them (LEAKSNAP, NHGT with either header, text, or an error). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_snapshot(data, size, NULL);
	return 0;
}
