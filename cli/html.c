/* Self-contained HTML report pages (leakdiff --html, symbolize --html).
 *
 * A page is: a head with a Content-Security-Policy that allows only the
 * page's own inline script and style (by their SHA-256, computed at build
 * time), the style, the data as JSON inside <script type="application/json">
 * elements, and the script that renders the data.  Nothing is loaded from
 * anywhere.  Every string of the data comes from a dump, a maps file or an
 * ELF file and is untrusted: the page's script only ever puts it into text
 * nodes and attribute values, and here the JSON is escaped so that no string
 * can end its element ('<', '>' and '&' become \u003c, \u003e, \u0026, which
 * Jansson never writes outside a string). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report_assets.h" /* generated: report_js, report_css and their hashes */

static int html_head(FILE *page, const char *kind, const char *title)
{
	fprintf(page,
		"<!DOCTYPE html>\n"
		"<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"script-src 'sha256-%s'; style-src 'sha256-%s'; img-src 'none'; "
		"base-uri 'none'; form-action 'none'\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		CLI_HTML_GENERATOR "\n"
		"<title>%s</title>\n<style>",
		report_js_sha256, report_css_sha256, title);
	fwrite(report_css, 1, sizeof(report_css) - 1, page);
	fprintf(page, "</style>\n</head>\n<body data-kind=\"%s\">\n"
		      "<noscript><p>This leaksnap report needs JavaScript to draw its charts and "
		      "tables; its data is in the page source as JSON.</p></noscript>\n",
		kind);
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

int cli_html_page(FILE *page, const char *path, const struct cli_html_doc *doc)
{
	FILE *data = html_head(page, doc->kind, doc->title) == 0 ? data_open(page, "leaksnap-data")
								  : NULL;
	bool ok = data != NULL;
	if (data) {
		if (doc->write_json(data, doc->arg) != EXIT_OK) {
			data_close(page, data);
			return EXIT_ERROR; /* reported */
		}
		ok = data_close(page, data) == 0;
		data = ok ? data_open(page, "leaksnap-flame") : NULL;
		ok = data != NULL;
	}
	if (data) {
		ok = cli_flame_write(doc->flame, data, doc->what, doc->rest_bytes, doc->rest_stacks) == 0;
		ok = data_close(page, data) == 0 && ok;
		ok = ok && html_tail(page) == 0;
	}
	if (!ok)
		return cli_fail(path, "write error: %s", strerror(errno ? errno : EIO));
	return EXIT_OK;
}

/* Flame graph data ----------------------------------------------------------------
 * {"what": "growth"|"live", "total": bytes of every stack, "rest_bytes": bytes
 *  of the stacks left out, "rest_stacks": N, "frames": [frame objects as in
 *  --json, one per inline level], "stacks": [[bytes, [frame ids, outermost
 *  level first]], ...]}.  Frames are shared between stacks by a key. */

struct cli_flame {
	json_t *frames, *index, *stacks, *cur;
	uint64_t total;
};

struct cli_flame *cli_flame_new(void)
{
	struct cli_flame *fl = calloc(1, sizeof(*fl));
	if (!fl)
		return NULL;
	fl->frames = json_array();
	fl->index = json_object();
	fl->stacks = json_array();
	if (!fl->frames || !fl->index || !fl->stacks) {
		cli_flame_free(fl);
		return NULL;
	}
	return fl;
}

void cli_flame_free(struct cli_flame *fl)
{
	if (!fl)
		return;
	json_decref(fl->frames);
	json_decref(fl->index);
	json_decref(fl->stacks);
	free(fl);
}

int cli_flame_stack(struct cli_flame *fl, uint64_t bytes)
{
	fl->cur = json_array();
	json_t *st = json_pack("[o, o]", cli_json_u64(bytes), fl->cur);
	if (!fl->cur || !st || json_array_append_new(fl->stacks, st))
		return -1;
	fl->total += bytes;
	return 0;
}

int cli_flame_frame(struct cli_flame *fl, uint64_t key, uint64_t pc, const char *module,
		    uint64_t rel_pc, const struct leaksnap_resolved *r)
{
	char k[24];
	snprintf(k, sizeof(k), "%" PRIx64, key);
	json_t *first = json_object_get(fl->index, k);
	size_t levels;
	if (first) {
		levels = r->frame_count ? r->frame_count : 1;
	} else {
		json_t *tmp = json_array();
		if (!tmp)
			return -1;
		cli_json_frames(tmp, pc, module, rel_pc, r);
		levels = json_array_size(tmp);
		first = json_integer((json_int_t)json_array_size(fl->frames));
		/* innermost level first in --json; the caller's level goes first here */
		for (size_t i = levels; i-- > 0;)
			json_array_append(fl->frames, json_array_get(tmp, i));
		json_decref(tmp);
		if (!first || json_object_set_new(fl->index, k, first))
			return -1;
	}
	json_int_t id = json_integer_value(first);
	for (size_t i = 0; i < levels; i++)
		if (json_array_append_new(fl->cur, json_integer(id + (json_int_t)i)))
			return -1;
	return 0;
}

int cli_flame_write(const struct cli_flame *fl, FILE *data, const char *what, uint64_t rest_bytes,
		    uint64_t rest_stacks)
{
	fprintf(data, "{\"what\": \"%s\", \"total\": %" PRIu64 ", \"rest_bytes\": %" PRIu64
		      ", \"rest_stacks\": %" PRIu64 ",\n\"frames\": [",
		what, fl->total + rest_bytes, rest_bytes, rest_stacks);
	for (size_t i = 0; i < json_array_size(fl->frames); i++) {
		fputs(i ? ",\n" : "\n", data);
		json_dumpf(json_array_get(fl->frames, i), data, JSON_COMPACT);
	}
	fputs("],\n\"stacks\": [", data);
	for (size_t i = 0; i < json_array_size(fl->stacks); i++) {
		fputs(i ? ",\n" : "\n", data);
		json_dumpf(json_array_get(fl->stacks, i), data, JSON_COMPACT);
	}
	fputs("]}\n", data);
	return ferror(data) ? -1 : 0;
}
