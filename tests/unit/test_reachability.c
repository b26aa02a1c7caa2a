/* Unit tests of the LEAKSNAP reachability section (flag bit 2) through the
 * libsnapshot API: both byte orders and pointer sizes, merging, every
 * truncation, oversize, counts above the record's, the flag rules, and
 * the writers (kept by leaksnap_snapshot_save, dropped by leaksnap_snapshot_save_text). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/snapshot.h>

struct bytes {
	uint8_t p[4096];
	size_t n;
};

static void put(struct bytes *b, uint64_t v, unsigned w, int be)
{
	for (unsigned i = 0; i < w; i++)
		b->p[b->n + i] = (uint8_t)(v >> (8 * (be ? w - 1 - i : i)));
	b->n += w;
}

static void put_s(struct bytes *b, const char *s)
{
	memcpy(b->p + b->n, s, strlen(s));
	b->n += strlen(s);
}

static const char maps64[] =
	"7f0000001000-7f0000003000 r-xp 00001000 fd:01 1234 /system/lib64/libfoo.so\n";
static const char meta[] = "abi=arm64\nreachability=test\nreachability_pause_us=7\n";

/* Three records, backtrace size 3: 32 x 5 app [t+1, t+2]; the same 32 x 2
 * (merged with the first: 32 x 7); 16 x 1 zygote [t+3]. */
#define NREC 3
static size_t section_start; /* of the last file built */

/* A LEAKSNAP file with flags @flags (byte order from @be) and, unless
 * @reach is NULL, the reachability section @reach[NREC]. */
static void build(struct bytes *b, unsigned ptr, int be, uint8_t flags, const uint32_t *reach)
{
	const uint64_t t = ptr == 8 ? 0x7f0000001000ull : 0xf0001000ull;
	struct bytes r = {.n = 0};
	put(&r, 32, ptr, be), put(&r, 5, ptr, be);
	put(&r, t + 1, ptr, be), put(&r, t + 2, ptr, be), put(&r, 0, ptr, be);
	put(&r, 32, ptr, be), put(&r, 2, ptr, be);
	put(&r, t + 1, ptr, be), put(&r, t + 2, ptr, be), put(&r, 0, ptr, be);
	put(&r, 16 | (1u << 31), ptr, be), put(&r, 1, ptr, be);
	put(&r, t + 3, ptr, be), put(&r, 0, ptr, be), put(&r, 0, ptr, be);
	struct leaksnap_snapshot_header h = {
		.version = 1,
		.pointer_size = (uint8_t)ptr,
		.flags = (uint8_t)((be ? LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN : 0) | flags),
		.backtrace_size = 3,
		.pid = 9,
		.meta_size = (uint32_t)strlen(meta),
		.total_memory = 32 * 7 + 16,
		.info_size = ptr * 5u,
		.records_size = r.n,
		.maps_size = strlen(maps64),
	};
	leaksnap_snapshot_header_encode(&h, b->p);
	b->n = LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	memcpy(b->p + b->n, r.p, r.n);
	b->n += r.n;
	put_s(b, maps64);
	put_s(b, meta);
	section_start = b->n;
	for (int i = 0; reach && i < NREC; i++)
		put(b, reach[i], 4, be);
}

static const uint32_t reach_ok[NREC] = {3, 2, 1};

static void check_reach(const struct leaksnap_snapshot *s)
{
	assert_true(leaksnap_snapshot_has_reachability(s));
	assert_int_equal(leaksnap_snapshot_record_count(s), 2);
	const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, 0);
	assert_int_equal(r->count, 7);
	assert_int_equal(r->unreachable, 5); /* 3 + 2, merged */
	r = leaksnap_snapshot_record(s, 1);
	assert_true(r->zygote);
	assert_int_equal(r->unreachable, 1);
	assert_int_equal(leaksnap_snapshot_unreachable_bytes(s), 32 * 5 + 16);
	assert_int_equal(leaksnap_snapshot_unreachable_count(s), 6);
	assert_string_equal(leaksnap_snapshot_meta_get(s, "reachability"), "test");
	assert_string_equal(leaksnap_snapshot_meta_get(s, "reachability_pause_us"), "7");
}

