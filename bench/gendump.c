/* gendump: write a large, deterministic, realistic heap snapshot for the
 * benchmarks.
 *
 *   gendump [--records N] [--frames F] [--ptr 4|8] [--seed S] [--text] OUT
 *
 * Default: a LEAKSNAP v1 dump (little-endian, 8-byte pointers) with
 * 1,000,000 distinct records of up to 16 frames.  --text writes the same
 * data as an Android text heap dump v1.2 instead.  Same arguments, same
 * bytes: everything comes from one seeded generator.
 *
 * What the data looks like:
 *  - an embedded maps section of about 300 lines: ~85 shared libraries
 *    (/system/lib64, the bionic and ART APEXes, one app library), each split
 *    into r--p / r-xp / rw-p mappings, [anon:.bss] after some of them,
 *    anonymous regions ([anon:dalvik-main space], [anon:scudo:...], guard
 *    pages), the executable, [stack] and [vdso];
 *  - every PC lies inside an r-xp mapping, so every frame resolves to a
 *    module;
 *  - stacks are drawn like real ones: frame 0 from a few hundred allocation
 *    call sites (libc, libc++, ART, ...), middle frames from ~64k call sites
 *    with a skewed distribution, the outermost two from thread entry points;
 *    all N stacks are distinct (the reader's merging must not shrink N);
 *  - frame counts vary from 4 (or F, if smaller) to F, zero-padded after the
 *    last frame; sizes 16..65536, counts 1..50 (mostly small), about 10% of
 *    the records with the zygote bit (bit 31 of the size field);
 *  - header total_memory = sum(size * count) exactly;
 *  - metadata: abi, cmdline, exe, build_id for about two thirds of the
 *    modules, unwinder=fp, trigger=api.
 *
 * OUT is created with O_EXCL: an existing file is never overwritten.  On any
 * write error the partial file is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/snapshot.h>

#define MAX_FRAMES 256
#define PAGE 4096u
#define WRITE_BUFFER (8u << 20)

static const char *prog = "gendump";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Random numbers ------------------------------------------------------------
 * splitmix64: a sequential stream for the maps and the stacks, and its
 * finalizer as a counter-based generator for per-record sizes and counts, so
 * that the total can be computed in a cheap first pass. */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t next_u64(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return mix64(*state);
}

/* Uniform in [0, n), n > 0 (the modulo bias is irrelevant here). */
static uint64_t below(uint64_t *state, uint64_t n)
{
	return next_u64(state) % n;
}

static double unit(uint64_t r)
{
	return (double)(r >> 11) * 0x1p-53;
}

/* Growable byte buffer (maps text, metadata) ------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (np == NULL)
			die("out of memory");
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		die("internal error: line too long");
	buf_add(b, tmp, (size_t)n);
}

/* The process image ----------------------------------------------------------- */

enum where { SYSTEM, BIONIC, ART, APP };

/* Shared libraries with a rough text size (KiB) and how often they allocate
 * directly (frame 0 weight; 0 = never the innermost frame). */
