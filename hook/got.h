/* leaksnap hook: the GOT slots through which a loaded module reaches
 * given functions, and swapping them (got.c, got_aps2.c).  The in-app
 * build patches the slots of the allocation functions in the modules it
 * watches (docs/inapp.md).
 *
 * Neither function calls malloc (they run inside the allocation hooks)
 * and both use little stack. */
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

/* Call @each(ctx, &slot) for every relocation of the loaded module @info
 * (as dl_iterate_phdr gives it) that binds a symbol named one of
 * @names[0..count) with a zero addend (RELA) -- DT_REL, DT_RELA, DT_JMPREL
 * (either), Android packed DT_ANDROID_REL/RELA ("APS2"), with RELR
 * (DT_RELR / DT_ANDROID_RELR) skipped correctly (relative relocs carry no
 * symbol).  Symbol names come from DT_SYMTAB/DT_STRTAB; versioned names
 * match by the bare name.  The kinds: GOT_JUMP_SLOT (JUMP_SLOT/JMP_SLOT),
 * GOT_GLOB_DAT (GLOB_DAT), GOT_ABS (the word-sized absolute relocation:
 * R_X86_64_64, R_386_32, R_AARCH64_ABS64, R_ARM_ABS32); other types are
 * not reported.  Slots come in table order: DT_REL, DT_RELA,
 * DT_ANDROID_REL, DT_ANDROID_RELA, then DT_JMPREL.
 *
 * The dynamic section's addresses may be absolute (glibc rewrites those of
 * the tags it knows when it loads a module) or relative to the load bias
 * (bionic, musl, and every loader for DT_ANDROID_*): each module's
 * convention is taken from its DT_STRTAB (a value below dlpi_addr is
 * relative), and a table that fits the module only under the other
 * convention is read under that one.  @info->dlpi_phdr is trusted
 * (it is the loader's record of what it mapped); everything else is read
 * only after checking that it lies in a readable PT_LOAD segment.
 *
 * @each returning nonzero stops the walk (returned).  Returns 0, or -1
 * with *why a static string naming what is wrong (no dynamic section, a
 * table out of the module's mapped range, a bad packed-relocation
 * stream...); slots already passed to @each before an error stay passed.
 * Never calls malloc; never faults on a corrupt module (bounds-checks
 * every table against the module's PT_LOAD segments). */
int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why);

/* Replace @expect by @value in the pointer-sized slot at @addr of module
 * @info, atomically (compare-and-swap).  A slot on a page of PT_GNU_RELRO
 * (the pages the loader made read-only: the range rounded as the loader
 * rounds it, end down on glibc and musl, up on bionic) is made writable
 * only for the swap, and its protection put back after (read-only).
 * Returns 1 replaced, 0 the slot held another value (*found = it; on 1,
 * *found = @expect; @found may be NULL), -1 with errno: EINVAL @addr not
 * pointer-aligned, EFAULT @addr not in a writable PT_LOAD segment of the
 * module, or mprotect's errno.  errno is unchanged unless -1 is returned.  Callers serialize calls (one lock): two swaps on
 * one RELRO page must not race their mprotect pairs. */
int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found);

#endif
