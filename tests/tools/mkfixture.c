/* mkfixture: write the binary test fixtures into a directory.
 *
 * An encoder written independently of libsnapshot (it includes none of its
 * headers), so the readers are checked against bytes laid out by hand from
 * docs/format.md rather than against their own writer.
 *
 * Every fixture carries the same logical snapshot ("sample"), whose expected
 * values the golden files and unit tests assert:
 *   records (input order)                          after merging
 *   1. 4096 x 3  app     [T+0x234, T+0x1345, B+0x10]   4096 x 4 = 16384
 *   2.  100 x 2  zygote  [T+0x300]                      100 x 2 =   200
 *   3. 4096 x 1  app     same stack as 1 (merged)
 *   4.   24 x 10 app     [0x5000a0 unmapped, T+0x234]    24 x 10 =  240
 *   5.   64 x 1  app     no frames                       64 x 1  =   64
 *   total 16888 bytes, 17 allocations, 4 records; backtrace size 4.
 * T = base+0x1000 (libfoo text), B = base+0x10000 (libbar); base is
 * 0x7f0000000000 for 8-byte pointers and 0xf0000000 for 4-byte ones.
 * The reach*.dump fixtures add a reachability section (see
 * write_reach_fixtures); the reach-diff*.dump ones are a series for
 * leakdiff (see write_reach_diff_fixtures); the hist-*.dump ones are runs
 * of three builds for leaksnap history and leakdiff --db (see
 * write_history_fixtures).
 *
 * Usage: mkfixture OUTDIR
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (b->p == NULL) {
			perror("mkfixture");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_uint(struct buf *b, uint64_t v, unsigned width, int big_endian)
{
	uint8_t tmp[8];
	for (unsigned i = 0; i < width; i++) {
		unsigned shift = 8 * (big_endian ? width - 1 - i : i);
		tmp[i] = (uint8_t)(v >> shift);
	}
	put(b, tmp, width);
}

static void put_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static const char *outdir;
static uint64_t fixture_total = 16888; /* the header's total_memory */