static const struct lib_spec {
	const char *name;
	enum where where;
	unsigned text_kib;
	unsigned leaf_weight;
} lib_specs[] = {
	{"libc.so", BIONIC, 1024, 40},
	{"libm.so", BIONIC, 192, 0},
	{"libdl.so", BIONIC, 16, 0},
	{"libc++.so", SYSTEM, 896, 30},
	{"libbase.so", SYSTEM, 160, 4},
	{"liblog.so", SYSTEM, 64, 1},
	{"libcutils.so", SYSTEM, 96, 2},
	{"libutils.so", SYSTEM, 192, 6},
	{"libbinder.so", SYSTEM, 896, 5},
	{"libhidlbase.so", SYSTEM, 640, 2},
	{"libart.so", ART, 6144, 20},
	{"libartbase.so", ART, 256, 2},
	{"libdexfile.so", ART, 512, 3},
	{"libnativebridge.so", ART, 48, 0},
	{"libnativeloader.so", ART, 64, 0},
	{"libandroid_runtime.so", SYSTEM, 2560, 6},
	{"libandroidfw.so", SYSTEM, 512, 4},
	{"libhwui.so", SYSTEM, 6656, 15},
	{"libskia.so", SYSTEM, 4096, 0},
	{"libgui.so", SYSTEM, 1024, 3},
	{"libui.so", SYSTEM, 192, 1},
	{"libinput.so", SYSTEM, 320, 1},
	{"libEGL.so", SYSTEM, 256, 2},
	{"libGLESv1_CM.so", SYSTEM, 48, 0},
	{"libGLESv2.so", SYSTEM, 96, 1},
	{"libGLESv3.so", SYSTEM, 64, 0},
	{"libvulkan.so", SYSTEM, 384, 2},
	{"libnativewindow.so", SYSTEM, 64, 0},
	{"libsync.so", SYSTEM, 16, 0},
	{"libsqlite.so", SYSTEM, 1280, 8},
	{"libicuuc.so", SYSTEM, 1792, 3},
	{"libicui18n.so", SYSTEM, 2816, 2},
	{"libandroidicu.so", SYSTEM, 32, 0},
	{"libharfbuzz_ng.so", SYSTEM, 896, 3},
	{"libminikin.so", SYSTEM, 384, 4},
	{"libft2.so", SYSTEM, 640, 2},
	{"libpng.so", SYSTEM, 192, 1},
	{"libjpeg.so", SYSTEM, 448, 2},
	{"libwebp.so", SYSTEM, 384, 1},
	{"libz.so", SYSTEM, 96, 2},
	{"libcrypto.so", SYSTEM, 1536, 3},
	{"libssl.so", SYSTEM, 384, 2},
	{"libexpat.so", SYSTEM, 192, 1},
	{"libtinyxml2.so", SYSTEM, 96, 1},
	{"libprotobuf-cpp-lite.so", SYSTEM, 448, 3},
	{"libjsoncpp.so", SYSTEM, 160, 1},
	{"libselinux.so", SYSTEM, 192, 1},
	{"libprocessgroup.so", SYSTEM, 96, 0},
	{"libvndksupport.so", SYSTEM, 16, 0},
	{"libhardware.so", SYSTEM, 16, 0},
	{"libhardware_legacy.so", SYSTEM, 32, 0},
	{"libmedia.so", SYSTEM, 768, 2},
	{"libmediandk.so", SYSTEM, 320, 1},
	{"libstagefright.so", SYSTEM, 2048, 3},
	{"libstagefright_foundation.so", SYSTEM, 384, 2},
	{"libaudioclient.so", SYSTEM, 768, 2},
	{"libaudioutils.so", SYSTEM, 128, 0},
	{"libcamera_client.so", SYSTEM, 512, 1},
	{"libcamera2ndk.so", SYSTEM, 320, 1},
	{"libsensor.so", SYSTEM, 96, 0},
	{"libandroid.so", SYSTEM, 192, 1},
	{"libjnigraphics.so", SYSTEM, 32, 0},
	{"libnativehelper.so", SYSTEM, 64, 1},
	{"libnetd_client.so", SYSTEM, 32, 0},
	{"libnetutils.so", SYSTEM, 48, 0},
	{"libstatssocket.so", SYSTEM, 48, 0},
	{"libstatslog.so", SYSTEM, 384, 1},
	{"libpowermanager.so", SYSTEM, 96, 0},
	{"libpermission.so", SYSTEM, 64, 0},
	{"libtimeinstate.so", SYSTEM, 48, 0},
	{"libunwindstack.so", SYSTEM, 640, 2},
	{"libbacktrace.so", SYSTEM, 128, 1},
	{"libdebuggerd_client.so", SYSTEM, 32, 0},
	{"libwebviewchromium_loader.so", SYSTEM, 32, 0},
	{"libwebviewchromium_plat_support.so", SYSTEM, 64, 0},
	{"libmonochrome.so", SYSTEM, 12288, 10},
	{"libRS.so", SYSTEM, 96, 0},
	{"libbcinfo.so", SYSTEM, 192, 0},
	{"libdrm.so", SYSTEM, 64, 0},
	{"libEGL_emulation.so", SYSTEM, 256, 1},
	{"libOpenglSystemCommon.so", SYSTEM, 256, 1},
	{"libGLESv2_enc.so", SYSTEM, 320, 1},
	{"librenderControl_enc.so", SYSTEM, 96, 0},
	{"libbenchapp.so", APP, 3072, 12},
};
#define NLIBS (sizeof(lib_specs) / sizeof(lib_specs[0]))

