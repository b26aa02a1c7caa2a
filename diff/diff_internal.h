/* leaksnap diff: private declarations shared by the files of diff/. */
#ifndef LEAKSNAP_DIFF_INTERNAL_H
#define LEAKSNAP_DIFF_INTERNAL_H

#include "diff.h"
#include "internal.h"

/* match.c: suppressions as the diff applies them */
void lsd_suppressions_reset(const struct diff_suppressions *s);
/* index of the first pattern matching @str, or SIZE_MAX */
size_t lsd_suppressions_find(const struct diff_suppressions *s, const char *str);
void lsd_suppressions_hit(const struct diff_suppressions *s, size_t index, uint64_t n);

#endif
