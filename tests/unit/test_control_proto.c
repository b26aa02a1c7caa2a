/* Unit tests for hook/control_proto.c: the control socket's command lines
 * (docs/control.md), assembled from bytes in any pieces and parsed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "control_proto.h"

/* Feed @text in pieces of @step bytes; write each command found into
 * @out (up to @max), return how many. */
static size_t feed_all(const char *text, size_t len, size_t step, enum ctl_cmd *out, size_t max)
{
	struct ctl_line l = CTL_LINE_INIT;
	size_t n = 0;
	for (size_t at = 0; at < len;) {
		size_t piece = len - at < step ? len - at : step;
		/* the rest of the piece after each command */
		while (piece) {
			enum ctl_cmd cmd;
			size_t k = ctl_line_feed(&l, text + at, piece, &cmd);
			assert_true(k >= 1 && k <= piece);
			at += k;
			piece -= k;
			if (cmd != CTL_NONE) {
				assert_true(n < max);
				out[n++] = cmd;
			} else {
				assert_int_equal(piece, 0); /* no line: all taken */
			}
		}
	}
	return n;
}

static void test_parse_commands(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		enum ctl_cmd cmd;
	} cases[] = {
		{"version", CTL_VERSION},
		{"stats", CTL_STATS},
		{"dump", CTL_DUMP},
		{"dump reachability", CTL_DUMP_REACH},
		{"capture on", CTL_CAPTURE_ON},
		{"capture off", CTL_CAPTURE_OFF},
		{"quit", CTL_QUIT},
		/* spaces around and between words */
		{"  stats  ", CTL_STATS},
		{"capture   off", CTL_CAPTURE_OFF},
		{" dump reachability ", CTL_DUMP_REACH},
		/* anything else */
		{"Version", CTL_UNKNOWN},
		{"versions", CTL_UNKNOWN},
		{"stat", CTL_UNKNOWN},
		{"stats now", CTL_UNKNOWN},
		{"dump reach", CTL_UNKNOWN},
		{"dump reachability now", CTL_UNKNOWN},
		{"capture", CTL_UNKNOWN},
		{"capture maybe", CTL_UNKNOWN},
		{"capture on off", CTL_UNKNOWN},
		{"\tstats", CTL_UNKNOWN},
		{"stats\r", CTL_UNKNOWN}, /* (a '\r' only goes before the newline) */
		{" ", CTL_UNKNOWN},
		{"a b c d", CTL_UNKNOWN},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum ctl_cmd got = ctl_parse(cases[i].line, strlen(cases[i].line));
		if (got != cases[i].cmd)
			fail_msg("'%s': %d, expected %d", cases[i].line, (int)got, (int)cases[i].cmd);
	}
	/* a NUL inside a word */
	assert_int_equal(ctl_parse("sta\0ts", 6), CTL_UNKNOWN);
	assert_int_equal(ctl_parse("stats\0", 6), CTL_UNKNOWN);
}

static void test_lines_in_pieces(void **state)
{
	(void)state;
	static const char text[] = "version\nstats\r\n\n\r\ndump\ncapture off\r\nbogus\nquit\n";
	static const enum ctl_cmd want[] = {CTL_VERSION, CTL_STATS,   CTL_DUMP,
					    CTL_CAPTURE_OFF, CTL_UNKNOWN, CTL_QUIT};
	for (size_t step = 1; step <= sizeof(text); step++) {
		enum ctl_cmd got[16];
		size_t n = feed_all(text, sizeof(text) - 1, step, got, 16);
		assert_int_equal(n, sizeof(want) / sizeof(want[0]));
		assert_memory_equal(got, want, sizeof(want));
	}
}

