/* Unit tests of the libsnapshot API: every reader, merging, ranking, the
 * writer, and every truncation of valid inputs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <leaksnap/snapshot.h>

/* A little byte builder for inputs made in memory. */
struct bytes {
	uint8_t p[8192];
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

/* Records: (size, count, frames...) with B = 3. */
static void records(struct bytes *b, unsigned ptr, int be, int android7)
{
	const uint64_t t = ptr == 8 ? 0x7f0000001000ull : 0xf0001000ull;
	/* 1: 32 x 5 app [t+1, t+2]; 2: dup of 1 x 2; 3: 16 x 1 zygote [t+3]. */
	put(b, 32, ptr, be), put(b, android7 ? 2 : 5, ptr, be);
	put(b, t + 1, ptr, be), put(b, t + 2, ptr, be), put(b, 0, ptr, be);
	put(b, 32, ptr, be), put(b, android7 ? 2 : 2, ptr, be);
	put(b, t + 1, ptr, be), put(b, t + 2, ptr, be), put(b, 0, ptr, be);
	put(b, 16 | (1u << 31), ptr, be), put(b, android7 ? 1 : 1, ptr, be);
	put(b, t + 3, ptr, be), put(b, 0, ptr, be), put(b, 0, ptr, be);
}

static void leaksnap_file(struct bytes *b, unsigned ptr, int be, const char *meta,
			  uint8_t extra_flags)
{
	struct bytes recs = {.n = 0};
	records(&recs, ptr, be, extra_flags & LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES);
	struct leaksnap_snapshot_header h = {
		.version = 1,
		.pointer_size = (uint8_t)ptr,
		.flags = (uint8_t)((be ? LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN : 0) | extra_flags),
		.backtrace_size = 3,
		.pid = 77,
		.meta_size = (uint32_t)strlen(meta),
		.time_ns = 1000000000ull * 1700000000ull,
		.total_memory = 32 * 7 + 16,
		.info_size = ptr * 5u,
		.records_size = recs.n,
		.maps_size = strlen(maps64),
	};
	b->n = 0;
	leaksnap_snapshot_header_encode(&h, b->p);
	b->n = LEAKSNAP_SNAPSHOT_HEADER_SIZE;
	memcpy(b->p + b->n, recs.p, recs.n);
	b->n += recs.n;
	put_s(b, maps64);
	put_s(b, meta);
}

static void check_sample(const struct leaksnap_snapshot *s, unsigned ptr)
{
	const uint64_t t = ptr == 8 ? 0x7f0000001000ull : 0xf0001000ull;
	assert_int_equal(leaksnap_snapshot_record_count(s), 2);
	assert_int_equal(leaksnap_snapshot_allocation_count(s), 8);
	assert_int_equal(leaksnap_snapshot_records_bytes(s), 32 * 7 + 16);
	const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, 0);
	assert_int_equal(r->size, 32);
	assert_int_equal(r->count, 7);
	assert_false(r->zygote);
	assert_int_equal(r->frame_count, 2);
	assert_int_equal(r->frames[0], t + 1);
	assert_int_equal(r->frames[1], t + 2);
	r = leaksnap_snapshot_record(s, 1);
	assert_int_equal(r->size, 16);
	assert_int_equal(r->count, 1);
	assert_true(r->zygote);
	assert_int_equal(r->frame_count, 1);
	assert_int_equal(r->frames[0], t + 3);
	assert_null(leaksnap_snapshot_record(s, 2));
	assert_int_equal(leaksnap_snapshot_pointer_size(s), ptr);
	assert_int_equal(leaksnap_snapshot_backtrace_size(s), 3);
}