static void save(const char *name, const struct buf *b, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(b->p, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "mkfixture: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* The sample snapshot -------------------------------------------------------- */

#define BT 4
#define ZYGOTE ((uint64_t)1 << 31)

struct rec {
	uint64_t size, count;
	uint64_t pc[BT];
};

static void sample_records(uint64_t base, struct rec out[5])
{
	uint64_t t = base + 0x1000, bar = base + 0x10000;
	struct rec r[5] = {
		{4096, 3, {t + 0x234, t + 0x1345, bar + 0x10, 0}},
		{100 | ZYGOTE, 2, {t + 0x300, 0, 0, 0}},
		{4096, 1, {t + 0x234, t + 0x1345, bar + 0x10, 0}},
		{24, 10, {0x5000a0, t + 0x234, 0, 0}},
		{64, 1, {0, 0, 0, 0}},
	};
	memcpy(out, r, sizeof(r));
}

static void sample_maps(struct buf *b, int wide)
{
	if (wide)
		put_str(b,
			"7f0000000000-7f0000001000 r--p 00000000 fd:01 1234                       "
			"/system/lib64/libfoo.so\n"
			"7f0000001000-7f0000003000 r-xp 00001000 fd:01 1234                       "
			"/system/lib64/libfoo.so\n"
			"7f0000003000-7f0000004000 rw-p 00003000 fd:01 1234                       "
			"/system/lib64/libfoo.so\n"
			"7f0000010000-7f0000011000 r-xp 00000000 fd:01 99                         "
			"/data/app/my app/lib/arm64/libbar.so\n"
			"7f0000020000-7f0000021000 rw-p 00000000 00:00 0                          "
			"[anon:libc_malloc]\n");
	else
		put_str(b,
			"f0000000-f0001000 r--p 00000000 b3:17 1234       /system/lib/libfoo.so\n"
			"f0001000-f0003000 r-xp 00001000 b3:17 1234       /system/lib/libfoo.so\n"
			"f0003000-f0004000 rw-p 00003000 b3:17 1234       /system/lib/libfoo.so\n"
			"f0010000-f0011000 r-xp 00000000 b3:17 99         "
			"/data/app/my app/lib/arm/libbar.so\n"
			"f0020000-f0021000 rw-p 00000000 00:00 0          [anon:libc_malloc]\n");
}

static const char sample_meta[] = "abi=x86_64\n"
				  "cmdline=/system/bin/app --flag\n"
				  "exe=/system/bin/app\n"
				  "build_id=0123abcd /system/lib64/libfoo.so\n"
				  "unwinder=fp\n"
				  "trigger=signal\n";

static void record_area(struct buf *b, unsigned ptr, int be, const struct rec *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_uint(b, r[i].size, ptr, be);
		put_uint(b, r[i].count, ptr, be);
		for (int f = 0; f < BT; f++)
			put_uint(b, r[i].pc[f], ptr, be);
	}
}

struct hdr {
	const char *magic;
	uint16_t version;
	uint8_t ptr, flags;
	uint32_t bt, pid, meta_size;
	uint64_t time_ns, total, info, records_size, maps_size;
};

static void header(struct buf *b, const struct hdr *h)
{
	put(b, h->magic, 8);
	put_uint(b, h->version, 2, 0);
	put_uint(b, h->ptr, 1, 0);
	put_uint(b, h->flags, 1, 0);
	put_uint(b, h->bt, 4, 0);
	put_uint(b, h->pid, 4, 0);
	put_uint(b, h->meta_size, 4, 0);
	put_uint(b, h->time_ns, 8, 0);
	put_uint(b, h->total, 8, 0);
	put_uint(b, h->info, 8, 0);
	put_uint(b, h->records_size, 8, 0);
	put_uint(b, h->maps_size, 8, 0);
}

/* Build a LEAKSNAP file; @tweak may alter the header before it is written.
 * With @reach, flag bit 2 is set and @nreach u32 unreachable counts follow
 * the metadata in the records' byte order (docs/format.md). */
static struct buf leaksnap_reach(unsigned ptr, int be, const struct rec *r, size_t n,
				 void (*tweak)(struct hdr *), const char *meta,
				 const uint32_t *reach, size_t nreach)
{
	struct buf recs = {0}, maps = {0}, out = {0};
	record_area(&recs, ptr, be, r, n);
	sample_maps(&maps, ptr == 8);
	struct hdr h = {
		.magic = "LEAKSNAP",
		.version = 1,
		.ptr = (uint8_t)ptr,
		.flags = (uint8_t)((be ? 1 : 0) | (reach ? 4 : 0)),
		.bt = BT,
		.pid = 4242,
		.meta_size = (uint32_t)strlen(meta),
		.time_ns = 1763720553123456789ull,
		.total = fixture_total,
		.info = ptr * (2 + BT),
		.records_size = recs.len,
		.maps_size = maps.len,
	};
	if (tweak)
		tweak(&h);
	header(&out, &h);
	put(&out, recs.p, recs.len);
	put(&out, maps.p, maps.len);
	put_str(&out, meta);
	for (size_t i = 0; reach && i < nreach; i++)
		put_uint(&out, reach[i], 4, be);
	free(recs.p);
	free(maps.p);
	return out;
}

static struct buf leaksnap(unsigned ptr, int be, const struct rec *r, size_t n,
			   void (*tweak)(struct hdr *), const char *meta)
{
	return leaksnap_reach(ptr, be, r, n, tweak, meta, NULL, 0);
}

static void emit(const char *name, struct buf b)
{
	save(name, &b, b.len);
	free(b.p);
}

/* Header tweaks for the malformed corpus. */
static void t_version(struct hdr *h) { h->version = 2; }
static void t_ptr(struct hdr *h) { h->ptr = 5; }
static void t_flags(struct hdr *h) { h->flags = 0x80; }
static void t_bt0(struct hdr *h) { h->bt = 0; }
static void t_bt257(struct hdr *h) { h->bt = 257; }
static void t_info(struct hdr *h) { h->info = 49; }
static void t_recmul(struct hdr *h) { h->records_size -= 8; }
static void t_rec_huge(struct hdr *h) { h->records_size = h->info * ((uint64_t)1 << 56); }
static void t_maps_huge(struct hdr *h) { h->maps_size = (uint64_t)1 << 62; }
static void t_meta_huge(struct hdr *h) { h->meta_size = 0xffffffffu; }
static void t_total(struct hdr *h) { h->total = 99999; }
static void t_android7(struct hdr *h) { h->flags |= 2; }

/* Reachability (flag bit 2): the sample with these unreachable counts,
 * record by record: after merging, 4096 x 3 and 24 x 4 unreachable, so
 * 12384 bytes in 7 allocations. */
static const uint32_t sample_reach[5] = {2, 0, 1, 4, 0};
static const char reach_meta[] = "abi=x86_64\n"
				 "reachability=threads 3, fork\n"
				 "reachability_pause_us=412\n"
				 "reachability_scan_us=1873\n";
static void t_reach_android7(struct hdr *h) { h->flags |= 2; }

static void write_reach_fixtures(const struct rec *r64, const struct rec *r32)
{
	emit("reach64le.dump", leaksnap_reach(8, 0, r64, 5, NULL, reach_meta, sample_reach, 5));
	emit("reach64be.dump", leaksnap_reach(8, 1, r64, 5, NULL, reach_meta, sample_reach, 5));
	emit("reach32le.dump", leaksnap_reach(4, 0, r32, 5, NULL, reach_meta, sample_reach, 5));
	emit("reach32be.dump", leaksnap_reach(4, 1, r32, 5, NULL, reach_meta, sample_reach, 5));
	/* none unreachable: the section is there, every count 0 */
	static const uint32_t zero[5];
	emit("reach-none.dump", leaksnap_reach(8, 0, r64, 5, NULL, reach_meta, zero, 5));
	/* record 4 has 10 allocations: 11 is one too many (u32 at 12 past
	 * the section's start) */
	uint32_t over[5] = {2, 0, 1, 11, 0};
	emit("reach-over-count.dump", leaksnap_reach(8, 0, r64, 5, NULL, reach_meta, over, 5));
	emit("reach-over-count-be32.dump",
	     leaksnap_reach(4, 1, r32, 5, NULL, reach_meta, over, 5));
	emit("reach-android7.dump",
	     leaksnap_reach(8, 0, r64, 5, t_reach_android7, reach_meta, sample_reach, 5));
	struct buf b = leaksnap_reach(8, 0, r64, 5, NULL, reach_meta, sample_reach, 5);
	save("reach-truncated.dump", &b, b.len - 3);
	put_str(&b, "xyzw");
	save("reach-oversized.dump", &b, b.len);
	free(b.p);
	/* a section where none belongs: bit 2 clear, 20 bytes after the metadata */
	b = leaksnap(8, 0, r64, 5, NULL, reach_meta);
	for (int i = 0; i < 5; i++)
		put_uint(&b, sample_reach[i], 4, 0);
	save("reach-unflagged.dump", &b, b.len);
	free(b.p);
}

/* A series of three snapshots for leakdiff (reach-diff1..3.dump, 8-byte
 * little-endian, the sample's maps), one record per group (by stack):
 *                                    counts      unreachable
 *   A  32 B  [T+0x100, T+0x200]      10 20 30     5 15 25   grows, definite
 *   B  1000  [T+0x300]                1  3  6     0  0  0   grows, reachable
 *   C  512   [B+0x10]                 2  2  2     1  1  1   flat: one-off leak
 *   D  64    [T+0x400]                5  5  5     0  0  0   flat, reachable
 *   E  100   [T+0x500]                1  4  3     0  0  2   stopped, definite
 *   F  200   [T+0x600]                1  3  2     0  0  0   stopped cache
 *   G  48    [T+0x700, B+0x20]        1  1  1     1  1  1   flat: one-off leak
 * Last snapshot: 1560 unreachable bytes in 29 allocations (C and G, in
 * libbar, hold 560 of them).  reach-diff0.dump is snapshot 1 without the
 * reachability section. */
static void write_reach_diff_fixtures(void)
{
	const uint64_t t = 0x7f0000001000ull, bar = 0x7f0000010000ull;
	static const uint64_t size[7] = {32, 1000, 512, 64, 100, 200, 48};
	static const uint64_t count[3][7] = {
		{10, 1, 2, 5, 1, 1, 1}, {20, 3, 2, 5, 4, 3, 1}, {30, 6, 2, 5, 3, 2, 1}};
	static const uint32_t unreach[3][7] = {
		{5, 0, 1, 0, 0, 0, 1}, {15, 0, 1, 0, 0, 0, 1}, {25, 0, 1, 0, 2, 0, 1}};
	const uint64_t pcs[7][BT] = {
		{t + 0x100, t + 0x200}, {t + 0x300}, {bar + 0x10}, {t + 0x400},
		{t + 0x500},            {t + 0x600}, {t + 0x700, bar + 0x20},
	};
	for (int k = 0; k < 3; k++) {
		struct rec r[7];
		fixture_total = 0;
		for (int i = 0; i < 7; i++) {
			r[i].size = size[i];
			r[i].count = count[k][i];
			memcpy(r[i].pc, pcs[i], sizeof(r[i].pc));
			fixture_total += size[i] * count[k][i];
		}
		char name[32];
		snprintf(name, sizeof(name), "reach-diff%d.dump", k + 1);
		emit(name, leaksnap_reach(8, 0, r, 7, NULL, reach_meta, unreach[k], 7));
		if (k == 0)
			emit("reach-diff0.dump", leaksnap(8, 0, r, 7, NULL, "abi=x86_64\n"));
	}
	fixture_total = 16888;
}

/* Runs of three builds for leaksnap history and leakdiff --db: each run
 * two snapshots one second apart (pid and time of their own), 8-byte
 * little-endian, the sample's maps and metadata, four records:
 *   A  32 B  [T+0x100, T+0x200]   B  1000  [T+0x300]
 *   C  64    [B+0x10]             D  48    [T+0x400]
 *                     pid  first       last           unreachable (last)
 *   hist-1-*.dump     101  10 1 1 5    20 2 1 5       5 0 0 0
 *   hist-2a-*.dump    102  10 1 1 5    40 1 5 5       20 0 1 0
 *   hist-2b-*.dump    103  10 1 1 5    10 3 1 5       0 0 0 0
 *   hist-3-*.dump     104  10 1 1 5    30 1 1 6       10 0 0 0
 * (from T0 = 2025-11-21T10:22:33Z: +0 s, +100 s, +102 s, +200 s).
 * hists-*.dump: the same, sampled (sample_interval=4096, hists-2b's 65536),
 * pids 201 to 204. */
static uint32_t hist_pid;
static uint64_t hist_time;
static void t_hist(struct hdr *h)
{
	h->pid = hist_pid;
	h->time_ns = hist_time;
}

static void write_history_fixtures(void)
{
	const uint64_t t = 0x7f0000001000ull, bar = 0x7f0000010000ull;
	static const uint64_t size[4] = {32, 1000, 64, 48};
	static const struct {
		const char *name;
		uint32_t pid;
		uint64_t at;
		uint64_t count[2][4];
		uint32_t unreach[4];
	} runs[] = {
		{"hist-1", 101, 0, {{10, 1, 1, 5}, {20, 2, 1, 5}}, {5, 0, 0, 0}},
		{"hist-2a", 102, 100, {{10, 1, 1, 5}, {40, 1, 5, 5}}, {20, 0, 1, 0}},
		{"hist-2b", 103, 102, {{10, 1, 1, 5}, {10, 3, 1, 5}}, {0, 0, 0, 0}},
		{"hist-3", 104, 200, {{10, 1, 1, 5}, {30, 1, 1, 6}}, {10, 0, 0, 0}},
	};
	const uint64_t pcs[4][BT] = {{t + 0x100, t + 0x200}, {t + 0x300}, {bar + 0x10}, {t + 0x400}};
	static const uint32_t none[4];
	/* hists-*.dump: the same runs sampled (pids 201..204), every 4096 bytes
	 * but hists-2b's every 65536: a build of two intervals */
	for (int sampled = 0; sampled < 2; sampled++)
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++)
		for (int s = 0; s < 2; s++) {
			struct rec r[4];
			fixture_total = 0;
			for (int i = 0; i < 4; i++) {
				r[i].size = size[i];
				r[i].count = runs[k].count[s][i];
				memcpy(r[i].pc, pcs[i], sizeof(r[i].pc));
				fixture_total += size[i] * r[i].count;
			}
			hist_pid = runs[k].pid + (sampled ? 100 : 0);
			hist_time = 1763720553000000000ull + (runs[k].at + (uint64_t)s) * 1000000000ull;
			char name[32], meta[sizeof(sample_meta) + 32];
			snprintf(name, sizeof(name), "%s%s-%d.dump", sampled ? "hists" : "hist",
				 runs[k].name + 4, s + 1);
			snprintf(meta, sizeof(meta), "%s%s", sample_meta,
				 !sampled ? "" : k == 2 ? "sample_interval=65536\n"
							: "sample_interval=4096\n");
			emit(name, leaksnap_reach(8, 0, r, 4, t_hist, meta,
						  s ? runs[k].unreach : none, 4));
		}
	fixture_total = 16888;
}

