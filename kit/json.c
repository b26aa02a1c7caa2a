/* leaksnap kit: the streamed JSON document's framing. */
#include <stdlib.h>

#include "kit_json.h"
#include "kit_utf8.h"

void kit_json_print(FILE *out, json_t *value)
{
	if (!value) {
		fputs("null", out);
		return;
	}
	json_dumpf(value, out, JSON_ENCODE_ANY);
	json_decref(value);
}

void kit_json_begin(struct kit_json *j, FILE *out)
{
	*j = (struct kit_json){.out = out};
}

void kit_json_key(struct kit_json *j, const char *key)
{
	fprintf(j->out, "%s\n  \"%s\": ", j->keys ? "," : "{", key);
	j->keys = true;
}

void kit_json_value(struct kit_json *j, json_t *value)
{
	kit_json_print(j->out, value);
}

void kit_json_list_begin(struct kit_json *j)
{
	fputc('[', j->out);
	j->items = 0;
}

void kit_json_list_item(struct kit_json *j, json_t *value)
{
	fputs(j->items++ ? ",\n    " : "\n    ", j->out);
	kit_json_print(j->out, value);
}

void kit_json_list_end(struct kit_json *j)
{
	fputs(j->items ? "\n  ]" : "]", j->out);
	j->items = 0;
}

void kit_json_end(struct kit_json *j)
{
	fputs(j->keys ? "\n}\n" : "{}\n", j->out);
}

json_t *kit_json_text(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	/* not UTF-8: each byte outside a valid sequence becomes U+FFFD */
	size_t len;
	char *t = kit_utf8_fixed(s, &len);
	if (!t)
		return json_null();
	j = json_stringn(t, len);
	free(t);
	return j ? j : json_null();
}

json_t *kit_json_addr(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

json_t *kit_json_u64(uint64_t v)
{
	/* The readers refuse totals above 2^63, so only a file's inode number
	 * can be larger (overlayfs with xino sets the top bits): written as a
	 * decimal string rather than as a negative number. */
	if (v > (uint64_t)INT64_MAX) {
		char digits[24];
		snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
		return json_string(digits);
	}
	return json_integer((json_int_t)v);
}