static void test_leaksnap_all_layouts(void **state)
{
	(void)state;
	for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
		for (int be = 0; be <= 1; be++) {
			struct bytes b;
			struct leaksnap_error err;
			leaksnap_file(&b, ptr, be, "abi=arm64\nbuild_id=ab12 /a b/c.so\n", 0);
			struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "mem",
										    NULL, &err);
			assert_non_null(s);
			assert_int_equal(err.code, LEAKSNAP_OK);
			check_sample(s, ptr);
			assert_int_equal(leaksnap_snapshot_format(s),
					 LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP);
			assert_string_equal(leaksnap_snapshot_version(s), "1");
			assert_int_equal(leaksnap_snapshot_big_endian(s), be);
			assert_int_equal(leaksnap_snapshot_pid(s), 77);
			uint64_t t;
			assert_true(leaksnap_snapshot_time_ns(s, &t));
			assert_int_equal(t, 1000000000ull * 1700000000ull);
			assert_int_equal(leaksnap_snapshot_count_mode(s),
					 LEAKSNAP_SNAPSHOT_COUNTS_REAL);
			assert_int_equal(leaksnap_snapshot_meta_count(s), 2);
			assert_string_equal(leaksnap_snapshot_meta_get(s, "build_id"),
					    "ab12 /a b/c.so");
			assert_null(leaksnap_snapshot_meta_get(s, "nope"));
			size_t len;
			unsigned long line;
			uint64_t off;
			const char *maps = leaksnap_snapshot_maps(s, &len, &line, &off);
			assert_int_equal(len, strlen(maps64));
			assert_memory_equal(maps, maps64, len);
			assert_int_equal(line, 0);
			assert_int_equal(off, LEAKSNAP_SNAPSHOT_HEADER_SIZE + 3 * ptr * 5);
			assert_int_equal(leaksnap_snapshot_warning_count(s), 0);
			leaksnap_snapshot_close(s);
		}
	}
}

static void test_leaksnap_android7_flag(void **state)
{
	(void)state;
	struct bytes b;
	leaksnap_file(&b, 8, 0, "", LEAKSNAP_SNAPSHOT_FLAG_COUNT_IS_FRAMES);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "mem", NULL, NULL);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_count_mode(s), LEAKSNAP_SNAPSHOT_COUNTS_FLAGGED);
	assert_int_equal(leaksnap_snapshot_record_count(s), 2);
	assert_int_equal(leaksnap_snapshot_record(s, 0)->count, 2); /* two records, one each */
	assert_int_equal(leaksnap_snapshot_allocation_count(s), 3);
	leaksnap_snapshot_close(s);
}

/* Every proper prefix of a valid LEAKSNAP file is rejected with an offset,
 * and never crashes. */
static void test_leaksnap_every_truncation(void **state)
{
	(void)state;
	struct bytes b;
	leaksnap_file(&b, 8, 0, "abi=x86_64\n", 0);
	for (size_t len = 0; len < b.n; len++) {
		struct leaksnap_error err;
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, b.p, len);
		struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(copy, len, "cut", NULL,
									    &err);
		assert_null(s);
		assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
		assert_string_equal(err.source, "cut");
		if (len > 0 && len < LEAKSNAP_SNAPSHOT_HEADER_SIZE) {
			assert_true(err.has_offset);
			assert_int_equal(err.offset, len);
			assert_non_null(strstr(err.text, "truncated header"));
		} else if (len >= LEAKSNAP_SNAPSHOT_HEADER_SIZE) {
			assert_true(err.has_offset);
			assert_true(err.offset == 48 || err.offset == 56 || err.offset == 20);
		}
		free(copy);
	}
}

static void test_header_huge_claim_rejected(void **state)
{
	(void)state;
	struct bytes b;
	leaksnap_file(&b, 8, 0, "", 0);
	/* records_size = 2^56 records of 40 bytes: refused before allocating. */
	uint64_t huge = 40ull << 56;
	for (int i = 0; i < 8; i++)
		b.p[48 + i] = (uint8_t)(huge >> (8 * i));
	struct leaksnap_error err;
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "huge", NULL, &err));
	assert_int_equal(err.offset, 48);
	assert_non_null(strstr(err.text, "runs past the end"));
}

static void test_header_roundtrip(void **state)
{
	(void)state;
	struct leaksnap_snapshot_header h = {
		1, 4, 1, 256, 0xfffffffe, 12, 0x1122334455667788ull, 99, 4 * 258, 4 * 258 * 2, 5};
	uint8_t buf[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
	leaksnap_snapshot_header_encode(&h, buf);
	assert_memory_equal(buf, "LEAKSNAP\x01\x00\x04\x01\x00\x01\x00\x00", 16);
	struct leaksnap_snapshot_header d;
	struct leaksnap_error err;
	uint64_t size = LEAKSNAP_SNAPSHOT_HEADER_SIZE + h.records_size + h.maps_size + h.meta_size;
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size, &d, "h", &err), 0);
	assert_memory_equal(&d, &h, sizeof(h));
	/* One byte too many is trailing data, one too few runs past the end. */
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size + 1, &d, "h", &err),
			 -1);
	assert_non_null(strstr(err.text, "1 trailing bytes"));
	assert_int_equal(err.offset, size);
	assert_int_equal(leaksnap_snapshot_header_decode(buf, sizeof(buf), size - 1, &d, "h", &err),
			 -1);
	assert_int_equal(err.offset, 20);
}

