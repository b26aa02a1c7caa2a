/* leaksnap history: the options of one run, shared by cmd_history.c and the
 * renderers of its outputs (history_out.c). */
#ifndef LEAKSNAP_CLI_HISTORY_H
#define LEAKSNAP_CLI_HISTORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "labels.h"
#include "store.h"

struct history_cli {
	const char *db, *by;
	struct cli_labels where; /* --where KEY=VALUE... */
	uint64_t last;
	bool json;
	const char *series;     /* --series KEY, or NULL */
	const char *html;       /* --html FILE, or NULL */
	bool has_fail_on;       /* --fail-on-regression BYTES */
	uint64_t fail_on;
};

/* Whether row @r's figures are estimates: a run of it was sampled. */
bool history_sampled(const struct leaksnap_store_history_row *r);
/* The table on standard output. */
void history_text(const struct leaksnap_store_history *h, const struct history_cli *c);
/* The JSON document on @out (what --json prints; with @frames, each
 * suspect's whole stack too, as the page has it).  0, or -1 after saying
 * why. */
int history_json(FILE *out, const struct leaksnap_store_history *h, const struct history_cli *c,
		 bool frames);
/* The page at --html: 0, or -1 after saying why. */
int history_html(const struct leaksnap_store_history *h, const struct history_cli *c);

#endif
