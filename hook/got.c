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
 * the tags its elf_get_dynamic_info adjusts into absolute addresses when
 * the bias is not 0 and PT_DYNAMIC is writable; bionic and musl leave
 * them as they are, and no loader touches the DT_ANDROID_* ones.  So the
 * convention is known from the build and the module (conv_of); the other
 * one is tried only when the symbol and string tables fail their sanity
 * checks under it (a module loaded by hand, or by another loader).  All
 * address arithmetic wraps modulo 2^N, as the loader's does: a module
 * loaded below its link address has a "negative" bias.
 *
 * got_swap reads the protection of the slot's page from /proc/self/maps
 * (page_prot) rather than computing it from PT_GNU_RELRO: the module may
 * not be protected yet, and in Android's 16 KiB compatibility mode a
 * RELRO page can hold code too. */
#include "got.h" /* first: it defines _GNU_SOURCE */

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got_internal.h"

/* CREL, lld's compact relocations (-z crel; llvm's BinaryFormat
 * DynamicTags.def): not read here. */
#define GOT_DT_CREL 0x40000026
/* arm64 PAuth ABI: slots holding signed pointers (llvm's
 * ELFRelocs/AArch64.def) */
#define GOT_R_AARCH64_AUTH_ABS64 0x244
#define GOT_R_AARCH64_AUTH_GLOB_DAT 0x412

/* Bytes readable from @addr to the end of the readable PT_LOAD segment
 * that holds it; 0 when none does. */
