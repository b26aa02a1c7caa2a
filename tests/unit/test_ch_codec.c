/* Unit tests for the ClickHouse backend's codec (store/ch_codec.c), no
 * server: every byte but NUL through the TabSeparated escaping and back
 * (what the server writes is what it read), hostile strings (quotes,
 * backslashes, "\N", newlines, tabs, bytes that are not UTF-8) escaped
 * to one field of one line; the server's own escapes read back; numbers
 * at their limits; RowBinary integers and arrays (a length past 127
 * takes two bytes); clickhouse:// URLs and the refusals of those that
 * are not; the server's error texts of 18.16 and of current versions cut
 * to their message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_codec.h"

/* @s escaped as a field, then read back as a row of its own */
static void round_trip(const char *s)
{
	struct chbuf b = {0};
	ch_tsv_text(&b, s);
	ch_tsv_end(&b, false);
	ch_tsv_u64(&b, 7);
	ch_tsv_end(&b, true);
	assert_false(b.nomem);
	/* one line, two fields: no raw tab or newline escaped into it */
	assert_int_equal(strchr(b.p, '\n') - b.p, (long)b.n - 1);
	assert_ptr_equal(strchr(b.p, '\t'), strrchr(b.p, '\t'));
	char *p = b.p, *f[4];
	assert_int_equal(ch_tsv_row(&p, b.p + b.n, f, 4), 2);
	assert_string_equal(f[0], s);
	assert_string_equal(f[1], "7");
	assert_int_equal(ch_tsv_row(&p, b.p + b.n, f, 4), 0);
	chbuf_free(&b);
}

static void test_tsv_every_byte(void **state)
{
	(void)state;
	char s[256];
	for (int i = 1; i < 256; i++)
		s[i - 1] = (char)i;
	s[255] = '\0';
	round_trip(s);
	for (int i = 1; i < 256; i++) {
		char one[2] = {(char)i, 0};
		round_trip(one);
	}
}

