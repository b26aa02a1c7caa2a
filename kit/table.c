/* leaksnap kit: the open-addressing table of pointer-pair keys. */
#include <stdlib.h>

#include "kit_table.h"

static size_t home(const struct kit_table *t, uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ b * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h >> 17) & t->mask;
}

static struct kit_table_entry *probe(const struct kit_table *t, uint64_t a, uint64_t b)
{
	size_t i = home(t, a, b);
	while (t->e[i].used && (t->e[i].a != a || t->e[i].b != b))
		i = (i + 1) & t->mask;
	return &t->e[i];
}

void **kit_table_slot(struct kit_table *t, uint64_t a, uint64_t b)
{
	if ((t->count + 1) * 2 > (t->e ? t->mask + 1 : 0)) {
		size_t cap = t->e ? (t->mask + 1) * 2 : 1024;
		struct kit_table old = *t;
		if (cap > SIZE_MAX / sizeof(*t->e) || !(t->e = calloc(cap, sizeof(*t->e)))) {
			*t = old;
			return NULL;
		}
		t->mask = cap - 1;
		for (size_t i = 0; old.e && i <= old.mask; i++)
			if (old.e[i].used)
				*probe(t, old.e[i].a, old.e[i].b) = old.e[i];
		free(old.e);
	}
	struct kit_table_entry *e = probe(t, a, b);
	if (!e->used) {
		*e = (struct kit_table_entry){a, b, NULL, true};
		t->count++;
	}
	return &e->v;
}

void **kit_table_find(const struct kit_table *t, uint64_t a, uint64_t b)
{
	if (!t->e)
		return NULL;
	struct kit_table_entry *e = probe(t, a, b);
	return e->used ? &e->v : NULL;
}

void kit_table_free(struct kit_table *t, bool free_values)
{
	for (size_t i = 0; free_values && t->e && i <= t->mask; i++)
		if (t->e[i].used)
			free(t->e[i].v);
	free(t->e);
	t->e = NULL;
	t->count = t->mask = 0;
}
