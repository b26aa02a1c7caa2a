/* The checks of hook/got.c (gotcases.h): libgotuse.c linked in every
 * relocation format the in-app build meets, loaded by the C library's
 * loader and by hand (as bionic leaves a module: d_ptr values relative),
 * then corrupted.
 *
 * The variants (the Makefile's GOT block builds them):
 *   lazy      GNU ld, lazy binding: JUMP_SLOTs in .got.plt, outside RELRO
 *   now       GNU ld -z now: every slot on RELRO pages
 *   norelro   GNU ld -z norelro: no read-only page at all
 *   relr      GNU ld -z pack-relative-relocs: DT_RELR (x86-64 only: the
 *             ARM GNU linkers ignore the option)
 *   lld       lld, lazy
 *   aps2      lld --pack-dyn-relocs=android: DT_ANDROID_RELA (REL on ARM)
 *   aps2relr  ... android+relr --use-android-relr-tags: DT_ANDROID_RELR too
 *   lldrelr   lld --pack-dyn-relocs=relr: DT_RELR
 *   aps2relr36  ... android+relr: APS2 and DT_RELR
 * glibc's loader knows no Android tag: it applies none of the packed
 * relocations (so the APS2 libraries are linked without start files,
 * whose relative relocations nobody would apply), and it refuses DT_RELR
 * from lld 14 (no GLIBC_ABI_DT_RELR dependency): lldrelr and aps2relr36
 * are only loaded by hand. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"
#include "gotcases.h"

/* What a variant's file must (flags) and must not (absent) have. */
enum {
	F_ANDROID_REL = 1 << 0,
	F_ANDROID_RELA = 1 << 1,
	F_RELR = 1 << 2,
	F_ANDROID_RELR = 1 << 3,
	F_BIND_NOW = 1 << 4,
	F_NO_RELRO = 1 << 5,
};
#if defined(__arm__) || defined(__i386__)
#define F_APS2 F_ANDROID_REL
#define APS2_RELA false
#else
#define F_APS2 F_ANDROID_RELA
#define APS2_RELA true
#endif
#define F_PACKED (F_APS2 | F_RELR | F_ANDROID_RELR)
/* GNU ld for x86 calls a function whose address is also loaded from the
 * GOT through that GLOB_DAT slot (.plt.got): no JUMP_SLOT for it. */
#if defined(__x86_64__) || defined(__i386__)
#define BFD_PLT_GOT true
#else
#define BFD_PLT_GOT false
#endif

#define RO(k) (1u << (k))
#define RO_ALL (RO(GOT_JUMP_SLOT) | RO(GOT_GLOB_DAT) | RO(GOT_ABS))
#define RO_GOT (RO(GOT_GLOB_DAT) | RO(GOT_ABS))
/* GNU ld for 32-bit ARM keeps the GOT and the PLT's GOT in one .got:
 * with lazy binding all of it stays writable, GLOB_DAT slots too. */
#if defined(__arm__)
#define RO_BFD_LAZY RO(GOT_ABS)
#else
#define RO_BFD_LAZY RO_GOT
#endif

struct variant {
	const char *name;   /* libgot-NAME.so */
	unsigned flags, absent;
	bool lld;           /* linked by lld (malloc keeps its JUMP_SLOT) */
	bool loadable;      /* glibc loads it */
	bool unapplied;     /* glibc skips its packed relocations: GLOB_DAT, ABS stay 0 */
	unsigned ro_kinds;  /* RO(kind): malloc's slots of that kind on read-only pages */
};

static const struct variant variants[] = {
	{ "lazy", 0, F_BIND_NOW | F_NO_RELRO | F_PACKED, false, true, false, RO_BFD_LAZY },
	{ "now", F_BIND_NOW, F_NO_RELRO | F_PACKED, false, true, false, RO_ALL },
	{ "norelro", F_NO_RELRO, F_BIND_NOW | F_PACKED, false, true, false, 0 },
#if defined(__x86_64__)
	{ "relr", F_RELR, F_BIND_NOW | F_NO_RELRO | F_APS2 | F_ANDROID_RELR, false, true, false, RO_BFD_LAZY },
#endif
	{ "lld", 0, F_BIND_NOW | F_NO_RELRO | F_PACKED, true, true, false, RO_GOT },
	{ "aps2", F_APS2, F_BIND_NOW | F_NO_RELRO | F_RELR | F_ANDROID_RELR, true, true, true, RO_GOT },
	{ "aps2relr", F_APS2 | F_ANDROID_RELR, F_BIND_NOW | F_NO_RELRO | F_RELR, true, true, true, RO_GOT },
	{ "lldrelr", F_RELR, F_APS2 | F_ANDROID_RELR, true, false, false, 0 },
	{ "aps2relr36", F_APS2 | F_RELR, F_ANDROID_RELR, true, false, false, 0 },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static const char *const names[] = { "malloc", "free", "calloc", "realloc", "strdup", "aligned_alloc" };
#define NNAMES 6u
enum { N_MALLOC, N_FREE, N_CALLOC, N_REALLOC };

static char libdir[4096];

unsigned gotcase_variants(void)
{
	return NVARIANTS;
}

const char *gotcase_variant_name(unsigned v)
{
	return variants[v].name;
}

bool gotcase_variant_loadable(unsigned v)
{
	return variants[v].loadable;
}

void gotcase_set_dir(const char *dir)
{
	snprintf(libdir, sizeof(libdir), "%s", dir);
}

static void lib_path(char *buf, size_t len, const char *variant)
{
	if (variant != NULL)
		snprintf(buf, len, "%s/libgot-%s.so", libdir, variant);
	else
		snprintf(buf, len, "%s/libgotnone.so", libdir);
}

/* Slots as got_find gives them. */
#define MAX_SLOTS 64
struct slots {
	unsigned n;
	struct got_slot s[MAX_SLOTS];
};

static int collect(void *ctx, const struct got_slot *slot)
{
	struct slots *out = ctx;

	if (out->n < MAX_SLOTS)
		out->s[out->n] = *slot;
	out->n++;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* The sorted (name, kind) keys of @s, in @keys. */
static unsigned slot_keys(const struct slots *s, unsigned *keys)
{
	unsigned n = s->n < MAX_SLOTS ? s->n : MAX_SLOTS;

	for (unsigned i = 0; i < n; i++)
		keys[i] = s->s[i].name * 4 + s->s[i].kind;
	qsort(keys, n, sizeof(*keys), key_cmp);
	return n;
}

/* What libgotuse.so has, sorted as slot_keys sorts. */
static unsigned expected_keys(const struct variant *v, unsigned *keys)
{
	unsigned n = 0;

	keys[n++] = N_MALLOC * 4 + GOT_GLOB_DAT;
	keys[n++] = N_MALLOC * 4 + GOT_ABS;
	if (v->lld || !BFD_PLT_GOT)
		keys[n++] = N_MALLOC * 4 + GOT_JUMP_SLOT;
	keys[n++] = N_FREE * 4 + GOT_JUMP_SLOT;
	keys[n++] = N_CALLOC * 4 + GOT_JUMP_SLOT;
	keys[n++] = N_REALLOC * 4 + GOT_GLOB_DAT;
	qsort(keys, n, sizeof(*keys), key_cmp);
	return n;
}

/* A loaded variant: its handle and the loader's record of it. */
struct loaded {
	void *handle;
	struct dl_phdr_info info;
	bool called; /* its functions have run: lazy slots are bound */
};
static struct loaded loaded[NVARIANTS + 1]; /* + libgotnone */

struct find_ctx {
	const char *name;
	struct dl_phdr_info *out;
	int found;
};

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_ctx *f = data;

	(void)size;
	if (info->dlpi_name != NULL && strcmp(info->dlpi_name, f->name) == 0) {
		*f->out = *info;
		f->found = 1;
		return 1;
	}
	return 0;
}

/* Load variant @v (NVARIANTS: libgotnone.so), once. */
static struct loaded *load(unsigned v)
{
	struct loaded *l = &loaded[v];
	struct link_map *lm;
	struct find_ctx f;
	char path[4200];

	if (l->handle != NULL)
		return l;
	lib_path(path, sizeof(path), v < NVARIANTS ? variants[v].name : NULL);
	l->handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (l->handle == NULL) {
		gotcase_note("dlopen %s: %s", path, dlerror());
		return NULL;
	}
	if (dlinfo(l->handle, RTLD_DI_LINKMAP, &lm) != 0)
		return NULL;
	f.name = lm->l_name;
	f.out = &l->info;
	f.found = 0;
	dl_iterate_phdr(find_module, &f);
	return f.found ? l : NULL;
}

static void *fn(struct loaded *l, const char *name)
{
	return dlsym(l->handle, name);
}

/* @addr lies in a PT_LOAD segment of @info. */
static bool in_module(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
			return true;
	}
	return false;
}

