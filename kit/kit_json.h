/* leaksnap kit: writing a JSON document as a stream.  Jansson encodes
 * each value; this frames them: an object of top-level keys in the order
 * written, and lists whose items stand one per line, so that a document
 * of a million records is never a million-node tree in memory.
 *
 *   {
 *     "key": value,
 *     "list": [
 *       item,
 *       item
 *     ]
 *   }
 */
#ifndef LEAKSNAP_KIT_JSON_H
#define LEAKSNAP_KIT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

struct kit_json {
	FILE *out;
	bool keys;    /* a key was written */
	size_t items; /* items of the open list */
};

/* Start a document on @out (nothing is written until the first key). */
void kit_json_begin(struct kit_json *j, FILE *out);
/* The next top-level key; its value follows. */
void kit_json_key(struct kit_json *j, const char *key);
/* Write @value compactly and release it (NULL: null). */
void kit_json_value(struct kit_json *j, json_t *value);
/* A list value: its items, one per line. */
void kit_json_list_begin(struct kit_json *j);
void kit_json_list_item(struct kit_json *j, json_t *value);
void kit_json_list_end(struct kit_json *j);
/* Close the document ("{}" when no key was written). */
void kit_json_end(struct kit_json *j);

/* @value written compactly on @out and released (NULL: null). */
void kit_json_print(FILE *out, json_t *value);

/* Values.  A string from an input (a dump, a maps file, an ELF file, a
 * path): as is when it is UTF-8, else with each byte outside a valid
 * sequence replaced by U+FFFD, so that JSON output is always JSON (NULL:
 * null). */
json_t *kit_json_text(const char *s);
/* "0x..." */
json_t *kit_json_addr(uint64_t v);
/* An integer; from 2^63 (Jansson's integers are signed) a decimal string. */
json_t *kit_json_u64(uint64_t v);

#endif /* LEAKSNAP_KIT_JSON_H */