uintptr_t gotp_room(const struct gotp_walk *w, uintptr_t addr)
{
	for (unsigned i = 0; i < w->phnum; i++) {
		const ElfW(Phdr) *ph = &w->phdr[i];
		uintptr_t lo, hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		lo = w->bias + ph->p_vaddr; /* modulo 2^N: the bias may be "negative" */
		if (ph->p_memsz > UINTPTR_MAX - lo)
			continue; /* no mapping wraps */
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

/* The address of a table at d_ptr @v, @len bytes long, relative to the
 * load bias (@relative) or absolute; 0 when it is not readable. */
static uintptr_t table_at(const struct gotp_walk *w, ElfW(Addr) v, uintptr_t len, bool relative)
{
	uintptr_t a = relative ? w->bias + v : v;

	return readable(w, a, len ? len : 1) ? a : 0;
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

/* The kind of relocation type @type: a got_kind, -1 not a slot of
 * ours, -2 a slot we cannot swap (*@why says why). */
static int reloc_kind(uintptr_t type, const char **why)
{
	switch (type) {
#if defined(__x86_64__) && defined(__ILP32__)
	/* x32: pointers and GOT words are 4 bytes; R_X86_64_64 writes 8 */
	case R_X86_64_JUMP_SLOT: return GOT_JUMP_SLOT;
	case R_X86_64_GLOB_DAT: return GOT_GLOB_DAT;
	case R_X86_64_32: return GOT_ABS;
#elif defined(__x86_64__)
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
	case GOT_R_AARCH64_AUTH_ABS64:
		*why = "unsupported relocation format: R_AARCH64_AUTH_ABS64 (signed pointer)";
		return -2;
	case GOT_R_AARCH64_AUTH_GLOB_DAT:
		*why = "unsupported relocation format: R_AARCH64_AUTH_GLOB_DAT (signed pointer)";
		return -2;
#elif defined(__arm__)
	case R_ARM_JUMP_SLOT: return GOT_JUMP_SLOT;
	case R_ARM_GLOB_DAT: return GOT_GLOB_DAT;
	case R_ARM_ABS32: return GOT_ABS;
#endif
	default: (void)why; return -1;
	}
}

int gotp_reloc(struct gotp_walk *w, ElfW(Addr) offset, ElfW(Addr) info, ElfW(Addr) addend)
{
	uintptr_t sym = GOTP_R_SYM(info), slot;
	const char *unsupported = NULL;
	int kind = reloc_kind(GOTP_R_TYPE(info), &unsupported);
	const ElfW(Sym) *s;
	const char *name;
	uintptr_t room;
	struct got_slot out;

	if (kind == -1 || sym == 0 || addend != 0)
		return 0;
	slot = w->bias + offset; /* modulo 2^N, checked below */
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
		if (kind < 0) {
			w->why = unsupported;
			return -1;
		}
		if (slot % sizeof(uintptr_t) != 0 || !readable(w, slot, sizeof(uintptr_t)))
			goto bad_offset;
		if (w->reported >= GOT_MAX_SLOTS) {
			w->why = "more than 4096 slots of the names in one module";
			return -1;
		}
		w->reported++;
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
	bool dyn_writable; /* PT_DYNAMIC has PF_W */
	bool crel;
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
	a = w->bias + dyn->p_vaddr; /* modulo 2^N */
	n = dyn->p_memsz / sizeof(ElfW(Dyn));
	if (n == 0 || !readable(w, a, n * sizeof(ElfW(Dyn))) || a % sizeof(ElfW(Addr)) != 0)
		return "dynamic section outside the module";
	memset(t, 0, sizeof(*t));
	t->dyn_writable = (dyn->p_flags & PF_W) != 0;
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
		case GOT_DT_CREL: t->crel = true; break;
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

/* How the dynamic section's d_ptr values of a module read: all relative
 * to the load bias, or glibc's way (the tags its elf_get_dynamic_info
 * adjusts absolute, the rest relative). */
enum conv { CONV_RELATIVE, CONV_GLIBC };

/* glibc adjusts tag @tag (elf/get-dynamic-info.h): DT_RELA except on
 * machines without RELA relocations (ARM, i386), DT_REL except on those
 * without REL ones (x86-64, arm64).  Of the tags read here. */
static bool glibc_adjusts(ElfW(Sxword) tag)
{
	switch (tag) {
	case DT_SYMTAB:
	case DT_STRTAB:
	case DT_JMPREL:
		return true;
#if defined(__arm__) || defined(__i386__)
	case DT_REL:
		return true;
#else
	case DT_RELA:
		return true;
#endif
	default:
		return false;
	}
}

/* Whether d_ptr of @tag is relative to the bias under @c. */
static bool tag_relative(enum conv c, ElfW(Sxword) tag)
{
	return c == CONV_RELATIVE || !glibc_adjusts(tag);
}

/* The convention the loader of this build leaves module @w in. */
static enum conv conv_of(const struct gotp_walk *w, const struct dyn_tags *t)
{
#if defined(__GLIBC__) && !defined(__BIONIC__)
	if (w->bias != 0 && t->dyn_writable)
		return CONV_GLIBC;
#else
	(void)w;
	(void)t;
#endif
	return CONV_RELATIVE;
}

/* The symbol and string tables of @t under convention @c, checked: the
 * string table in the module, starting and ending with NUL; the symbol
 * table's first entry in it, aligned and all zero.  Returns how many of
 * those four checks passed (4: all; then @w's str and sym are set), and
 * *@err the first that failed. */
static int symbols_at(struct gotp_walk *w, const struct dyn_tags *t, enum conv c, const char **err)
{
	uintptr_t str, sym;
	const uint8_t *s0;

	*err = "DT_STRTAB outside the module";
	str = table_at(w, t->strtab, t->strsz, tag_relative(c, DT_STRTAB));
	if (str == 0)
		return 0;
	*err = "DT_STRTAB not a string table (no NUL at its ends)";
	if (((const char *)str)[0] != '\0' || ((const char *)str)[t->strsz - 1] != '\0')
		return 1;
	*err = "DT_SYMTAB outside the module";
	sym = table_at(w, t->symtab, sizeof(ElfW(Sym)), tag_relative(c, DT_SYMTAB));
	if (sym == 0 || sym % sizeof(ElfW(Addr)) != 0)
		return 2;
	*err = "DT_SYMTAB not a symbol table (symbol 0 not null)";
	s0 = (const uint8_t *)sym;
	for (size_t i = 0; i < sizeof(ElfW(Sym)); i++)
		if (s0[i] != 0)
			return 3;
	w->str = (const char *)str;
	w->strsz = t->strsz;
	w->sym = (const ElfW(Sym) *)sym;
	w->nsym = gotp_room(w, sym) / sizeof(ElfW(Sym));
	*err = NULL;
	return 4;
}

int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why)
{
	struct gotp_walk w = {
		.bias = info->dlpi_addr, .phdr = info->dlpi_phdr, .phnum = info->dlpi_phnum,
		.names = names, .count = count, .each = each, .ctx = ctx,
	};
	struct dyn_tags t;
	uintptr_t rel, rela, jmp, arel, arela;
	enum conv conv;
	bool plt_rela;
	const char *err, *err2;
	int st = 0, ok, ok2;

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
	err = "unsupported relocation format: DT_CREL";
	if (t.crel)
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

	err = "DT_STRSZ missing or 0";
	if (t.strsz == 0)
		goto fail;
	/* The convention the loader left, checked on the symbol tables; the
	 * other one only if they fail that way and pass this way. */
	conv = conv_of(&w, &t);
	ok = symbols_at(&w, &t, conv, &err);
	if (ok < 4) {
		enum conv other = conv == CONV_GLIBC ? CONV_RELATIVE : CONV_GLIBC;

		ok2 = symbols_at(&w, &t, other, &err2);
		if (ok2 == 4)
			conv = other;
		else if (ok2 > ok)
			err = err2; /* the reason of the convention that got further */
		if (ok2 != 4)
			goto fail;
	}

	if ((err = table(&w, t.seen & (1u << DYN_REL), t.rel, t.relsz, sizeof(ElfW(Rel)),
			 tag_relative(conv, DT_REL), &rel, "DT_REL table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_RELA), t.rela, t.relasz, sizeof(ElfW(Rela)),
			 tag_relative(conv, DT_RELA), &rela, "DT_RELA table outside the module")) != NULL ||
	    (err = table(&w, t.seen & (1u << DYN_JMPREL), t.jmprel, t.pltrelsz,
			 plt_rela ? sizeof(ElfW(Rela)) : sizeof(ElfW(Rel)), tag_relative(conv, DT_JMPREL),
			 &jmp, "DT_JMPREL table outside the module")) != NULL ||
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
	if (st > 0) {
		if (w.stopped < 0 && why != NULL)
			*why = "stopped by the caller";
		return w.stopped;
	}
	if (st == 0)
		return 0;
	err = w.why;
fail:
	if (why != NULL)
		*why = err;
	return -1;
}

/* The value of hex digit @c (the kernel writes lower case). */
static unsigned hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return (unsigned)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (unsigned)(c - 'a' + 10);
	return 0;
}

/* The protection (PROT_*) of the mapping that holds @addr, from
 * /proc/self/maps, read a buffer at a time into the stack and parsed a
 * character at a time (a line may straddle two reads): "LO-HI PERMS ...".
 * The kernel lists mappings in address order, so the scan stops at the
 * first one past @addr.  -1 with errno: the file's open or read errno, or
 * EFAULT when no mapping holds @addr. */
static int page_prot(uintptr_t addr)
{
	enum { LO, HI, PERMS, REST } state = LO;
	uintptr_t lo = 0, hi = 0;
	int prot = 0, nperm = 0, fd, err = EFAULT;
	char buf[1024];
	ssize_t n;

	do
		fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				err = errno;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];

			if (c == '\n') {
				state = LO;
				lo = hi = 0;
				prot = nperm = 0;
				continue;
			}
			switch (state) {
			case LO:
				if (c == '-')
					state = HI;
				else
					lo = lo << 4 | hex_digit(c);
				break;
			case HI:
				if (c == ' ')
					state = PERMS;
				else
					hi = hi << 4 | hex_digit(c);
				break;
			case PERMS:
				prot |= c == 'r' ? PROT_READ : c == 'w' ? PROT_WRITE : c == 'x' ? PROT_EXEC : 0;
				if (++nperm < 3)
					break;
				state = REST;
				if (addr >= lo && addr < hi) {
					close(fd);
					return prot;
				}
				if (lo > addr)
					goto out;
				break;
			case REST:
				break;
			}
		}
	}
out:
	close(fd);
	errno = err;
	return -1;
}