static uintptr_t real_fn(unsigned name)
{
	return (uintptr_t)dlsym(RTLD_DEFAULT, names[name]);
}

void gotcase_list(unsigned v)
{
	const struct variant *var = &variants[v];
	unsigned got[MAX_SLOTS], want[MAX_SLOTS], n, nw;
	struct slots s = { 0 };
	const char *why = NULL;
	struct loaded *l;

	GC_CHECK(var->loadable);
	l = load(v);
	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, collect, &s, &why) == 0);
	GC_CHECK(why == NULL);
	n = slot_keys(&s, got);
	nw = expected_keys(var, want);
	GC_CHECK(s.n == nw);
	GC_CHECK(n == nw && memcmp(got, want, n * sizeof(*got)) == 0);
	for (unsigned i = 0; i < s.n; i++) {
		uintptr_t val = *(const uintptr_t *)s.s[i].addr, real = real_fn(s.s[i].name);

		GC_CHECK(real != 0);
		GC_CHECK(in_module(&l->info, s.s[i].addr));
		if (s.s[i].kind == GOT_JUMP_SLOT) {
			if ((var->flags & F_BIND_NOW) || l->called)
				GC_CHECK(val == real);
			else /* lazy: the slot leads back into the module's PLT */
				GC_CHECK(in_module(&l->info, val));
		} else if (var->unapplied) {
			GC_CHECK(val == 0);
		} else {
			GC_CHECK(val == real);
		}
	}
}

/* The protection of the page holding @addr, from /proc/self/maps: 1
 * writable, 0 not, -1 not mapped. */
static int page_writable(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int w = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && addr >= lo && addr < hi) {
			w = perms[1] == 'w';
			break;
		}
	}
	fclose(f);
	return w;
}

static _Atomic unsigned fake_calls;

static void *fake_malloc(size_t n)
{
	fake_calls++;
	return malloc(n);
}

typedef void *(*malloc_fn)(size_t);

void gotcase_swap(unsigned v)
{
	const struct variant *var = &variants[v];
	uintptr_t cur[MAX_SLOTS], found, fake = (uintptr_t)fake_malloc;
	int prot[MAX_SLOTS];
	struct slots s = { 0 };
	const char *why = NULL;
	unsigned calls, nmalloc = 0;
	struct loaded *l;
	void *(*use_malloc)(size_t);
	void (*use_free)(void *);
	malloc_fn (*code_malloc)(void), (*data_malloc)(void);
	void *p;

	GC_CHECK(var->loadable);
	l = load(v);
	GC_CHECK(l != NULL);
	use_malloc = (void *(*)(size_t))fn(l, "got_use_malloc");
	use_free = (void (*)(void *))fn(l, "got_use_free");
	code_malloc = (malloc_fn (*)(void))fn(l, "got_code_malloc");
	data_malloc = (malloc_fn (*)(void))fn(l, "got_data_malloc");
	GC_CHECK(use_malloc != NULL && use_free != NULL && code_malloc != NULL && data_malloc != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, collect, &s, &why) == 0);
	GC_CHECK(s.n <= MAX_SLOTS);

	/* malloc's slots: read-only pages exactly where the format puts them */
	for (unsigned i = 0; i < s.n; i++) {
		if (s.s[i].name != N_MALLOC)
			continue;
		nmalloc++;
		cur[i] = *(const uintptr_t *)s.s[i].addr;
		prot[i] = page_writable(s.s[i].addr);
		GC_CHECK(prot[i] == !(var->ro_kinds & RO(s.s[i].kind)));
	}
	GC_CHECK(nmalloc == ((var->lld || !BFD_PLT_GOT) ? 3u : 2u));

	for (unsigned i = 0; i < s.n; i++) {
		if (s.s[i].name != N_MALLOC)
			continue;
		errno = 4242;
		found = 1;
		GC_CHECK(got_swap(&l->info, s.s[i].addr, cur[i], fake, &found) == 1);
		GC_CHECK(errno == 4242);
		GC_CHECK(found == cur[i]);
		GC_CHECK(*(const uintptr_t *)s.s[i].addr == fake);
		GC_CHECK(page_writable(s.s[i].addr) == prot[i]);
		/* a second swap from the old value finds ours */
		errno = 4243;
		GC_CHECK(got_swap(&l->info, s.s[i].addr, cur[i], 0x10, &found) == 0);
		GC_CHECK(errno == 4243);
		GC_CHECK(found == fake);
		GC_CHECK(*(const uintptr_t *)s.s[i].addr == fake);
		GC_CHECK(page_writable(s.s[i].addr) == prot[i]);
	}
	/* the library's calls and pointers now reach the test's function */
	calls = fake_calls;
	p = use_malloc(24);
	l->called = true;
	GC_CHECK(p != NULL);
	GC_CHECK(fake_calls == calls + 1);
	use_free(p);
	GC_CHECK(code_malloc() == fake_malloc);
	GC_CHECK(data_malloc() == fake_malloc);

	for (unsigned i = 0; i < s.n; i++) {
		if (s.s[i].name != N_MALLOC)
			continue;
		GC_CHECK(got_swap(&l->info, s.s[i].addr, fake, cur[i], &found) == 1);
		GC_CHECK(found == fake);
		GC_CHECK(page_writable(s.s[i].addr) == prot[i]);
	}
	calls = fake_calls;
	p = use_malloc(24);
	GC_CHECK(p != NULL);
	GC_CHECK(fake_calls == calls);
	use_free(p);
	GC_CHECK(code_malloc() != fake_malloc);
	GC_CHECK(data_malloc() != fake_malloc);
	if (!var->unapplied) {
		GC_CHECK((uintptr_t)code_malloc() == real_fn(N_MALLOC));
		GC_CHECK((uintptr_t)data_malloc() == real_fn(N_MALLOC));
	}
}

