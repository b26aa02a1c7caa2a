/* Unit tests for the pprof profile writer (export/pprof.c): a profile is built,
 * written, gunzipped with zlib and decoded with the protobuf-c unpacker
 * generated from export/profile.proto; every field is checked against what
 * was put in: sample values and labels, location order (leaf first),
 * mappings with their build IDs, inline chains (innermost first), the
 * deduplicated string table with "" first. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <leaksnap/export.h>

#include "profile.pb-c.h"

/* Helpers ------------------------------------------------------------------------ */

/* The whole of @f, gunzipped; checks the gzip magic. */
static uint8_t *gunzip_file(FILE *f, size_t *len)
{
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	assert_true(size > 18);
	rewind(f);
	uint8_t *gz = malloc((size_t)size);
	assert_non_null(gz);
	assert_int_equal(fread(gz, 1, (size_t)size, f), (size_t)size);
	assert_int_equal(gz[0], 0x1f); /* a gzip member, not zlib or raw deflate */
	assert_int_equal(gz[1], 0x8b);
	size_t cap = 1 << 16, n = 0;
	uint8_t *out = malloc(cap);
	assert_non_null(out);
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)size;
	int zr;
	do {
		if (n == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		z.next_out = out + n;
		z.avail_out = (uInt)(cap - n);
		zr = inflate(&z, Z_NO_FLUSH);
		assert_true(zr == Z_OK || zr == Z_STREAM_END);
		n = cap - z.avail_out;
	} while (zr != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* nothing after the gzip member */
	inflateEnd(&z);
	free(gz);
	*len = n;
	return out;
}

static Perftools__Profiles__Profile *decode(FILE *f)
{
	size_t len;
	uint8_t *raw = gunzip_file(f, &len);
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, len, raw);
	free(raw);
	assert_non_null(pr);
	return pr;
}

static const char *str(const Perftools__Profiles__Profile *pr, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pr->n_string_table);
	return pr->string_table[i];
}

/* No string appears twice, and the first is "". */
static void check_string_table(const Perftools__Profiles__Profile *pr)
{
	assert_true(pr->n_string_table >= 1);
	assert_string_equal(pr->string_table[0], "");
	for (size_t i = 0; i < pr->n_string_table; i++)
		for (size_t j = i + 1; j < pr->n_string_table; j++)
			assert_string_not_equal(pr->string_table[i], pr->string_table[j]);
}

static const Perftools__Profiles__Location *location(const Perftools__Profiles__Profile *pr,
						      uint64_t id)
{
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == id)
			return pr->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	abort(); /* (fail_msg does not return) */
}

