/* leaksnap hook: finding a loaded module's GOT slots of given functions
 * from its dynamic section, and swapping them (got.h).
 *
 * got_find reads the module in place, as the loader left it: the dynamic
 * section, the symbol and string tables and the relocation tables (plain,
 * PLT, and Android's packed ones, decoded in got_aps2.c).  A module is
 * untrusted input here: a truncated or corrupt one must give -1 and a
 * reason, never a fault, so every table, every entry and every string is
 * checked against the module's readable PT_LOAD segments before it is
 * read.  The program headers themselves are the loader's record of what
 * it mapped and are trusted.
 *
 * Where the tables are: the dynamic section's d_ptr values are addresses
 * relative to the load bias in the file.  glibc's loader rewrites those of
 * the tags it uses (DT_SYMTAB, DT_STRTAB, DT_REL, DT_RELA, DT_JMPREL...)
 * into absolute addresses when it loads a module, unless the section is
 * read-only; bionic and musl leave them as they are, and no loader touches
 * the DT_ANDROID_* ones.  A module's convention is read off its DT_STRTAB
 * (a value below the load bias can only be relative); a value that does
 * not fit the module under its convention is tried under the other
 * before the table is called out of range. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"
#include "got_internal.h"

#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#define DT_RELR 36
#define DT_RELRENT 37
#endif

/* Bytes readable from @addr to the end of the readable PT_LOAD segment
 * that holds it; 0 when none does. */
uintptr_t gotp_room(const struct gotp_walk *w, uintptr_t addr)
{
	for (unsigned i = 0; i < w->phnum; i++) {
		const ElfW(Phdr) *ph = &w->phdr[i];
		uintptr_t lo, hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		if (ph->p_vaddr > UINTPTR_MAX - w->bias)
			continue;
		lo = w->bias + ph->p_vaddr;
		if (ph->p_memsz > UINTPTR_MAX - lo)
			continue;
		hi = lo + ph->p_memsz;
		if (addr >= lo && addr < hi)
			return hi - addr;
	}
	return 0;
}

/* @len bytes at @addr lie in one readable PT_LOAD segment. */
static bool readable(const struct gotp_walk *w, uintptr_t addr, uintptr_t len)
{
	uintptr_t room = gotp_room(w, addr);

	return room != 0 && len <= room;
}

/* The address of a table at d_ptr @v, @len bytes long: @v read under the
 * module's convention (@relative) first, then under the other; 0 when it
 * fits under neither. */
static uintptr_t table_at(const struct gotp_walk *w, ElfW(Addr) v, uintptr_t len, bool relative)
{
	for (int pass = 0; pass < 2; pass++, relative = !relative) {
		uintptr_t a;

		if (relative) {
			if (v > UINTPTR_MAX - w->bias)
				continue;
			a = w->bias + v;
		} else {
			a = v;
		}
		if (readable(w, a, len ? len : 1))
			return a;
	}
	return 0;
}

/* A bounded comparison of the string table entry at @s (@room bytes
 * left in the table) with @want; a versioned "name@VER" entry matches its
 * bare name. */
static bool name_is(const char *s, uintptr_t room, const char *want)
{
	uintptr_t i;

	for (i = 0; want[i] != '\0'; i++)
		if (i >= room || s[i] != want[i])
			return false;
	return i < room && (s[i] == '\0' || s[i] == '@');
}

static int reloc_kind(uintptr_t type)
{
	switch (type) {
#if defined(__x86_64__)
	case R_X86_64_JUMP_SLOT: return GOT_JUMP_SLOT;
	case R_X86_64_GLOB_DAT: return GOT_GLOB_DAT;
	case R_X86_64_64: return GOT_ABS;
#elif defined(__i386__)
	case R_386_JMP_SLOT: return GOT_JUMP_SLOT;
	case R_386_GLOB_DAT: return GOT_GLOB_DAT;
	case R_386_32: return GOT_ABS;
#elif defined(__aarch64__)
	case R_AARCH64_JUMP_SLOT: return GOT_JUMP_SLOT;
	case R_AARCH64_GLOB_DAT: return GOT_GLOB_DAT;
	case R_AARCH64_ABS64: return GOT_ABS;
#elif defined(__arm__)
	case R_ARM_JUMP_SLOT: return GOT_JUMP_SLOT;
	case R_ARM_GLOB_DAT: return GOT_GLOB_DAT;
	case R_ARM_ABS32: return GOT_ABS;
#endif
	default: return -1;
	}
}