struct module {
	char path[160];
	uint64_t text_start, text_end; /* the r-xp mapping */
	unsigned leaf_weight;
	bool build_id;
	char id[41];
};

struct image {
	unsigned ptr;
	uint64_t shift;                 /* load addresses moved by this much */
	struct buf maps;
	struct module mods[NLIBS + 1]; /* + the executable */
	size_t nmods;
	size_t nmappings;
	uint64_t text_total;            /* bytes of all r-xp mappings */
};

static void map_line(struct image *im, uint64_t start, uint64_t end, const char *perms,
		     uint64_t offset, unsigned dmaj, unsigned dmin, uint64_t inode,
		     const char *path)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%08" PRIx64 "-%08" PRIx64 " %s %08" PRIx64
			 " %02x:%02x %" PRIu64, start, end, perms, offset, dmaj, dmin, inode);
	if (n < 0 || (size_t)n >= sizeof(line))
		die("internal error: maps line too long");
	buf_add(&im->maps, line, (size_t)n);
	if (path) {
		/* The kernel pads the path to a fixed column. */
		int col = im->ptr == 8 ? 73 : 49;
		buf_add(&im->maps, " ", 1);
		for (n++; n < col; n++)
			buf_add(&im->maps, " ", 1);
		buf_add(&im->maps, path, strlen(path));
	}
	buf_add(&im->maps, "\n", 1);
	im->nmappings++;
}

static uint64_t round_pages(uint64_t v)
{
	return (v + PAGE - 1) / PAGE * PAGE;
}

static void lib_path(char *out, size_t size, const struct lib_spec *l, unsigned ptr)
{
	const char *lib = ptr == 8 ? "lib64" : "lib";
	switch (l->where) {
	case BIONIC:
		snprintf(out, size, "/apex/com.android.runtime/%s/bionic/%s", lib, l->name);
		break;
	case ART:
		snprintf(out, size, "/apex/com.android.art/%s/%s", lib, l->name);
		break;
	case APP:
		snprintf(out, size,
			 "/data/app/~~Zq3x9AbKdWc4hTn1L0pRjw==/com.example.bench-8sYk2wQmVf5Jc7Hn"
			 "Ue3t0A==/lib/%s/%s",
			 ptr == 8 ? "x86_64" : "x86", l->name);
		break;
	case SYSTEM:
		snprintf(out, size, "/system/%s/%s", lib, l->name);
		break;
	}
}

/* One ELF module: r--p headers/rodata, r-xp text, rw-p data (+ .bss). */
static uint64_t add_module(struct image *im, uint64_t *rng, uint64_t at, const char *path,
			   uint64_t text_bytes, unsigned leaf_weight, unsigned dmaj,
			   unsigned dmin)
{
	struct module *m = &im->mods[im->nmods++];
	uint64_t inode = 1000 + below(rng, 200000);
	uint64_t ro = round_pages(text_bytes / 4 + below(rng, 64 * 1024) + PAGE);
	uint64_t tx = round_pages(text_bytes + below(rng, 16 * 1024));
	uint64_t rw = round_pages(text_bytes / 16 + below(rng, 16 * 1024) + PAGE);

	snprintf(m->path, sizeof(m->path), "%s", path);
	map_line(im, at, at + ro, "r--p", 0, dmaj, dmin, inode, path);
	map_line(im, at + ro, at + ro + tx, "r-xp", ro, dmaj, dmin, inode, path);
	map_line(im, at + ro + tx, at + ro + tx + rw, "rw-p", ro + tx, dmaj, dmin, inode, path);
	m->text_start = at + ro;
	m->text_end = at + ro + tx;
	m->leaf_weight = leaf_weight;
	im->text_total += tx;
	at += ro + tx + rw;
	if (below(rng, 4) == 0) { /* zero-filled tail of .bss */
		uint64_t bss = PAGE * (1 + below(rng, 8));
		map_line(im, at, at + bss, "rw-p", 0, 0, 0, 0, "[anon:.bss]");
		at += bss;
	}
	m->build_id = below(rng, 3) != 0;
	for (int i = 0; i < 40; i++)
		m->id[i] = "0123456789abcdef"[below(rng, 16)];
	m->id[40] = '\0';
	return at + PAGE * below(rng, 16); /* a gap before the next mapping */
}