static const Perftools__Profiles__Function *function(const Perftools__Profiles__Profile *pr,
						      uint64_t id)
{
	for (size_t i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	abort();
}

/* Tests ---------------------------------------------------------------------------- */

/* Every part of a small profile, exactly. */
static void test_roundtrip(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	assert_non_null(f);
	struct leaksnap_export_pprof *p = leaksnap_export_pprof_new(f, "leaksnap", NULL);
	assert_non_null(p);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_objects", "count"), 0);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes"), 0);
	assert_int_equal(leaksnap_export_pprof_default_sample_type(p, "inuse_space"), 0);
	assert_int_equal(leaksnap_export_pprof_period(p, "space", "bytes", 1), 0);
	leaksnap_export_pprof_time(p, 1764081900123456789LL, 5000);
	assert_int_equal(leaksnap_export_pprof_comment(p, "source=x.dump"), 0);
	assert_int_equal(leaksnap_export_pprof_comment(p, "pid=42"), 0);

	/* two mappings; the program's (the second) is written first */
	static const uint8_t bid[] = {0x1f, 0xb7, 0x00, 0xab, 0xcd};
	uint64_t lib = leaksnap_export_pprof_mapping(p, 0x7f0000001000, 0x7f0000003000, 0x1000,
				     "/system/lib64/libfoo.so", NULL, 0, false);
	uint64_t exe = leaksnap_export_pprof_mapping(p, 0x5000, 0x6000, 0x0, "/bin/app", bid,
						     sizeof(bid), true);
	assert_int_equal(lib, 1);
	assert_int_equal(exe, 2);
	assert_int_equal(leaksnap_export_pprof_main_file(p, "/bin/app"), 0);

	/* an inline chain (innermost first), a function shared with another
	 * location, a name that is not UTF-8, a PC in no mapping */
	struct leaksnap_sym_frame chain[2] = {
		{.function = "inner", .file = "a.c", .line = 10, .column = 3, .inlined = true},
		{.function = "outer", .file = "a.c", .line = 20, .column = 7, .start_line = 15},
	};
	struct leaksnap_sym_frame outer_again = {.function = "outer", .file = "a.c", .line = 25,
					.start_line = 15};
	struct leaksnap_sym_frame bad = {.function = "bad\xffname", .file = NULL, .line = 0};
	assert_int_equal(leaksnap_export_pprof_location_find(p, 0x5123), 0);
	uint64_t a = leaksnap_export_pprof_location(p, 0x5123, exe, 0x5123, chain, 2);
	uint64_t b = leaksnap_export_pprof_location(p, 0x5200, exe, 0x5200, &outer_again, 1);
	uint64_t c = leaksnap_export_pprof_location(p, 0x7f0000001234, lib, 0x7f0000001234, &bad,
						    1);
	uint64_t d = leaksnap_export_pprof_location(p, 0x99, 0, 0x99, NULL, 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(c, 3);
	assert_int_equal(d, 4);
	/* the same key is the same location, whatever else is passed */
	assert_int_equal(leaksnap_export_pprof_location(p, 0x5123, lib, 0x1, NULL, 0), a);
	assert_int_equal(leaksnap_export_pprof_location_find(p, 0x5200), b);

	uint64_t s1[] = {a, b, c}, s2[] = {d};
	int64_t v1[] = {3, 96}, v2[] = {1, 4096};
	struct leaksnap_export_pprof_label l1[] = {{"bytes", NULL, 32, "bytes"},
						   {"zygote", "true", 0, NULL}};
	assert_int_equal(leaksnap_export_pprof_sample(p, s1, 3, v1, 2, l1, 2), 0);
	assert_int_equal(leaksnap_export_pprof_sample(p, s2, 1, v2, 2, l1, 1), 0);
	assert_int_equal(leaksnap_export_pprof_sample(p, NULL, 0, v2, 2, NULL, 0),
			 0); /* no frames */
	assert_int_equal(leaksnap_export_pprof_finish(p), 0);
	leaksnap_export_pprof_free(p);

	Perftools__Profiles__Profile *pr = decode(f);
	fclose(f);
	check_string_table(pr);
	/* header */
	assert_int_equal(pr->n_sample_type, 2);
	assert_string_equal(str(pr, pr->sample_type[0]->type), "inuse_objects");
	assert_string_equal(str(pr, pr->sample_type[0]->unit), "count");
	assert_string_equal(str(pr, pr->sample_type[1]->type), "inuse_space");
	assert_string_equal(str(pr, pr->sample_type[1]->unit), "bytes");
	assert_int_equal(pr->default_sample_type, pr->sample_type[1]->type);
	assert_non_null(pr->period_type);
	assert_string_equal(str(pr, pr->period_type->type), "space");
	assert_string_equal(str(pr, pr->period_type->unit), "bytes");
	assert_int_equal(pr->period, 1);
	assert_int_equal(pr->time_nanos, 1764081900123456789LL);
	assert_int_equal(pr->duration_nanos, 5000);
	assert_int_equal(pr->n_comment, 2);
	assert_string_equal(str(pr, pr->comment[0]), "source=x.dump");
	assert_string_equal(str(pr, pr->comment[1]), "pid=42");
	assert_int_equal(pr->drop_frames, 0);
	assert_int_equal(pr->keep_frames, 0);

	/* samples: locations leaf first as given, values, labels */
	assert_int_equal(pr->n_sample, 3);
	const Perftools__Profiles__Sample *x = pr->sample[0];
	assert_int_equal(x->n_location_id, 3);
	assert_int_equal(x->location_id[0], a);
	assert_int_equal(x->location_id[1], b);
	assert_int_equal(x->location_id[2], c);
	assert_int_equal(x->n_value, 2);
	assert_int_equal(x->value[0], 3);
	assert_int_equal(x->value[1], 96);
	assert_int_equal(x->n_label, 2);
	assert_string_equal(str(pr, x->label[0]->key), "bytes");
	assert_int_equal(x->label[0]->str, 0);
	assert_int_equal(x->label[0]->num, 32);
	assert_string_equal(str(pr, x->label[0]->num_unit), "bytes");
	assert_string_equal(str(pr, x->label[1]->key), "zygote");
	assert_string_equal(str(pr, x->label[1]->str), "true");
	assert_int_equal(x->label[1]->num, 0);
	x = pr->sample[1];
	assert_int_equal(x->n_location_id, 1);
	assert_int_equal(x->location_id[0], d);
	assert_int_equal(x->value[0], 1);
	assert_int_equal(x->value[1], 4096);
	assert_int_equal(x->n_label, 1);
	x = pr->sample[2];
	assert_int_equal(x->n_location_id, 0);
	assert_int_equal(x->n_label, 0);
	assert_int_equal(x->value[1], 4096);

	/* mappings: the program's first, ids kept, build ID in hex */
	assert_int_equal(pr->n_mapping, 2);
	const Perftools__Profiles__Mapping *m = pr->mapping[0];
	assert_int_equal(m->id, exe);
	assert_int_equal(m->memory_start, 0x5000);
	assert_int_equal(m->memory_limit, 0x6000);
	assert_int_equal(m->file_offset, 0);
	assert_string_equal(str(pr, m->filename), "/bin/app");
	assert_string_equal(str(pr, m->build_id), "1fb700abcd");
	assert_true(m->has_functions && m->has_filenames && m->has_line_numbers &&
		    m->has_inline_frames);
	m = pr->mapping[1];
	assert_int_equal(m->id, lib);
	assert_int_equal(m->memory_start, 0x7f0000001000);
	assert_int_equal(m->memory_limit, 0x7f0000003000);
	assert_int_equal(m->file_offset, 0x1000);
	assert_string_equal(str(pr, m->filename), "/system/lib64/libfoo.so");
	assert_int_equal(m->build_id, 0);
	assert_false(m->has_functions || m->has_filenames || m->has_line_numbers ||
		     m->has_inline_frames);

	/* locations and their lines: the inline chain innermost first */
	assert_int_equal(pr->n_location, 4);
	const Perftools__Profiles__Location *l = location(pr, a);
	assert_int_equal(l->mapping_id, exe);
	assert_int_equal(l->address, 0x5123);
	assert_int_equal(l->n_line, 2);
	const Perftools__Profiles__Function *fn = function(pr, l->line[0]->function_id);
	assert_string_equal(str(pr, fn->name), "inner");
	assert_string_equal(str(pr, fn->system_name), "inner");
	assert_string_equal(str(pr, fn->filename), "a.c");
	assert_int_equal(fn->start_line, 0);
	assert_int_equal(l->line[0]->line, 10);
	assert_int_equal(l->line[0]->column, 3);
	fn = function(pr, l->line[1]->function_id);
	assert_string_equal(str(pr, fn->name), "outer");
	assert_int_equal(fn->start_line, 15);
	assert_int_equal(l->line[1]->line, 20);
	assert_int_equal(l->line[1]->column, 7);
	uint64_t outer_id = l->line[1]->function_id;
	l = location(pr, b);
	assert_int_equal(l->address, 0x5200);
	assert_int_equal(l->n_line, 1);
	assert_int_equal(l->line[0]->function_id, outer_id); /* one function, two lines */
	assert_int_equal(l->line[0]->line, 25);
	l = location(pr, c);
	assert_int_equal(l->mapping_id, lib);
	assert_int_equal(l->n_line, 1);
	fn = function(pr, l->line[0]->function_id);
	assert_string_equal(str(pr, fn->name), "bad\xef\xbf\xbdname"); /* U+FFFD */
	assert_int_equal(fn->filename, 0);
	assert_int_equal(l->line[0]->line, 0);
	l = location(pr, d);
	assert_int_equal(l->mapping_id, 0);
	assert_int_equal(l->address, 0x99);
	assert_int_equal(l->n_line, 0);
	assert_int_equal(pr->n_function, 3);

	/* the string table holds exactly what was used */
	static const char *const want[] = {
		"", "inuse_objects", "count", "inuse_space", "bytes", "space", "source=x.dump",
		"pid=42", "/system/lib64/libfoo.so", "/bin/app", "1fb700abcd", "inner", "a.c",
		"outer", "bad\xef\xbf\xbdname", "zygote", "true"};
	assert_int_equal(pr->n_string_table, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < pr->n_string_table; i++)
		assert_string_equal(pr->string_table[i], want[i]);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* A mapping widened over addresses below and above it keeps each address's
 * file offset. */
static void test_mapping_cover(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	struct leaksnap_export_pprof *p = leaksnap_export_pprof_new(f, "leaksnap", NULL);
	assert_non_null(p);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "growth_space", "bytes"), 0);
	/* rel_pc 0x234 at pc 0x401234: load bias 0x401000 */
	uint64_t m = leaksnap_export_pprof_mapping(p, 0x401234, 0x401235, 0x234, "/bin/x", NULL, 0,
						   false);
	leaksnap_export_pprof_mapping_cover(p, m, 0x401100);
	leaksnap_export_pprof_mapping_cover(p, m, 0x409000);
	leaksnap_export_pprof_mapping_cover(p, m, 0x401200);
	assert_int_equal(leaksnap_export_pprof_finish(p), 0);
	leaksnap_export_pprof_free(p);
	Perftools__Profiles__Profile *pr = decode(f);
	fclose(f);
	assert_int_equal(pr->n_mapping, 1);
	assert_int_equal(pr->mapping[0]->memory_start, 0x401100);
	assert_int_equal(pr->mapping[0]->memory_limit, 0x409001);
	assert_int_equal(pr->mapping[0]->file_offset, 0x100);
	assert_int_equal(pr->n_sample, 0);
	check_string_table(pr);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* A stack without frames gets one location: no address, no mapping, a
 * function "(no frames)"; the same one every time. */