static void test_feed_stops_after_a_line(void **state)
{
	(void)state;
	struct ctl_line l = CTL_LINE_INIT;
	enum ctl_cmd cmd;
	/* empty lines before a command are taken with it */
	const char *text = "\n\r\nstats\nversion\n";
	size_t k = ctl_line_feed(&l, text, strlen(text), &cmd);
	assert_int_equal(cmd, CTL_STATS);
	assert_int_equal(k, strlen("\n\r\nstats\n"));
	k = ctl_line_feed(&l, text + 9, strlen(text) - 9, &cmd);
	assert_int_equal(cmd, CTL_VERSION);
	assert_int_equal(k, strlen("version\n"));
	/* a partial line is kept until its newline */
	assert_int_equal(ctl_line_feed(&l, "cap", 3, &cmd), 3);
	assert_int_equal(cmd, CTL_NONE);
	assert_int_equal(ctl_line_feed(&l, "ture on", 7, &cmd), 7);
	assert_int_equal(cmd, CTL_NONE);
	assert_int_equal(ctl_line_feed(&l, "\nquit\n", 6, &cmd), 1);
	assert_int_equal(cmd, CTL_CAPTURE_ON);
	/* only empty lines: all taken, nothing found */
	assert_int_equal(ctl_line_feed(&l, "\n\n\r\n", 4, &cmd), 4);
	assert_int_equal(cmd, CTL_NONE);
	assert_int_equal(l.len, 0);
}

/* A line of @n bytes of 'x' (+ @tail), fed one piece; the next line works. */
static enum ctl_cmd long_line(size_t n, const char *tail)
{
	static char buf[4096];
	memset(buf, 'x', n);
	size_t tl = strlen(tail);
	memcpy(buf + n, tail, tl);
	memcpy(buf + n + tl, "stats\n", 6);
	enum ctl_cmd got[4];
	size_t k = feed_all(buf, n + tl + 6, 7, got, 4);
	assert_int_equal(k, 2);
	assert_int_equal(got[1], CTL_STATS);
	return got[0];
}

static void test_line_length(void **state)
{
	(void)state;
	assert_int_equal(long_line(CTL_LINE_MAX, "\n"), CTL_UNKNOWN);
	assert_int_equal(long_line(CTL_LINE_MAX, "\r\n"), CTL_UNKNOWN);
	assert_int_equal(long_line(CTL_LINE_MAX + 1, "\n"), CTL_TOO_LONG);
	assert_int_equal(long_line(CTL_LINE_MAX + 1, "\r\n"), CTL_TOO_LONG);
	assert_int_equal(long_line(3000, "\n"), CTL_TOO_LONG);
	/* a real command padded to the limit with spaces is still one */
	char buf[CTL_LINE_MAX + 8];
	memset(buf, ' ', sizeof(buf));
	memcpy(buf, "version", 7);
	buf[CTL_LINE_MAX] = '\n';
	enum ctl_cmd got[2];
	assert_int_equal(feed_all(buf, CTL_LINE_MAX + 1, 300, got, 2), 1);
	assert_int_equal(got[0], CTL_VERSION);
	buf[CTL_LINE_MAX] = ' ';
	buf[CTL_LINE_MAX + 1] = '\n';
	assert_int_equal(feed_all(buf, CTL_LINE_MAX + 2, 300, got, 2), 1);
	assert_int_equal(got[0], CTL_TOO_LONG);
}

static void test_answers(void **state)
{
	(void)state;
	assert_string_equal(ctl_error_answer(CTL_UNKNOWN), "error unknown command\n");
	assert_string_equal(ctl_error_answer(CTL_TOO_LONG), "error line too long\n");
	assert_null(ctl_error_answer(CTL_STATS));
	assert_null(ctl_error_answer(CTL_NONE));
}

/* Who is answered: a table of (peer uid, our euid, bionic, dumpable,
 * overflow uid real) and the decision. */