/* A module loaded by hand, as bionic leaves one in memory: the segments
 * copied to their place in an anonymous mapping between two guard pages,
 * the dynamic section untouched (every d_ptr relative). */
struct image {
	uint8_t *file;
	size_t fsize;
	uint8_t *map;     /* guard page, image, guard page */
	size_t maplen;
	uintptr_t base;   /* the load bias */
	size_t span;      /* bytes of image */
	ElfW(Phdr) *ph;   /* a copy: the corrupt case edits it */
	unsigned phnum;
	struct dl_phdr_info info;
};

static void image_free(struct image *im)
{
	if (im->map != NULL && im->map != MAP_FAILED)
		munmap(im->map, im->maplen);
	free(im->file);
	free(im->ph);
	memset(im, 0, sizeof(*im));
}

static bool image_load(struct image *im, const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	const ElfW(Ehdr) *eh;
	FILE *f;
	long len;

	memset(im, 0, sizeof(*im));
	f = fopen(path, "rb");
	if (f == NULL)
		return false;
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= (long)sizeof(ElfW(Ehdr)) ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		return false;
	}
	im->fsize = (size_t)len;
	im->file = malloc(im->fsize);
	if (im->file == NULL || fread(im->file, 1, im->fsize, f) != im->fsize) {
		fclose(f);
		return false;
	}
	fclose(f);
	eh = (const ElfW(Ehdr) *)im->file;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > im->fsize)
		return false;
	im->phnum = eh->e_phnum;
	im->ph = malloc(im->phnum * sizeof(ElfW(Phdr)));
	if (im->ph == NULL)
		return false;
	memcpy(im->ph, im->file + eh->e_phoff, im->phnum * sizeof(ElfW(Phdr)));
	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_LOAD && im->ph[i].p_vaddr + im->ph[i].p_memsz > im->span)
			im->span = im->ph[i].p_vaddr + im->ph[i].p_memsz;
	im->span = (im->span + (size_t)page - 1) & ~((size_t)page - 1);
	im->maplen = im->span + 2 * (size_t)page;
	im->map = mmap(NULL, im->maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (im->map == MAP_FAILED)
		return false;
	im->base = (uintptr_t)im->map + (uintptr_t)page;
	if (mprotect((void *)im->base, im->span, PROT_READ | PROT_WRITE) != 0)
		return false;
	for (unsigned i = 0; i < im->phnum; i++) {
		const ElfW(Phdr) *ph = &im->ph[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset + ph->p_filesz > im->fsize || ph->p_filesz > ph->p_memsz)
			return false;
		memcpy((void *)(im->base + ph->p_vaddr), im->file + ph->p_offset, ph->p_filesz);
	}
	im->info.dlpi_addr = im->base;
	im->info.dlpi_name = path;
	im->info.dlpi_phdr = im->ph;
	im->info.dlpi_phnum = (ElfW(Half))im->phnum;
	return true;
}

/* The image's dynamic section and its entry of tag @tag (NULL: none). */
static ElfW(Dyn) *image_dyn(const struct image *im, ElfW(Sxword) tag)
{
	for (unsigned i = 0; i < im->phnum; i++) {
		ElfW(Dyn) *d;

		if (im->ph[i].p_type != PT_DYNAMIC)
			continue;
		d = (ElfW(Dyn) *)(im->base + im->ph[i].p_vaddr);
		for (; d->d_tag != DT_NULL; d++)
			if (d->d_tag == tag)
				return d;
	}
	return NULL;
}

static unsigned image_flags(const struct image *im)
{
	unsigned fl = F_NO_RELRO;
	const ElfW(Dyn) *d;

	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_GNU_RELRO)
			fl &= ~(unsigned)F_NO_RELRO;
	if (image_dyn(im, 0x6000000f))
		fl |= F_ANDROID_REL;
	if (image_dyn(im, 0x60000011))
		fl |= F_ANDROID_RELA;
	if (image_dyn(im, 36))
		fl |= F_RELR;
	if (image_dyn(im, 0x6fffe000))
		fl |= F_ANDROID_RELR;
	if (((d = image_dyn(im, DT_FLAGS)) != NULL && (d->d_un.d_val & DF_BIND_NOW)) ||
	    ((d = image_dyn(im, DT_FLAGS_1)) != NULL && (d->d_un.d_val & DF_1_NOW)))
		fl |= F_BIND_NOW;
	return fl;
}

