/* leaksnap symbolizer: the one small hash table its caches share -- keys
 * are pairs of pointers (a name's address in a mapped string table, a
 * unit and a DIE's bytes), values a pointer. */
#include <stdlib.h>

#include "sym_internal.h"

static size_t map_home(const struct sym_map *m, const void *a, const void *b)
{
	uint64_t h = ((uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15ULL) ^
		     ((uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4fULL);
	return (size_t)(h >> 17) & m->mask;
}

static struct sym_map_entry *map_find(const struct sym_map *m, const void *a, const void *b)
{
	size_t i = map_home(m, a, b);
	while (m->e[i].used && (m->e[i].a != a || m->e[i].b != b))
		i = (i + 1) & m->mask;
	return &m->e[i];
}

void **sym_map_slot(struct sym_map *m, const void *a, const void *b)
{
	if ((m->count + 1) * 2 > (m->e ? m->mask + 1 : 0)) {
		size_t cap = m->e ? (m->mask + 1) * 2 : 1024;
		struct sym_map old = *m;
		m->e = calloc(cap, sizeof(*m->e));
		if (!m->e) {
			*m = old;
			return NULL;
		}
		m->mask = cap - 1;
		for (size_t i = 0; old.e && i <= old.mask; i++)
			if (old.e[i].used)
				*map_find(m, old.e[i].a, old.e[i].b) = old.e[i];
		free(old.e);
	}
	struct sym_map_entry *e = map_find(m, a, b);
	if (!e->used) {
		*e = (struct sym_map_entry){a, b, NULL, true};
		m->count++;
	}
	return &e->v;
}

void sym_map_free(struct sym_map *m, bool free_values)
{
	for (size_t i = 0; free_values && m->e && i <= m->mask; i++)
		if (m->e[i].used)
			free(m->e[i].v);
	free(m->e);
	m->e = NULL;
	m->count = m->mask = 0;
}