/* Sampled snapshots (sample_interval=, docs/format.md): one process at
 * two moments, sampled every 4096 bytes.  Blocks of 64 bytes (t+0x100)
 * grow from 2 sampled to 10 (5 of them unreachable at the end), one of
 * 8192 (t+0x300) stands for itself, 3 of 512 (t+0x400) stay.
 * sampled-65536.dump is the second sampled at another interval,
 * sampled-bad.dump has an interval that is no number. */
static void write_sampled_fixtures(void)
{
	const uint64_t t = 0x7f0000001000ull;
	static const uint64_t size[3] = {64, 8192, 512};
	static const uint64_t count[2][3] = {{2, 1, 3}, {10, 1, 3}};
	static const uint32_t unreach[2][3] = {{0, 0, 1}, {5, 0, 1}};
	const uint64_t pcs[3][BT] = {{t + 0x100, t + 0x200}, {t + 0x300}, {t + 0x400}};
	static const char *const names[] = {"sampled1.dump", "sampled2.dump", "sampled-65536.dump",
					    "sampled-bad.dump"};
	static const char *const metas[] = {
		"abi=x86_64\nexe=/system/bin/app\ntrigger=signal\nsample_interval=4096\n"
		"reachability=test\n",
		"abi=x86_64\nexe=/system/bin/app\ntrigger=signal\nsample_interval=4096\n"
		"reachability=test\n",
		"abi=x86_64\nexe=/system/bin/app\ntrigger=signal\nsample_interval=65536\n"
		"reachability=test\n",
		"abi=x86_64\nsample_interval=4k\n"};
	for (int k = 0; k < 4; k++) {
		int at = k == 0 ? 0 : 1;
		struct rec r[3];
		fixture_total = 0;
		for (int i = 0; i < 3; i++) {
			r[i].size = size[i];
			r[i].count = count[at][i];
			memcpy(r[i].pc, pcs[i], sizeof(r[i].pc));
			fixture_total += size[i] * count[at][i];
		}
		emit(names[k], leaksnap_reach(8, 0, r, 3, NULL, metas[k], unreach[at], 3));
	}
	fixture_total = 16888;
}

