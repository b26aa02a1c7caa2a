/* leaksnap hook: what got.c and got_aps2.c share (got.h is the API). */
#ifndef LEAKSNAP_HOOK_GOT_INTERNAL_H
#define LEAKSNAP_HOOK_GOT_INTERNAL_H

#include "got.h" /* first: it defines _GNU_SOURCE */

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

#if UINTPTR_MAX > 0xffffffffu
#define GOTP_R_SYM(i) ((uintptr_t)(i) >> 32)
#define GOTP_R_TYPE(i) ((uintptr_t)(i) & 0xffffffffu)
#else
#define GOTP_R_SYM(i) ((uintptr_t)(i) >> 8)
#define GOTP_R_TYPE(i) ((uintptr_t)(i) & 0xffu)
#endif

/* One got_find walk over a module. */
struct gotp_walk {
	uintptr_t bias;                 /* dlpi_addr */
	const ElfW(Phdr) *phdr;
	unsigned phnum;
	const ElfW(Sym) *sym;           /* DT_SYMTAB, checked for nsym entries */
	uintptr_t nsym;
	const char *str;                /* DT_STRTAB, checked for strsz bytes */
	uintptr_t strsz;
	const char *const *names;
	unsigned count;
	uint32_t first[8];              /* bit c: a name starts with byte c */
	int (*each)(void *ctx, const struct got_slot *slot);
	void *ctx;
	uintptr_t skip_lo, skip_hi;     /* the DT_JMPREL entries */
	unsigned reported;              /* slots passed to @each (GOT_MAX_SLOTS at most) */
	int stopped;                    /* what @each returned to stop the walk */
	const char *why;                /* the error, when -1 */
};

/* Bytes readable from @addr to the end of its readable PT_LOAD segment
 * (0: in none). */
uintptr_t gotp_room(const struct gotp_walk *w, uintptr_t addr);

/* One relocation: reported to @each when it binds one of the names.
 * Returns 0 go on, 1 @each stopped the walk, -1 error (w->why). */
int gotp_reloc(struct gotp_walk *w, ElfW(Addr) offset, ElfW(Addr) info, ElfW(Addr) addend);

/* Decode the Android packed relocations ("APS2") of @size bytes at @p,
 * already checked readable, with addends (@rela) or without, each through
 * gotp_reloc.  Same returns as gotp_reloc. */
int gotp_aps2(struct gotp_walk *w, const uint8_t *p, uintptr_t size, bool rela);

#endif
