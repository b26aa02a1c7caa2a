/* leaksnap hook: finding and swapping the GOT slots of a loaded module
 * (the in-app build, inapp.c).  Internal to hook/. */
#ifndef LEAKSNAP_HOOK_GOT_H
#define LEAKSNAP_HOOK_GOT_H

#include <link.h>
#include <stdint.h>

enum got_kind { GOT_JUMP_SLOT, GOT_GLOB_DAT, GOT_ABS };

struct got_slot {
	uintptr_t addr;   /* the slot's address in memory (load bias + r_offset) */
	uint32_t name;    /* index into the caller's names[] */
	uint8_t kind;     /* enum got_kind */
};

/* Call @each(ctx, &slot) for every relocation of the loaded module @info (as
 * dl_iterate_phdr gives it) that binds a symbol named one of
 * @names[0..count) with a zero addend (RELA) -- DT_REL, DT_RELA, DT_JMPREL
 * (either), Android packed DT_ANDROID_REL/RELA ("APS2"), with RELR
 * (DT_RELR / DT_ANDROID_RELR) skipped correctly (relative relocs carry no
 * symbol).  Symbol names come from DT_SYMTAB/DT_STRTAB; versioned names
 * match by the bare name.  @each returning nonzero stops the walk
 * (returned).  Returns 0, or -1 with *why a static string naming what is
 * wrong (no dynamic section, a table out of the module's mapped range, a
 * bad packed-relocation stream...).  Never calls malloc; never faults on a
 * corrupt module (bounds-check every table against the module's PT_LOAD
 * segments). */
int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why);

/* Replace @expect by @value in the pointer-sized slot at @addr of module
 * @info, atomically (compare-and-swap).  A slot on a page of PT_GNU_RELRO is
 * made writable only for the swap, and its protection put back after
 * (read-only).  Returns 1 replaced, 0 the slot held another value (*found =
 * it), -1 with errno (mprotect failed, slot not in a PT_LOAD segment of the
 * module).  Callers serialize got_swap calls with one lock. */
int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found);

#endif