int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), cur, at;
	int saved = errno, prot;
	bool writable = false, swapped;

	if (addr % sizeof(uintptr_t) != 0) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr; /* modulo 2^N */

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && addr - start < ph->p_memsz &&
		    ph->p_memsz - (addr - start) >= sizeof(uintptr_t))
			writable = true;
	}
	if (!writable) {
		errno = EFAULT;
		return -1;
	}
	/* Not the value expected: nothing to do, no page touched. */
	cur = __atomic_load_n((const uintptr_t *)addr, __ATOMIC_SEQ_CST);
	if (cur != expect) {
		if (found != NULL)
			*found = cur;
		return 0;
	}
	prot = page_prot(addr);
	if (prot < 0)
		return -1;
	at = addr & ~(page - 1);
	if (!(prot & PROT_WRITE) && mprotect((void *)at, page, prot | PROT_READ | PROT_WRITE) != 0)
		return -1;
	swapped = __atomic_compare_exchange_n((uintptr_t *)addr, &expect, value, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	/* Put back what the page had.  Should that fail (it cannot for a page
	 * just given more rights), the page stays writable: harmless, and the
	 * swap is done. */
	if (!(prot & PROT_WRITE))
		mprotect((void *)at, page, prot);
	if (found != NULL)
		*found = expect; /* on failure, the value the slot held */
	errno = saved;
	return swapped ? 1 : 0;
}

int got_loaded(const struct dl_phdr_info *info)
{
#if defined(__BIONIC__) || !defined(__GLIBC__)
	(void)info;
	return 1;
#else
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_GNU_RELRO)
			continue;
		/* as glibc rounds it: start down, end down */
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
		if (end - start == 0 || end - start > ph->p_memsz + page)
			return 1;
		int saved = errno, prot = page_prot(start);
		if (prot < 0)
			return -1;
		errno = saved;
		return (prot & PROT_WRITE) ? 0 : 1;
	}
	return 1;
#endif
}