int gotp_reloc(struct gotp_walk *w, ElfW(Addr) offset, ElfW(Addr) info, ElfW(Addr) addend)
{
	uintptr_t sym = GOTP_R_SYM(info), slot;
	int kind = reloc_kind(GOTP_R_TYPE(info));
	const ElfW(Sym) *s;
	const char *name;
	uintptr_t room;
	struct got_slot out;

	if (kind < 0 || sym == 0 || addend != 0)
		return 0;
	if (offset > UINTPTR_MAX - w->bias)
		goto bad_offset;
	slot = w->bias + offset;
	if (sym >= w->nsym) {
		w->why = "relocation symbol index past DT_SYMTAB";
		return -1;
	}
	s = &w->sym[sym];
	if (s->st_name >= w->strsz) {
		w->why = "symbol name outside DT_STRTAB";
		return -1;
	}
	name = w->str + s->st_name;
	room = w->strsz - s->st_name;
	if (!(w->first[(uint8_t)name[0] >> 5] & (1u << ((uint8_t)name[0] & 31))))
		return 0; /* the quick no for most symbols */
	for (unsigned i = 0; i < w->count; i++) {
		if (!name_is(name, room, w->names[i]))
			continue;
		if (slot % sizeof(uintptr_t) != 0 || !readable(w, slot, sizeof(uintptr_t)))
			goto bad_offset;
		out.addr = slot;
		out.name = i;
		out.kind = (uint8_t)kind;
		w->stopped = w->each(w->ctx, &out);
		return w->stopped != 0 ? 1 : 0;
	}
	return 0;
bad_offset:
	w->why = "relocation offset outside the module";
	return -1;
}

/* Walk @size bytes of Elf_Rel (@rela false) or Elf_Rela entries at @a.
 * Some linkers count the PLT relocations in DT_RELSZ/DT_RELASZ too: the
 * entries of [skip_lo, skip_hi) are walked once, as DT_JMPREL ones. */
static int walk_table(struct gotp_walk *w, uintptr_t a, uintptr_t size, bool rela, bool plt)
{
	if (rela) {
		const ElfW(Rela) *r = (const ElfW(Rela) *)a;

		for (uintptr_t i = 0; i < size / sizeof(*r); i++) {
			if (!plt && (uintptr_t)&r[i] >= w->skip_lo && (uintptr_t)&r[i] < w->skip_hi)
				continue;
			int st = gotp_reloc(w, r[i].r_offset, r[i].r_info, (ElfW(Addr))r[i].r_addend);
			if (st != 0)
				return st;
		}
	} else {
		const ElfW(Rel) *r = (const ElfW(Rel) *)a;

		for (uintptr_t i = 0; i < size / sizeof(*r); i++) {
			if (!plt && (uintptr_t)&r[i] >= w->skip_lo && (uintptr_t)&r[i] < w->skip_hi)
				continue;
			int st = gotp_reloc(w, r[i].r_offset, r[i].r_info, 0);
			if (st != 0)
				return st;
		}
	}
	return 0;
}

/* What got_find takes from the dynamic section. */
struct dyn_tags {
	ElfW(Addr) symtab, strtab, rel, rela, jmprel, arel, arela;
	ElfW(Xword) strsz, syment, relsz, relent, relasz, relaent, pltrelsz, pltrel, arelsz, arelasz;
	unsigned seen; /* 1 << DYN_* */
};
enum { DYN_SYMTAB, DYN_STRTAB, DYN_REL, DYN_RELA, DYN_JMPREL, DYN_AREL, DYN_ARELA, DYN_SYMENT,
       DYN_RELENT, DYN_RELAENT, DYN_PLTREL };

/* The Android tags (bionic's elf.h, lld): DT_LOOS + 2 .. + 5. */
#define GOT_DT_ANDROID_REL 0x6000000f
#define GOT_DT_ANDROID_RELSZ 0x60000010
#define GOT_DT_ANDROID_RELA 0x60000011
#define GOT_DT_ANDROID_RELASZ 0x60000012

