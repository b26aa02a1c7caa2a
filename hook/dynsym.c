/* leaksnap hook: a loaded module's dynamic symbol table, read in place
 * (dynsym.h). */
#include <string.h>

#include "dynsym.h"

/* Whether [@p, @p + @n) lies in a loaded segment of @info's module. */
bool in_module(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && p >= lo && p - lo <= ph->p_memsz && n <= ph->p_memsz - (p - lo))
			return true;
	}
	return false;
}

/* A dynamic-section address: glibc relocates them in place, bionic (and
 * glibc for read-only sections) leaves them relative to the base. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

bool dynsyms_of(const struct dl_phdr_info *info, struct dynsyms *d)
{
	memset(d, 0, sizeof(*d));
	d->base = info->dlpi_addr;
	const ElfW(Dyn) *dyn = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn || !in_module(info, (uintptr_t)dyn, sizeof(*dyn)))
		return false;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t a = dyn_addr(info, dyn->d_un.d_ptr);
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)a; break;
		case DT_STRTAB: d->strtab = (const char *)a; break;
		case DT_GNU_HASH: d->gnu_hash = (const uint32_t *)a; break;
		case DT_HASH: d->sysv_hash = (const ElfW(Word) *)a; break;
		case DT_VERSYM: d->versym = (const ElfW(Half) *)a; break;
		default: break;
		}
	}
	/* (tables that are not where the module is: the guess of dyn_addr
	 * was wrong; do not read them) */
	if (d->gnu_hash && !in_module(info, (uintptr_t)d->gnu_hash, 16))
		d->gnu_hash = NULL;
	if (d->sysv_hash && !in_module(info, (uintptr_t)d->sysv_hash, 8))
		d->sysv_hash = NULL;
	if (d->versym && !in_module(info, (uintptr_t)d->versym, 2))
		d->versym = NULL;
	return d->symtab && d->strtab && in_module(info, (uintptr_t)d->symtab, sizeof(ElfW(Sym))) &&
	       in_module(info, (uintptr_t)d->strtab, 1) && (d->gnu_hash || d->sysv_hash);
}

struct sym_pick {
	const ElfW(Sym) *sym;
	bool is_default;
};

static void consider(const struct dynsyms *d, uint32_t i, const char *name, struct sym_pick *pick)
{
	const ElfW(Sym) *s = &d->symtab[i];
	if (s->st_shndx == SHN_UNDEF || !s->st_value || (s->st_info & 0xf) != STT_FUNC ||
	    strcmp(d->strtab + s->st_name, name) != 0)
		return;
	/* the default version (name@@V) over hidden ones (name@V) */
	bool is_default = !d->versym || !(d->versym[i] & 0x8000);
	if (!pick->sym || (is_default && !pick->is_default)) {
		pick->sym = s;
		pick->is_default = is_default;
	}
}

/* The address of the function @name defined in the module, or NULL. */
void *dynsym_find(const struct dynsyms *d, const char *name)
{
	struct sym_pick pick = {NULL, false};
	if (d->gnu_hash) {
		const uint32_t *g = d->gnu_hash;
		uint32_t nbuckets = g[0], symoffset = g[1], bloom_words = g[2];
		if (!nbuckets)
			return NULL;
		const uint32_t *buckets = (const uint32_t *)(const void *)((const ElfW(Addr) *)(g + 4) +
									 bloom_words);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = 5381;
		for (const char *c = name; *c; c++)
			h = h * 33 + (uint8_t)*c;
		uint32_t i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t ch = chain[i - symoffset];
			if ((ch | 1) == (h | 1))
				consider(d, i, name, &pick);
			if (ch & 1)
				break;
		}
	} else {
		const ElfW(Word) *hs = d->sysv_hash;
		ElfW(Word) nbucket = hs[0];
		const ElfW(Word) *bucket = hs + 2, *chain = bucket + nbucket;
		if (!nbucket)
			return NULL;
		uint32_t h = 0;
		for (const char *c = name; *c; c++) {
			h = (h << 4) + (uint8_t)*c;
			uint32_t top = h & 0xf0000000u;
			h ^= top >> 24;
			h &= ~top;
		}
		for (ElfW(Word) i = bucket[h % nbucket]; i != 0; i = chain[i])
			consider(d, i, name, &pick);
	}
	return pick.sym ? (void *)(d->base + pick.sym->st_value) : NULL;
}