static void write_leaksnap_fixtures(void)
{
	struct rec r64[5], r32[5];
	sample_records(0x7f0000000000ull, r64);
	sample_records(0xf0000000ull, r32);

	emit("sample64le.dump", leaksnap(8, 0, r64, 5, NULL, sample_meta));
	emit("sample64be.dump", leaksnap(8, 1, r64, 5, NULL, sample_meta));
	emit("sample32le.dump", leaksnap(4, 0, r32, 5, NULL, sample_meta));
	emit("sample32be.dump", leaksnap(4, 1, r32, 5, NULL, sample_meta));
	emit("total-mismatch.dump", leaksnap(8, 0, r64, 5, t_total, sample_meta));
	emit("no-maps-no-meta.dump", leaksnap(8, 0, r64, 5, NULL, ""));

	/* Android 7: the count field holds the number of frames. */
	struct rec n7[5];
	memcpy(n7, r64, sizeof(n7));
	n7[0].count = 3;
	n7[1].count = 1;
	n7[2].count = 3;
	n7[3].count = 2;
	n7[4].count = 0;
	emit("android7-flagged.dump", leaksnap(8, 0, n7, 5, t_android7, sample_meta));

	/* Malformed headers. */
	emit("bad-version.dump", leaksnap(8, 0, r64, 5, t_version, sample_meta));
	emit("bad-pointer-size.dump", leaksnap(8, 0, r64, 5, t_ptr, sample_meta));
	emit("bad-flags.dump", leaksnap(8, 0, r64, 5, t_flags, sample_meta));
	emit("bad-backtrace-0.dump", leaksnap(8, 0, r64, 5, t_bt0, sample_meta));
	emit("bad-backtrace-257.dump", leaksnap(8, 0, r64, 5, t_bt257, sample_meta));
	emit("bad-info-size.dump", leaksnap(8, 0, r64, 5, t_info, sample_meta));
	emit("records-not-multiple.dump", leaksnap(8, 0, r64, 5, t_recmul, sample_meta));
	emit("records-past-eof.dump", leaksnap(8, 0, r64, 5, t_rec_huge, sample_meta));
	emit("maps-past-eof.dump", leaksnap(8, 0, r64, 5, t_maps_huge, sample_meta));
	emit("meta-past-eof.dump", leaksnap(8, 0, r64, 5, t_meta_huge, sample_meta));
	emit("meta-no-newline.dump", leaksnap(8, 0, r64, 5, NULL, "abi=x86_64\nunwinder=fp"));
	emit("meta-no-equals.dump", leaksnap(8, 0, r64, 5, NULL, "abi=x86_64\njunk line\n"));

	struct buf b = leaksnap(8, 0, r64, 5, NULL, sample_meta);
	memcpy(b.p, "LEAKSNAX", 8);
	save("bad-magic.dump", &b, b.len);
	memcpy(b.p, "LEAKSNAP", 8);
	/* Truncated inside every header field, and inside the record area. */
	static const size_t cuts[] = {4, 8, 9, 10, 11, 12, 15, 16, 20, 24, 31, 32, 40, 48, 56, 63};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "truncated-at-%02zu.dump", cuts[i]);
		save(name, &b, cuts[i]);
	}
	save("truncated-records.dump", &b, 64 + 100);
	put_str(&b, "junk");
	save("trailing-bytes.dump", &b, b.len);
	free(b.p);

	write_reach_fixtures(r64, r32);
	write_reach_diff_fixtures();

	struct rec bad[5];
	memcpy(bad, r64, sizeof(bad));
	bad[3].count = 0;
	emit("zero-count.dump", leaksnap(8, 0, bad, 5, NULL, sample_meta));
	memcpy(bad, r64, sizeof(bad));
	bad[0].count = (uint64_t)1 << 62;
	emit("huge-count.dump", leaksnap(8, 0, bad, 5, NULL, sample_meta));
}