static void test_every_layout(void **state)
{
	(void)state;
	for (unsigned ptr = 4; ptr <= 8; ptr += 4)
		for (int be = 0; be <= 1; be++) {
			struct bytes b;
			struct leaksnap_error err;
			build(&b, ptr, be, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, reach_ok);
			assert_int_equal(b.n, LEAKSNAP_SNAPSHOT_HEADER_SIZE + NREC * ptr * 5 +
						      strlen(maps64) + strlen(meta) + 4 * NREC);
			struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "m",
										    NULL, &err);
			assert_non_null(s);
			check_reach(s);
			assert_int_equal(leaksnap_snapshot_warning_count(s), 0);
			leaksnap_snapshot_close(s);
			/* unmerged, each record keeps its own count */
			LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .keep_duplicates = true);
			s = leaksnap_snapshot_open_memory(b.p, b.n, "m", &o, &err);
			assert_non_null(s);
			assert_int_equal(leaksnap_snapshot_record_count(s), 3);
			for (size_t i = 0; i < 3; i++)
				assert_int_equal(leaksnap_snapshot_record(s, i)->unreachable,
						 reach_ok[i]);
			assert_int_equal(leaksnap_snapshot_unreachable_count(s), 6);
			leaksnap_snapshot_close(s);
		}
}

static void test_absent(void **state)
{
	(void)state;
	struct bytes b;
	build(&b, 8, 0, 0, NULL);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "m", NULL, NULL);
	assert_non_null(s);
	assert_false(leaksnap_snapshot_has_reachability(s));
	assert_int_equal(leaksnap_snapshot_unreachable_bytes(s), 0);
	assert_int_equal(leaksnap_snapshot_unreachable_count(s), 0);
	assert_int_equal(leaksnap_snapshot_record(s, 0)->unreachable, 0);
	leaksnap_snapshot_close(s);
}

/* A count above its own record's is refused at that u32's offset, also
 * when the merged record would hold it. */
static void test_count_above_record(void **state)
{
	(void)state;
	static const struct {
		uint32_t reach[NREC];
		size_t index;
		const char *text;
	} cases[] = {
		{{6, 0, 0}, 0, "record 1: 6 unreachable allocations, more than its 5"},
		{{0, 3, 0}, 1, "record 2: 3 unreachable allocations, more than its 2"},
		{{0, 0, 0xffffffffu},
		 2,
		 "record 3: 4294967295 unreachable allocations, more than its 1"},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++)
		for (int be = 0; be <= 1; be++) {
			struct bytes b;
			struct leaksnap_error err;
			build(&b, 4, be, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, cases[c].reach);
			assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "m", NULL, &err));
			assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
			assert_true(err.has_offset);
			assert_int_equal(err.offset, section_start + 4 * cases[c].index);
			assert_string_equal(err.text, cases[c].text);
		}
}

/* Every cut inside the section, and every extra byte after it. */
static void test_every_truncation_and_oversize(void **state)
{
	(void)state;
	for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
		struct bytes b;
		build(&b, ptr, ptr == 4, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, reach_ok);
		for (size_t len = 0; len < b.n; len++) {
			struct leaksnap_error err;
			uint8_t *copy = malloc(len ? len : 1);
			memcpy(copy, b.p, len);
			assert_null(leaksnap_snapshot_open_memory(copy, len, "cut", NULL, &err));
			assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
			if (len >= section_start) {
				char want[160];
				snprintf(want, sizeof(want),
					 "truncated reachability section: 3 records need 12 bytes, "
					 "%zu follow the metadata", len - section_start);
				assert_int_equal(err.offset, section_start);
				assert_string_equal(err.text, want);
			} else if (len > 0) {
				assert_true(err.has_offset); /* the header's own checks */
			}
			free(copy);
		}
		for (size_t extra = 1; extra <= 5; extra++) {
			struct leaksnap_error err;
			char want[80];
			size_t n = b.n;
			memset(b.p + n, 'x', extra);
			assert_null(
				leaksnap_snapshot_open_memory(b.p, n + extra, "big", NULL, &err));
			snprintf(want, sizeof(want),
				 "%zu trailing bytes after the reachability section", extra);
			assert_int_equal(err.offset, n);
			assert_string_equal(err.text, want);
		}
	}
}

static void test_flags(void **state)
{
	(void)state;
	struct bytes b;
	struct leaksnap_error err;
	build(&b, 8, 0,
	      LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY | LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES,
	      reach_ok);
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "m", NULL, &err));
	assert_int_equal(err.offset, 11);
	assert_string_equal(err.text, "flag bits 1 (Android 7 counts) and 2 (reachability) are "
				      "never set together");
	/* bit 3 is still unknown */
	build(&b, 8, 0, 0x08, NULL);
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "m", NULL, &err));
	assert_string_equal(err.text, "unknown flag bits 0x08");
	/* the section without the flag is trailing data */
	build(&b, 8, 0, 0, reach_ok);
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "m", NULL, &err));
	assert_int_equal(err.offset, section_start);
	assert_string_equal(err.text, "12 trailing bytes after the metadata section");
	/* forcing Android 7 counts drops the section, with a warning */
	build(&b, 8, 0, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, reach_ok);
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .count_is_frames = true);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "m", &o, &err);
	assert_non_null(s);
	assert_false(leaksnap_snapshot_has_reachability(s));
	assert_int_equal(leaksnap_snapshot_unreachable_count(s), 0);
	assert_int_equal(leaksnap_snapshot_record(s, 0)->unreachable, 0);
	assert_int_equal(leaksnap_snapshot_warning_count(s), 1);
	assert_string_equal(leaksnap_snapshot_warning(s, 0),
			    "the unreachable counts are ignored: the "
			    "second field is read as a frame count");
	leaksnap_snapshot_close(s);
}

