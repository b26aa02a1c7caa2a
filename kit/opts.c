/* leaksnap kit: options structs that carry their own size. */
#include <string.h>

#include "kit.h"

int kit_opts(void *dst, size_t size, const void *opts, const char *what,
	     struct leaksnap_error *err)
{
	memset(dst, 0, size);
	if (!opts)
		return 0;
	size_t sz;
	memcpy(&sz, opts, sizeof(sz));
	/* (a size far beyond ours is no options struct: its bytes past ours
	 * are not read) */
	if (sz < sizeof(size_t) || sz > size + 4096)
		return kit_error(err, LEAKSNAP_ERR_USAGE, what,
				 "unknown size %zu (not built against this library?)", sz);
	/* a newer caller's fields past ours must be unset: they would be
	 * ignored silently otherwise */
	for (size_t i = size; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return kit_error(
				err, LEAKSNAP_ERR_USAGE, what,
				"sets fields this library does not know (size %zu, known %zu)", sz,
				size);
	memcpy(dst, opts, sz < size ? sz : size);
	memcpy(dst, &size, sizeof(size));
	return 0;
}
