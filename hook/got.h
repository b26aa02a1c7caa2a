/* leaksnap hook: the GOT slots through which a loaded module reaches
 * given functions, and swapping them (got.c, got_aps2.c).  The in-app
 * build patches the slots of the allocation functions in the modules it
 * watches (docs/inapp.md).
 *
 * Neither function calls malloc (they run inside the allocation hooks)
 * and both use little stack.
 *
 * struct dl_phdr_info is a GNU extension of <link.h>: this header defines
 * _GNU_SOURCE when it is included first; a file that includes system
 * headers before it must define _GNU_SOURCE itself (the build passes
 * -D_GNU_SOURCE). */
#ifndef LEAKSNAP_HOOK_GOT_H
#define LEAKSNAP_HOOK_GOT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <link.h>
#include <stdint.h>

#if defined(__GLIBC__) && !defined(__USE_GNU)
#error "got.h: define _GNU_SOURCE before the first system header (struct dl_phdr_info)"
#endif

enum got_kind { GOT_JUMP_SLOT, GOT_GLOB_DAT, GOT_ABS };

struct got_slot {
	uintptr_t addr;   /* the slot's address in memory (load bias + r_offset) */
	uint32_t name;    /* index into the caller's names[] */
	uint8_t kind;     /* enum got_kind */
};

/* The most slots got_find reports for one module: past it, -1 ("more
 * than 4096 slots of the names in one module").  A real module has a few
 * per name; only a corrupt or hostile table has more. */
#define GOT_MAX_SLOTS 4096u

/* Call @each(ctx, &slot) for every relocation of the loaded module @info
 * (as dl_iterate_phdr gives it) that binds a symbol named one of
 * @names[0..count) with a zero addend (RELA) -- DT_REL, DT_RELA, DT_JMPREL
 * (either), Android packed DT_ANDROID_REL/RELA ("APS2"), with RELR
 * (DT_RELR / DT_ANDROID_RELR) skipped correctly (relative relocs carry no
 * symbol).  Symbol names come from DT_SYMTAB/DT_STRTAB; versioned names
 * match by the bare name.  The kinds: GOT_JUMP_SLOT (JUMP_SLOT/JMP_SLOT),
 * GOT_GLOB_DAT (GLOB_DAT), GOT_ABS (the pointer-sized absolute
 * relocation: R_X86_64_64, R_X86_64_32 on x32, R_386_32, R_AARCH64_ABS64,
 * R_ARM_ABS32); other types are not reported.  Slots come in table order:
 * DT_REL, DT_RELA, DT_ANDROID_REL, DT_ANDROID_RELA, then DT_JMPREL.
 *
 * With REL relocations (32-bit ARM, i386) the addend is implicit: it was
 * in the slot before the loader wrote S + A there, so a GOT_ABS slot
 * cannot be told to have a zero addend.  It is reported; pass the
 * resolved symbol address as got_swap's @expect, and a slot with an
 * addend then simply does not match (got_swap returns 0).
 *
 * The dynamic section's addresses: glibc's loader rewrites the d_ptr of
 * the tags its elf_get_dynamic_info adjusts (DT_SYMTAB, DT_STRTAB,
 * DT_JMPREL, DT_RELA on RELA machines, DT_REL on REL machines...) to
 * absolute addresses, when the load bias is not 0 and PT_DYNAMIC is
 * writable (glibc >= 2.35 leaves a read-only one alone).  Every other
 * loader (bionic, musl) and every loader for DT_ANDROID_* leaves them
 * relative to the load bias.  A glibc build reads each module by that
 * rule, any other build as relative; only when the symbol and string
 * tables fail their sanity checks that way (the string table must start
 * and end with NUL, symbol 0 must be all zero) is the other convention
 * tried, with the same checks.  Addresses are computed modulo 2^N, so a
 * module loaded below its link address (a negative load bias) is read.
 * @info->dlpi_phdr is trusted (it is the loader's record of what it
 * mapped); everything else is read only after checking that it lies in a
 * readable PT_LOAD segment.
 *
 * @each returning nonzero stops the walk and got_find returns that value;
 * a negative one also sets *why to "stopped by the caller".  Otherwise
 * returns 0, or -1 with *why a static string naming what is wrong (no
 * dynamic section, a table out of the module's mapped range, a bad
 * packed-relocation stream, "unsupported relocation format: ..." for
 * DT_CREL or arm64's signed-pointer relocations of a wanted name, more
 * than GOT_MAX_SLOTS slots...); slots already passed to @each before an
 * error stay passed.  @why may be NULL.  Never calls malloc; never faults
 * on a corrupt module (bounds-checks every table against the module's
 * PT_LOAD segments). */
int got_find(const struct dl_phdr_info *info, const char *const *names, unsigned count,
	     int (*each)(void *ctx, const struct got_slot *slot), void *ctx, const char **why);

/* Replace @expect by @value in the pointer-sized slot at @addr of module
 * @info, atomically (compare-and-swap).
 *
 * The slot is read first: when it does not hold @expect, 0 is returned
 * (*found = what it holds) and nothing else is done.  Otherwise the
 * protection of its page is read from /proc/self/maps (open and read
 * into a stack buffer; no malloc): a writable page is swapped as it is;
 * a page that is not (RELRO, or a page shared with code in Android's
 * 16 KiB compatibility mode) is made writable for the swap, keeping its
 * other bits, and then given back exactly the protection it had -- never
 * a protection it did not have.  got_swap costs one read of the maps
 * file: call it at patch time, not per allocation.
 *
 * The caller guarantees that @info's module is fully loaded: relocated,
 * and its RELRO protection applied.  glibc's dl_iterate_phdr lists a
 * module being loaded by another thread before that; the in-app runtime
 * patches only modules it has seen complete (loaded before it started,
 * or after their dlopen returned).  Callers serialize calls (one lock):
 * two swaps on one page must not race their mprotect pairs.
 *
 * Returns 1 replaced, 0 the slot held another value (*found = it; on 1,
 * *found = @expect; @found may be NULL), -1 with errno: EINVAL @addr not
 * pointer-aligned, EFAULT @addr not in a writable PT_LOAD segment of the
 * module (or in no mapping), the errno of opening or reading
 * /proc/self/maps, or mprotect's.  errno is unchanged unless -1 is
 * returned. */
int got_swap(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t expect, uintptr_t value,
	     uintptr_t *found);

/* Whether the loader is done with module @info, as far as it shows: its
 * PT_GNU_RELRO pages (the whole pages of the range, which the loader makes
 * read-only once it has relocated the module) are no longer writable.
 * 1 done, or nothing tells (no RELRO, or less than a page of it); 0 still
 * being loaded (glibc lists a module another thread is loading before it
 * is relocated); -1 with errno (reading /proc/self/maps).  bionic and
 * musl list a module only once it is loaded: there it is always 1. */
int got_loaded(const struct dl_phdr_info *info);

#endif