static void test_header_decode_sizes(void **state)
{
	(void)state;
	struct leaksnap_snapshot_header h = {
		1, 8, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, 2, 1, 3, 0, 0, 32, 32 * 4, 0};
	uint8_t buf[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
	leaksnap_snapshot_header_encode(&h, buf);
	assert_int_equal(buf[11], 0x04);
	assert_int_equal(LEAKSNAP_SNAPSHOT_REACHABILITY_SIZE(h.records_size, h.info_size), 16);
	uint64_t size = LEAKSNAP_SNAPSHOT_HEADER_SIZE + 32 * 4 + 3 + 16;
	struct leaksnap_snapshot_header d;
	struct leaksnap_error err;
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size, &d, "h", &err), 0);
	assert_memory_equal(&d, &h, sizeof(h));
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size - 1, &d, "h", &err),
			 -1);
	assert_int_equal(err.offset, size - 16);
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size + 1, &d, "h", &err),
			 -1);
	assert_int_equal(err.offset, size);
}

struct dropped {
	char lines[8][256];
	int n;
};
static void on_dropped(void *ctx, const char *what)
{
	struct dropped *d = ctx;
	if (d->n < 8)
		snprintf(d->lines[d->n++], sizeof(d->lines[0]), "%s", what);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static uint8_t buf[8192];
	*len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return buf;
}

/* leaksnap_snapshot_save keeps the section (merged counts, the chosen byte order,
 * any pointer size); leaksnap_snapshot_save_text drops it with one sentence. */
static void test_writers(void **state)
{
	(void)state;
	char dir[] = "/tmp/leaksnap-reach.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[300];
	int k = 0;
	for (unsigned ptr = 4; ptr <= 8; ptr += 4)
		for (int be = 0; be <= 1; be++)
			for (unsigned out_ptr = ptr; out_ptr <= 8; out_ptr += 4) {
				struct bytes b;
				struct leaksnap_error err;
				build(&b, ptr, be, LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY, reach_ok);
				struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(
					b.p, b.n, "m", NULL, &err);
				assert_non_null(s);
				snprintf(path, sizeof(path), "%s/%d.dump", dir, k++);
				LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, so, .big_endian = !be,
					      .pointer_size = out_ptr);
				int rc = leaksnap_snapshot_save(s, path, &so, &err);
				if (rc)
					print_error("%s: %s\n", path, err.text);
				assert_int_equal(rc, 0);
				size_t len;
				const uint8_t *p = slurp(path, &len);
				assert_int_equal(p[11], LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY |
								(!be ? 1 : 0));
				/* two merged records: 5 and 1, in the output's byte order */
				static const uint8_t le[8] = {5, 0, 0, 0, 1, 0, 0, 0};
				static const uint8_t bige[8] = {0, 0, 0, 5, 0, 0, 0, 1};
				assert_memory_equal(p + len - 8, !be ? bige : le, 8);
				struct leaksnap_snapshot *r = leaksnap_snapshot_open(path, NULL,
										     &err);
				assert_non_null(r);
				check_reach(r);
				assert_int_equal(leaksnap_snapshot_pointer_size(r), out_ptr);
				leaksnap_snapshot_close(r);
				if (ptr == 8 && be == 0 && out_ptr == 8) {
					struct dropped d = {.n = 0};
					LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, to,
						      .dropped = on_dropped, .dropped_ctx = &d);
					snprintf(path, sizeof(path), "%s/text.txt", dir);
					rc = leaksnap_snapshot_save_text(s, path, &to, &err);
					if (rc)
						print_error("%s\n", err.text);
					assert_int_equal(rc, 0);
					int found = 0;
					for (int i = 0; i < d.n; i++)
						found += !strcmp(
							d.lines[i],
							"the unreachable counts (176 bytes in 6 "
							"allocations) are not written: the text "
							"format has no place for them");
					assert_int_equal(found, 1);
					r = leaksnap_snapshot_open(path, NULL, &err);
					assert_non_null(r);
					assert_false(leaksnap_snapshot_has_reachability(r));
					leaksnap_snapshot_close(r);
					unlink(path);
				}
				leaksnap_snapshot_close(s);
			}
	for (int i = 0; i < k; i++) {
		snprintf(path, sizeof(path), "%s/%d.dump", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_layout),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_count_above_record),
		cmocka_unit_test(test_every_truncation_and_oversize),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_header_decode_sizes),
		cmocka_unit_test(test_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