/* Raw bionic buffers and NHGT payloads ---------------------------------------- */

static void write_other_fixtures(void)
{
	struct rec r64[5], r32[5];
	sample_records(0x7f0000000000ull, r64);
	sample_records(0xf0000000ull, r32);
	struct buf b = {0};

	record_area(&b, 8, 0, r64, 5);
	save("sample64.raw", &b, b.len);
	save("raw-not-multiple.raw", &b, b.len - 3);
	b.len = 0;
	record_area(&b, 4, 0, r32, 5);
	save("sample32.raw", &b, b.len);
	b.len = 0;

	/* Android 7 raw buffer: counts equal the frame counts. */
	struct rec n7[5];
	memcpy(n7, r64, sizeof(n7));
	n7[0].count = 3, n7[1].count = 1, n7[2].count = 3, n7[3].count = 2, n7[4].count = 4;
	record_area(&b, 8, 0, n7, 5);
	save("android7.raw", &b, b.len);
	b.len = 0;

	/* NHGT with the 64-bit header (signature, version 2, pointer size). */
	for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
		struct buf maps = {0}, recs = {0};
		sample_maps(&maps, ptr == 8);
		record_area(&recs, ptr, 0, ptr == 8 ? r64 : r32, 5);
		put_uint(&b, 0x812345ddu, 4, 0);
		put_uint(&b, 2, 2, 0);
		put_uint(&b, ptr, 2, 0);
		put_uint(&b, maps.len, ptr, 0);
		put_uint(&b, recs.len, ptr, 0);
		put_uint(&b, ptr * (2 + BT), ptr, 0);
		put_uint(&b, 16888, ptr, 0);
		put_uint(&b, BT, ptr, 0);
		put(&b, maps.p, maps.len);
		put(&b, recs.p, recs.len);
		save(ptr == 8 ? "sample64.nhgt" : "sample32.nhgt", &b, b.len);
		if (ptr == 8) {
			save("nhgt-truncated-header.nhgt", &b, 30);
			save("nhgt-truncated-records.nhgt", &b, b.len - 10);
			put_str(&b, "xx");
			save("nhgt-trailing.nhgt", &b, b.len);
		}
		b.len = 0;
		/* Old 32-bit header: the five size fields only. */
		if (ptr == 4) {
			put_uint(&b, maps.len, 4, 0);
			put_uint(&b, recs.len, 4, 0);
			put_uint(&b, 4 * (2 + BT), 4, 0);
			put_uint(&b, 16888, 4, 0);
			put_uint(&b, BT, 4, 0);
			put(&b, maps.p, maps.len);
			put(&b, recs.p, recs.len);
			save("sample-old.nhgt", &b, b.len);
			b.len = 0;
		}
		free(maps.p);
		free(recs.p);
	}
	put_uint(&b, 0x812345ddu, 4, 0);
	put_uint(&b, 2, 2, 0);
	put_uint(&b, 6, 2, 0);
	put_str(&b, "0123456789012345678901234567890123456789");
	save("nhgt-bad-pointer-size.nhgt", &b, b.len);
	free(b.p);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkfixture OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mkfixture: %s: %s\n", outdir, strerror(errno));
		return 1;
	}
	write_leaksnap_fixtures();
	write_sampled_fixtures();
	write_other_fixtures();
	write_history_fixtures();
	return 0;
}
