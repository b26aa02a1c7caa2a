/* leaksnap kit: the one hash finalizer.  Header-only: the malloc hook,
 * which links nothing of the kit, uses it too. */
#ifndef LEAKSNAP_KIT_HASH_H
#define LEAKSNAP_KIT_HASH_H

#include <stdint.h>

/* The 64-bit finalizer of MurmurHash3 (fmix64): every bit of @h moves
 * every bit of the result.  The hash of leaksnap's open-addressing tables. */
static inline uint64_t kit_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

#endif /* LEAKSNAP_KIT_HASH_H */
