/* leaksnap: encoding of the 64-byte LEAKSNAP v1 header.  Kept in a file of
 * its own, with no allocation and no dependency beyond the kit's headers, because the
 * malloc hook (hook/) compiles it too. */
#include <string.h>

#include "kit_format.h"
#include <leaksnap/snapshot.h>

#include "kit.h"

void leaksnap_snapshot_header_encode(const struct leaksnap_snapshot_header *h,
				     uint8_t out[LEAKSNAP_SNAPSHOT_HEADER_SIZE])
{
	memcpy(out, LEAKSNAP_MAGIC, LEAKSNAP_MAGIC_LEN);
	kit_store_le(out + 8, 2, h->version);
	out[10] = h->pointer_size;
	out[11] = h->flags;
	kit_store_le(out + 12, 4, h->backtrace_size);
	kit_store_le(out + 16, 4, h->pid);
	kit_store_le(out + 20, 4, h->meta_size);
	kit_store_le(out + 24, 8, h->time_ns);
	kit_store_le(out + 32, 8, h->total_memory);
	kit_store_le(out + 40, 8, h->info_size);
	kit_store_le(out + 48, 8, h->records_size);
	kit_store_le(out + 56, 8, h->maps_size);
}
