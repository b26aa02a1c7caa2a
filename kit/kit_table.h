/* leaksnap kit: the one open-addressing hash table for caches keyed by a
 * pair of 64-bit values (two pointers, a pointer and an offset), each
 * holding a pointer.  Linear probing, at most half full, never shrinks;
 * entries are never removed. */
#ifndef LEAKSNAP_KIT_TABLE_H
#define LEAKSNAP_KIT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kit_table_entry {
	uint64_t a, b;
	void *v;
	bool used;
};
/* Zero-initialized: an empty table. */
struct kit_table {
	struct kit_table_entry *e;
	size_t count, mask;
};

/* The value slot of (@a, @b), added (holding NULL) if new; NULL when out
 * of memory (the table is unchanged). */
void **kit_table_slot(struct kit_table *t, uint64_t a, uint64_t b);
/* The value slot of (@a, @b), or NULL when it is not in the table. */
void **kit_table_find(const struct kit_table *t, uint64_t a, uint64_t b);
/* Release the table (and with @free_values, free() every value). */
void kit_table_free(struct kit_table *t, bool free_values);

/* Keys from pointers. */
static inline uint64_t kit_key(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

#endif /* LEAKSNAP_KIT_TABLE_H */