void gotcase_selfload(unsigned v)
{
	const struct variant *var = &variants[v];
	unsigned got[MAX_SLOTS], want[MAX_SLOTS], n, nw, fl;
	struct slots s = { 0 }, ls = { 0 };
	const char *why = NULL;
	struct image im;
	char path[4200];

	lib_path(path, sizeof(path), var->name);
	GC_CHECK(image_load(&im, path));
	fl = image_flags(&im);
	if ((fl & var->flags) != var->flags || (fl & var->absent) != 0) {
		gotcase_note("%s: format flags %#x, expected %#x and none of %#x", var->name, fl,
			     var->flags, var->absent);
		image_free(&im);
		GC_CHECK(!"the library is not in its format");
	}
	if (got_find(&im.info, names, NNAMES, collect, &s, &why) != 0) {
		gotcase_note("%s: %s", var->name, why);
		image_free(&im);
		GC_CHECK(!"got_find failed");
	}
	n = slot_keys(&s, got);
	nw = expected_keys(var, want);
	if (n != nw || memcmp(got, want, n * sizeof(*got)) != 0) {
		image_free(&im);
		GC_CHECK(!"the slots differ from the expected ones");
	}
	/* GNU ld on some targets counts the PLT relocations in DT_RELASZ (or
	 * DT_RELSZ) too: the same slots, each once */
	{
		ElfW(Sxword) tag = image_dyn(&im, DT_RELA) ? DT_RELA : DT_REL;
		ElfW(Dyn) *t = image_dyn(&im, tag), *j = image_dyn(&im, DT_JMPREL),
			  *tsz = image_dyn(&im, tag == DT_RELA ? DT_RELASZ : DT_RELSZ),
			  *jsz = image_dyn(&im, DT_PLTRELSZ);
		struct slots s2 = { 0 };

		if (t != NULL && j != NULL && tsz != NULL && jsz != NULL &&
		    t->d_un.d_ptr + tsz->d_un.d_val == j->d_un.d_ptr) {
			tsz->d_un.d_val += jsz->d_un.d_val;
			if (got_find(&im.info, names, NNAMES, collect, &s2, &why) != 0 || s2.n != s.n) {
				image_free(&im);
				GC_CHECK(!"PLT relocations inside DT_RELASZ counted twice");
			}
			tsz->d_un.d_val -= jsz->d_un.d_val;
		}
	}
	/* the same slots, at the same offsets, as from the loader's copy */
	if (var->loadable) {
		struct loaded *l = load(v);

		if (l == NULL || got_find(&l->info, names, NNAMES, collect, &ls, &why) != 0 ||
		    ls.n != s.n) {
			image_free(&im);
			GC_CHECK(!"the loaded copy gives other slots");
		}
		for (unsigned i = 0; i < s.n; i++) {
			if (s.s[i].name != ls.s[i].name || s.s[i].kind != ls.s[i].kind ||
			    s.s[i].addr - im.base != ls.s[i].addr - l->info.dlpi_addr) {
				image_free(&im);
				GC_CHECK(!"the loaded copy gives other slots");
			}
		}
	}
	image_free(&im);
}

/* ---- corrupt modules ---------------------------------------------------- */

/* A case's verdict: got_find's result on a mutated image. */
struct verdict {
	int rc;
	const char *why;
	unsigned bad_slots; /* slots outside the image or misaligned */
};

struct check_ctx {
	const struct image *im;
	unsigned bad;
};

static int check_slot(void *ctx, const struct got_slot *slot)
{
	struct check_ctx *c = ctx;

	if (slot->addr < c->im->base || slot->addr >= c->im->base + c->im->span ||
	    slot->addr % sizeof(uintptr_t) != 0 || slot->name >= NNAMES || slot->kind > GOT_ABS)
		c->bad++;
	return 0;
}

static struct verdict run(const struct image *im)
{
	struct check_ctx c = { im, 0 };
	struct verdict v;

	v.why = NULL;
	v.rc = got_find(&im->info, names, NNAMES, check_slot, &c, &v.why);
	v.bad_slots = c.bad;
	return v;
}

/* Write a signed LEB128 number at @p; returns its length. */
static size_t sleb_put(uint8_t *p, int64_t v)
{
	size_t n = 0;

	for (;;) {
		uint8_t b = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
			p[n++] = b;
			return n;
		}
		p[n++] = b | 0x80;
	}
}

/* The image's dynamic symbol index of @name (0: none). */
static uintptr_t sym_index(const struct image *im, const char *name)
{
	ElfW(Dyn) *sd = image_dyn(im, DT_SYMTAB), *st = image_dyn(im, DT_STRTAB);
	const ElfW(Sym) *sym;
	const char *str;

	if (sd == NULL || st == NULL || st->d_un.d_ptr <= sd->d_un.d_ptr)
		return 0;
	sym = (const ElfW(Sym) *)(im->base + sd->d_un.d_ptr);
	str = (const char *)(im->base + st->d_un.d_ptr);
	for (uintptr_t i = 1; (uintptr_t)&sym[i + 1] <= im->base + st->d_un.d_ptr; i++)
		if (strcmp(str + sym[i].st_name, name) == 0)
			return i;
	return 0;
}

#if UINTPTR_MAX > 0xffffffffu
#define R_SYM_OF(i) ELF64_R_SYM(i)
#define R_TYPE_OF(i) ELF64_R_TYPE(i)
#define R_INFO_OF(s, t) ELF64_R_INFO(s, t)
#else
#define R_SYM_OF(i) ELF32_R_SYM(i)
#define R_TYPE_OF(i) ELF32_R_TYPE(i)
#define R_INFO_OF(s, t) ELF32_R_INFO(s, t)
#endif

/* The r_offset and r_info words of the DT_JMPREL entry of symbol @sym. */
static bool plt_entry(const struct image *im, uintptr_t sym, ElfW(Addr) **offset, ElfW(Addr) **info)
{
	ElfW(Dyn) *j = image_dyn(im, DT_JMPREL), *sz = image_dyn(im, DT_PLTRELSZ),
		  *kind = image_dyn(im, DT_PLTREL);
	size_t ent;

	if (j == NULL || sz == NULL || kind == NULL)
		return false;
	ent = kind->d_un.d_val == DT_RELA ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel));
	for (size_t o = 0; o + ent <= sz->d_un.d_val; o += ent) {
		ElfW(Rel) *r = (ElfW(Rel) *)(im->base + j->d_un.d_ptr + o); /* Rela starts as Rel */

		if (R_SYM_OF(r->r_info) == sym) {
			*offset = &r->r_offset;
			*info = &r->r_info;
			return true;
		}
	}
	return false;
}

/* One targeted corruption and the reason it must give; @apply returns
 * false when the variant has nothing to corrupt there. */
struct mutation {
	const char *why;
	bool (*apply)(struct image *im);
};

#define DYN_SET(im, tag, value)                                      \
	do {                                                         \
		ElfW(Dyn) *d_ = image_dyn((im), (tag));              \
		if (d_ == NULL)                                      \
			return false;                                \
		d_->d_un.d_val = (value);                            \
	} while (0)

