/* Self-contained HTML report pages (leakdiff --html, symbolize --html,
 * history --html).
 *
 * A page is: a head with a Content-Security-Policy that allows only the
 * page's own inline script and style (by their SHA-256, computed at build
 * time), the style, the data as JSON inside <script type="application/json">
 * elements, and the script that renders the data.  Nothing is loaded from
 * anywhere.  Every string of the data comes from a dump, a maps file or an
 * ELF file and is untrusted: the page's script only ever puts it into text
 * nodes and attribute values, and here the JSON is escaped so that no string
 * can end its element ('<', '>' and '&' become \u003c, \u003e, \u0026, which
 * Jansson never writes outside a string).  The flame data is export's
 * (leaksnap_export_flame_write). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit.h"
#include "report.h"
#include "report_assets.h" /* generated: report_js, report_css and their hashes */

static int html_head(FILE *page, const char *kind, const char *title, bool full_names)
{
	fprintf(page,
		"<!DOCTYPE html>\n"
		"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'sha256-%s'; style-src 'sha256-%s'; img-src 'none'; "
		"base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		REPORT_GENERATOR "\n"
		"<title>%s</title>\n<style>",
		report_js_sha256, report_css_sha256, title);
	fwrite(report_css, 1, sizeof(report_css) - 1, page);
	fprintf(page, "</style>\n</head>\n<body data-kind=\"%s\"%s>\n"
		      "<noscript><p>This leaksnap report needs JavaScript to draw its charts and "
		      "tables; its data is in the page source as JSON.</p></noscript>\n",
		kind, full_names ? " data-full-names=\"1\"" : "");
	return ferror(page) ? -1 : 0;
}

static ssize_t escape_write(void *cookie, const char *buf, size_t size)
{
	FILE *page = cookie;
	size_t from = 0;
	for (size_t i = 0; i < size; i++) {
		const char *esc = buf[i] == '<' ? "\\u003c"
				  : buf[i] == '>' ? "\\u003e"
				  : buf[i] == '&' ? "\\u0026"
						  : NULL;
		if (!esc)
			continue;
		if (i > from && fwrite(buf + from, 1, i - from, page) != i - from)
			return -1;
		if (fputs(esc, page) == EOF)
			return -1;
		from = i + 1;
	}
	if (size > from && fwrite(buf + from, 1, size - from, page) != size - from)
		return -1;
	return (ssize_t)size;
}

static FILE *data_open(FILE *page, const char *id)
{
	fprintf(page, "<script type=\"application/json\" id=\"%s\">", id);
	cookie_io_functions_t io = {.write = escape_write};
	return fopencookie(page, "w", io);
}

static int data_close(FILE *page, FILE *data)
{
	int bad = fclose(data) != 0;
	fputs("</script>\n", page);
	return bad || ferror(page) ? -1 : 0;
}

static int html_tail(FILE *page)
{
	fputs("<main id=\"app\"></main>\n<script>", page);
	fwrite(report_js, 1, sizeof(report_js) - 1, page);
	fputs("</script>\n</body>\n</html>\n", page);
	return ferror(page) ? -1 : 0;
}

static int write_page(FILE *out, const struct report_page *page,
		      const struct leaksnap_export_flame *fl, uint64_t rest_bytes,
		      uint64_t rest_stacks, struct leaksnap_error *err)
{
	FILE *data = html_head(out, page->kind, page->title, page->full_names) == 0 ? data_open(out, "leaksnap-data")
								    : NULL;
	bool ok = data != NULL;
	if (data) {
		int rc = page->write_json(data, page->arg);
		if (rc != 0) {
			data_close(out, data);
			return rc; /* reported */
		}
		ok = data_close(out, data) == 0;
		if (ok && !page->fill_flame) /* a page without a flame graph */
			ok = html_tail(out) == 0;
		data = ok && page->fill_flame ? data_open(out, "leaksnap-flame") : NULL;
		ok = ok && (data != NULL || !page->fill_flame);
	}
	if (data) {
		ok = leaksnap_export_flame_write(fl, data, page->what, rest_bytes, rest_stacks) ==
		     0;
		ok = data_close(out, data) == 0 && ok;
		ok = ok && html_tail(out) == 0;
	}
	if (!ok) {
		int e = errno ? errno : EIO;
		kit_error(err, LEAKSNAP_ERR_IO, NULL, "write error: %s", strerror(e));
	}
	return ok ? 0 : -1;
}

int report_write(FILE *out, const struct report_page *page, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_export_flame *fl = leaksnap_export_flame_new();
	uint64_t rest_bytes = 0, rest_stacks = 0;
	if (!fl)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	int rc = page->fill_flame ? page->fill_flame(fl, page->arg, &rest_bytes, &rest_stacks) : 0;
	if (rc == 0)
		rc = write_page(out, page, fl, rest_bytes, rest_stacks, err);
	leaksnap_export_flame_free(fl);
	return rc;
}
