/* The checks of hook/got.c (gotcases.h): libgotuse.c linked in every
 * relocation format the in-app build meets, loaded by the C library's
 * loader and by hand (as bionic leaves a module: d_ptr values relative),
 * then corrupted.
 *
 * The gc_variants (the Makefile's GOT block builds them):
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
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"
#include "gotcase_int.h"
#include "gotcases.h"

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

const struct variant gc_variants[] = {
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
#define GC_NVARIANTS (sizeof(gc_variants) / sizeof(gc_variants[0]))

const char *const gc_names[GC_NNAMES] = { "malloc", "free", "calloc", "realloc", "strdup", "aligned_alloc" };


static char libdir[4096];

unsigned gotcase_variants(void)
{
	return GC_NVARIANTS;
}

const char *gotcase_variant_name(unsigned v)
{
	return gc_variants[v].name;
}

bool gotcase_variant_loadable(unsigned v)
{
	return gc_variants[v].loadable;
}

void gotcase_set_dir(const char *dir)
{
	snprintf(libdir, sizeof(libdir), "%s", dir);
}

void gc_lib_path(char *buf, size_t len, const char *variant)
{
	if (variant != NULL)
		snprintf(buf, len, "%s/libgot-%s.so", libdir, variant);
	else
		snprintf(buf, len, "%s/libgotnone.so", libdir);
}

int gc_collect(void *ctx, const struct got_slot *slot)
{
	struct slots *out = ctx;

	if (out->n < GC_MAX_SLOTS)
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
	unsigned n = s->n < GC_MAX_SLOTS ? s->n : GC_MAX_SLOTS;

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
static struct loaded loaded[GC_NVARIANTS + 1]; /* + libgotnone */

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

bool gc_module_of(void *handle, struct dl_phdr_info *info)
{
	struct link_map *lm;
	struct find_ctx f;

	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0)
		return false;
	f.name = lm->l_name;
	f.out = info;
	f.found = 0;
	dl_iterate_phdr(find_module, &f);
	return f.found != 0;
}

/* Load variant @v (GC_NVARIANTS: libgotnone.so), once. */
static struct loaded *load(unsigned v)
{
	struct loaded *l = &loaded[v];
	char path[4200];

	if (l->handle != NULL)
		return l;
	gc_lib_path(path, sizeof(path), v < GC_NVARIANTS ? gc_variants[v].name : NULL);
	l->handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (l->handle == NULL) {
		gotcase_note("dlopen %s: %s", path, dlerror());
		return NULL;
	}
	return gc_module_of(l->handle, &l->info) ? l : NULL;
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
	return (uintptr_t)dlsym(RTLD_DEFAULT, gc_names[name]);
}

void gotcase_list(unsigned v)
{
	const struct variant *var = &gc_variants[v];
	unsigned got[GC_MAX_SLOTS], want[GC_MAX_SLOTS], n, nw;
	struct slots s = { 0 };
	const char *why = NULL;
	struct loaded *l;

	GC_CHECK(var->loadable);
	l = load(v);
	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
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


bool gc_image_place(struct image *im, const char *path)
{
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

/* Whether the page holding @addr is writable (gc_page_prot): 1 yes, 0
 * no, -1 not mapped. */
static int page_writable(uintptr_t addr)
{
	int prot = gc_page_prot(addr);

	return prot < 0 ? -1 : (prot & PROT_WRITE) != 0;
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
	const struct variant *var = &gc_variants[v];
	uintptr_t cur[GC_MAX_SLOTS], found, fake = (uintptr_t)fake_malloc;
	int prot[GC_MAX_SLOTS];
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
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
	GC_CHECK(s.n <= GC_MAX_SLOTS);

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

void gc_image_free(struct image *im)
{
	if (im->map != NULL && im->map != MAP_FAILED)
		munmap(im->map, im->maplen);
	free(im->file);
	free(im->ph);
	memset(im, 0, sizeof(*im));
}

bool gc_image_read(struct image *im, const char *path)
{
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
	return true;
}

bool gc_image_load(struct image *im, const char *path)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!gc_image_read(im, path))
		return false;
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
	return gc_image_place(im, path);
}

/* The image's dynamic section and its entry of tag @tag (NULL: none). */
ElfW(Dyn) *gc_image_dyn(const struct image *im, ElfW(Sxword) tag)
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
	if (gc_image_dyn(im, 0x6000000f))
		fl |= F_ANDROID_REL;
	if (gc_image_dyn(im, 0x60000011))
		fl |= F_ANDROID_RELA;
	if (gc_image_dyn(im, 36))
		fl |= F_RELR;
	if (gc_image_dyn(im, 0x6fffe000))
		fl |= F_ANDROID_RELR;
	if (((d = gc_image_dyn(im, DT_FLAGS)) != NULL && (d->d_un.d_val & DF_BIND_NOW)) ||
	    ((d = gc_image_dyn(im, DT_FLAGS_1)) != NULL && (d->d_un.d_val & DF_1_NOW)))
		fl |= F_BIND_NOW;
	return fl;
}

