/* leaksnap CLI: KEY=VALUE options naming a store's run labels (history
 * --where, leakdiff --where), labels.c. */
#ifndef LEAKSNAP_CLI_LABELS_H
#define LEAKSNAP_CLI_LABELS_H

#include <stddef.h>

#include "store.h"

#define CLI_LABELS_MAX 64

/* Zero-initialized: none. */
struct cli_labels {
	struct leaksnap_store_label v[CLI_LABELS_MAX];
	char *text[CLI_LABELS_MAX]; /* owned: each key, its value after it */
	size_t n;
};

/* @arg, the KEY=VALUE of option @opt of command @cmd, added to @l: 0, or
 * -1 after saying what is wrong (no '=' or no KEY, too many). */
int cli_labels_add(struct cli_labels *l, const char *cmd, const char *opt, const char *arg);
void cli_labels_release(struct cli_labels *l);

#endif
