/* leaksnap diff: the options of one leakdiff run, shared by cmd_diff.c and
 * the files that render its reports (diff_text.c, diff_json.c). */
#ifndef LEAKSNAP_CLI_DIFF_CLI_H
#define LEAKSNAP_CLI_DIFF_CLI_H

#include <stdio.h>

#include <leaksnap/diff.h>

#include "cli.h"
#include "labels.h"

#define MAX_SYMBOL_DIRS 64
#define MAX_SKIP 256

struct diff_cli {
	struct leaksnap_diff_options o;
	struct cli_input in;
	const char *dirs[MAX_SYMBOL_DIRS];
	size_t ndirs;
	const char *skip[MAX_SKIP];
	size_t nskip;
	const char *supp_path;
	uint64_t top;
	bool json, folded, no_symbols, no_adjust;
	bool has_fail_on;
	uint64_t fail_on;
	bool has_fail_unreachable;  /* --fail-on-unreachable BYTES */
	uint64_t fail_unreachable;
	const char *html;      /* --html FILE, or NULL */
	const char *pprof;     /* --pprof FILE, or NULL */
	uint64_t html_stacks;
	/* --db DB with --run ID or --where KEY=VALUE...: a stored run */
	const char *db, *run;
	struct cli_labels where;
	struct leaksnap_error err;
};

/* The text report on standard output.  0, or -1 after saying why. */
int cli_diff_text(struct leaksnap_diff *d, struct diff_cli *c);
/* The JSON document on @out.  0, or -1 after saying why. */
int cli_diff_json(FILE *out, struct leaksnap_diff *d, const struct diff_cli *c);

/* --fail-on-unreachable: whether the last snapshot's unreachable bytes
 * reach the limit (then it says so on standard error). */
bool cli_diff_unreachable_gate(struct leaksnap_diff *d, const struct diff_cli *c);

#endif
