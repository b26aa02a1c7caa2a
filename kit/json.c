/* leaksnap kit: the streamed JSON document's framing. */
#include "kit_json.h"

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