/* Options carry their size: an absurd one, or fields this library does
 * not know set by a newer caller, are refused; unknown fields left zero
 * are fine; fields an older caller did not know stay zero. */
static void test_opts_size(void **state)
{
	(void)state;
	struct bytes b = {.n = 0};
	records(&b, 4, 0, 0);
	struct leaksnap_error err;
	struct leaksnap_snapshot_open_opts zero = {.pointer_size = 4, .frames = 3};
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &zero, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.source, "leaksnap_snapshot_open_opts");
	assert_string_equal(err.text, "unknown size 0 (not built against this library?)");

	struct {
		struct leaksnap_snapshot_open_opts o;
		uint64_t newer_field;
	} newer = {{.sz = sizeof(newer), .pointer_size = 4, .frames = 3}, 0};
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "raw", &newer.o,
								    &err);
	assert_non_null(s);
	leaksnap_snapshot_close(s);
	newer.newer_field = 1;
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &newer.o, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_non_null(strstr(err.text, "sets fields this library does not know"));

	/* an older caller knew only the size and the pointer size: the frames
	 * it could not set are 0, "not given" (a raw buffer then needs them) */
	struct leaksnap_snapshot_open_opts older = {
		.sz = offsetof(struct leaksnap_snapshot_open_opts, frames),
		.pointer_size = 4,
		.frames = 3};
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &older, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.text, "opts.frames must be 1..256");
}

static void test_raw_and_detection(void **state)
{
	(void)state;
	struct bytes b = {.n = 0};
	records(&b, 4, 0, 0);
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .pointer_size = 4, .frames = 3);
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "raw", &o, &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_format(s), LEAKSNAP_SNAPSHOT_FORMAT_BIONIC_RAW);
	assert_null(leaksnap_snapshot_version(s));
	assert_int_equal(leaksnap_snapshot_pid(s), -1);
	assert_false(leaksnap_snapshot_time_ns(s, NULL));
	check_sample(s, 4);
	assert_int_equal(leaksnap_snapshot_count_mode(s), LEAKSNAP_SNAPSHOT_COUNTS_REAL);
	leaksnap_snapshot_close(s);

	/* Counts equal to each record's frame count: Android 7, detected. */
	b.n = 0;
	records(&b, 4, 0, 1);
	s = leaksnap_snapshot_open_memory(b.p, b.n, "raw", &o, &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_count_mode(s), LEAKSNAP_SNAPSHOT_COUNTS_DETECTED);
	assert_int_equal(leaksnap_snapshot_allocation_count(s), 3);
	leaksnap_snapshot_close(s);

	/* All counts 1 with one-frame stacks: not evidence of the bug. */
	b.n = 0;
	put(&b, 8, 4, 0), put(&b, 1, 4, 0), put(&b, 0x1000, 4, 0), put(&b, 0, 4, 0),
		put(&b, 0, 4, 0);
	s = leaksnap_snapshot_open_memory(b.p, b.n, "raw", &o, &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_count_mode(s), LEAKSNAP_SNAPSHOT_COUNTS_REAL);
	leaksnap_snapshot_close(s);

	/* Forced. */
	o.count_is_frames = true;
	b.n = 0;
	records(&b, 4, 0, 0);
	s = leaksnap_snapshot_open_memory(b.p, b.n, "raw", &o, &err);
	assert_int_equal(leaksnap_snapshot_count_mode(s), LEAKSNAP_SNAPSHOT_COUNTS_FORCED);
	assert_int_equal(leaksnap_snapshot_allocation_count(s), 3);
	leaksnap_snapshot_close(s);

	/* Without options a raw buffer is not guessed at.  The library's texts
	 * name the options as API fields, never as a tool's flags. */
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_UNKNOWN_FORMAT);
	assert_non_null(strstr(err.text, "a raw bionic buffer needs opts.pointer_size and "
				       "opts.frames"));
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, bad, .pointer_size = 5, .frames = 3);
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &bad, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.text, "opts.pointer_size must be 4 or 8");
	bad = (struct leaksnap_snapshot_open_opts){
		.sz = sizeof(struct leaksnap_snapshot_open_opts), .pointer_size = 4, .frames = 300};
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &bad, &err));
	assert_string_equal(err.text, "opts.frames must be 1..256");
	bad.frames = 4;
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &bad, &err));
	assert_string_equal(err.text, "size 60 is not a multiple of the record size 24 "
				      "(pointer size 4, 4 frames): truncated or wrong opts.frames");

	/* A real count of 0 in record 3: the error gives its count field's
	 * byte offset (2 records of 4 x 5 bytes, then the size field). */
	o.count_is_frames = false;
	b.n = 0;
	records(&b, 4, 0, 0);
	b.p[2 * 20 + 4] = 0;
	assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "raw", &o, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_true(err.has_offset);
	assert_int_equal(err.offset, 2 * 20 + 4);
	assert_string_equal(err.text, "record 3 has an allocation count of 0");
}