void gotcase_selfload(unsigned v)
{
	const struct variant *var = &gc_variants[v];
	unsigned got[GC_MAX_SLOTS], want[GC_MAX_SLOTS], n, nw, fl;
	struct slots s = { 0 }, ls = { 0 };
	const char *why = NULL;
	struct image im;
	char path[4200];

	gc_lib_path(path, sizeof(path), var->name);
	GC_CHECK(gc_image_load(&im, path));
	fl = image_flags(&im);
	if ((fl & var->flags) != var->flags || (fl & var->absent) != 0) {
		gotcase_note("%s: format flags %#x, expected %#x and none of %#x", var->name, fl,
			     var->flags, var->absent);
		gc_image_free(&im);
		GC_CHECK(!"the library is not in its format");
	}
	if (got_find(&im.info, gc_names, GC_NNAMES, gc_collect, &s, &why) != 0) {
		gotcase_note("%s: %s", var->name, why);
		gc_image_free(&im);
		GC_CHECK(!"got_find failed");
	}
	n = slot_keys(&s, got);
	nw = expected_keys(var, want);
	if (n != nw || memcmp(got, want, n * sizeof(*got)) != 0) {
		gc_image_free(&im);
		GC_CHECK(!"the slots differ from the expected ones");
	}
	/* GNU ld on some targets counts the PLT relocations in DT_RELASZ (or
	 * DT_RELSZ) too: the same slots, each once */
	{
		ElfW(Sxword) tag = gc_image_dyn(&im, DT_RELA) ? DT_RELA : DT_REL;
		ElfW(Dyn) *t = gc_image_dyn(&im, tag), *j = gc_image_dyn(&im, DT_JMPREL),
			  *tsz = gc_image_dyn(&im, tag == DT_RELA ? DT_RELASZ : DT_RELSZ),
			  *jsz = gc_image_dyn(&im, DT_PLTRELSZ);
		struct slots s2 = { 0 };

		if (t != NULL && j != NULL && tsz != NULL && jsz != NULL &&
		    t->d_un.d_ptr + tsz->d_un.d_val == j->d_un.d_ptr) {
			tsz->d_un.d_val += jsz->d_un.d_val;
			if (got_find(&im.info, gc_names, GC_NNAMES, gc_collect, &s2, &why) != 0 || s2.n != s.n) {
				gc_image_free(&im);
				GC_CHECK(!"PLT relocations inside DT_RELASZ counted twice");
			}
			tsz->d_un.d_val -= jsz->d_un.d_val;
		}
	}
	/* the same slots, at the same offsets, as from the loader's copy */
	if (var->loadable) {
		struct loaded *l = load(v);

		if (l == NULL || got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &ls, &why) != 0 ||
		    ls.n != s.n) {
			gc_image_free(&im);
			GC_CHECK(!"the loaded copy gives other slots");
		}
		for (unsigned i = 0; i < s.n; i++) {
			if (s.s[i].name != ls.s[i].name || s.s[i].kind != ls.s[i].kind ||
			    s.s[i].addr - im.base != ls.s[i].addr - l->info.dlpi_addr) {
				gc_image_free(&im);
				GC_CHECK(!"the loaded copy gives other slots");
			}
		}
	}
	gc_image_free(&im);
}

/* ---- the rest ------------------------------------------------------------ */

#define SWAP_THREADS 4
#define SWAP_ROUNDS 2000
#define SWAP_WAIT_EVERY 100

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
	uintptr_t cur[GC_MAX_SLOTS], fake = (uintptr_t)fake_malloc, found;
	struct caller c[SWAP_THREADS];
	pthread_t t[SWAP_THREADS];
	struct slots s = { 0 };
	const char *why = NULL;
	struct loaded *l;
	unsigned swaps = 0, calls, total = 0, reached = 0;

	GC_CHECK(strcmp(gc_variants[v].name, "now") == 0);
	l = load(v);
	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
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
		/* every SWAP_WAIT_EVERY rounds, wait (a while at most) until a
		 * thread's call has reached the swapped-in function */
		if (r % SWAP_WAIT_EVERY == 0) {
			unsigned before = fake_calls;

			for (unsigned k = 0; k < 1000000 && fake_calls == before; k++)
				sched_yield();
			reached += fake_calls != before;
		}
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
	/* the swapped-in function was reached each time it was waited for */
	GC_CHECK(reached == SWAP_ROUNDS / SWAP_WAIT_EVERY);
	GC_CHECK(fake_calls - calls >= reached);
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
	struct loaded *l = load(GC_NVARIANTS);

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
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
	if (got_find(info, gc_names, GC_NNAMES, gc_collect, &s, &why) != 0) {
		gotcase_note("%s: %s", info->dlpi_name, why);
		c->failed++;
	}
	return 0;
}

void gotcase_loaded(void)
{
	struct loaded_ctx c = { 0, 0 };

	for (unsigned v = 0; v < GC_NVARIANTS; v++)
		if (gc_variants[v].loadable)
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

static int stop_negative(void *ctx, const struct got_slot *slot)
{
	(void)slot;
	++*(unsigned *)ctx;
	return -3;
}

void gotcase_stop(void)
{
	struct loaded *l = load(0);
	const char *why = NULL;
	unsigned calls = 0;

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, stop_at_first, &calls, &why) == 7);
	GC_CHECK(calls == 1);
	GC_CHECK(why == NULL);
	/* a negative value: returned, and *why says who stopped */
	calls = 0;
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, stop_negative, &calls, &why) == -3);
	GC_CHECK(calls == 1);
	GC_CHECK(why != NULL && strcmp(why, "stopped by the caller") == 0);
}

void gotcase_swap_errors(void)
{
	struct loaded *l = load(0);
	struct slots s = { 0 };
	const char *why = NULL;
	uintptr_t found = 0, before, text;
	int on_stack = 0;

	GC_CHECK(l != NULL);
	GC_CHECK(got_find(&l->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0 && s.n > 0);
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
