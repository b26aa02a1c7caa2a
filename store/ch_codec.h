/* leaksnap store: what the ClickHouse backend sends and reads, without
 * the network -- the rows of its INSERT bodies (TabSeparated for tables
 * with text, every string escaped; RowBinary for tables of numbers alone,
 * which have nothing to escape), the TabSeparated and RowBinary answers
 * read back, the clickhouse:// URL and the server's error texts.  Kept
 * apart so that the unit tests reach it (tests/unit/test_ch_codec.c). */
#ifndef LEAKSNAP_CH_CODEC_H
#define LEAKSNAP_CH_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer; zero-initialized: empty.  A failed growth sets
 * nomem and drops what is appended from then on. */
struct chbuf {
	char *p;
	size_t n, cap;
	bool nomem;
};

void chbuf_free(struct chbuf *b);
void chbuf_bytes(struct chbuf *b, const void *p, size_t n);
void chbuf_str(struct chbuf *b, const char *s);

/* TabSeparated: a field, then a tab (or at the row's end a newline). */
/* @s escaped as ClickHouse reads it back byte for byte: backslash, tab,
 * newline, carriage return, NUL (never in a C string) and the quote as
 * backslash sequences, every other byte (non-UTF-8 ones too) as it is. */
void ch_tsv_text(struct chbuf *b, const char *s);
void ch_tsv_u64(struct chbuf *b, uint64_t v);
void ch_tsv_i64(struct chbuf *b, int64_t v);
/* The end of a field: @last ends the row. */
void ch_tsv_end(struct chbuf *b, bool last);

/* RowBinary: little-endian integers, arrays as a LEB128 length then the
 * items. */
void ch_rb_u64(struct chbuf *b, uint64_t v);
void ch_rb_u32(struct chbuf *b, uint32_t v);
void ch_rb_u8(struct chbuf *b, uint8_t v);
void ch_rb_ids(struct chbuf *b, const uint64_t *v, uint32_t n);

/* Reading a TabSeparated answer: the next row at *@p (before @end) split
 * into at most @max fields, each unescaped in place and NUL-terminated:
 * the number of fields, 0 at the end, -1 when the row is malformed (more
 * fields than @max, a bad escape, no newline at its end). */
int ch_tsv_row(char **p, char *end, char **fields, int max);
/* A decimal field: false when it is not one (or out of range). */
bool ch_parse_u64(const char *s, uint64_t *v);
bool ch_parse_i64(const char *s, int64_t *v);

/* Reading RowBinary: the next integer at *@p, false past @end. */
bool ch_rb_get(const char **p, const char *end, unsigned width, uint64_t *v);
/* An array's length. */
bool ch_rb_len(const char **p, const char *end, uint64_t *n);

/* A clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE URL's parts, each
 * a string of its own (free with ch_url_free).  USER[:PASSWORD] ends at the
 * URL's last '@' and splits at its first ':'; each is %-decoded (a bad
 * escape, or %00, refused).  HOST is letters, digits, '-', '.' and '_'.  HOST may be [IPv6]; PORT
 * defaults to 8123; DATABASE is letters, digits and '_', not starting
 * with a digit (the only name spliced into SQL: the DDL's).  false with
 * @why set when the URL is not one. */
struct ch_url {
	char *host, *user, *password, *database;
	unsigned port;
};
bool ch_url_parse(const char *url, struct ch_url *u, const char **why);
void ch_url_free(struct ch_url *u);
/* @url as errors name it: its PASSWORD (USER:PASSWORD@, split as
 * ch_url_parse does) as "***"; NULL when out of memory. */
char *ch_url_redacted(const char *url);

/* The server's error answer (HTTP body) as one line: its code (0 when it
 * says none) and the message alone, without "Code: N", "e.displayText()",
 * "DB::Exception:", stack traces or the version, cut to @size bytes. */
int ch_error_text(const char *body, size_t len, char *out, size_t size);

#endif