static const char text_v12[] =
	"Android Native Heap Dump v1.2\n"
	"\n"
	"Build fingerprint: 'fp/x:1'\n"
	"\n"
	"Total memory: 240\n"
	"Allocation records: 3\n"
	"Backtrace size: 3\n"
	"\n"
	"z 0  sz       32  num    5  bt 7f0000001001 7f0000001002\n"
	"  bt_info {\"/system/lib64/libfoo.so\" 1 \"f\" 0}\n"
	"z 0  sz       32  num    2  bt 7f0000001001 7f0000001002\n"
	"z 1  sz       16  num    1  bt 7f0000001003\n"
	"MAPS\n"
	"7f0000001000-7f0000003000 r-xp 00001000 fd:01 1234 /system/lib64/libfoo.so\n"
	"END\n";

static void test_text_reader(void **state)
{
	(void)state;
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(text_v12, strlen(text_v12),
								    "t.txt", NULL, &err);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_format(s), LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT);
	assert_string_equal(leaksnap_snapshot_version(s), "1.2");
	check_sample(s, 8);
	assert_string_equal(leaksnap_snapshot_meta_get(s, "build_fingerprint"), "fp/x:1");
	size_t len;
	unsigned long line;
	uint64_t off;
	const char *maps = leaksnap_snapshot_maps(s, &len, &line, &off);
	assert_int_equal(line, 14);
	assert_int_equal(len, strlen(maps64));
	assert_memory_equal(maps, maps64, len);
	assert_int_equal(off, strstr(text_v12, "7f0000001000-") - text_v12);
	/* "Allocation records: 3" matches the three record lines. */
	assert_int_equal(leaksnap_snapshot_warning_count(s), 0);
	leaksnap_snapshot_close(s);
}

/* Every prefix of a text dump fails cleanly, except the one that only lacks
 * the final newline. */
static void test_text_every_truncation(void **state)
{
	(void)state;
	size_t n = strlen(text_v12);
	for (size_t len = 0; len < n; len++) {
		struct leaksnap_error err;
		char *copy = malloc(len ? len : 1);
		memcpy(copy, text_v12, len);
		struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(copy, len, "cut.txt",
									    NULL, &err);
		if (len == n - 1) {
			assert_non_null(s);
		} else {
			assert_null(s);
			assert_true(err.code == LEAKSNAP_ERR_FORMAT ||
				    err.code == LEAKSNAP_ERR_UNKNOWN_FORMAT ||
				    err.code == LEAKSNAP_ERR_VERSION);
		}
		leaksnap_snapshot_close(s);
		free(copy);
	}
}

static void test_nhgt(void **state)
{
	(void)state;
	for (int old = 0; old <= 1; old++) {
		unsigned ptr = old ? 4 : 8;
		struct bytes recs = {.n = 0}, b = {.n = 0};
		records(&recs, ptr, 0, 0);
		const char *maps =
			old ? "f0001000-f0003000 r-xp 00001000 b3:01 9 /system/lib/libfoo.so\n"
			    : maps64;
		if (!old) {
			put(&b, 0x812345dd, 4, 0);
			put(&b, 2, 2, 0);
			put(&b, ptr, 2, 0);
		}
		put(&b, strlen(maps), ptr, 0);
		put(&b, recs.n, ptr, 0);
		put(&b, ptr * 5, ptr, 0);
		put(&b, 240, ptr, 0);
		put(&b, 3, ptr, 0);
		put_s(&b, maps);
		memcpy(b.p + b.n, recs.p, recs.n);
		b.n += recs.n;
		struct leaksnap_error err;
		struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "n", NULL,
									    &err);
		assert_non_null(s);
		assert_int_equal(leaksnap_snapshot_format(s), LEAKSNAP_SNAPSHOT_FORMAT_DDMS_NHGT);
		if (old)
			assert_null(leaksnap_snapshot_version(s));
		else
			assert_string_equal(leaksnap_snapshot_version(s), "2");
		check_sample(s, ptr);
		assert_int_equal(leaksnap_snapshot_total_memory(s), 240);
		leaksnap_snapshot_close(s);
		for (size_t len = 0; len < b.n; len++) {
			s = leaksnap_snapshot_open_memory(b.p, len, "n", NULL, &err);
			assert_null(s);
		}
	}
}