static void test_no_frames(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	struct leaksnap_export_pprof *p = leaksnap_export_pprof_new(f, "leaksnap", NULL);
	assert_non_null(p);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes"), 0);
	uint64_t pc = leaksnap_export_pprof_location(p, 0, 0, 0, NULL,
						     0); /* a PC 0 is another location */
	uint64_t id = leaksnap_export_pprof_no_frames(p);
	assert_int_equal(pc, 1);
	assert_int_equal(id, 2);
	assert_int_equal(leaksnap_export_pprof_no_frames(p), id);
	assert_int_equal(leaksnap_export_pprof_location_find(p, 0), pc);
	int64_t v = 64;
	assert_int_equal(leaksnap_export_pprof_sample(p, &id, 1, &v, 1, NULL, 0), 0);
	assert_int_equal(leaksnap_export_pprof_finish(p), 0);
	leaksnap_export_pprof_free(p);
	Perftools__Profiles__Profile *pr = decode(f);
	fclose(f);
	assert_int_equal(pr->n_location, 2);
	const Perftools__Profiles__Location *l = location(pr, id);
	assert_int_equal(l->address, 0);
	assert_int_equal(l->mapping_id, 0);
	assert_int_equal(l->n_line, 1);
	assert_string_equal(str(pr, function(pr, l->line[0]->function_id)->name), "(no frames)");
	assert_int_equal(pr->sample[0]->location_id[0], id);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* Many samples: the compressed stream spans many output chunks; every
 * sample comes back in order, and strings stay deduplicated. */
static void test_many_samples(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	struct leaksnap_export_pprof *p = leaksnap_export_pprof_new(f, "leaksnap", NULL);
	assert_non_null(p);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_objects", "count"), 0);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes"), 0);
	enum { N = 200000, PCS = 5000 };
	char name[32];
	for (uint64_t i = 0; i < PCS; i++) {
		snprintf(name, sizeof(name), "fn%llu", (unsigned long long)(i % 1000));
		struct leaksnap_sym_frame fr = {
			.function = name, .file = "big.c", .line = (uint32_t)i};
		assert_int_equal(leaksnap_export_pprof_location(p, 0x10000 + i * 0x10, 0,
								0x10000 + i * 0x10, &fr, 1),
				 i + 1);
	}
	uint64_t total = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t ids[3] = {1 + i % PCS, 1 + (i * 7) % PCS, 1 + (i * 13) % PCS};
		int64_t v[2] = {(int64_t)(i % 5 + 1), (int64_t)((i % 5 + 1) * (i % 4096))};
		total += (uint64_t)v[1];
		struct leaksnap_export_pprof_label lab = {"bytes", NULL, (int64_t)(i % 4096),
							  "bytes"};
		assert_int_equal(leaksnap_export_pprof_sample(p, ids, 3, v, 2, &lab, 1), 0);
	}
	assert_int_equal(leaksnap_export_pprof_finish(p), 0);
	leaksnap_export_pprof_free(p);
	Perftools__Profiles__Profile *pr = decode(f);
	fclose(f);
	assert_int_equal(pr->n_sample, N);
	assert_int_equal(pr->n_location, PCS);
	assert_int_equal(pr->n_function, 1000); /* one per (name, file, start line) */
	uint64_t sum = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		assert_int_equal(pr->sample[i]->location_id[1], 1 + (i * 7) % PCS);
		sum += (uint64_t)pr->sample[i]->value[1];
	}
	assert_int_equal(sum, total);
	/* "", 4 type strings, 1000 names, "big.c" */
	assert_int_equal(pr->n_string_table, 1 + 4 + 1000 + 1);
	check_string_table(pr);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* Errors: a sample with the wrong number of values; a write error. */