static bool m_no_dynamic(struct image *im)
{
	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			im->ph[i].p_type = PT_NULL;
	return true;
}

static bool m_dynamic_out(struct image *im)
{
	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			im->ph[i].p_vaddr = im->span + 0x10000;
	return true;
}

static bool m_strtab_far(struct image *im)
{
	DYN_SET(im, DT_STRTAB, (ElfW(Addr))-64);
	return true;
}

static bool m_strsz_big(struct image *im)
{
	DYN_SET(im, DT_STRSZ, im->span * 2);
	return true;
}

static bool m_symtab_far(struct image *im)
{
	DYN_SET(im, DT_SYMTAB, (ElfW(Addr))-64);
	return true;
}

static bool m_symtab_gone(struct image *im)
{
	ElfW(Dyn) *d = image_dyn(im, DT_SYMTAB);

	if (d == NULL)
		return false;
	d->d_tag = DT_DEBUG;
	return true;
}

static bool m_syment(struct image *im)
{
	DYN_SET(im, DT_SYMENT, 3);
	return true;
}

static bool m_pltrelsz_big(struct image *im)
{
	DYN_SET(im, DT_PLTRELSZ, im->span * 4 * sizeof(ElfW(Rela)));
	return true;
}

static bool m_pltrelsz_odd(struct image *im)
{
	ElfW(Dyn) *d = image_dyn(im, DT_PLTRELSZ);

	if (d == NULL)
		return false;
	d->d_un.d_val += 1;
	return true;
}

static bool m_pltrel_kind(struct image *im)
{
	DYN_SET(im, DT_PLTREL, 99);
	return true;
}

static bool m_relaent(struct image *im)
{
	DYN_SET(im, DT_RELAENT, 5);
	return true;
}

static bool m_relent(struct image *im)
{
	DYN_SET(im, DT_RELENT, 5);
	return true;
}

static bool m_rela_far(struct image *im)
{
	DYN_SET(im, DT_RELA, (ElfW(Addr))-64);
	return true;
}

static bool m_rel_far(struct image *im)
{
	DYN_SET(im, DT_REL, (ElfW(Addr))-64);
	return true;
}

static ElfW(Dyn) *aps2_dyn(struct image *im, bool size)
{
	return image_dyn(im, APS2_RELA ? (size ? 0x60000012 : 0x60000011)
				       : (size ? 0x60000010 : 0x6000000f));
}

static bool m_aps2_far(struct image *im)
{
	ElfW(Dyn) *d = aps2_dyn(im, false);

	if (d == NULL)
		return false;
	d->d_un.d_ptr = (ElfW(Addr))-64;
	return true;
}

static bool m_aps2_magic(struct image *im)
{
	ElfW(Dyn) *d = aps2_dyn(im, false);

	if (d == NULL)
		return false;
	((uint8_t *)(im->base + d->d_un.d_ptr))[3] = '3';
	return true;
}

static bool m_aps2_short(struct image *im)
{
	ElfW(Dyn) *d = aps2_dyn(im, true);

	if (d == NULL)
		return false;
	d->d_un.d_val = 6;
	return true;
}

/* Replace the packed stream by @n bytes at @bytes (after "APS2"). */
static bool aps2_stream(struct image *im, const uint8_t *bytes, size_t n)
{
	ElfW(Dyn) *d = aps2_dyn(im, false), *sz = aps2_dyn(im, true);
	uint8_t *p;

	if (d == NULL || sz == NULL || sz->d_un.d_val < 4 + n)
		return false;
	p = (uint8_t *)(im->base + d->d_un.d_ptr);
	memcpy(p + 4, bytes, n);
	sz->d_un.d_val = 4 + n;
	return true;
}

static bool m_aps2_count(struct image *im)
{
	uint8_t b[32];
	size_t n = sleb_put(b, 0x7ffffff0);

	n += sleb_put(b + n, 0);
	return aps2_stream(im, b, n);
}

static bool m_aps2_group0(struct image *im)
{
	static const uint8_t b[] = { 1, 0, 0, 0 }; /* 1 reloc, offset 0, group of 0 */

	return aps2_stream(im, b, sizeof(b));
}

static bool m_aps2_group_big(struct image *im)
{
	static const uint8_t b[] = { 3, 0, 5, 0 }; /* 3 relocs, a group of 5 */

	return aps2_stream(im, b, sizeof(b));
}

static bool m_aps2_flags(struct image *im)
{
	static const uint8_t b[] = { 1, 0, 1, 16 };

	return aps2_stream(im, b, sizeof(b));
}

static bool m_aps2_long(struct image *im)
{
	static const uint8_t b[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0 };

	return aps2_stream(im, b, sizeof(b));
}

static bool m_aps2_cut(struct image *im)
{
	static const uint8_t b[] = { 2, 0, 2, 1, 7, 0x80 }; /* a group's second offset cut */

	return aps2_stream(im, b, sizeof(b));
}

static bool m_aps2_rel_addend(struct image *im)
{
	static const uint8_t b[] = { 1, 0, 1, 8, 0, 0, 0 };

	if (APS2_RELA)
		return false;
	return aps2_stream(im, b, sizeof(b));
}

#if defined(__x86_64__)
#define T_JUMP R_X86_64_JUMP_SLOT
#define T_GLOB R_X86_64_GLOB_DAT
#define T_ABS R_X86_64_64
#elif defined(__aarch64__)
#define T_JUMP R_AARCH64_JUMP_SLOT
#define T_GLOB R_AARCH64_GLOB_DAT
#define T_ABS R_AARCH64_ABS64
#elif defined(__arm__)
#define T_JUMP R_ARM_JUMP_SLOT
#define T_GLOB R_ARM_GLOB_DAT
#define T_ABS R_ARM_ABS32
#else
#define T_JUMP R_386_JMP_SLOT
#define T_GLOB R_386_GLOB_DAT
#define T_ABS R_386_32
#endif

/* A packed stream written here, decoded to the exact slots: groups that
 * share the offset step, the info and (RELA) the addend step; a slot with
 * a nonzero addend is not one; a group without addends resets it. */