static void test_peer_allowed(void **state)
{
	(void)state;
	static const struct {
		uid_t peer, euid;
		bool bionic, dumpable, overflow_real, allowed;
	} cases[] = {
		/* the same user, root: everywhere */
		{1000, 1000, false, false, false, true},
		{0, 1000, false, false, false, true},
		{0, 0, false, false, false, true},
		{10123, 10123, true, false, false, true},
		{0, 10123, true, false, false, true},
		/* another user: never */
		{1001, 1000, false, false, false, false},
		{1001, 1000, false, true, false, false},
		{10124, 10123, true, true, false, false},
		{1000, 0, false, false, false, false},
		/* adbd (shell, 2000) on Android: only a dumpable (debuggable) app */
		{2000, 10123, true, true, false, true},
		{2000, 10123, true, false, false, false},
		/* the shell's uid elsewhere is a user like another */
		{2000, 10123, false, true, false, false},
		{2000, 1000, false, false, false, false},
		{2001, 10123, true, true, false, false},
		{2000, 2000, true, false, false, true},
		/* the overflow uid (65534): an unmapped peer of another user
		 * namespace, refused even when it equals our euid... */
		{65534, 65534, false, false, false, false},
		{65534, 0, false, false, false, false},
		{65534, 65534, true, true, false, false},
		/* ...unless the peer really is that user (in our namespace) */
		{65534, 65534, false, false, true, true},
		{65534, 1000, false, false, true, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctl_peer_ctx ctx = {
			.euid = cases[i].euid,
			.bionic = cases[i].bionic,
			.dumpable = cases[i].dumpable,
			.overflow_uid = 65534,
			.overflow_real = cases[i].overflow_real,
		};
		if (ctl_peer_allowed(cases[i].peer, &ctx) != cases[i].allowed)
			fail_msg("case %zu: peer %u euid %u bionic %d dumpable %d real %d: expected %s",
				 i, (unsigned)cases[i].peer, (unsigned)cases[i].euid, cases[i].bionic,
				 cases[i].dumpable, cases[i].overflow_real,
				 cases[i].allowed ? "allowed" : "refused");
	}
	/* another overflow uid configured */
	struct ctl_peer_ctx ctx = {.euid = 4000, .overflow_uid = 4000};
	assert_false(ctl_peer_allowed(4000, &ctx));
	assert_true(ctl_peer_allowed(0, &ctx));
	ctx.overflow_real = true;
	assert_true(ctl_peer_allowed(4000, &ctx));
}

/* A dump's whole bound: 10 s, and 1 s for every MiB begun. */
static void test_dump_bound(void **state)
{
	(void)state;
	assert_int_equal(ctl_dump_bound_ms(0), 10000);
	assert_int_equal(ctl_dump_bound_ms(1), 11000);
	assert_int_equal(ctl_dump_bound_ms(1u << 20), 11000);
	assert_int_equal(ctl_dump_bound_ms((1u << 20) + 1), 12000);
	assert_int_equal(ctl_dump_bound_ms(100ull << 20), 110000);
}

/* Past a deadline: dropped unless the socket is ready (the thread was
 * late, not the client); past the whole bound: dropped, ready or not. */
static void test_overdue(void **state)
{
	(void)state;
	assert_int_equal(ctl_overdue(999, 1000, 0, false), CTL_KEEP);
	assert_int_equal(ctl_overdue(999, 1000, 5000, true), CTL_KEEP);
	assert_int_equal(ctl_overdue(1000, 1000, 0, false), CTL_DROP);
	assert_int_equal(ctl_overdue(1000, 1000, 0, true), CTL_RETRY);
	assert_int_equal(ctl_overdue(20000, 1000, 30000, true), CTL_RETRY);
	assert_int_equal(ctl_overdue(30000, 1000, 30000, true), CTL_DROP);
	assert_int_equal(ctl_overdue(30000, 40000, 30000, false), CTL_DROP);
	assert_int_equal(ctl_overdue(29999, 40000, 30000, false), CTL_KEEP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_commands),
		cmocka_unit_test(test_lines_in_pieces),
		cmocka_unit_test(test_feed_stops_after_a_line),
		cmocka_unit_test(test_line_length),
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_peer_allowed),
		cmocka_unit_test(test_dump_bound),
		cmocka_unit_test(test_overdue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