static void test_tsv_hostile(void **state)
{
	(void)state;
	static const char *const hostile[] = {
		"",
		"x'); DROP TABLE runs; --",
		"\"two\"\tlines\nand a \\ backslash",
		"\\N",
		"\\",
		"trailing backslash\\",
		"\r\n",
		"\377\376 not UTF-8 \300\200",
		"operator<<(std::ostream&, char const*)",
		"a\\tb", /* a backslash and a t, not a tab */
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		round_trip(hostile[i]);
	struct chbuf b = {0};
	ch_tsv_text(&b, "a\tb\nc\\d'e");
	assert_string_equal(b.p, "a\\tb\\nc\\\\d\\'e");
	chbuf_free(&b);
}

/* What the server writes: its escapes, \xHH among them */
static void test_tsv_server_escapes(void **state)
{
	(void)state;
	char text[] = "a\\bb\\fc\\rd\\ne\\tf\\'g\\\\h\\xffi\\x41\t\\N\n";
	char *p = text, *f[3];
	assert_int_equal(ch_tsv_row(&p, text + strlen(text), f, 3), 2);
	assert_string_equal(f[0], "a\bb\fc\rd\ne\tf'g\\h\377iA");
	assert_string_equal(f[1], "N");
	/* malformed: too many fields, no newline, a NUL, a short \x */
	char t2[] = "a\tb\tc\n";
	p = t2;
	assert_int_equal(ch_tsv_row(&p, t2 + strlen(t2), f, 2), -1);
	char t3[] = "abc";
	p = t3;
	assert_int_equal(ch_tsv_row(&p, t3 + 3, f, 2), -1);
	char t4[] = "a\\0b\n";
	p = t4;
	assert_int_equal(ch_tsv_row(&p, t4 + strlen(t4), f, 2), -1);
	char t5[] = "a\\x4\n";
	p = t5;
	assert_int_equal(ch_tsv_row(&p, t5 + strlen(t5), f, 2), -1);
}

static void test_numbers(void **state)
{
	(void)state;
	struct chbuf b = {0};
	ch_tsv_u64(&b, 0);
	ch_tsv_end(&b, false);
	ch_tsv_u64(&b, UINT64_MAX);
	ch_tsv_end(&b, false);
	ch_tsv_i64(&b, INT64_MIN);
	ch_tsv_end(&b, false);
	ch_tsv_i64(&b, -1);
	ch_tsv_end(&b, true);
	assert_string_equal(b.p, "0\t18446744073709551615\t-9223372036854775808\t-1\n");
	chbuf_free(&b);
	uint64_t u;
	int64_t i;
	assert_true(ch_parse_u64("18446744073709551615", &u));
	assert_true(u == UINT64_MAX);
	assert_false(ch_parse_u64("18446744073709551616", &u));
	assert_false(ch_parse_u64("", &u));
	assert_false(ch_parse_u64("-1", &u));
	assert_false(ch_parse_u64("1x", &u));
	assert_true(ch_parse_i64("-9223372036854775808", &i));
	assert_true(i == INT64_MIN);
	assert_false(ch_parse_i64("9223372036854775808", &i));
	assert_true(ch_parse_i64("42", &i));
	assert_int_equal(i, 42);
}

static void test_rowbinary(void **state)
{
	(void)state;
	struct chbuf b = {0};
	uint64_t ids[200];
	for (int i = 0; i < 200; i++)
		ids[i] = 0x0102030405060708ULL * (uint64_t)(i + 1);
	ch_rb_u64(&b, 0x1122334455667788ULL);
	ch_rb_u32(&b, 0xaabbccdd);
	ch_rb_u8(&b, 1);
	ch_rb_ids(&b, ids, 3);
	ch_rb_ids(&b, ids, 200);
	ch_rb_ids(&b, NULL, 0);
	assert_false(b.nomem);
	assert_int_equal(b.n, 8 + 4 + 1 + 1 + 24 + 2 + 1600 + 1);
	const unsigned char *u = (const unsigned char *)b.p;
	assert_int_equal(u[0], 0x88);
	assert_int_equal(u[7], 0x11);
	assert_int_equal(u[8], 0xdd);
	assert_int_equal(u[13], 3);
	assert_int_equal(u[38], (200 & 0x7f) | 0x80);
	assert_int_equal(u[39], 1);
	const char *p = b.p, *end = b.p + b.n;
	uint64_t v, n;
	assert_true(ch_rb_get(&p, end, 8, &v));
	assert_true(v == 0x1122334455667788ULL);
	assert_true(ch_rb_get(&p, end, 4, &v));
	assert_true(v == 0xaabbccdd);
	assert_true(ch_rb_get(&p, end, 1, &v));
	assert_true(v == 1);
	assert_true(ch_rb_len(&p, end, &n));
	assert_true(n == 3);
	p += 24;
	assert_true(ch_rb_len(&p, end, &n));
	assert_true(n == 200);
	p += 8 * 199;
	assert_true(ch_rb_get(&p, end, 8, &v));
	assert_true(v == ids[199]);
	assert_true(ch_rb_len(&p, end, &n));
	assert_true(n == 0);
	assert_false(ch_rb_get(&p, end, 1, &v));
	assert_false(ch_rb_len(&p, end, &n));
	chbuf_free(&b);
}

static void test_url(void **state)
{
	(void)state;
	struct ch_url u;
	const char *why = NULL;
	assert_true(ch_url_parse("clickhouse://db.example:9000/leaks", &u, &why));
	assert_string_equal(u.host, "db.example");
	assert_int_equal(u.port, 9000);
	assert_string_equal(u.database, "leaks");
	assert_null(u.user);
	ch_url_free(&u);
	assert_true(ch_url_parse("CLICKHOUSE://reader:s3cr%25t@127.0.0.1/leak_s2/", &u, &why));
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 8123);
	assert_string_equal(u.user, "reader");
	assert_string_equal(u.password, "s3cr%t");
	assert_string_equal(u.database, "leak_s2");
	ch_url_free(&u);
	/* the password ends at the last '@' (it may hold '@', '/' and ':') */
	assert_true(ch_url_parse("clickhouse://user:p@ss@127.0.0.1:9123/db", &u, &why));
	assert_string_equal(u.user, "user");
	assert_string_equal(u.password, "p@ss");
	assert_string_equal(u.host, "127.0.0.1");
	assert_int_equal(u.port, 9123);
	assert_string_equal(u.database, "db");
	ch_url_free(&u);
	assert_true(ch_url_parse("clickhouse://us%3Aer%40x:a/b:c@@h-1.example_2/db", &u, &why));
	assert_string_equal(u.user, "us:er@x");
	assert_string_equal(u.password, "a/b:c@");
	assert_string_equal(u.host, "h-1.example_2");
	ch_url_free(&u);
	assert_true(ch_url_parse("clickhouse://r%C3%A9ader:%20%2f%FF@[fe80::1]/db", &u, &why));
	assert_string_equal(u.user, "r\xc3\xa9" "ader");
	assert_string_equal(u.password, " /\xff");
	assert_string_equal(u.host, "[fe80::1]");
	ch_url_free(&u);
	assert_true(ch_url_parse("clickhouse://reader@host/db", &u, &why));
	assert_string_equal(u.user, "reader");
	assert_string_equal(u.password, "");
	ch_url_free(&u);
	/* errors name the URL with its password hidden */
	static const struct {
		const char *url, *shown;
	} red[] = {
		{"clickhouse://user:p@ss@127.0.0.1:9123/db", "clickhouse://user:***@127.0.0.1:9123/db"},
		{"clickhouse://user:a/b@h/db", "clickhouse://user:***@h/db"},
		{"clickhouse://user:%zz@h/db", "clickhouse://user:***@h/db"},
		{"clickhouse://user:pw@h", "clickhouse://user:***@h"},
		{"clickhouse://user@h/db", "clickhouse://user@h/db"},
		{"clickhouse://h:8123/db", "clickhouse://h:8123/db"},
		{"no url", "no url"},
	};
	for (size_t i = 0; i < sizeof(red) / sizeof(red[0]); i++) {
		char *r = ch_url_redacted(red[i].url);
		assert_non_null(r);
		assert_string_equal(r, red[i].shown);
		free(r);
	}
	assert_true(ch_url_parse("clickhouse://[::1]:8124/x", &u, &why));
	assert_string_equal(u.host, "[::1]");
	assert_int_equal(u.port, 8124);
	ch_url_free(&u);
	static const struct {
		const char *url, *why;
	} bad[] = {
		{"clickhouse://host", "no /DATABASE in the URL (clickhouse://HOST[:PORT]/DATABASE)"},
		{"clickhouse://host/", "no DATABASE in the URL (clickhouse://HOST[:PORT]/DATABASE)"},
		{"clickhouse:///db", "no HOST in the URL"},
		{"clickhouse://host:0/db", "not a port number (1 to 65535) in the URL"},
		{"clickhouse://host:65536/db", "not a port number (1 to 65535) in the URL"},
		{"clickhouse://host:8x/db", "not a port number (1 to 65535) in the URL"},
		{"clickhouse://host/db;DROP", "a DATABASE name is letters, digits and '_', not starting with a digit"},
		{"clickhouse://host/1db", "a DATABASE name is letters, digits and '_', not starting with a digit"},
		{"clickhouse://host/a/b", "a DATABASE name is letters, digits and '_', not starting with a digit"},
		{"clickhouse://@host/db", "an empty user name in the URL"},
		{"clickhouse://ho st/db", "not a host name in the URL"},
		{"clickhouse://[::1/db", "no ']' after the IPv6 address in the URL"},
		{"clickhouse://u:%zz@host/db", "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)"},
		{"clickhouse://u:pw%2@host/db", "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)"},
		{"clickhouse://u:pw%@host/db", "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)"},
		{"clickhouse://u%00:pw@host/db", "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)"},
		{"clickhouse://%4:pw@host/db", "a bad %-escape in the user or password of the URL (%XX, two hex digits, not %00)"},
		{"clickhouse://ho'st/db", "not a host name in the URL"},
		{"clickhouse://ho%41st/db", "not a host name in the URL"},
		{"clickhouse://h\xc3\xa9/db", "not a host name in the URL"},
		{"clickhouse://[::1;x]/db", "not a host name in the URL"},
		{"clickhouse://u:p@/db", "no HOST in the URL"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_false(ch_url_parse(bad[i].url, &u, &why));
		assert_string_equal(why, bad[i].why);
	}
}

static void test_error_text(void **state)
{
	(void)state;
	char out[200];
	const char *old = "Code: 81, e.displayText() = DB::Exception: Database nodb doesn't exist, "
			  "e.what() = DB::Exception\n";
	assert_int_equal(ch_error_text(old, strlen(old), out, sizeof(out)), 81);
	assert_string_equal(out, "Database nodb doesn't exist");
	const char *now = "Code: 164. DB::Exception: default: Cannot execute query in readonly "
			  "mode. (READONLY) (version 24.3.1.1)\n";
	assert_int_equal(ch_error_text(now, strlen(now), out, sizeof(out)), 164);
	assert_string_equal(out, "default: Cannot execute query in readonly mode");
	const char *multi = "Code: 62, e.displayText() = DB::Exception: Syntax error:\nline two";
	assert_int_equal(ch_error_text(multi, strlen(multi), out, sizeof(out)), 62);
	assert_string_equal(out, "Syntax error");
	assert_int_equal(ch_error_text("<html>404</html>", 16, out, sizeof(out)), 0);
	assert_string_equal(out, "<html>404</html>");
	assert_int_equal(ch_error_text("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "the server answered with an error it did not say");
	char small[8];
	assert_int_equal(ch_error_text(old, strlen(old), small, sizeof(small)), 81);
	assert_string_equal(small, "Databas");
	const char *ctl = "Code: 1, e.displayText() = DB::Exception: a\tb\033c, e.what() = x";
	ch_error_text(ctl, strlen(ctl), out, sizeof(out));
	assert_string_equal(out, "a b c");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tsv_every_byte),
		cmocka_unit_test(test_tsv_hostile),
		cmocka_unit_test(test_tsv_server_escapes),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_rowbinary),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_error_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