static void aps2_crafted(struct image *im)
{
	uintptr_t sfree = sym_index(im, "free"), smalloc = sym_index(im, "malloc"),
		  scalloc = sym_index(im, "calloc");
	const uintptr_t x = 0x100; /* in the first segment: a word of the ELF header */
	struct slots s = { 0 };
	const char *why = NULL;
	uint8_t b[96];
	size_t n = 0;

	GC_CHECK(sfree != 0 && smalloc != 0 && scalloc != 0);
	n += sleb_put(b + n, 5);                        /* relocations */
	n += sleb_put(b + n, (int64_t)x);               /* first offset */
	/* group 1: 3 GLOB_DAT of free, 8 bytes apart */
	n += sleb_put(b + n, 3);
	n += sleb_put(b + n, APS2_RELA ? 1 | 2 | 8 : 1 | 2); /* by info, by offset step (, addends) */
	n += sleb_put(b + n, (int64_t)sizeof(uintptr_t));
	n += sleb_put(b + n, (int64_t)R_INFO_OF(sfree, T_GLOB));
	if (APS2_RELA) { /* addends 16, 0, 4 */
		n += sleb_put(b + n, 16);
		n += sleb_put(b + n, -16);
		n += sleb_put(b + n, 4);
	}
	/* group 2: each its own offset step and info, no addend */
	n += sleb_put(b + n, 2);
	n += sleb_put(b + n, 0);
	n += sleb_put(b + n, (int64_t)sizeof(uintptr_t));
	n += sleb_put(b + n, (int64_t)R_INFO_OF(smalloc, T_JUMP));
	n += sleb_put(b + n, 2 * (int64_t)sizeof(uintptr_t));
	n += sleb_put(b + n, (int64_t)R_INFO_OF(scalloc, T_ABS));
	GC_CHECK(aps2_stream(im, b, n));
	GC_CHECK(got_find(&im->info, names, NNAMES, collect, &s, &why) == 0);
	/* then the DT_JMPREL slots, as always */
	if (APS2_RELA) {
		GC_CHECK(s.n >= 3);
		GC_CHECK(s.s[0].name == N_FREE && s.s[0].kind == GOT_GLOB_DAT);
		GC_CHECK(s.s[0].addr == im->base + x + 2 * sizeof(uintptr_t));
		GC_CHECK(s.s[1].name == N_MALLOC && s.s[1].kind == GOT_JUMP_SLOT);
		GC_CHECK(s.s[1].addr == im->base + x + 4 * sizeof(uintptr_t));
		GC_CHECK(s.s[2].name == N_CALLOC && s.s[2].kind == GOT_ABS);
		GC_CHECK(s.s[2].addr == im->base + x + 6 * sizeof(uintptr_t));
		GC_CHECK(s.n == 3 + 3); /* + malloc, free, calloc JUMP_SLOTs */
	} else {
		GC_CHECK(s.n >= 5);
		for (unsigned i = 0; i < 3; i++)
			GC_CHECK(s.s[i].name == N_FREE && s.s[i].kind == GOT_GLOB_DAT &&
				 s.s[i].addr == im->base + x + (i + 1) * sizeof(uintptr_t));
		GC_CHECK(s.s[3].name == N_MALLOC && s.s[3].kind == GOT_JUMP_SLOT);
		GC_CHECK(s.s[3].addr == im->base + x + 4 * sizeof(uintptr_t));
		GC_CHECK(s.s[4].name == N_CALLOC && s.s[4].kind == GOT_ABS);
		GC_CHECK(s.s[4].addr == im->base + x + 6 * sizeof(uintptr_t));
		GC_CHECK(s.n == 5 + 3);
	}
}

/* One GLOB_DAT relocation of free whose offset leaves the module. */
static bool m_aps2_offset(struct image *im)
{
	uintptr_t sym = sym_index(im, "free");
	uint8_t b[64];
	size_t n = 0;
	uint64_t info;
#if defined(__x86_64__)
	info = (uint64_t)sym << 32 | R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
	info = (uint64_t)sym << 32 | R_AARCH64_GLOB_DAT;
#elif defined(__arm__)
	info = (uint64_t)sym << 8 | R_ARM_GLOB_DAT;
#else
	info = (uint64_t)sym << 8 | R_386_GLOB_DAT;
#endif
	if (sym == 0)
		return false;
	n += sleb_put(b + n, 1);               /* one relocation */
	n += sleb_put(b + n, 0);               /* offset 0 */
	n += sleb_put(b + n, 1);               /* a group of one */
	n += sleb_put(b + n, 1);               /* grouped by info */
	n += sleb_put(b + n, (int64_t)info);
	n += sleb_put(b + n, (int64_t)(im->span * 16)); /* its offset */
	return aps2_stream(im, b, n);
}

static bool m_plt_sym(struct image *im)
{
	ElfW(Addr) *off, *info;

	if (!plt_entry(im, sym_index(im, "free"), &off, &info))
		return false;
	*info = R_INFO_OF(0xffffffu, R_TYPE_OF(*info));
	return true;
}

static bool m_plt_offset(struct image *im)
{
	ElfW(Addr) *off, *info;

	if (!plt_entry(im, sym_index(im, "free"), &off, &info))
		return false;
	*off = im->span * 8;
	return true;
}

static bool m_st_name(struct image *im)
{
	ElfW(Dyn) *sd = image_dyn(im, DT_SYMTAB);
	uintptr_t sym = sym_index(im, "free");

	if (sd == NULL || sym == 0)
		return false;
	((ElfW(Sym) *)(im->base + sd->d_un.d_ptr))[sym].st_name = 0x7ffffff0;
	return true;
}

static const struct mutation mutations[] = {
	{ "no dynamic section", m_no_dynamic },
	{ "dynamic section outside the module", m_dynamic_out },
	{ "DT_STRTAB outside the module", m_strtab_far },
	{ "DT_STRTAB outside the module", m_strsz_big },
	{ "DT_SYMTAB outside the module", m_symtab_far },
	{ "DT_SYMTAB or DT_STRTAB missing", m_symtab_gone },
	{ "bad DT_SYMENT", m_syment },
	{ "DT_JMPREL table outside the module", m_pltrelsz_big },
	{ "relocation table size not a multiple of its entry size", m_pltrelsz_odd },
	{ "bad DT_PLTREL", m_pltrel_kind },
	{ "bad DT_RELAENT", m_relaent },
	{ "bad DT_RELENT", m_relent },
	{ "DT_RELA table outside the module", m_rela_far },
	{ "DT_REL table outside the module", m_rel_far },
	{ APS2_RELA ? "DT_ANDROID_RELA table outside the module" : "DT_ANDROID_REL table outside the module",
	  m_aps2_far },
	{ "packed relocations without the APS2 mark", m_aps2_magic },
	{ "packed relocations cut short", m_aps2_short },
	{ "more packed relocations than the module has words", m_aps2_count },
	{ "bad packed relocation group", m_aps2_group0 },
	{ "bad packed relocation group", m_aps2_group_big },
	{ "bad packed relocation group", m_aps2_flags },
	{ "packed relocations cut short", m_aps2_long },
	{ "packed relocations cut short", m_aps2_cut },
	{ "addends in packed REL relocations", m_aps2_rel_addend },
	{ "relocation offset outside the module", m_aps2_offset },
	{ "relocation symbol index past DT_SYMTAB", m_plt_sym },
	{ "relocation offset outside the module", m_plt_offset },
	{ "symbol name outside DT_STRTAB", m_st_name },
};