static void test_top_ranking(void **state)
{
	(void)state;
	/* Totals: 100x1=100, 10x10=100 (tie, bigger size first), 50x3=150, 1x1. */
	struct bytes b = {.n = 0};
	uint64_t rec[4][2] = {{100, 1}, {10, 10}, {50, 3}, {1, 1}};
	for (int i = 0; i < 4; i++) {
		put(&b, rec[i][0], 8, 0), put(&b, rec[i][1], 8, 0);
		put(&b, 0x1000 + (uint64_t)i, 8, 0);
	}
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .pointer_size = 8, .frames = 1);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "r", &o, NULL);
	assert_non_null(s);
	size_t top[4];
	assert_int_equal(leaksnap_snapshot_records_top(s, 10, top), 4);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 0);
	assert_int_equal(top[2], 1);
	assert_int_equal(top[3], 3);
	assert_int_equal(leaksnap_snapshot_records_top(s, 2, top), 2);
	assert_int_equal(top[0], 2);
	assert_int_equal(top[1], 0);
	assert_int_equal(leaksnap_snapshot_records_top(s, 0, top), 0);
	leaksnap_snapshot_close(s);
}

/* A sampled snapshot (sample_interval=64): 32 x 7 and 16 x 1 sampled stand
 * for 7 / (1 - e^-0.5) and 1 / (1 - e^-0.25) blocks. */