static const char *const anon_names[] = {
	"[anon:scudo:primary]",        "[anon:scudo:secondary]",    "[anon:dalvik-LinearAlloc]",
	"[anon:dalvik-zygote space]",  "[anon:dalvik-non moving space]",
	"[anon:dalvik-large object space allocation]", "[anon:libc_malloc]",
	"[anon:thread signal stack]",  "[anon:bionic TLS]",          "[anon:stack_and_tls:1234]",
	"[anon:dalvik-jit-code-cache]", "[anon:System property context nodes]",
};
#define NANON (sizeof(anon_names) / sizeof(anon_names[0]))

static uint64_t add_anon(struct image *im, uint64_t *rng, uint64_t at)
{
	uint64_t size = PAGE * (4 + below(rng, 1020));
	if (below(rng, 2) == 0) { /* guard page below it */
		map_line(im, at, at + PAGE, "---p", 0, 0, 0, 0, NULL);
		at += PAGE;
	}
	map_line(im, at, at + size, "rw-p", 0, 0, 0, 0, anon_names[below(rng, NANON)]);
	return at + size + PAGE * below(rng, 8);
}

static void build_image(struct image *im, uint64_t seed)
{
	uint64_t rng = seed ^ 0x6d617073ull; /* "maps" */
	unsigned ptr = im->ptr;
	char path[160];

	/* Dalvik heap at its fixed address, then the executable. */
	map_line(im, 0x12c00000u, 0x32c00000u, "rw-p", 0, 0, 0, 0, "[anon:dalvik-main space]");
	uint64_t at = (ptr == 8 ? 0x5b1c400000ull : 0x3a200000u) + im->shift;
	snprintf(path, sizeof(path), "/system/bin/%s",
		 ptr == 8 ? "app_process64" : "app_process32");
	at = add_module(im, &rng, at, path, 16 * 1024, 0, 0xfe, 0x00);

	/* Libraries from the top of the mmap area, anonymous regions between. */
	at = (ptr == 8 ? 0x7a3c000000ull : 0xa0000000u) + im->shift;
	for (size_t i = 0; i < NLIBS; i++) {
		const struct lib_spec *l = &lib_specs[i];
		unsigned dmaj = 0xfe, dmin = 0x00;
		if (l->where == BIONIC || l->where == ART)
			dmaj = 0x07, dmin = l->where == BIONIC ? 0x38 : 0x40;
		else if (l->where == APP)
			dmaj = 0xfe, dmin = 0x2a;
		lib_path(path, sizeof(path), l, ptr);
		uint64_t text = (uint64_t)l->text_kib * 1024;
		at = add_module(im, &rng, at, path, text - text / 8 + below(&rng, text / 4 + 1),
				l->leaf_weight, dmaj, dmin);
		if (below(&rng, 7) == 0) /* ~15%: an anonymous region after it */
			at = add_anon(im, &rng, at);
	}
	/* Fill up to about 300 lines with anonymous regions. */
	while (im->nmappings < 298)
		at = add_anon(im, &rng, at);
	if ((ptr == 4 && at >= 0xff000000u) || (ptr == 8 && at >= 0x7ffd00000000ull))
		die("internal error: address space layout overflow");

	if (ptr == 8) {
		map_line(im, 0x7ffd3a1e0000ull, 0x7ffd3a201000ull, "rw-p", 0, 0, 0, 0, "[stack]");
		map_line(im, 0x7ffd3a3f6000ull, 0x7ffd3a3f8000ull, "r-xp", 0, 0, 0, 0, "[vdso]");
	} else {
		map_line(im, 0xff8e0000u, 0xff901000u, "rw-p", 0, 0, 0, 0, "[stack]");
		map_line(im, 0xffffe000u, 0xfffff000u, "r-xp", 0, 0, 0, 0, "[vdso]");
	}
}

/* Call sites ------------------------------------------------------------------ */

