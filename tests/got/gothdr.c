/* hook/got.h included first and alone, in a file compiled without
 * -D_GNU_SOURCE (the Makefile's GOT block checks it so): it must declare
 * everything it uses, struct dl_phdr_info included. */
#include "got.h"

int gothdr_use(const struct dl_phdr_info *info);

int gothdr_use(const struct dl_phdr_info *info)
{
	struct got_slot s = { info->dlpi_addr, 0, GOT_ABS };

	return got_find(info, 0, 0, 0, 0, 0) + (int)s.kind + (int)GOT_MAX_SLOTS;
}
