/* The corrupt-module checks of hook/got.c (gotcases.h): a library of
 * each format loaded by hand (gotcase_int.h), then its dynamic section,
 * tables and packed relocation stream corrupted one way at a time (each
 * must give -1 and its own reason), cut at each page with the rest
 * unmapped, and changed at random (0 with sane slots or -1 with a
 * reason; never a fault: guard pages lie around the image).  A packed
 * stream written here checks the decoder's grouping and addends. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"
#include "gotcase_int.h"
#include "gotcases.h"

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
	    slot->addr % sizeof(uintptr_t) != 0 || slot->name >= GC_NNAMES || slot->kind > GOT_ABS)
		c->bad++;
	return 0;
}

static struct verdict run(const struct image *im)
{
	struct check_ctx c = { im, 0 };
	struct verdict v;

	v.why = NULL;
	v.rc = got_find(&im->info, gc_names, GC_NNAMES, check_slot, &c, &v.why);
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
	ElfW(Dyn) *sd = gc_image_dyn(im, DT_SYMTAB), *st = gc_image_dyn(im, DT_STRTAB);
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

/* The r_offset and r_info words of the DT_JMPREL entry of symbol @sym. */
static bool plt_entry(const struct image *im, uintptr_t sym, ElfW(Addr) **offset, ElfW(Addr) **info)
{
	ElfW(Dyn) *j = gc_image_dyn(im, DT_JMPREL), *sz = gc_image_dyn(im, DT_PLTRELSZ),
		  *kind = gc_image_dyn(im, DT_PLTREL);
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
		ElfW(Dyn) *d_ = gc_image_dyn((im), (tag));              \
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

static bool m_strsz_zero(struct image *im)
{
	DYN_SET(im, DT_STRSZ, 0);
	return true;
}

/* lld's CREL (DT_CREL, 0x40000026): in place of the hash table's tag. */
static bool m_crel(struct image *im)
{
	ElfW(Dyn) *d = gc_image_dyn(im, DT_GNU_HASH);

	if (d == NULL)
		d = gc_image_dyn(im, DT_HASH);
	if (d == NULL)
		return false;
	d->d_tag = 0x40000026;
	return true;
}

static bool m_symtab_far(struct image *im)
{
	DYN_SET(im, DT_SYMTAB, (ElfW(Addr))-64);
	return true;
}

static bool m_symtab_gone(struct image *im)
{
	ElfW(Dyn) *d = gc_image_dyn(im, DT_SYMTAB);

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
	ElfW(Dyn) *d = gc_image_dyn(im, DT_PLTRELSZ);

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
	return gc_image_dyn(im, APS2_RELA ? (size ? 0x60000012 : 0x60000011)
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

/* Replace the packed stream by @n bytes at @bytes (after "APS2"); one
 * longer than the library's goes over its code (got_find never reads
 * that), at the start of the executable segment. */
static bool aps2_stream(struct image *im, const uint8_t *bytes, size_t n)
{
	ElfW(Dyn) *d = aps2_dyn(im, false), *sz = aps2_dyn(im, true);
	uint8_t *p;

	if (d == NULL || sz == NULL)
		return false;
	if (sz->d_un.d_val < 4 + n) {
		for (unsigned i = 0; i < im->phnum; i++)
			if (im->ph[i].p_type == PT_LOAD && (im->ph[i].p_flags & PF_X) &&
			    im->ph[i].p_filesz >= 4 + n) {
				d->d_un.d_ptr = im->ph[i].p_vaddr;
				memcpy((void *)(im->base + d->d_un.d_ptr), "APS2", 4);
				sz->d_un.d_val = 4 + n;
			}
		if (sz->d_un.d_val < 4 + n)
			return false;
	}
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

/* A group of two sharing an offset step of 0: one slot twice. */
static bool m_aps2_step0(struct image *im)
{
	uintptr_t sym = sym_index(im, "free");
	uint8_t b[32];
	size_t n = 0;

	if (sym == 0)
		return false;
	n += sleb_put(b + n, 2);
	n += sleb_put(b + n, 0x100);
	n += sleb_put(b + n, 2);
	n += sleb_put(b + n, 1 | 2);
	n += sleb_put(b + n, 0);
	n += sleb_put(b + n, (int64_t)R_INFO_OF(sym, T_GLOB));
	return aps2_stream(im, b, n);
}

static bool m_aps2_rel_addend(struct image *im)
{
	static const uint8_t b[] = { 1, 0, 1, 8, 0, 0, 0 };

	if (APS2_RELA)
		return false;
	return aps2_stream(im, b, sizeof(b));
}


/* A packed stream written here, decoded to the exact slots: groups that
 * share the offset step, the info and (RELA) the addend step; a slot with
 * a nonzero addend is not one; a group without addends resets it. */
static void aps2_crafted(struct image *im)
{
	uintptr_t sfree = sym_index(im, "free"), smalloc = sym_index(im, "malloc"),
		  scalloc = sym_index(im, "calloc"), srealloc = sym_index(im, "realloc");
	const uintptr_t x = 0x100; /* in the first segment: a word of the ELF header */
	struct slots s = { 0 };
	const char *why = NULL;
	uint8_t b[96];
	size_t n = 0;

	GC_CHECK(sfree != 0 && smalloc != 0 && scalloc != 0 && srealloc != 0);
	n += sleb_put(b + n, APS2_RELA ? 9 : 5);        /* relocations */
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
	if (APS2_RELA) {
		/* groups 3 and 4: 2 GLOB_DAT of realloc each, sharing the
		 * addend step (BY_ADDEND | HAS_ADDEND), applied once per group:
		 * +5 (addend 5 for both: not slots), then -5 (0: slots) */
		for (int g = 0; g < 2; g++) {
			n += sleb_put(b + n, 2);
			n += sleb_put(b + n, 1 | 2 | 4 | 8);
			n += sleb_put(b + n, (int64_t)sizeof(uintptr_t));
			n += sleb_put(b + n, (int64_t)R_INFO_OF(srealloc, T_GLOB));
			n += sleb_put(b + n, g == 0 ? 5 : -5);
		}
	}
	GC_CHECK(aps2_stream(im, b, n));
	GC_CHECK(got_find(&im->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == 0);
	/* then the DT_JMPREL slots, as always */
	if (APS2_RELA) {
		GC_CHECK(s.n >= 3);
		GC_CHECK(s.s[0].name == N_FREE && s.s[0].kind == GOT_GLOB_DAT);
		GC_CHECK(s.s[0].addr == im->base + x + 2 * sizeof(uintptr_t));
		GC_CHECK(s.s[1].name == N_MALLOC && s.s[1].kind == GOT_JUMP_SLOT);
		GC_CHECK(s.s[1].addr == im->base + x + 4 * sizeof(uintptr_t));
		GC_CHECK(s.s[2].name == N_CALLOC && s.s[2].kind == GOT_ABS);
		GC_CHECK(s.s[2].addr == im->base + x + 6 * sizeof(uintptr_t));
		GC_CHECK(s.n >= 5);
		for (unsigned i = 3; i < 5; i++)
			GC_CHECK(s.s[i].name == N_REALLOC && s.s[i].kind == GOT_GLOB_DAT &&
				 s.s[i].addr == im->base + x + (i + 6) * sizeof(uintptr_t));
		GC_CHECK(s.n == 5 + 3); /* + malloc, free, calloc JUMP_SLOTs */
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

/* More slots than GOT_MAX_SLOTS: a group of GOT_MAX_SLOTS + 1 GLOB_DAT
 * of free, a word apart, in a segment stretched (in the program headers
 * only: the slots are counted, not read) to hold them.  got_find reports
 * exactly GOT_MAX_SLOTS, then -1. */
static void aps2_cap(struct image *im)
{
	uintptr_t sym = sym_index(im, "free"), start;
	ElfW(Phdr) *last = NULL;
	struct slots s = { 0 };
	const char *why = NULL;
	uint8_t b[64];
	size_t n = 0;

	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_LOAD)
			last = &im->ph[i];
	GC_CHECK(last != NULL && sym != 0);
	start = (last->p_vaddr + last->p_memsz + sizeof(uintptr_t) - 1) & ~(sizeof(uintptr_t) - 1);
	last->p_memsz = start - last->p_vaddr + (GOT_MAX_SLOTS + 1) * sizeof(uintptr_t);
	n += sleb_put(b + n, GOT_MAX_SLOTS + 1);
	n += sleb_put(b + n, (int64_t)(start - sizeof(uintptr_t)));
	n += sleb_put(b + n, GOT_MAX_SLOTS + 1);
	n += sleb_put(b + n, 1 | 2);
	n += sleb_put(b + n, (int64_t)sizeof(uintptr_t));
	n += sleb_put(b + n, (int64_t)R_INFO_OF(sym, T_GLOB));
	GC_CHECK(aps2_stream(im, b, n));
	GC_CHECK(got_find(&im->info, gc_names, GC_NNAMES, gc_collect, &s, &why) == -1);
	GC_CHECK(why != NULL && strcmp(why, "more than 4096 slots of the names in one module") == 0);
	GC_CHECK(s.n == GOT_MAX_SLOTS);
	GC_CHECK(s.s[0].addr == im->base + start && s.s[1].addr == im->base + start + sizeof(uintptr_t));
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

/* arm64's signed-pointer GLOB_DAT (PAuth ABI) for free's PLT entry. */
static bool m_auth(struct image *im)
{
#if defined(__aarch64__)
	ElfW(Addr) *off, *info;

	if (!plt_entry(im, sym_index(im, "free"), &off, &info))
		return false;
	*info = R_INFO_OF(R_SYM_OF(*info), 0x412);
	return true;
#else
	(void)im;
	return false;
#endif
}

static bool m_st_name(struct image *im)
{
	ElfW(Dyn) *sd = gc_image_dyn(im, DT_SYMTAB);
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
	{ "DT_STRSZ missing or 0", m_strsz_zero },
	{ "unsupported relocation format: DT_CREL", m_crel },
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
	{ "packed relocation group repeats one offset", m_aps2_step0 },
	{ "unsupported relocation format: R_AARCH64_AUTH_GLOB_DAT (signed pointer)", m_auth },
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
	ElfW(Dyn) *sd = gc_image_dyn(im, DT_SYMTAB), *st = gc_image_dyn(im, DT_STRTAB);
	unsigned n = 0;

	for (unsigned i = 0; i < im->phnum; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			r[n++] = (struct region){ im->ph[i].p_vaddr, im->ph[i].p_memsz };
	if (sd != NULL && st != NULL && st->d_un.d_ptr > sd->d_un.d_ptr)
		r[n++] = (struct region){ sd->d_un.d_ptr, st->d_un.d_ptr - sd->d_un.d_ptr };
	for (unsigned i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
		ElfW(Dyn) *a = gc_image_dyn(im, tabs[i][0]), *s = gc_image_dyn(im, tabs[i][1]);

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
	const struct variant *var = &gc_variants[v];
	long page = sysconf(_SC_PAGESIZE);
	unsigned applied = 0, failed = 0, ok = 0, nreg;
	struct region reg[16];
	ElfW(Phdr) *pristine_ph;
	uint8_t *pristine;
	struct verdict vd;
	struct image im;
	char path[4200];

	gc_lib_path(path, sizeof(path), var->name);
	GC_CHECK(gc_image_load(&im, path));
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
		aps2_cap(&im);
		memcpy((void *)im.base, pristine, im.span);
		memcpy(im.ph, pristine_ph, im.phnum * sizeof(ElfW(Phdr)));
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
	gc_image_free(&im);
}