static const char *read_dynamic(const struct gotp_walk *w, struct dyn_tags *t)
{
	const ElfW(Phdr) *dyn = NULL;
	const ElfW(Dyn) *d;
	uintptr_t a, n;

	for (unsigned i = 0; i < w->phnum; i++)
		if (w->phdr[i].p_type == PT_DYNAMIC)
			dyn = &w->phdr[i];
	if (dyn == NULL)
		return "no dynamic section";
	if (dyn->p_vaddr > UINTPTR_MAX - w->bias)
		return "dynamic section outside the module";
	a = w->bias + dyn->p_vaddr;
	n = dyn->p_memsz / sizeof(ElfW(Dyn));
	if (n == 0 || !readable(w, a, n * sizeof(ElfW(Dyn))) || a % sizeof(ElfW(Addr)) != 0)
		return "dynamic section outside the module";
	memset(t, 0, sizeof(*t));
	d = (const ElfW(Dyn) *)a;
	for (uintptr_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
		ElfW(Addr) v = d[i].d_un.d_ptr;

		switch (d[i].d_tag) {
		case DT_SYMTAB: t->symtab = v; t->seen |= 1u << DYN_SYMTAB; break;
		case DT_STRTAB: t->strtab = v; t->seen |= 1u << DYN_STRTAB; break;
		case DT_STRSZ: t->strsz = v; break;
		case DT_SYMENT: t->syment = v; t->seen |= 1u << DYN_SYMENT; break;
		case DT_REL: t->rel = v; t->seen |= 1u << DYN_REL; break;
		case DT_RELSZ: t->relsz = v; break;
		case DT_RELENT: t->relent = v; t->seen |= 1u << DYN_RELENT; break;
		case DT_RELA: t->rela = v; t->seen |= 1u << DYN_RELA; break;
		case DT_RELASZ: t->relasz = v; break;
		case DT_RELAENT: t->relaent = v; t->seen |= 1u << DYN_RELAENT; break;
		case DT_JMPREL: t->jmprel = v; t->seen |= 1u << DYN_JMPREL; break;
		case DT_PLTRELSZ: t->pltrelsz = v; break;
		case DT_PLTREL: t->pltrel = v; t->seen |= 1u << DYN_PLTREL; break;
		case GOT_DT_ANDROID_REL: t->arel = v; t->seen |= 1u << DYN_AREL; break;
		case GOT_DT_ANDROID_RELSZ: t->arelsz = v; break;
		case GOT_DT_ANDROID_RELA: t->arela = v; t->seen |= 1u << DYN_ARELA; break;
		case GOT_DT_ANDROID_RELASZ: t->arelasz = v; break;
		default: break; /* DT_RELR and DT_ANDROID_RELR among them: no symbols */
		}
	}
	return NULL;
}

/* The table of d_ptr @v, @size bytes of @ent-byte entries (@ent 0: a byte
 * stream); *@a 0 when the table is empty or absent. */
static const char *table(const struct gotp_walk *w, bool present, ElfW(Addr) v, uintptr_t size,
			 uintptr_t ent, bool relative, uintptr_t *a, const char *what)
{
	*a = 0;
	if (!present || size == 0)
		return NULL;
	if (ent != 0 && size % ent != 0)
		return "relocation table size not a multiple of its entry size";
	*a = table_at(w, v, size, relative);
	return *a != 0 ? NULL : what;
}