/* Regions worth corrupting at random: the dynamic section and the tables
 * it points at (offsets from the base). */
struct region {
	uintptr_t off, len;
};

static unsigned regions(const struct image *im, struct region *r)
{
	static const ElfW(Sxword) tabs[][2] = {
		{ DT_STRTAB, DT_STRSZ }, { DT_RELA, DT_RELASZ }, { DT_REL, DT_RELSZ },
		{ DT_JMPREL, DT_PLTRELSZ }, { 0x6000000f, 0x60000010 }, { 0x60000011, 0x60000012 },
	};
	ElfW(Dyn) *sd = image_dyn(im, DT_SYMTAB), *st = image_dyn(im, DT_STRTAB);
	unsigned n = 0;

	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			r[n++] = (struct region){ im->ph[i].p_vaddr, im->ph[i].p_memsz };
	if (sd != NULL && st != NULL && st->d_un.d_ptr > sd->d_un.d_ptr)
		r[n++] = (struct region){ sd->d_un.d_ptr, st->d_un.d_ptr - sd->d_un.d_ptr };
	for (unsigned i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		ElfW(Dyn) *a = image_dyn(im, tabs[i][0]), *s = image_dyn(im, tabs[i][1]);

		if (a != NULL && s != NULL && s->d_un.d_val != 0 && a->d_un.d_ptr < im->span &&
		    s->d_un.d_val <= im->span - a->d_un.d_ptr)
			r[n++] = (struct region){ a->d_un.d_ptr, s->d_un.d_val };
	}
	return n;
}

static uint32_t rng_state = 0x2545f491;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

#define RANDOM_ROUNDS 3000

void gotcase_corrupt(unsigned v)
{
	const struct variant *var = &variants[v];
	long page = sysconf(_SC_PAGESIZE);
	unsigned applied = 0, failed = 0, ok = 0, nreg;
	struct region reg[16];
	ElfW(Phdr) *pristine_ph;
	uint8_t *pristine;
	struct verdict vd;
	struct image im;
	char path[4200];

	lib_path(path, sizeof(path), var->name);
	GC_CHECK(image_load(&im, path));
	pristine = malloc(im.span);
	pristine_ph = malloc(im.phnum * sizeof(ElfW(Phdr)));
	GC_CHECK(pristine != NULL && pristine_ph != NULL);
	memcpy(pristine, (void *)im.base, im.span);
	memcpy(pristine_ph, im.ph, im.phnum * sizeof(ElfW(Phdr)));
	vd = run(&im);
	GC_CHECK(vd.rc == 0 && vd.bad_slots == 0);

	/* targeted: each gives its reason */
	for (unsigned i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		bool on = mutations[i].apply(&im);

		if (on) {
			applied++;
			vd = run(&im);
			if (vd.rc != -1 || vd.why == NULL || strcmp(vd.why, mutations[i].why) != 0) {
				gotcase_note("%s: mutation %u: rc %d, why \"%s\", expected \"%s\"", var->name, i,
					     vd.rc, vd.why ? vd.why : "(null)", mutations[i].why);
				failed++;
			}
		}
		memcpy((void *)im.base, pristine, im.span);
		memcpy(im.ph, pristine_ph, im.phnum * sizeof(ElfW(Phdr)));
	}
	GC_CHECK(failed == 0);
	/* what every format has: the dynamic section, string and symbol
	 * tables, PLT relocations, and for the packed ones the APS2 stream */
	GC_CHECK(applied >= ((var->flags & F_APS2) ? 21u : 13u));

	if (var->flags & F_APS2) {
		aps2_crafted(&im);
		memcpy((void *)im.base, pristine, im.span);
	}

	/* truncated: the segments cut at each page, the rest unmapped */
	for (uintptr_t cut = (uintptr_t)page; cut < im.span; cut += (uintptr_t)page) {
		for (unsigned i = 0; i < im.phnum; i++) {
			ElfW(Phdr) *ph = &im.ph[i];

			if (ph->p_type != PT_LOAD)
				continue;
			if (ph->p_vaddr >= cut)
				ph->p_type = PT_NULL;
			else if (ph->p_vaddr + ph->p_memsz > cut)
				ph->p_memsz = cut - ph->p_vaddr;
		}
		GC_CHECK(mprotect((void *)(im.base + cut), im.span - cut, PROT_NONE) == 0);
		vd = run(&im);
		GC_CHECK(mprotect((void *)(im.base + cut), im.span - cut, PROT_READ | PROT_WRITE) == 0);
		GC_CHECK(vd.bad_slots == 0);
		GC_CHECK(vd.rc == 0 || (vd.rc == -1 && vd.why != NULL && vd.why[0] != '\0'));
		if (vd.rc == -1)
			ok++;
		memcpy(im.ph, pristine_ph, im.phnum * sizeof(ElfW(Phdr)));
	}
	GC_CHECK(ok >= 1); /* the tables end past the first page */

	/* random bytes in the tables: 0 with sane slots or -1 with a reason */
	nreg = regions(&im, reg);
	GC_CHECK(nreg >= 4);
	failed = 0;
	ok = 0;
	for (unsigned round = 0; round < RANDOM_ROUNDS; round++) {
		unsigned k = 1 + rng() % 4;
		uintptr_t at[4];

		for (unsigned j = 0; j < k; j++) {
			const struct region *r = &reg[rng() % nreg];

			at[j] = r->off + rng() % r->len;
			((uint8_t *)im.base)[at[j]] = (uint8_t)rng();
		}
		vd = run(&im);
		if (vd.bad_slots != 0 || (vd.rc != 0 && vd.rc != -1) ||
		    (vd.rc == -1 && (vd.why == NULL || vd.why[0] == '\0')))
			failed++;
		if (vd.rc == -1)
			ok++;
		for (unsigned j = 0; j < k; j++)
			((uint8_t *)im.base)[at[j]] = pristine[at[j]];
	}
	gotcase_note("%s: %u targeted mutations; %u of %d random ones rejected", var->name, applied, ok,
		     RANDOM_ROUNDS);
	GC_CHECK(failed == 0);
	GC_CHECK(ok > 0);
	free(pristine);
	free(pristine_ph);
	image_free(&im);
}

