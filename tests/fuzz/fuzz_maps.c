/* Fuzz the maps parser: any text, then lookups at and around every
 * mapping's bounds. */
#include <leaksnap/maps.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct leaksnap_error err;
	fuzz_stale_error(&err);
	struct leaksnap_maps *m = leaksnap_maps_parse((const char *)data, size, "fuzz", 1, 0, &err);
	if (m == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	FUZZ_CHECK(err.code == LEAKSNAP_OK);
	size_t nm = leaksnap_maps_mapping_count(m), nmod = leaksnap_maps_module_count(m);
	for (size_t i = 0; i < nm; i++) {
		const struct leaksnap_maps_mapping *mp = leaksnap_maps_mapping(m, i);
		FUZZ_CHECK(mp->start < mp->end);
		FUZZ_CHECK(i == 0 || leaksnap_maps_mapping(m, i - 1)->end <= mp->start);
		FUZZ_CHECK(mp->perms[4] == '\0');
		FUZZ_CHECK(mp->line >= 1);
		const uint64_t pcs[] = {mp->start - 1, mp->start, mp->end - 1, mp->end};
		for (size_t k = 0; k < sizeof(pcs) / sizeof(pcs[0]); k++) {
			struct leaksnap_maps_location loc;
			bool hit = leaksnap_maps_locate(m, pcs[k], &loc);
			FUZZ_CHECK(hit == (loc.mapping != NULL));
			if (!hit)
				continue;
			FUZZ_CHECK(loc.mapping->start <= pcs[k] && pcs[k] < loc.mapping->end);
			FUZZ_CHECK(leaksnap_maps_lookup(m, pcs[k]) == loc.mapping);
			FUZZ_CHECK(loc.rel_pc == pcs[k] - loc.mapping->start + loc.mapping->offset);
			if (loc.module != NULL)
				FUZZ_CHECK(loc.module ==
					   leaksnap_maps_module(m, loc.mapping->module));
		}
	}
	size_t covered = 0;
	for (size_t i = 0; i < nmod; i++) {
		const struct leaksnap_maps_module *mod = leaksnap_maps_module(m, i);
		FUZZ_CHECK(mod->path != NULL && mod->mapping_count >= 1);
		FUZZ_CHECK(mod->first_mapping + mod->mapping_count <= nm);
		FUZZ_CHECK(mod->start < mod->end);
		covered += mod->mapping_count;
	}
	FUZZ_CHECK(covered <= nm);
	leaksnap_maps_free(m);
	return 0;
}
