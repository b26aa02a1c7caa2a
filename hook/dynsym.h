/* leaksnap hook: the dynamic symbol table of a loaded module, read in place
 * (no dlsym: usable where the loader's locks may be held, and inside
 * dl_iterate_phdr).  Used by dlsym.c (the real dlsym) and by the in-app
 * build (inapp_patch.c: operator new where dlsym cannot see it). */
#ifndef LEAKSNAP_HOOK_DYNSYM_H
#define LEAKSNAP_HOOK_DYNSYM_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dynsyms {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const ElfW(Word) *sysv_hash;
	const ElfW(Half) *versym;
};

/* Whether [@p, @p + @n) lies in a loaded segment of @info's module. */
bool in_module(const struct dl_phdr_info *info, uintptr_t p, size_t n);
/* @info's tables into @d; false if it has none usable. */
bool dynsyms_of(const struct dl_phdr_info *info, struct dynsyms *d);
/* The address of the function @name defined in the module (its default
 * version), or NULL. */
void *dynsym_find(const struct dynsyms *d, const char *name);

#endif
