/* What the GOT check files share (gotcases.c, gotcorrupt.c): the
 * variants, the names looked for, slots and modules loaded by hand. */
#ifndef LEAKSNAP_TESTS_GOTCASE_INT_H
#define LEAKSNAP_TESTS_GOTCASE_INT_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "got.h"

/* What a variant's file must (flags) and must not (absent) have. */
enum {
	F_ANDROID_REL = 1 << 0,
	F_ANDROID_RELA = 1 << 1,
	F_RELR = 1 << 2,
	F_ANDROID_RELR = 1 << 3,
	F_BIND_NOW = 1 << 4,
	F_NO_RELRO = 1 << 5,
};
#if defined(__arm__) || defined(__i386__)
#define F_APS2 F_ANDROID_REL
#define APS2_RELA false
#else
#define F_APS2 F_ANDROID_RELA
#define APS2_RELA true
#endif
#define F_PACKED (F_APS2 | F_RELR | F_ANDROID_RELR)

struct variant {
	const char *name;   /* libgot-NAME.so */
	unsigned flags, absent;
	bool lld;           /* linked by lld (malloc keeps its JUMP_SLOT) */
	bool loadable;      /* glibc loads it */
	bool unapplied;     /* glibc skips its packed relocations: GLOB_DAT, ABS stay 0 */
	unsigned ro_kinds;  /* RO(kind): malloc's slots of that kind on read-only pages */
};

extern const struct variant gc_variants[];

/* The names every case looks for. */
#define GC_NNAMES 6u
enum { N_MALLOC, N_FREE, N_CALLOC, N_REALLOC };
extern const char *const gc_names[GC_NNAMES];

/* Slots as got_find gives them. */
#define GC_MAX_SLOTS 64
struct slots {
	unsigned n;
	struct got_slot s[GC_MAX_SLOTS];
};

int gc_collect(void *ctx, const struct got_slot *slot);

/* The path of libgot-@variant.so (NULL: libgotnone.so). */
void gc_lib_path(char *buf, size_t len, const char *variant);

/* A module loaded by hand, as bionic leaves one in memory: the segments
 * copied to their place in an anonymous mapping between two guard pages,
 * the dynamic section untouched (every d_ptr relative). */
struct image {
	uint8_t *file;
	size_t fsize;
	uint8_t *map;     /* guard page, image, guard page */
	size_t maplen;
	uintptr_t base;   /* the load bias */
	size_t span;      /* bytes of image */
	ElfW(Phdr) *ph;   /* a copy: the corrupt case edits it */
	unsigned phnum;
	struct dl_phdr_info info;
};

bool gc_image_load(struct image *im, const char *path);
/* Copy @im's PT_LOAD segments to @im->base (the mapping is made and
 * writable) and fill @im->info as dl_iterate_phdr would, named @path. */
bool gc_image_place(struct image *im, const char *path);
/* Only the file and its program headers (file, fsize, ph, phnum). */
bool gc_image_read(struct image *im, const char *path);
/* The protection (PROT_*) of the page holding @addr, from
 * /proc/self/maps; -1 not mapped. */
int gc_page_prot(uintptr_t addr);
/* dlopen libgot-@variant.so and its dl_iterate_phdr record (NULL: failed). */
void *gc_dlopen(const char *variant, struct dl_phdr_info *info);
/* The loaded module of dlopen() handle @handle, as dl_iterate_phdr gives it. */
bool gc_module_of(void *handle, struct dl_phdr_info *info);
void gc_image_free(struct image *im);
/* The image's dynamic entry of tag @tag (NULL: none). */
ElfW(Dyn) *gc_image_dyn(const struct image *im, ElfW(Sxword) tag);

#endif