int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why)
{
	struct gotp_walk w = {
		.bias = info->dlpi_addr, .phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum,
		.names = names, .count = count, .each = each, .ctx = ctx,
	};
	struct dyn_tags t;
	uintptr_t rel, rela, jmp, arel, arela, symtab, room;
	bool relative, plt_rela;
	const char *err;
	int st = 0;

	for (unsigned i = 0; i < count; i++)
		w.first[(uint8_t)names[i][0] >> 5] |= 1u << ((uint8_t)names[i][0] & 31);
	err = "relocation types of this architecture not known";
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
	err = "no program headers";
	if (w.phdr != NULL)
		err = read_dynamic(&w, &t);
#endif
	if (err != NULL)
		goto fail;
	if (!(t.seen & (1u << DYN_REL | 1u << DYN_RELA | 1u << DYN_JMPREL | 1u << DYN_AREL |
			1u << DYN_ARELA)))
		return 0; /* nothing relocated by symbol (the vDSO) */
	err = "DT_SYMTAB or DT_STRTAB missing";
	if ((t.seen & (1u << DYN_SYMTAB | 1u << DYN_STRTAB)) != (1u << DYN_SYMTAB | 1u << DYN_STRTAB))
		goto fail;
	err = "bad DT_SYMENT";
	if ((t.seen & (1u << DYN_SYMENT)) && t.syment != sizeof(ElfW(Sym)))
		goto fail;
	err = "bad DT_RELENT";
	if ((t.seen & (1u << DYN_RELENT)) && t.relent != sizeof(ElfW(Rel)))
		goto fail;
	err = "bad DT_RELAENT";
	if ((t.seen & (1u << DYN_RELAENT)) && t.relaent != sizeof(ElfW(Rela)))
		goto fail;
	err = "bad DT_PLTREL";
	plt_rela = t.pltrel == DT_RELA;
	if ((t.seen & (1u << DYN_JMPREL)) && t.pltrelsz != 0 && t.pltrel != DT_REL && t.pltrel != DT_RELA)
		goto fail;

	/* The module's convention, from its string table. */
	relative = w.bias != 0 && t.strtab < w.bias;
	err = "DT_STRTAB outside the module";
	if (t.strsz == 0)
		goto fail;
	w.str = (const char *)table_at(&w, t.strtab, t.strsz, relative);
	w.strsz = t.strsz;
	if (w.str == NULL)
		goto fail;
	err = "DT_SYMTAB outside the module";
	symtab = table_at(&w, t.symtab, sizeof(ElfW(Sym)), relative);
	if (symtab == 0 || symtab % sizeof(ElfW(Addr)) != 0)
		goto fail;
	room = gotp_room(&w, symtab);
	w.sym = (const ElfW(Sym) *)symtab;
	w.nsym = room / sizeof(ElfW(Sym));

	if ((err = table(&w, t.seen & (1u << DYN_REL), t.rel, t.relsz, sizeof(ElfW(Rel)), relative, &rel,
			 "DT_REL table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_RELA), t.rela, t.relasz, sizeof(ElfW(Rela)), relative,
			 &rela, "DT_RELA table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_JMPREL), t.jmprel, t.pltrelsz,
			 plt_rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)), relative, &jmp,
			 "DT_JMPREL table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_AREL), t.arel, t.arelsz, 0, true, &arel,
			 "DT_ANDROID_REL table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_ARELA), t.arela, t.arelasz, 0, true, &arela,
			 "DT_ANDROID_RELA table outside the module")) != NULL)
		goto fail;
	err = "misaligned relocation table";
	if (rel % sizeof(ElfW(Addr)) != 0 || rela % sizeof(ElfW(Addr)) != 0 ||
	    jmp % sizeof(ElfW(Addr)) != 0)
		goto fail;
	if (jmp != 0) {
		w.skip_lo = jmp;
		w.skip_hi = jmp + t.pltrelsz;
	}

	if (rel != 0)
		st = walk_table(&w, rel, t.relsz, false, false);
	if (st == 0 && rela != 0)
		st = walk_table(&w, rela, t.relasz, true, false);
	if (st == 0 && arel != 0)
		st = gotp_aps2(&w, (const uint8_t *)arel, t.arelsz, false);
	if (st == 0 && arela != 0)
		st = gotp_aps2(&w, (const uint8_t *)arela, t.arelasz, true);
	if (st == 0 && jmp != 0)
		st = walk_table(&w, jmp, t.pltrelsz, plt_rela, true);
	if (st >= 0)
		return st > 0 ? w.stopped : 0;
	err = w.why;
fail:
	if (why != NULL)
		*why = err;
	return -1;
}

/* The pages the loader made read-only for PT_GNU_RELRO @ph: the start
 * rounded down to a page; the end rounded down by glibc and musl (a last
 * partial page stays writable), up by bionic. */
static void relro_pages(uintptr_t bias, const ElfW(Phdr) *ph, uintptr_t page, uintptr_t *lo,
			uintptr_t *hi)
{
	uintptr_t start = bias + ph->p_vaddr, end = start + ph->p_memsz;

	*lo = start & ~(page - 1);
#if defined(__BIONIC__)
	*hi = (end + page - 1) & ~(page - 1);
#else
	*hi = end & ~(page - 1);
#endif
}

int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found)
{
	const struct gotp_walk w = { .bias = info->dlpi_addr, .phdr = info->dlpi_phdr,
				     .phnum = info->dlpi_phnum };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi, prot_at = 0;
	int saved = errno;
	bool writable = false, swapped;

	if (addr % sizeof(uintptr_t) != 0) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < w.phnum; i++) {
		const ElfW(Phdr) *ph = &w.phdr[i];
		uintptr_t start = w.bias + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && addr >= start &&
		    addr - start < ph->p_memsz && ph->p_memsz - (addr - start) >= sizeof(uintptr_t))
			writable = true;
		if (ph->p_type == PT_GNU_RELRO) {
			relro_pages(w.bias, ph, page, &lo, &hi);
			if (addr >= lo && addr < hi)
				prot_at = addr & ~(page - 1);
		}
	}
	if (!writable) {
		errno = EFAULT;
		return -1;
	}
	if (prot_at != 0 && mprotect((void *)prot_at, page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	swapped = __atomic_compare_exchange_n((uintptr_t *)addr, &expect, value, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	/* Put back what the loader set.  Should that fail (it cannot for a
	 * page just made writable), the page stays writable: harmless, and the
	 * swap is done. */
	if (prot_at != 0)
		mprotect((void *)prot_at, page, PROT_READ);
	if (found != NULL)
		*found = expect; /* on failure, the value the slot held */
	errno = saved;
	return swapped ? 1 : 0;
}