#define LEAF_SITES 512
#define MID_SITES 65536
#define OUTER_SITES 6   /* outermost frame: libc's thread start, the exe's main */
#define THREAD_SITES 18 /* next one in: libc, ART or app thread bodies */

struct sites {
	uint64_t leaf[LEAF_SITES], mid[MID_SITES], outer[OUTER_SITES], thread[THREAD_SITES];
};

/* A return address inside module @m's text. */
static uint64_t pc_in(const struct module *m, uint64_t *rng)
{
	return m->text_start + 1 + below(rng, m->text_end - m->text_start - 1);
}

/* A module chosen in proportion to its text size. */
static const struct module *module_by_text(const struct image *im, uint64_t *rng)
{
	uint64_t r = below(rng, im->text_total);
	for (size_t i = 0; i < im->nmods; i++) {
		uint64_t len = im->mods[i].text_end - im->mods[i].text_start;
		if (r < len)
			return &im->mods[i];
		r -= len;
	}
	return &im->mods[im->nmods - 1];
}

static void build_sites(struct sites *st, const struct image *im, uint64_t seed)
{
	uint64_t rng = seed ^ 0x7369746573ull; /* "sites" */
	uint64_t wsum = 0;
	for (size_t i = 0; i < im->nmods; i++)
		wsum += im->mods[i].leaf_weight;
	for (size_t k = 0; k < LEAF_SITES; k++) {
		uint64_t r = below(&rng, wsum);
		size_t i = 0;
		while (r >= im->mods[i].leaf_weight)
			r -= im->mods[i++].leaf_weight;
		st->leaf[k] = pc_in(&im->mods[i], &rng);
	}
	for (size_t k = 0; k < MID_SITES; k++)
		st->mid[k] = pc_in(module_by_text(im, &rng), &rng);
	/* Thread entry points: libc's thread start and the executable's main
	 * outermost, then libc's pthread trampoline, ART's thread body or the
	 * app's worker loop. */
	const struct module *libc = &im->mods[1], *exe = &im->mods[0];
	const struct module *thread[3] = {libc, libc, libc};
	for (size_t i = 0; i < im->nmods; i++) {
		if (strstr(im->mods[i].path, "/libart.so"))
			thread[1] = &im->mods[i];
		if (strstr(im->mods[i].path, "/libbenchapp.so"))
			thread[2] = &im->mods[i];
	}
	for (size_t k = 0; k < OUTER_SITES; k++)
		st->outer[k] = pc_in(k % 3 ? libc : exe, &rng);
	for (size_t k = 0; k < THREAD_SITES; k++)
		st->thread[k] = pc_in(thread[k % 3], &rng);
}

/* Skewed pick in [0, n): small indexes are much more likely. */
static size_t skewed(uint64_t *rng, size_t n)
{
	double u = unit(next_u64(rng));
	size_t i = (size_t)((double)n * u * u * u);
	return i < n ? i : n - 1;
}

/* Records ------------------------------------------------------------------- */

struct rec_values {
	uint64_t size, count;
	bool zygote;
};

/* Size, count and zygote bit of record @i, independent of the stacks. */
static struct rec_values rec_values(uint64_t seed, uint64_t i)
{
	uint64_t base = mix64(seed ^ 0x73697a6573ull) + i * 0x9e3779b97f4a7c15ull * 3;
	uint64_t a = mix64(base + 1), b = mix64(base + 2), c = mix64(base + 3);
	struct rec_values v;
	/* Sizes 16..65536, log-distributed with a bias to small blocks (and
	 * ~2% exactly 64 KiB, the clamped top bucket). */
	double u = unit(a);
	unsigned e = 4 + (unsigned)(12.0 * u * u + 0.5);
	v.size = ((uint64_t)1 << e) + (b >> 40) % ((uint64_t)1 << e);
	if (v.size > 65536)
		v.size = 65536;
	if ((b & 3) != 0 && v.size > 16)
		v.size &= ~(uint64_t)7; /* most requests are multiples of 8 */
	/* Counts 1..50, mostly 1 or a few. */
	double w = unit(c);
	v.count = 1 + (uint64_t)(49.0 * w * w * w * w);
	v.zygote = (c & 0xffff) % 10 == 0;
	return v;
}

