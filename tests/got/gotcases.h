/* The checks of hook/got.c, shared by the cmocka test (tests/unit/test_got.c,
 * native) and the plain program run under qemu-user for arm64 and 32-bit
 * ARM (gotcross.c, tests/t-got-cross.sh), where there is no cmocka.
 *
 * The libraries (libgot-VARIANT.so, built from libgotuse.c in one
 * relocation format each, and libgotnone.so) are in one directory. */
#ifndef LEAKSNAP_TESTS_GOTCASES_H
#define LEAKSNAP_TESTS_GOTCASES_H

#include <stdbool.h>

/* A check failed: the including program reports it (cmocka: fails the
 * test; gotcross: counts it).  The case returns right after. */
void gotcase_fail(const char *file, int line, const char *what);
/* A note for the log (skips, figures). */
void gotcase_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define GC_CHECK(cond)                                                  \
	do {                                                            \
		if (!(cond)) {                                          \
			gotcase_fail(__FILE__, __LINE__, #cond);        \
			return;                                         \
		}                                                       \
	} while (0)

/* The variants of this architecture, in table order. */
unsigned gotcase_variants(void);
const char *gotcase_variant_name(unsigned v);
/* The C library's loader loads it (else only gotcase_selfload and
 * gotcase_corrupt read it: gotcase_list and gotcase_swap fail on it). */
bool gotcase_variant_loadable(unsigned v);

/* Set the directory of the libraries (once, first). */
void gotcase_set_dir(const char *dir);

/* The cases; @v is a variant index. */
void gotcase_list(unsigned v);     /* exact (name, kind) slots, their values */
void gotcase_swap(unsigned v);     /* swap malloc's slots and back, RELRO pages */
void gotcase_selfload(unsigned v); /* the same slots from relative d_ptr (bionic) */
void gotcase_corrupt(unsigned v);  /* mutations: -1 and a reason, never a fault */
void gotcase_none(void);           /* a library that names none: no slot */
void gotcase_loaded(void);         /* every module of the process reads */
void gotcase_stop(void);           /* @each's nonzero stops the walk */
void gotcase_swap_errors(void);    /* wrong value, misaligned, outside */
void gotcase_swap_threads(void);   /* swaps while threads call through the slots */
void gotcase_swap_pages(void);     /* a page keeps the protection it had */
void gotcase_swap_partial(void);   /* RELRO ending mid-page: that page stays writable */
void gotcase_bias(void);           /* negative and low load biases, both d_ptr conventions */

#endif
