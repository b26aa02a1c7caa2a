/* Fuzz the raw bionic buffer reader.  Byte 0 picks the pointer size (bit 0:
 * 8, else 4) and --count-is-frames (bit 1), byte 1 the frames (1..256); the
 * rest is the buffer. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .pointer_size = (data[0] & 1) ? 8 : 4,
		      .frames = (unsigned)data[1] + 1, .count_is_frames = (data[0] & 2) != 0, );
	fuzz_snapshot(data + 2, size - 2, &o);
	return 0;
}
