/* leaksnap kit: the one hash finalizer.  Header-only: the malloc hook,
 * which links nothing of the kit, uses it too. */
#ifndef LEAKSNAP_KIT_HASH_H
#define LEAKSNAP_KIT_HASH_H

#include <stddef.h>
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

/* FNV-1a over the @n bytes at @p, on from @h (KIT_FNV1A_START for a new
 * hash): the hash of strings, before the finalizer. */
#define KIT_FNV1A_START 0xcbf29ce484222325ULL
static inline uint64_t kit_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#endif /* LEAKSNAP_KIT_HASH_H */
