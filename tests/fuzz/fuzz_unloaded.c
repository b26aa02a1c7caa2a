/* Fuzz leaksnap_maps_add_unloaded: the input is maps text, a NUL byte, then the
 * unloaded mappings' lines (as the hook's "unloaded=" metadata values).
 * The merged maps must stay sorted and disjoint, with consistent modules,
 * every mapping of the snapshot's own maps kept where no unloaded code
 * was put, and every unloaded one over nothing but non-code. */
#include <stdlib.h>
#include <string.h>

#include <leaksnap/maps.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	if (nul == NULL)
		return 0;
	size_t mlen = (size_t)(nul - data);
	struct leaksnap_error err;
	fuzz_stale_error(&err);
	struct leaksnap_maps *m = leaksnap_maps_parse((const char *)data, mlen, "fuzz", 1, 0, &err);
	if (m == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	struct leaksnap_maps *orig = leaksnap_maps_parse((const char *)data, mlen, "fuzz", 1, 0,
							 &err);
	FUZZ_CHECK(orig != NULL);
	size_t before = leaksnap_maps_mapping_count(m);
	fuzz_stale_error(&err);
	long added = leaksnap_maps_add_unloaded(m, (const char *)nul + 1, size - mlen - 1, "fuzz",
						NULL, &err);
	if (added < 0) {
		fuzz_check_error(&err);
		FUZZ_CHECK(leaksnap_maps_mapping_count(m) == before);
	} else {
		FUZZ_CHECK(err.code == LEAKSNAP_OK);
	}
	size_t nm = leaksnap_maps_mapping_count(m), nmod = leaksnap_maps_module_count(m),
	       marked = 0;
	for (size_t i = 0; i < nm; i++) {
		const struct leaksnap_maps_mapping *mp = leaksnap_maps_mapping(m, i);
		FUZZ_CHECK(mp->start < mp->end);
		FUZZ_CHECK(i == 0 || leaksnap_maps_mapping(m, i - 1)->end <= mp->start);
		FUZZ_CHECK(mp->module == LEAKSNAP_MAPS_NONE || mp->module < nmod);
		FUZZ_CHECK(leaksnap_maps_lookup(m, mp->start) == mp &&
			   leaksnap_maps_lookup(m, mp->end - 1) == mp);
		if (!mp->unloaded)
			continue;
		marked++;
		FUZZ_CHECK(mp->path != NULL);
		/* over the snapshot's own maps: code never, data only as carved */
		for (size_t k = 0; k < leaksnap_maps_mapping_count(orig); k++) {
			const struct leaksnap_maps_mapping *o = leaksnap_maps_mapping(orig, k);
			if (o->start < mp->end && mp->start < o->end)
				FUZZ_CHECK(mp->perms[2] == 'x' && o->perms[2] != 'x');
		}
	}
	FUZZ_CHECK(added < 0 || marked == (size_t)added);
	/* each mapping of the snapshot's own maps: every address still in a
	 * piece of it, or under unloaded code */
	for (size_t k = 0; k < leaksnap_maps_mapping_count(orig); k++) {
		const struct leaksnap_maps_mapping *o = leaksnap_maps_mapping(orig, k);
		const uint64_t at[] = {o->start, o->end - 1, o->start + (o->end - o->start) / 2};
		for (size_t j = 0; j < 3; j++) {
			const struct leaksnap_maps_mapping *x = leaksnap_maps_lookup(m, at[j]);
			FUZZ_CHECK(x != NULL);
			FUZZ_CHECK(
				x->unloaded ||
				(x->inode == o->inode && strcmp(x->perms, o->perms) == 0 &&
				 (x->inode == 0 || x->offset - o->offset == x->start - o->start)));
		}
	}
	for (size_t i = 0; i < nmod; i++) {
		const struct leaksnap_maps_module *mod = leaksnap_maps_module(m, i);
		FUZZ_CHECK(mod->path != NULL && mod->mapping_count >= 1);
		FUZZ_CHECK(mod->first_mapping + mod->mapping_count <= nm);
	}
	leaksnap_maps_free(orig);
	leaksnap_maps_free(m);
	return 0;
}