/* Set of stack hashes, to keep every stack distinct. */
struct stackset {
	uint64_t *slots;
	size_t mask;
};

static bool stackset_insert(struct stackset *ss, uint64_t h)
{
	if (h == 0)
		h = 1;
	for (size_t i = h & ss->mask;; i = (i + 1) & ss->mask) {
		if (ss->slots[i] == h)
			return false;
		if (ss->slots[i] == 0) {
			ss->slots[i] = h;
			return true;
		}
	}
}

static uint64_t hash_stack(const uint64_t *pcs, unsigned n)
{
	uint64_t h = 0x243f6a8885a308d3ull ^ n;
	for (unsigned i = 0; i < n; i++)
		h = mix64(h ^ (pcs[i] + 0x9e3779b97f4a7c15ull));
	return h;
}

struct gen {
	uint64_t seed, nrecords;
	uint64_t values_seed;     /* sizes and counts */
	uint64_t shared;          /* records whose stacks come from the seed's stream */
	uint64_t stack_seed;      /* the stream of the others */
	uint64_t rng2;
	unsigned frames, ptr;
	bool text;
	struct image im;
	struct sites *sites;
	struct stackset seen;
	uint64_t rng;             /* the stack stream */
};

/* Draw the next distinct stack into @pcs from stream @rng; returns its
 * frame count. */
static unsigned next_stack(struct gen *g, uint64_t *rng, uint64_t *pcs)
{
	unsigned lo = g->frames < 4 ? 1 : 4;
	for (unsigned attempt = 0;; attempt++) {
		unsigned n = lo + (unsigned)below(rng, g->frames - lo + 1);
		if (attempt < 32) {
			pcs[0] = g->sites->leaf[skewed(rng, LEAF_SITES)];
			unsigned roots = n >= 4 ? 2 : 0;
			for (unsigned f = 1; f + roots < n; f++)
				pcs[f] = g->sites->mid[skewed(rng, MID_SITES)];
			if (roots) {
				pcs[n - 2] = g->sites->thread[below(rng, THREAD_SITES)];
				pcs[n - 1] = g->sites->outer[below(rng, OUTER_SITES)];
			}
		} else if (attempt < 100000) {
			/* The call-site pools are exhausted for this depth: any PC. */
			for (unsigned f = 0; f < n; f++)
				pcs[f] = pc_in(module_by_text(&g->im, rng), rng);
		} else {
			die("cannot make %" PRIu64 " distinct stacks of at most %u frames",
			    g->nrecords, g->frames);
		}
		if (stackset_insert(&g->seen, hash_stack(pcs, n)))
			return n;
	}
}

/* Output ------------------------------------------------------------------ */

struct out {
	const char *path;
	FILE *f;
};

static void out_fail(struct out *o, int e) __attribute__((noreturn));

static void out_fail(struct out *o, int e)
{
	unlink(o->path);
	die("%s: write error: %s", o->path, strerror(e ? e : EIO));
}

static void out_write(struct out *o, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, o->f) != n)
		out_fail(o, errno);
}

