/* Fuzz the symbolizer on arbitrary ELF bytes: the input is written to a
 * file, opened (ELF, program headers, build ID, DWARF and symbol table
 * through libdw/libelf), and looked up at the virtual address of every
 * 64th file offset, both directly and as a module found in a symbol
 * directory (locate.c), as `leaksnap symbolize` does; a debug-only file
 * also gets its layout from mappings (leaksnap_sym_module_set_mappings). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/symbolizer.h>

#include "fuzz.h"

#define LOOKUPS 64

static char dir[64], path[96];

static void remove_files(void)
{
	unlink(path);
	rmdir(dir);
}

static int write_input(const uint8_t *data, size_t size)
{
	if (dir[0] == '\0') {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/leaksnap-fuzz.XXXXXX",
			 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL)
			abort(); /* not a finding: the harness cannot run */
		snprintf(path, sizeof(path), "%s/f.so", dir);
		atexit(remove_files);
	}
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		abort();
	if ((size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	return 0;
}

static void check_result(int rc, const struct leaksnap_sym_result *r,
			 const struct leaksnap_error *err)
{
	if (rc != 0) {
		fuzz_check_error(err);
		return;
	}
	FUZZ_CHECK(err->code == LEAKSNAP_OK);
	FUZZ_CHECK(r->frame_count == 0 || r->frames != NULL);
	FUZZ_CHECK(r->frame_count == 0 || !r->frames[r->frame_count - 1].inlined);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_input(data, size);
	struct leaksnap_error err;
	const char *dirs[] = {dir};
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .demangle = true, .symbol_dirs = dirs,
		      .symbol_dir_count = 1, .no_host_paths = true, .llvm_names = (size & 1) != 0);
	fuzz_stale_error(&err);
	struct leaksnap_symbolizer *sym = leaksnap_symbolizer_new(&o, &err);
	FUZZ_CHECK(sym != NULL);
	fuzz_stale_error(&err);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(sym, path, &err);
	if (f == NULL) {
		fuzz_check_error(&err);
		leaksnap_symbolizer_free(sym);
		return 0;
	}
	size_t idlen;
	const uint8_t *id = leaksnap_sym_file_build_id(f, &idlen);
	FUZZ_CHECK((id == NULL) == (idlen == 0));
	unsigned as = leaksnap_sym_file_address_size(f);
	FUZZ_CHECK(as == 4 || as == 8);
	(void)leaksnap_sym_file_machine(f);
	(void)leaksnap_sym_file_debug_path(f);

	uint64_t step = size / LOOKUPS > 64 ? size / LOOKUPS : 64;
	for (uint64_t off = 0; off < size; off += step) {
		uint64_t va;
		if (!leaksnap_sym_file_offset_to_vaddr(f, off, &va))
			continue;
		struct leaksnap_sym_result r;
		fuzz_stale_error(&err);
		int rc = leaksnap_sym_file_lookup(f, leaksnap_sym_file_call_site(f, va + 1), &r,
						  &err);
		check_result(rc, &r, &err);
	}

	/* The same file as the module "/f.so" of a dump, found in the symbol
	 * directory, with and without the build ID the dump would record. */
	for (int with_id = 0; with_id < 2; with_id++) {
		uint64_t rel = size / 2;
		fuzz_stale_error(&err);
		const struct leaksnap_sym_module *m = leaksnap_symbolizer_module_at(
			sym, "/f.so", with_id ? id : NULL, with_id ? idlen : 0, &rel, &err);
		FUZZ_CHECK(m != NULL);
		FUZZ_CHECK(m->file != NULL);
		FUZZ_CHECK(m->status == (with_id && idlen ? LEAKSNAP_SYM_BUILD_ID_MATCH
							  : LEAKSNAP_SYM_BUILD_ID_UNVERIFIED));
		struct leaksnap_sym_result r;
		if (m->layout == LEAKSNAP_SYM_LAYOUT_NONE) {
			/* A debug-only file: its layout from the mappings a maps
			 * file would give (the last one made of the input's bytes). */
			struct leaksnap_sym_mapping maps[3] = {
				{0x5500000000, 0x5500001000, 0, false},
				{0x5500001000, 0x5500002000, 0x1000, true},
				{0, 0, 0, true},
			};
			if (size >= 24) {
				memcpy(&maps[2].start, data, 8);
				memcpy(&maps[2].end, data + 8, 8);
				memcpy(&maps[2].offset, data + 16, 8);
			}
			fuzz_stale_error(&err);
			int rc = leaksnap_sym_module_set_mappings(sym, m, maps, 3, &err);
			if (rc != 0) {
				fuzz_check_error(&err);
				FUZZ_CHECK(m->layout == LEAKSNAP_SYM_LAYOUT_NONE);
			} else {
				FUZZ_CHECK(err.code == LEAKSNAP_OK);
				/* (tried once: without a build ID both passes share it) */
				FUZZ_CHECK(m->layout == LEAKSNAP_SYM_LAYOUT_MAPS ||
					   (with_id && !idlen));
				FUZZ_CHECK(leaksnap_sym_module_set_mappings(sym, m, maps, 3,
									    &err) == 0);
			}
			for (uint64_t k = 0; k < 16; k++) {
				fuzz_stale_error(&err);
				rc = leaksnap_sym_module_lookup(m, 0x1000 + k, true, &r, &err);
				check_result(rc, &r, &err);
			}
		}
		fuzz_stale_error(&err);
		int rc = leaksnap_sym_module_lookup(m, rel, true, &r, &err);
		check_result(rc, &r, &err);
	}
	leaksnap_symbolizer_free(sym);
	return 0;
}