static void test_sampled_estimates(void **state)
{
	(void)state;
	assert_true(leaksnap_sample_weight(32, 0) == 1.0);
	assert_true(leaksnap_sample_weight(0, 64) == 1.0);
	assert_true(leaksnap_sample_weight(64, 64) == 1.0);
	assert_true(leaksnap_sample_weight(1 << 20, 64) == 1.0);
	assert_true(fabs(leaksnap_sample_weight(32, 64) - 2.541494) < 1e-6);
	/* tiny blocks: about interval / size, without cancellation */
	assert_true(fabs(leaksnap_sample_weight(1, 1 << 30) - 1073741824.5) < 1e-3);
	/* one record's estimate, rounded: 3 x 32 at 64 stand for 243.98 bytes
	 * in 7.62 blocks; at or over the interval, or unsampled, exact */
	uint64_t one_b = 0, one_c = 0;
	leaksnap_sample_estimate(32, 3, 64, &one_b, &one_c);
	assert_int_equal(one_b, 244);
	assert_int_equal(one_c, 8);
	leaksnap_sample_estimate(100, 3, 64, &one_b, &one_c);
	assert_int_equal(one_b, 300);
	assert_int_equal(one_c, 3);
	leaksnap_sample_estimate(32, 3, 0, &one_b, NULL);
	assert_int_equal(one_b, 96);
	struct bytes b;
	leaksnap_file(&b, 8, 0, "abi=x86_64\nsample_interval=64\n", 0);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.n, "mem", NULL, NULL);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_sample_interval(s), 64);
	/* the records keep the sampled counts */
	assert_int_equal(leaksnap_snapshot_allocation_count(s), 8);
	const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, 0);
	uint64_t eb, ec, eub, euc;
	leaksnap_snapshot_record_estimate(s, r, &eb, &ec, &eub, &euc);
	assert_int_equal(ec, 18);  /* 17.79 */
	assert_int_equal(eb, 569); /* 569.3 */
	assert_int_equal(eub, 0);
	assert_int_equal(euc, 0);
	leaksnap_snapshot_record_estimate(s, leaksnap_snapshot_record(s, 1), &eb, &ec, NULL, NULL);
	assert_int_equal(ec, 5);  /* 4.52 */
	assert_int_equal(eb, 72); /* 72.3 */
	leaksnap_snapshot_estimate(s, &eb, &ec, &eub, &euc);
	/* the sum of the records' rounded estimates (569 + 72, 18 + 5), as
	 * leakdiff sums them: not 569.3 + 72.3 and 17.79 + 4.52 rounded once */
	assert_int_equal(eb, 641);
	assert_int_equal(ec, 23);
	assert_int_equal(eub, 0);
	/* estimates of 2^63 bytes and more (past what llround takes): exact
	 * to 2^64, then UINT64_MAX */
	struct leaksnap_snapshot_record huge = {.size = 1ULL << 31, .count = 1ULL << 32};
	leaksnap_snapshot_record_estimate(s, &huge, &eb, &ec, NULL, NULL);
	assert_true(eb == 1ULL << 63);
	assert_true(ec == 1ULL << 32);
	huge.size = 3ULL << 30;
	leaksnap_snapshot_record_estimate(s, &huge, &eb, NULL, NULL, NULL);
	assert_true(eb == 3ULL << 62);
	huge.count = 1ULL << 33;
	leaksnap_snapshot_record_estimate(s, &huge, &eb, NULL, NULL, NULL);
	assert_true(eb == UINT64_MAX);
	leaksnap_snapshot_close(s);
	/* not sampled: the estimates are the records' own figures */
	leaksnap_file(&b, 8, 0, "abi=x86_64\n", 0);
	s = leaksnap_snapshot_open_memory(b.p, b.n, "mem", NULL, NULL);
	assert_non_null(s);
	assert_int_equal(leaksnap_snapshot_sample_interval(s), 0);
	leaksnap_snapshot_estimate(s, &eb, &ec, NULL, NULL);
	assert_int_equal(eb, 32 * 7 + 16);
	assert_int_equal(ec, 8);
	leaksnap_snapshot_close(s);
	/* an interval that is no number of bytes: an error naming it */
	static const char *const bad[] = {"0", "4k", "-1", "", "1099511627777", " 64"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char meta[64];
		snprintf(meta, sizeof(meta), "sample_interval=%s\n", bad[i]);
		leaksnap_file(&b, 8, 0, meta, 0);
		struct leaksnap_error err = {0};
		assert_null(leaksnap_snapshot_open_memory(b.p, b.n, "mem", NULL, &err));
		assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
		assert_non_null(strstr(err.text, "sample_interval="));
	}
}