static void store_le(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Decimal, right-aligned in at least @width columns (printf "%*zu"). */
static char *put_dec(char *p, uint64_t v, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = n; i < width; i++)
		*p++ = ' ';
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Lower-case hex without padding (printf "%x"). */
static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static void build_meta(struct buf *meta, const struct image *im)
{
	buf_printf(meta, "abi=%s\n", im->ptr == 8 ? "x86_64" : "x86");
	buf_printf(meta, "cmdline=com.example.bench --benchmark --records=large\n");
	buf_printf(meta, "exe=%s\n", im->mods[0].path);
	for (size_t i = 0; i < im->nmods; i++)
		if (im->mods[i].build_id)
			buf_printf(meta, "build_id=%s %s\n", im->mods[i].id, im->mods[i].path);
	buf_printf(meta, "unwinder=fp\n");
	buf_printf(meta, "trigger=api\n");
}

static void generate(struct gen *g, const char *path)
{
	/* Pass 1: the total, from the per-record values alone. */
	uint64_t total = 0;
	for (uint64_t i = 0; i < g->nrecords; i++) {
		struct rec_values v = rec_values(g->values_seed, i);
		total += v.size * v.count;
	}

	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("%s: %s%s", path, strerror(errno),
		    errno == EEXIST ? " (refusing to overwrite)" : "");
	struct out o = {path, fdopen(fd, "wb")};
	if (o.f == NULL) {
		int e = errno;
		close(fd);
		unlink(path);
		die("%s: %s", path, strerror(e));
	}
	char *wbuf = malloc(WRITE_BUFFER);
	if (wbuf == NULL || setvbuf(o.f, wbuf, _IOFBF, WRITE_BUFFER) != 0)
		out_fail(&o, ENOMEM);

	struct buf meta = {0};
	build_meta(&meta, &g->im);
	unsigned ptr = g->ptr, F = g->frames;
	uint64_t info = (uint64_t)ptr * (2 + F);

	if (g->text) {
		char hdr[256];
		int n = snprintf(hdr, sizeof(hdr),
				 "Android Native Heap Dump v1.2\n\nBuild fingerprint: 'bench'\n\n"
				 "Total memory: %" PRIu64 "\nAllocation records: %" PRIu64
				 "\nBacktrace size: %u\n\n",
				 total, g->nrecords, F);
		out_write(&o, hdr, (size_t)n);
	} else {
		if (g->im.maps.len > UINT32_MAX || meta.len > UINT32_MAX ||
		    g->nrecords > UINT64_MAX / info)
			die("dump too large");
		struct leaksnap_snapshot_header h = {
			.version = 1,
			.pointer_size = (uint8_t)ptr,
			.flags = 0,
			.backtrace_size = F,
			.pid = 4242,
			.meta_size = (uint32_t)meta.len,
			.time_ns = 1700000000123456789ull,
			.total_memory = total,
			.info_size = info,
			.records_size = g->nrecords * info,
			.maps_size = g->im.maps.len,
		};
		uint8_t hdr[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
		leaksnap_snapshot_header_encode(&h, hdr);
		out_write(&o, hdr, sizeof(hdr));
	}

	/* Pass 2: the records. */
	uint64_t pcs[MAX_FRAMES];
	uint8_t rec[8 * (2 + MAX_FRAMES)];
	char line[64 + 17 * MAX_FRAMES];
	uint64_t check = 0;
	for (uint64_t i = 0; i < g->nrecords; i++) {
		struct rec_values v = rec_values(g->values_seed, i);
		unsigned n = next_stack(g, i < g->shared ? &g->rng : &g->rng2, pcs);
		check += v.size * v.count;
		if (g->text) {
			char *p = line;
			memcpy(p, v.zygote ? "z 1  sz " : "z 0  sz ", 8);
			p = put_dec(p + 8, v.size, 8);
			memcpy(p, "  num ", 6);
			p = put_dec(p + 6, v.count, 8);
			memcpy(p, "  bt", 4);
			p += 4;
			for (unsigned f = 0; f < n; f++) {
				*p++ = ' ';
				p = put_hex(p, pcs[f]);
			}
			*p++ = '\n';
			out_write(&o, line, (size_t)(p - line));
		} else {
			memset(rec, 0, (size_t)info);
			store_le(rec, ptr, v.size | (v.zygote ? (uint64_t)1 << 31 : 0));
			store_le(rec + ptr, ptr, v.count);
			for (unsigned f = 0; f < n; f++)
				store_le(rec + (2 + f) * ptr, ptr, pcs[f]);
			out_write(&o, rec, (size_t)info);
		}
	}
	if (check != total)
		die("internal error: total changed between passes");

	if (g->text) {
		out_write(&o, "MAPS\n", 5);
		out_write(&o, g->im.maps.p, g->im.maps.len);
		out_write(&o, "END\n", 4);
	} else {
		out_write(&o, g->im.maps.p, g->im.maps.len);
		out_write(&o, meta.p, meta.len);
	}
	if (fflush(o.f) != 0 || ferror(o.f))
		out_fail(&o, errno);
	if (fclose(o.f) != 0) {
		o.f = NULL;
		unlink(path);
		die("%s: write error: %s", path, strerror(errno));
	}
	free(wbuf);
	free(meta.p);
}

/* Command line ------------------------------------------------------------- */

static const char usage[] =
	"Usage: gendump [--records N] [--frames F] [--ptr 4|8] [--seed S] [--text] OUT\n"
	"Write a deterministic LEAKSNAP v1 heap dump (or, with --text, an Android\n"
	"text heap dump v1.2 of the same data) for benchmarking.  OUT must not exist.\n"
	"  --records N   distinct records (default 1000000)\n"
	"  --frames F    backtrace size, 1..256 (default 16)\n"
	"  --ptr 4|8     pointer size (default 8)\n"
	"  --seed S      generator seed (default 1)\n"
	"  --text        Android text heap dump v1.2 instead of LEAKSNAP\n"
	"A later snapshot of another run of the same program (for leakdiff):\n"
	"  --shift N     load every module N bytes higher (a multiple of 4096)\n"
	"  --shared K    only the first K records have the stacks of --seed's dump;\n"
	"                the others are drawn from --stack-seed's stream\n"
	"  --stack-seed S  (default: --seed + 1)\n"
	"  --values-seed V sizes and counts (default: --seed)\n";

static uint64_t parse_num(const char *s, const char *what, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		die("%s: '%s' is not a number", what, s);
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		die("%s: '%s' is not a number from %" PRIu64 " to %" PRIu64, what, s, min, max);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"records", required_argument, NULL, 'n'},
		{"frames", required_argument, NULL, 'f'},
		{"ptr", required_argument, NULL, 'p'},
		{"seed", required_argument, NULL, 's'},
		{"text", no_argument, NULL, 't'},
		{"shift", required_argument, NULL, 'S'},
		{"shared", required_argument, NULL, 'K'},
		{"stack-seed", required_argument, NULL, 'T'},
		{"values-seed", required_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gen g = {.seed = 1, .nrecords = 1000000, .frames = 16, .ptr = 8};
	bool has_values_seed = false, has_stack_seed = false, has_shared = false;
	uint64_t shift = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': g.nrecords = parse_num(optarg, "--records", 0, (uint64_t)1 << 32); break;
		case 'f': g.frames = (unsigned)parse_num(optarg, "--frames", 1, MAX_FRAMES); break;
		case 'p':
			g.ptr = (unsigned)parse_num(optarg, "--ptr", 4, 8);
			if (g.ptr != 4 && g.ptr != 8)
				die("--ptr must be 4 or 8");
			break;
		case 's': g.seed = parse_num(optarg, "--seed", 0, UINT64_MAX); break;
		case 't': g.text = true; break;
		case 'S':
			shift = parse_num(optarg, "--shift", 0, (uint64_t)1 << 36);
			if (shift % PAGE)
				die("--shift must be a multiple of %u", PAGE);
			break;
		case 'K':
			g.shared = parse_num(optarg, "--shared", 0, UINT64_MAX);
			has_shared = true;
			break;
		case 'T':
			g.stack_seed = parse_num(optarg, "--stack-seed", 0, UINT64_MAX);
			has_stack_seed = true;
			break;
		case 'V':
			g.values_seed = parse_num(optarg, "--values-seed", 0, UINT64_MAX);
			has_values_seed = true;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		fputs(usage, stderr);
		return 2;
	}

	if (!has_values_seed)
		g.values_seed = g.seed;
	if (!has_stack_seed)
		g.stack_seed = g.seed + 1;
	if (!has_shared)
		g.shared = g.nrecords;
	g.im.ptr = g.ptr;
	g.im.shift = g.ptr == 4 ? shift & 0xfffffffu : shift;
	build_image(&g.im, g.seed);
	g.sites = malloc(sizeof(*g.sites));
	if (g.sites == NULL)
		die("out of memory");
	build_sites(g.sites, &g.im, g.seed);
	size_t cap = 1024;
	while (cap < g.nrecords * 2)
		cap *= 2;
	g.seen.slots = calloc(cap, sizeof(*g.seen.slots));
	if (g.seen.slots == NULL)
		die("out of memory");
	g.seen.mask = cap - 1;
	g.rng = g.seed ^ 0x737461636b73ull; /* "stacks" */
	g.rng2 = g.stack_seed ^ 0x737461636b73ull;

	generate(&g, argv[optind]);

	free(g.seen.slots);
	free(g.sites);
	free(g.im.maps.p);
	return 0;
}
