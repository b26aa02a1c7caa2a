/* The load bias checks of got_find (gotcases.h), on libgot-based.so (GNU
 * ld, lazy, linked at GC_BASED_AT) loaded by hand at chosen addresses:
 *   below its link address, a "negative" bias (a prelinked library, or
 *   ET_DYN placed low): dlpi_addr + p_vaddr wraps modulo 2^N;
 *   a few bytes above it, a bias smaller than every table's offset (low
 *   mappings: qemu's 32-bit guests), where DT_STRTAB < bias no longer
 *   tells a relative d_ptr from an absolute one;
 * each with the d_ptr values relative (bionic, musl) and then as glibc's
 * loader leaves them (its tags absolute).  Every time the same slots at
 * the same offsets as from the library loaded at a positive bias. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"
#include "gotcase_int.h"
#include "gotcases.h"

#define GC_BASED_AT ((uintptr_t)0x20000000) /* the Makefile's -Ttext-segment */

/* Load @path with its lowest PT_LOAD at @at (any address, not only a
 * page start), guard pages around; false when the address range is taken. */
static bool image_load_at(struct image *im, const char *path, uintptr_t at)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = UINTPTR_MAX, hi = 0, map_lo;
	void *m;

	if (!gc_image_read(im, path))
		return false;
	for (unsigned i = 0; i < im->phnum; i++) {
		if (im->ph[i].p_type != PT_LOAD)
			continue;
		if (im->ph[i].p_vaddr < lo)
			lo = im->ph[i].p_vaddr;
		if (im->ph[i].p_vaddr + im->ph[i].p_memsz > hi)
			hi = im->ph[i].p_vaddr + im->ph[i].p_memsz;
	}
	im->span = hi - lo;
	map_lo = (at & ~(page - 1)) - page;
	im->maplen = ((at + im->span + page - 1) & ~(page - 1)) + page - map_lo;
	m = mmap((void *)map_lo, im->maplen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return false;
	im->map = m;
	if ((uintptr_t)m != map_lo) { /* the hint not taken: somebody is there */
		gotcase_note("address %#lx taken", (unsigned long)map_lo);
		return false;
	}
	if (mprotect((char *)m + page, im->maplen - 2 * page, PROT_READ | PROT_WRITE) != 0)
		return false;
	im->base = at - lo; /* the bias, modulo 2^N */
	return gc_image_place(im, path);
}

/* Rewrite the d_ptr values glibc's loader adjusts as it does (+ bias). */
static void as_glibc_leaves_it(struct image *im)
{
	static const ElfW(Sxword) tags[] = {
		DT_HASH, DT_PLTGOT, DT_STRTAB, DT_SYMTAB, DT_JMPREL, DT_VERSYM, DT_GNU_HASH,
#if defined(__arm__) || defined(__i386__)
		DT_REL,
#else
		DT_RELA,
#endif
	};

	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		ElfW(Dyn) *d = gc_image_dyn(im, tags[i]);

		if (d != NULL)
			d->d_un.d_ptr += im->base;
	}
}

/* got_find on @im gives @want's slots (name, kind, offset from the bias). */
static bool same_slots(const struct image *im, const struct slots *want, const char *what)
{
	struct slots s = { 0 };
	const char *why = NULL;
	int rc = got_find(&im->info, gc_names, GC_NNAMES, gc_collect, &s, &why);

	if (rc != 0 || s.n != want->n) {
		gotcase_note("%s (bias %#lx): rc %d (%s), %u slots, expected %u", what,
			     (unsigned long)im->base, rc, why ? why : "-", s.n, want->n);
		return false;
	}
	for (unsigned i = 0; i < s.n && i < GC_MAX_SLOTS; i++)
		if (s.s[i].name != want->s[i].name || s.s[i].kind != want->s[i].kind ||
		    s.s[i].addr - im->base != want->s[i].addr) {
			gotcase_note("%s: slot %u differs", what, i);
			return false;
		}
	return true;
}

void gotcase_bias(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t at[] = {
		GC_BASED_AT - 64 * page,        /* below the link address */
		GC_BASED_AT + 8 * sizeof(uintptr_t), /* 64 or 32 bytes above it */
	};
	struct slots want = { 0 };
	const char *why = NULL;
	struct image im;
	char path[4200];

	gc_lib_path(path, sizeof(path), "based");
	/* the reference: a page-sized positive bias */
	GC_CHECK(image_load_at(&im, path, GC_BASED_AT + 256 * page));
	GC_CHECK(im.base == 256 * page);
	GC_CHECK(got_find(&im.info, gc_names, GC_NNAMES, gc_collect, &want, &why) == 0);
	GC_CHECK(want.n >= 5 && want.n <= GC_MAX_SLOTS);
	for (unsigned i = 0; i < want.n; i++)
		want.s[i].addr -= im.base;
	gc_image_free(&im);

	for (unsigned k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		for (int glibc = 0; glibc < 2; glibc++) {
			bool ok;

			GC_CHECK(image_load_at(&im, path, at[k]));
			GC_CHECK(k != 0 || im.base > UINTPTR_MAX / 2); /* "negative" */
			GC_CHECK(k != 1 || im.base == 8 * sizeof(uintptr_t));
			if (glibc)
				as_glibc_leaves_it(&im);
			ok = same_slots(&im, &want, k == 0 ? "negative bias" : "low bias");
			gc_image_free(&im);
			GC_CHECK(ok);
		}
	}
}
