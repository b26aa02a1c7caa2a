/* leaksnap hook: GOT slots of a loaded module -- a minimal stand-in for the
 * in-app build's tests: x86-64, DT_RELA and DT_JMPREL (RELA) only, RELRO
 * made writable around a swap.  (The full patcher, with REL, Android packed
 * relocations, RELR and the other architectures, replaces this file.) */
#include <errno.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"

static __attribute__((unused)) int in_load(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && p >= lo && p - lo <= ph->p_memsz &&
		    n <= ph->p_memsz - (p - lo))
			return 1;
	}
	return 0;
}

static __attribute__((unused)) uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why)
{
#if !defined(__x86_64__)
	(void)info, (void)names, (void)count, (void)each, (void)ctx;
	*why = "relocations of this architecture are not supported";
	return -1;
#else
	const ElfW(Dyn) *dyn = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn || !in_load(info, (uintptr_t)dyn, sizeof(*dyn))) {
		*why = "no dynamic section";
		return -1;
	}
	uintptr_t symtab = 0, strtab = 0, rela = 0, jmprel = 0;
	size_t strsz = 0, relasz = 0, pltrelsz = 0, relaent = sizeof(ElfW(Rela));
	long pltrel = DT_RELA;
	for (size_t k = 0;; k++) {
		if (!in_load(info, (uintptr_t)&dyn[k], sizeof(dyn[k]))) {
			*why = "dynamic section out of the module";
			return -1;
		}
		if (dyn[k].d_tag == DT_NULL)
			break;
		switch (dyn[k].d_tag) {
		case DT_SYMTAB: symtab = dyn_addr(info, dyn[k].d_un.d_ptr); break;
		case DT_STRTAB: strtab = dyn_addr(info, dyn[k].d_un.d_ptr); break;
		case DT_STRSZ: strsz = dyn[k].d_un.d_val; break;
		case DT_RELA: rela = dyn_addr(info, dyn[k].d_un.d_ptr); break;
		case DT_RELASZ: relasz = dyn[k].d_un.d_val; break;
		case DT_RELAENT: relaent = dyn[k].d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn_addr(info, dyn[k].d_un.d_ptr); break;
		case DT_PLTRELSZ: pltrelsz = dyn[k].d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn[k].d_un.d_val; break;
		case DT_REL:
			*why = "REL relocations are not supported";
			return -1;
		default: break;
		}
	}
	if (!symtab || !strtab || !strsz || !in_load(info, strtab, strsz)) {
		*why = "no dynamic symbol table";
		return -1;
	}
	if (relaent != sizeof(ElfW(Rela)) || (jmprel && pltrel != DT_RELA)) {
		*why = "unsupported relocation entries";
		return -1;
	}
	const struct { uintptr_t at; size_t size; } tables[2] = {{rela, relasz}, {jmprel, pltrelsz}};
	for (int t = 0; t < 2; t++) {
		if (!tables[t].at || !tables[t].size)
			continue;
		if (!in_load(info, tables[t].at, tables[t].size)) {
			*why = "relocation table out of the module";
			return -1;
		}
		const ElfW(Rela) *r = (const ElfW(Rela) *)tables[t].at;
		size_t n = tables[t].size / sizeof(*r);
		for (size_t i = 0; i < n; i++) {
			unsigned type = ELF64_R_TYPE(r[i].r_info);
			size_t sym = ELF64_R_SYM(r[i].r_info);
			uint8_t kind;
			if (type == R_X86_64_JUMP_SLOT)
				kind = GOT_JUMP_SLOT;
			else if (type == R_X86_64_GLOB_DAT)
				kind = GOT_GLOB_DAT;
			else if (type == R_X86_64_64)
				kind = GOT_ABS;
			else
				continue;
			if (!sym || r[i].r_addend != 0)
				continue;
			const ElfW(Sym) *s = (const ElfW(Sym) *)symtab + sym;
			if (!in_load(info, (uintptr_t)s, sizeof(*s)) || s->st_name >= strsz)
				continue;
			const char *name = (const char *)strtab + s->st_name;
			size_t room = strsz - s->st_name;
			for (unsigned j = 0; j < count; j++) {
				size_t len = strlen(names[j]);
				if (len < room && !memcmp(name, names[j], len) &&
				    (name[len] == '\0' || name[len] == '@')) {
					struct got_slot slot = {info->dlpi_addr + r[i].r_offset, j, kind};
					if (!in_load(info, slot.addr, sizeof(uintptr_t)))
						break;
					int rc = each(ctx, &slot);
					if (rc)
						return rc;
					break;
				}
			}
		}
	}
	return 0;
#endif
}

int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found)
{
	const ElfW(Phdr) *load = NULL;
	bool relro = false;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (addr < lo || addr - lo + sizeof(uintptr_t) > ph->p_memsz)
			continue;
		if (ph->p_type == PT_LOAD)
			load = ph;
		/* (the loader makes read-only the whole pages of the range
		 * only: a last partial page stays writable) */
		else if (ph->p_type == PT_GNU_RELRO &&
			 (addr & ~(page - 1)) + page <= ((lo + ph->p_memsz) & ~(page - 1)))
			relro = true;
	}
	if (!load || (addr & (sizeof(uintptr_t) - 1))) {
		errno = EFAULT;
		return -1;
	}
	bool protect = relro || !(load->p_flags & PF_W);
	void *pg = (void *)(addr & ~(page - 1));
	if (protect && mprotect(pg, page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	_Atomic uintptr_t *slot = (_Atomic uintptr_t *)addr;
	uintptr_t old = expect;
	int rc = atomic_compare_exchange_strong(slot, &old, value) ? 1 : 0;
	if (!rc && found)
		*found = old;
	if (protect) {
		int prot = relro ? PROT_READ
				 : ((load->p_flags & PF_R) ? PROT_READ : 0) |
					   ((load->p_flags & PF_X) ? PROT_EXEC : 0);
		mprotect(pg, page, prot);
	}
	return rc;
}
