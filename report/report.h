/* leaksnap report: the self-contained HTML page (leakdiff --html,
 * symbolize --html, history --html).  Private to the tool: the page's script and style
 * (report.css, *.js) are embedded at build time.
 *
 * It never prints: an error of the page is a status and an error record
 * with an empty source (the caller names the file it gave). */
#ifndef LEAKSNAP_REPORT_H
#define LEAKSNAP_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <leaksnap/export.h>
#include <leaksnap/snapshot.h>

/* The generator tag of every page: what lets a report replace one of its
 * own kind. */
#define REPORT_GENERATOR "<meta name=\"generator\" content=\"leaksnap\">"
/* The stacks a page's flame graph shows unless the caller says. */
#define REPORT_STACKS 500

/* What a page shows: the document --json prints and the flame graph's
 * stacks, both from the caller. */
struct report_page {
	const char *kind;  /* "diff", "symbolize" or "history" */
	const char *title; /* a fixed title (the page's script sets a better one) */
	const char *what;  /* the flame graph's bytes: "growth" or "live" */
	/* writes the JSON document on @out (a stream that escapes it for the
	 * page); nonzero: it failed and said why */
	int (*write_json)(FILE *out, void *arg);
	/* adds the flame graph's stacks to @fl, with the bytes and the count
	 * of the stacks left out; nonzero: it failed and said why.  NULL: the
	 * page has no flame graph (no leaksnap-flame element) */
	int (*fill_flame)(struct leaksnap_export_flame *fl, void *arg, uint64_t *rest_bytes,
			  uint64_t *rest_stacks);
	void *arg;
	/* the page shows function names whole (--full-names), not shortened */
	bool full_names;
};

/* Write the page on @out: the head with its Content-Security-Policy and
 * style, the document and the flame data as JSON elements that no string
 * can end, and the script that draws them.  0; -1 with @err set (out of
 * memory: LEAKSNAP_ERR_NOMEM, a write error: LEAKSNAP_ERR_IO, "write
 * error: ..."); or the callbacks' nonzero value. */
int report_write(FILE *out, const struct report_page *page, struct leaksnap_error *err);

#endif