static void test_errors(void **state)
{
	(void)state;
	FILE *f = tmpfile();
	struct leaksnap_export_pprof *p = leaksnap_export_pprof_new(f, "leaksnap", NULL);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes"), 0);
	int64_t v[2] = {1, 2};
	assert_int_equal(leaksnap_export_pprof_sample(p, NULL, 0, v, 2, NULL, 0), -1);
	struct leaksnap_error err;
	assert_int_equal(leaksnap_export_pprof_error(p, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_string_equal(err.source, "");
	assert_string_equal(err.text, "a sample with 2 values for 1 types");
	assert_int_equal(leaksnap_export_pprof_finish(p), -1); /* the first error stays */
	leaksnap_export_pprof_error(p, &err);
	assert_string_equal(err.text, "a sample with 2 values for 1 types");
	leaksnap_export_pprof_free(p);
	fclose(f);

	FILE *full = fopen("/dev/full", "w");
	if (!full)
		skip();
	p = leaksnap_export_pprof_new(full, "leaksnap", NULL);
	assert_int_equal(leaksnap_export_pprof_sample_type(p, "inuse_space", "bytes"), 0);
	assert_int_equal(leaksnap_export_pprof_sample(p, NULL, 0, v, 1, NULL, 0), 0);
	assert_int_equal(leaksnap_export_pprof_finish(p), -1);
	leaksnap_export_pprof_error(p, &err);
	assert_string_equal(err.text, "No space left on device");
	leaksnap_export_pprof_free(p);
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_mapping_cover),
		cmocka_unit_test(test_no_frames),
		cmocka_unit_test(test_many_samples),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