/* ---- the rest ------------------------------------------------------------ */

#define SWAP_THREADS 4
#define SWAP_ROUNDS 2000

static atomic_int callers_on, callers_stop;

struct caller {
	void *(*use_malloc)(size_t);
	void (*use_free)(void *);
	unsigned calls, nulls;
};

/* Call through the library's malloc slots until told to stop. */
static void *call_loop(void *arg)
{
	struct caller *c = arg;

	callers_on++;
	while (!callers_stop) {
		void *p = c->use_malloc(16);

		c->calls++;
		if (p == NULL)
			c->nulls++;
		c->use_free(p);
	}
	return NULL;
}

/* Threads call through the slots while they are swapped and swapped back
 * (on RELRO pages: the -z now library): every call reaches malloc or the
 * test's function, and at the end the slots and their protection are as
 * they were. */
void gotcase_swap_threads(void)
{
	unsigned v = 1; /* "now" */
	uintptr_t cur[MAX_SLOTS], fake = (uintptr_t)fake_malloc, found;
	struct caller c[SWAP_THREADS];
	pthread_t t[SWAP_THREADS];
	struct slots s = { 0 };
	const char *why = NULL;
	struct loaded *l;
	unsigned swaps = 0, calls, total = 0;

	GC_CHECK(strcmp(variants[v].name, "now") == 0);
	l = load(v);
	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, collect, &s, &why) == 0);
	for (unsigned i = 0; i < s.n; i++) {
		cur[i] = *(const uintptr_t *)s.s[i].addr;
		GC_CHECK(page_writable(s.s[i].addr) == 0);
	}
	calls = fake_calls;
	callers_on = 0;
	callers_stop = 0;
	for (unsigned k = 0; k < SWAP_THREADS; k++) {
		c[k].use_malloc = (void *(*)(size_t))fn(l, "got_use_malloc");
		c[k].use_free = (void (*)(void *))fn(l, "got_use_free");
		c[k].calls = c[k].nulls = 0;
		GC_CHECK(c[k].use_malloc != NULL && c[k].use_free != NULL);
		GC_CHECK(pthread_create(&t[k], NULL, call_loop, &c[k]) == 0);
	}
	while (callers_on < SWAP_THREADS)
		sched_yield();
	for (unsigned r = 0; r < SWAP_ROUNDS; r++) {
		for (unsigned i = 0; i < s.n; i++)
			if (s.s[i].name == N_MALLOC)
				swaps += got_swap(&l->info, s.s[i].addr, cur[i], fake, &found) == 1;
		for (unsigned i = 0; i < s.n; i++)
			if (s.s[i].name == N_MALLOC)
				swaps += got_swap(&l->info, s.s[i].addr, fake, cur[i], &found) == 1;
	}
	callers_stop = 1;
	for (unsigned k = 0; k < SWAP_THREADS; k++) {
		pthread_join(t[k], NULL);
		GC_CHECK(c[k].nulls == 0);
		total += c[k].calls;
	}
	l->called = true;
	GC_CHECK(swaps == SWAP_ROUNDS * 2 * ((BFD_PLT_GOT ? 2u : 3u)));
	GC_CHECK(fake_calls - calls <= total);
	for (unsigned i = 0; i < s.n; i++) {
		GC_CHECK(*(const uintptr_t *)s.s[i].addr == cur[i]);
		GC_CHECK(page_writable(s.s[i].addr) == 0);
	}
	gotcase_note("%u swaps while %d threads made %u calls; %u reached the swapped-in function", swaps,
		     SWAP_THREADS, total, fake_calls - calls);
}

void gotcase_none(void)
{
	struct slots s = { 0 };
	const char *why = NULL;
	struct loaded *l = load(NVARIANTS);

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, collect, &s, &why) == 0);
	GC_CHECK(s.n == 0);
	GC_CHECK(why == NULL);
}

struct loaded_ctx {
	unsigned modules, failed;
};

static int check_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_ctx *c = data;
	struct slots s = { 0 };
	const char *why = NULL;

	(void)size;
	c->modules++;
	if (got_find(info, names, NNAMES, collect, &s, &why) != 0) {
		gotcase_note("%s: %s", info->dlpi_name, why);
		c->failed++;
	}
	return 0;
}

void gotcase_loaded(void)
{
	struct loaded_ctx c = { 0, 0 };

	for (unsigned v = 0; v < NVARIANTS; v++)
		if (variants[v].loadable)
			load(v);
	dl_iterate_phdr(check_loaded, &c);
	GC_CHECK(c.modules >= 4); /* the program, the C library, the loader, a variant */
	GC_CHECK(c.failed == 0);
}

static int stop_at_first(void *ctx, const struct got_slot *slot)
{
	(void)slot;
	++*(unsigned *)ctx;
	return 7;
}

void gotcase_stop(void)
{
	struct loaded *l = load(0);
	const char *why = NULL;
	unsigned calls = 0;

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, stop_at_first, &calls, &why) == 7);
	GC_CHECK(calls == 1);
	GC_CHECK(why == NULL);
}

void gotcase_swap_errors(void)
{
	struct loaded *l = load(0);
	struct slots s = { 0 };
	const char *why = NULL;
	uintptr_t found = 0, before, text;
	int on_stack = 0;

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, names, NNAMES, collect, &s, &why) == 0 && s.n > 0);
	before = *(const uintptr_t *)s.s[0].addr;
	errno = 0;
	GC_CHECK(got_swap(&l->info, s.s[0].addr + 1, before, 0x10, &found) == -1);
	GC_CHECK(errno == EINVAL);
	errno = 0;
	GC_CHECK(got_swap(&l->info, (uintptr_t)&on_stack & ~(uintptr_t)(sizeof(uintptr_t) - 1), 0, 0x10,
			  &found) == -1);
	GC_CHECK(errno == EFAULT);
	/* a word of the library's code: in a PT_LOAD, not a writable one */
	text = (uintptr_t)fn(l, "got_use_malloc") & ~(uintptr_t)(sizeof(uintptr_t) - 1);
	GC_CHECK(in_module(&l->info, text));
	errno = 0;
	GC_CHECK(got_swap(&l->info, text, *(const uintptr_t *)text, 0x10, &found) == -1);
	GC_CHECK(errno == EFAULT);
	GC_CHECK(*(const uintptr_t *)s.s[0].addr == before);
	GC_CHECK(on_stack == 0);
}
