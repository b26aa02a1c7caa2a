/* leaksnap diff: sequences of u32, interned (stacks, group keys, names). */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

void lsd_seqtab_free(struct seqtab *t)
{
	free(t->pool);
	free(t->ents);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

uint32_t lsd_seq_hash(const uint32_t *v, uint32_t n, uint32_t salt)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ salt ^ ((uint64_t)n << 40);
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ v[i]) * 0x100000001b3ULL + (h >> 29);
	return (uint32_t)kit_mix64(h);
}

static int seqtab_rehash_to(struct seqtab *t, size_t n)
{
	uint64_t *s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	kit_huge_hint(s, n * sizeof(*s));
	memset(s, 0xff, n * sizeof(*s));
	for (size_t i = 0; i < t->count; i++) {
		size_t k = t->ents[i].hash & (n - 1);
		while (s[k] != SLOT_EMPTY)
			k = (k + 1) & (n - 1);
		s[k] = (uint64_t)t->ents[i].hash << 32 | i;
	}
	free(t->slots);
	t->slots = s;
	t->mask = n - 1;
	return 0;
}

static int seqtab_rehash(struct seqtab *t)
{
	return seqtab_rehash_to(t, t->slots ? (t->mask + 1) * 2 : 1024);
}

/* Room for @more entries of @words u32 in all, without rehashing.  Memory
 * reserved but not yet used is not touched. */
int lsd_seqtab_reserve(struct seqtab *t, size_t more, size_t words)
{
	size_t n = t->slots ? t->mask + 1 : 1024;
	while (n < 2 * (t->count + more) + 2) {
		if (n > SIZE_MAX / 4 / sizeof(*t->slots))
			return -1;
		n *= 2;
	}
	if ((!t->slots || n != t->mask + 1) && seqtab_rehash_to(t, n) != 0)
		return -1;
	if (kit_grow((void **)&t->ents, &t->cap, t->count + more, sizeof(*t->ents)) != 0 ||
	    kit_grow((void **)&t->pool, &t->pool_cap, t->pool_len + words, sizeof(*t->pool)) != 0)
		return -1;
	return 0;
}

/* The id of @v[0..n) (with @salt, 0 or 1, which distinguishes otherwise
 * equal sequences), added when new (*@added).  -1: out of memory or too
 * many. */
int lsd_seqtab_intern_hashed(struct seqtab *t, const uint32_t *v, uint32_t n,
				uint32_t salt, uint32_t h, uint32_t *id, bool *added)
{
	if ((t->count + 1) * 2 > (t->slots ? t->mask + 1 : 0) && seqtab_rehash(t) != 0)
		return -1;
	size_t k = h & t->mask;
	for (uint64_t e; (e = t->slots[k]) != SLOT_EMPTY; k = (k + 1) & t->mask) {
		if (e >> 32 != h)
			continue;
		const struct seq *s = &t->ents[SLOT_ID(e)];
		if (s->len == (n | salt << 31) && !memcmp(t->pool + s->off, v, n * sizeof(*v))) {
			*id = SLOT_ID(e);
			*added = false;
			return 0;
		}
	}
	if (t->count >= MAX_ITEMS || n > 0x7fffffffu ||
	    kit_grow((void **)&t->ents, &t->cap, t->count + 1, sizeof(*t->ents)) != 0 ||
	    /* (+ 1: the pool exists even if every sequence is empty, as
	     * pool + offset is computed for each) */
	    kit_grow((void **)&t->pool, &t->pool_cap, t->pool_len + n + 1, sizeof(*t->pool)) != 0)
		return -1;
	if (n)
		memcpy(t->pool + t->pool_len, v, n * sizeof(*v));
	t->ents[t->count] = (struct seq){t->pool_len, n | salt << 31, h};
	t->pool_len += n;
	t->slots[k] = (uint64_t)h << 32 | t->count;
	*id = (uint32_t)t->count++;
	*added = true;
	return 0;
}

int lsd_seqtab_intern(struct seqtab *t, const uint32_t *v, uint32_t n, uint32_t salt,
			 uint32_t *id, bool *added)
{
	return lsd_seqtab_intern_hashed(t, v, n, salt, lsd_seq_hash(v, n, salt), id, added);
}

/* Prefetch the slot where the sequence of hash @h is looked for. */
void lsd_seqtab_prefetch(const struct seqtab *t, uint32_t h)
{
	if (t->slots)
		__builtin_prefetch(&t->slots[h & t->mask]);
}