static void test_save_roundtrip_and_no_overwrite(void **state)
{
	(void)state;
	char dir[] = "/tmp/leaksnap-unit.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], link_path[256];
	snprintf(path, sizeof(path), "%s/out.dump", dir);
	snprintf(link_path, sizeof(link_path), "%s/link.dump", dir);

	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(text_v12, strlen(text_v12),
								    "t.txt", NULL, &err);
	assert_non_null(s);
	LEAKSNAP_OPTS(leaksnap_snapshot_save_opts, so, .big_endian = true);
	assert_int_equal(leaksnap_snapshot_save(s, path, &so, &err), 0);
	struct leaksnap_snapshot *r = leaksnap_snapshot_open(path, NULL, &err);
	assert_non_null(r);
	check_sample(r, 8);
	assert_true(leaksnap_snapshot_big_endian(r));
	assert_string_equal(leaksnap_snapshot_meta_get(r, "build_fingerprint"), "fp/x:1");
	assert_string_equal(leaksnap_snapshot_meta_get(r, "source_format"), "android-text 1.2");
	size_t a, c;
	const char *ma = leaksnap_snapshot_maps(s, &a, NULL, NULL),
		   *mc = leaksnap_snapshot_maps(r, &c, NULL, NULL);
	assert_int_equal(a, c);
	assert_memory_equal(ma, mc, a);
	leaksnap_snapshot_close(r);

	/* Never overwrite: an existing file or a symlink at the target. */
	struct stat before, after;
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(leaksnap_snapshot_save(s, path, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_EXISTS);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_size, after.st_size);
	assert_int_equal(symlink("/nonexistent-target", link_path), 0);
	assert_int_equal(leaksnap_snapshot_save(s, link_path, NULL, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_EXISTS);
	/* No temporary files are left behind. */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 2", dir);
	assert_int_equal(system(cmd), 0);
	leaksnap_snapshot_close(s);
	unlink(path);
	unlink(link_path);
	rmdir(dir);
}

static void test_open_errors(void **state)
{
	(void)state;
	struct leaksnap_error err;
	assert_null(leaksnap_snapshot_open("/nonexistent/x.dump", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_string_equal(err.source, "/nonexistent/x.dump");
	assert_string_equal(err.text, strerror(ENOENT));
	assert_null(leaksnap_snapshot_open("/tmp", NULL, &err));
	assert_string_equal(err.text, "is a directory");
	char buf[600];
	leaksnap_error_format(&err, buf, sizeof(buf));
	assert_string_equal(buf, "/tmp: is a directory");
	assert_null(leaksnap_snapshot_open_memory("", 0, "e", NULL, &err));
	assert_string_equal(err.text, "empty file");
	leaksnap_snapshot_close(NULL);
	assert_string_equal(leaksnap_code_string(LEAKSNAP_ERR_FORMAT), "malformed input");
	assert_string_equal(leaksnap_code_string(-1), "unknown error");
}

/* A /proc/PID/maps file given as a snapshot is told apart from an unknown
 * format, in memory and through a pipe (probed on its first bytes), even
 * with the raw-buffer options; what only looks like one at first is not. */
static void test_maps_file_detected(void **state)
{
	(void)state;
	static const char maps[] =
		"55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1311008                    /usr/bin/cat\n"
		"7ffd4a1f0000-7ffd4a211000 rw-p 00000000 00:00 0                          [stack]\n";
	struct leaksnap_error err;
	assert_null(leaksnap_snapshot_open_memory(maps, sizeof(maps) - 1, "m.maps", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_MAPS_FILE);
	assert_string_equal(err.source, "m.maps");
	assert_string_equal(err.text, "a /proc/PID/maps file, not a heap snapshot");
	/* one short line with no path */
	static const char one[] = "1000-2000 ---p 00000000 00:00 0\n";
	assert_null(leaksnap_snapshot_open_memory(one, sizeof(one) - 1, "one", NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_MAPS_FILE);
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, raw, .pointer_size = 8, .frames = 4);
	assert_null(leaksnap_snapshot_open_memory(maps, sizeof(maps) - 1, "m.maps", &raw, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_MAPS_FILE);
	/* not maps: no permissions, or hex where the inode's decimal goes */
	static const char *const not_maps[] = {
		"1000-2000 rwzp 00000000 00:00 0\n",
		"1000-2000 r-xp 00000000 00:00 1f\n",
		"1000 2000 r-xp 00000000 00:00 0\n",
	};
	for (size_t i = 0; i < 3; i++) {
		assert_null(leaksnap_snapshot_open_memory(not_maps[i], strlen(not_maps[i]), "x",
							  NULL, &err));
		assert_int_equal(err.code, LEAKSNAP_ERR_UNKNOWN_FORMAT);
	}
	/* a stream: the first 64 bytes decide */
	char path[] = "/tmp/leaksnap-maps-fifo.XXXXXX";
	assert_non_null(mkdtemp(path));
	char fifo[sizeof(path) + 8];
	snprintf(fifo, sizeof(fifo), "%s/fifo", path);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(fifo, "w");
		for (int i = 0; f && i < 2000; i++) /* more than the first read */
			fputs(maps, f);
		_exit(f && fclose(f) == 0 ? 0 : 1);
	}
	assert_null(leaksnap_snapshot_open(fifo, NULL, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_MAPS_FILE);
	assert_string_equal(err.source, fifo);
	int st;
	waitpid(pid, &st, 0);
	unlink(fifo);
	rmdir(path);
	assert_string_equal(leaksnap_code_string(LEAKSNAP_ERR_MAPS_FILE),
			    "a maps file, not a snapshot");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaksnap_all_layouts),
		cmocka_unit_test(test_leaksnap_android7_flag),
		cmocka_unit_test(test_leaksnap_every_truncation),
		cmocka_unit_test(test_header_huge_claim_rejected),
		cmocka_unit_test(test_header_roundtrip),
		cmocka_unit_test(test_raw_and_detection),
		cmocka_unit_test(test_text_reader),
		cmocka_unit_test(test_text_every_truncation),
		cmocka_unit_test(test_nhgt),
		cmocka_unit_test(test_top_ranking),
		cmocka_unit_test(test_sampled_estimates),
		cmocka_unit_test(test_save_roundtrip_and_no_overwrite),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_maps_file_detected),
		cmocka_unit_test(test_opts_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
