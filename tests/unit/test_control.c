/* Unit tests for control/, the client of a process's control socket, below
 * `leaksnap ctl` and `watch`: every answer form of the protocol
 * (docs/control.md) read from a socketpair whose other end the test
 * writes, malformed answers (a byte count that is not one or is past
 * 2^40, no newline in 4096 bytes, a stats line without its fields, a
 * version of another protocol), a connection closed without a byte by a
 * process of ours (closed early, not refused), mid-line and mid-body (with
 * the exact counts), an error answer with control bytes escaped, the
 * answers watch acts on (busy, exiting), a silent peer timed out; the
 * socket's holder checked (a table of pids and uids, and a squatter on
 * leaksnap.<our pid> sent nothing); and the real connections: an abstract
 * socket leaksnap.<pid> and a path socket answered by a thread of the test,
 * a pid with no process and one with no socket, a TCP port closed at once
 * (what adb forward does when nothing listens). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"

static const struct control_opts fast = {sizeof(struct control_opts), 0.3};

/* A connection whose process is the test: @peer is the other end, which
 * has already written @answer (@n bytes) and, with @eof, closed. */
static struct control_conn *pair(const char *answer, size_t n, bool eof, int *peer)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	if (n)
		assert_int_equal(write(sv[1], answer, n), (ssize_t)n);
	if (eof) {
		close(sv[1]);
		sv[1] = -1;
	}
	*peer = sv[1];
	struct control_conn *c = control_adopt(sv[0], "4242", &fast);
	assert_non_null(c);
	return c;
}

/* What the client sent, up to what is there now. */
static void expect_sent(int peer, const char *want)
{
	char buf[512];
	ssize_t n = recv(peer, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/* A file to stream a body to, and what it holds. */
static int body_file(void)
{
	char path[] = "/tmp/leaksnap-test-control.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static size_t body_read(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size, 0);
	assert_true(n >= 0);
	return (size_t)n;
}

static void test_version(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	struct control_version v;
	struct control_conn *c = pair("leaksnap-control 1 0.1.0 123\r\n", 30, false, &peer);
	assert_int_equal(control_version(c, &v, &err), 0);
	assert_string_equal(v.version, "0.1.0");
	assert_int_equal(v.pid, 123);
	expect_sent(peer, "version\n");
	control_close(c);
	close(peer);

	c = pair("leaksnap-control 2 9.9.9 123\n", 29, false, &peer);
	assert_int_equal(control_version(c, &v, &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.source, "4242");
	assert_string_equal(err.text, "malformed answer: 'leaksnap-control 2 9.9.9 123' (protocol 1 "
				      "expected: this leaksnap is too old for the process's hook)");
	control_close(c);
	close(peer);

	c = pair("leaksnap-control 1 0.1.0\n", 25, false, &peer);
	assert_int_equal(control_version(c, &v, &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: 'leaksnap-control 1 0.1.0' (expected "
				      "\"leaksnap-control 1 VERSION PID\")");
	control_close(c);
	close(peer);
}

static void test_stats(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	struct control_stats s;
	char line[CONTROL_LINE_MAX];
	const char *json = "{\"pid\":7,\"live_bytes\":4096,\"live_blocks\":9,\"records\":3,"
			   "\"capture\":false,\"dumps_written\":2,\"invalid_frees\":1}\n";
	struct control_conn *c = pair(json, strlen(json), false, &peer);
	assert_int_equal(control_stats(c, &s, line, sizeof(line), &err), 0);
	assert_int_equal(s.pid, 7);
	assert_int_equal(s.live_bytes, 4096);
	assert_int_equal(s.live_blocks, 9);
	assert_int_equal(s.records, 3);
	assert_false(s.capture);
	assert_int_equal(s.dumps_written, 2);
	assert_int_equal(s.invalid_frees, 1);
	assert_int_equal(strlen(line), strlen(json) - 1);
	expect_sent(peer, "stats\n");
	control_close(c);
	close(peer);

	assert_int_equal(control_stats_parse("{\"pid\":7,\"live_bytes\":\"many\"}", &s, "P", &err),
			 CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: stats without a valid \"live_bytes\"");
	assert_int_equal(control_stats_parse("ok", &s, "P", &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: 'ok' (expected the stats JSON object)");
	assert_int_equal(control_stats_parse("{\"pid\":7,\"live_bytes\":1,\"live_blocks\":1,"
					     "\"records\":1,\"capture\":1,\"dumps_written\":0,"
					     "\"invalid_frees\":0}",
					     &s, "P", &err),
			 CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: stats without a valid \"capture\"");

	/* a hook before sampling, or full tracking: no sample_interval, and
	 * invalid_frees a must */
	const char *base = "{\"pid\":7,\"live_bytes\":5,\"live_blocks\":2,\"records\":1,"
			   "\"capture\":true,\"dumps_written\":0";
	char sl[400];
	snprintf(sl, sizeof(sl), "%s,\"invalid_frees\":3}", base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), 0);
	assert_int_equal(s.sample_interval, 0);
	assert_true(s.has_invalid_frees);
	assert_int_equal(s.invalid_frees, 3);
	snprintf(sl, sizeof(sl), "%s,\"invalid_frees\":null}", base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: stats without a valid \"invalid_frees\"");
	snprintf(sl, sizeof(sl), "%s,\"sample_interval\":0,\"invalid_frees\":3}", base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), 0);
	assert_int_equal(s.sample_interval, 0);
	/* sampled: the estimates a must, invalid_frees absent or null */
	snprintf(sl, sizeof(sl),
		 "%s,\"sample_interval\":4096,\"estimated_live_bytes\":9,"
		 "\"estimated_live_blocks\":4}",
		 base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), 0);
	assert_int_equal(s.sample_interval, 4096);
	assert_int_equal(s.live_bytes, 5);
	assert_int_equal(s.live_blocks, 2);
	assert_int_equal(s.estimated_live_bytes, 9);
	assert_int_equal(s.estimated_live_blocks, 4);
	assert_false(s.has_invalid_frees);
	snprintf(sl, sizeof(sl),
		 "%s,\"sample_interval\":4096,\"estimated_live_bytes\":9,"
		 "\"estimated_live_blocks\":4,\"invalid_frees\":null}",
		 base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), 0);
	assert_false(s.has_invalid_frees);
	snprintf(sl, sizeof(sl), "%s,\"sample_interval\":4096,\"estimated_live_bytes\":9}",
		 base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text,
			    "malformed answer: stats without a valid \"estimated_live_blocks\"");
	snprintf(sl, sizeof(sl),
		 "%s,\"sample_interval\":-1,\"estimated_live_bytes\":9,"
		 "\"estimated_live_blocks\":4}",
		 base);
	assert_int_equal(control_stats_parse(sl, &s, "P", &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: stats without a valid \"sample_interval\"");
}

static void test_capture_and_several_commands(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	struct control_conn *c = pair("ok capture off\nok capture on\nok capture of\n", 43, false,
				      &peer);
	assert_int_equal(control_capture(c, false, &err), 0);
	assert_int_equal(control_capture(c, true, &err), 0);
	assert_int_equal(control_capture(c, true, &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text,
			    "malformed answer: 'ok capture of' (expected \"ok capture on\")");
	expect_sent(peer, "capture off\ncapture on\ncapture on\n");
	control_close(c);
	close(peer);
}

static void test_dump(void **state)
{
	(void)state;
	int peer, fd = body_file();
	uint64_t bytes;
	struct leaksnap_error err;
	char buf[64];
	struct control_conn *c = pair("dump 10\n0123456789version", 25, false, &peer);
	assert_int_equal(control_dump(c, true, fd, &bytes, &err), 0);
	assert_int_equal(bytes, 10);
	assert_int_equal(body_read(fd, buf, sizeof(buf)), 10);
	assert_memory_equal(buf, "0123456789", 10);
	expect_sent(peer, "dump reachability\n");
	/* the bytes after the body are the next answer's */
	assert_int_equal(write(peer, " 1\n", 3), 3);
	char line[CONTROL_LINE_MAX];
	assert_int_equal(control_read_line(c, line, sizeof(line), &err), 0);
	assert_string_equal(line, "version 1");
	control_close(c);
	close(peer);
	close(fd);

	/* an empty dump is a length of 0 (the reader refuses it later) */
	fd = body_file();
	c = pair("dump 0\n", 7, true, &peer);
	assert_int_equal(control_dump(c, false, fd, &bytes, &err), 0);
	assert_int_equal(bytes, 0);
	control_close(c);
	close(fd);
}

static void test_dump_lengths(void **state)
{
	(void)state;
	uint64_t v;
	struct leaksnap_error err;
	assert_int_equal(control_dump_length("dump 1099511627776", &v, "P", &err), 0);
	assert_int_equal(v, CONTROL_DUMP_MAX);
	assert_int_equal(control_dump_length("dump 1099511627777", &v, "P", &err),
			 CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: 'dump 1099511627777' (a dump of more "
				      "than 2^40 bytes)");
	static const char *const bad[] = {"dump 12x", "dump ", "dump -1", "dump  12", "dump 1 2",
					  "dumps 12", "dump 123456789012345678901", "ok"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		leaksnap_error_clear(&err);
		assert_int_equal(control_dump_length(bad[i], &v, "P", &err), CONTROL_E_MALFORMED);
		char want[200];
		snprintf(want, sizeof(want), "malformed answer: '%s' (expected \"dump BYTES\")",
			 bad[i]);
		assert_string_equal(err.text, want);
	}
	/* through a connection: the body is not read */
	int peer, fd = body_file();
	struct control_conn *c = pair("dump 12x\n0123", 13, false, &peer);
	assert_int_equal(control_dump(c, false, fd, &v, &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: 'dump 12x' (expected \"dump BYTES\")");
	char buf[8];
	assert_int_equal(body_read(fd, buf, sizeof(buf)), 0);
	control_close(c);
	close(peer);
	close(fd);
}

static void test_no_newline(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX];
	char *junk = malloc(5000);
	memset(junk, 'x', 5000);
	junk[3] = '\033';
	struct control_conn *c = pair(junk, 5000, false, &peer);
	assert_int_equal(control_command(c, "stats", line, sizeof(line), &err), CONTROL_E_MALFORMED);
	assert_string_equal(err.text, "malformed answer: no newline in the first 4096 bytes "
				      "('xxx\\x1bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'...)");
	control_close(c);
	close(peer);
	/* 4095 bytes and a newline are a line */
	memset(junk, 'y', 4095);
	junk[4095] = '\n';
	c = pair(junk, 4096, false, &peer);
	assert_int_equal(control_read_line(c, line, sizeof(line), &err), 0);
	assert_int_equal(strlen(line), 4095);
	control_close(c);
	close(peer);
	free(junk);
}

static void test_closed(void **state)
{
	(void)state;
	int peer, fd = body_file();
	uint64_t bytes;
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX], buf[200];
	/* closed without a byte at once by a process of ours (the test: a
	 * hook stopping, a process exiting): no refusal, closed early */
	struct control_conn *c = pair("", 0, true, &peer);
	assert_int_equal(control_command(c, "version", line, sizeof(line), &err),
			 CONTROL_E_CLOSED);
	assert_string_equal(err.source, "4242");
	assert_string_equal(err.text, "connection closed early (no answer)");
	control_close(c);
	/* mid-line */
	c = pair("leaksnap-con", 12, true, &peer);
	assert_int_equal(control_command(c, "version", line, sizeof(line), &err), CONTROL_E_CLOSED);
	assert_string_equal(err.text, "connection closed early (after 12 bytes of an answer line)");
	control_close(c);
	/* after a whole answer, before the next */
	c = pair("ok capture on\n", 14, true, &peer);
	assert_int_equal(control_capture(c, true, &err), 0);
	assert_int_equal(control_capture(c, true, &err), CONTROL_E_CLOSED);
	assert_string_equal(err.text, "connection closed early (no answer)");
	control_close(c);
	/* mid-body: the bytes that came are written */
	c = pair("dump 100\n0123456789012345678901234567890123456789", 49, true, &peer);
	assert_int_equal(control_dump(c, false, fd, &bytes, &err), CONTROL_E_CLOSED);
	assert_int_equal(bytes, 100);
	assert_string_equal(err.text, "connection closed early (after 40 of 100 bytes of the dump)");
	assert_int_equal(body_read(fd, buf, sizeof(buf)), 40);
	control_close(c);
	close(fd);
}

static void test_error_answers(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX];
	const char *ans = "error unknown command\nerror \033[31mred\a\\\nerror\n";
	struct control_conn *c = pair(ans, strlen(ans), false, &peer);
	assert_int_equal(control_command(c, "frobnicate", line, sizeof(line), &err),
			 CONTROL_E_REMOTE);
	assert_string_equal(err.text, "error from the process: unknown command");
	assert_int_equal(control_capture(c, true, &err), CONTROL_E_REMOTE);
	assert_string_equal(err.text, "error from the process: \\x1b[31mred\\x07\\x5c");
	assert_int_equal(control_command(c, "x", line, sizeof(line), &err), CONTROL_E_REMOTE);
	assert_string_equal(err.text, "error from the process: ");
	control_close(c);
	close(peer);
	/* a busy process answers and closes before reading the command */
	c = pair("error busy\n", 11, true, &peer);
	assert_int_equal(control_command(c, "version", line, sizeof(line), &err),
			 CONTROL_E_REMOTE);
	assert_string_equal(err.text, "error from the process: busy");
	control_close(c);
	/* a command is one line */
	c = pair("", 0, false, &peer);
	assert_int_equal(control_command(c, "a\nb", line, sizeof(line), &err), CONTROL_E_OTHER);
	control_close(c);
	close(peer);
}

/* A dump asked for while the process exits: the hook's own answer
 * (hook/control.c) is told from a failure, what ends a watch; another
 * dump error is not. */
static void test_dump_exiting(void **state)
{
	(void)state;
	int peer, fd = body_file();
	uint64_t bytes;
	struct leaksnap_error err;
	const char *ans = "error dump: the process is exiting\nerror dump: out of memory\n";
	struct control_conn *c = pair(ans, strlen(ans), false, &peer);
	assert_int_equal(control_dump(c, false, fd, &bytes, &err), CONTROL_E_EXITING);
	assert_string_equal(err.text, "error from the process: dump: the process is exiting");
	assert_int_equal(control_dump(c, true, fd, &bytes, &err), CONTROL_E_REMOTE);
	assert_string_equal(err.text, "error from the process: dump: out of memory");
	expect_sent(peer, "dump\ndump reachability\n");
	assert_int_equal(body_read(fd, (char[8]){0}, 8), 0);
	control_close(c);
	close(peer);
	close(fd);
}

static void test_timeout(void **state)
{
	(void)state;
	int peer, fd = body_file();
	uint64_t bytes;
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX];
	struct control_conn *c = pair("", 0, false, &peer);
	assert_int_equal(control_command(c, "version", line, sizeof(line), &err),
			 CONTROL_E_TIMEOUT);
	assert_string_equal(err.text, "no answer within 0.3 s");
	control_close(c);
	close(peer);
	c = pair("dump 100\n0123", 13, false, &peer);
	assert_int_equal(control_dump(c, false, fd, &bytes, &err), CONTROL_E_TIMEOUT);
	assert_string_equal(err.text, "no byte of the dump within 0.3 s");
	control_close(c);
	close(peer);
	close(fd);
}

/* A large body written by a thread while the client reads: it goes
 * through the client's buffer in pieces, every byte in order. */
struct writer {
	int fd;
	size_t n;
};

static void *write_body(void *arg)
{
	struct writer *w = arg;
	char head[64];
	int hn = snprintf(head, sizeof(head), "dump %zu\n", w->n);
	(void)!write(w->fd, head, (size_t)hn);
	unsigned char chunk[4096];
	for (size_t done = 0; done < w->n;) {
		size_t k = w->n - done < sizeof(chunk) ? w->n - done : sizeof(chunk);
		for (size_t i = 0; i < k; i++)
			chunk[i] = (unsigned char)((done + i) * 7);
		ssize_t r = write(w->fd, chunk, k);
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	return NULL;
}

static void test_large_body(void **state)
{
	(void)state;
	int peer, fd = body_file();
	uint64_t bytes;
	struct leaksnap_error err;
	struct control_conn *c = pair("", 0, false, &peer);
	struct writer w = {peer, (size_t)3 << 20};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, write_body, &w), 0);
	assert_int_equal(control_dump(c, false, fd, &bytes, &err), 0);
	pthread_join(t, NULL);
	assert_int_equal(bytes, w.n);
	unsigned char *buf = malloc(w.n);
	assert_int_equal(body_read(fd, (char *)buf, w.n), w.n);
	for (size_t i = 0; i < w.n; i += 4093)
		assert_int_equal(buf[i], (unsigned char)(i * 7));
	free(buf);
	control_close(c);
	close(peer);
	close(fd);
}

/* A listener of the test that answers "version" on one connection. */
struct listener {
	int fd;
	char answer[128];
	bool close_at_once;
};

static void *serve_one(void *arg)
{
	struct listener *l = arg;
	int fd = accept(l->fd, NULL, NULL);
	if (fd < 0)
		return NULL;
	if (!l->close_at_once) {
		char buf[64];
		(void)!read(fd, buf, sizeof(buf));
		(void)!write(fd, l->answer, strlen(l->answer));
	}
	close(fd);
	return NULL;
}

static void test_open_abstract_and_path(void **state)
{
	(void)state;
	struct leaksnap_error err;
	struct control_conn *c;
	char pid[32], name[64];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* no socket yet */
	assert_int_equal(control_open(pid, &fast, &c, &err), CONTROL_E_NOSOCK);
	assert_null(c);
	assert_string_equal(err.source, pid);
	assert_string_equal(err.text, "no control socket (start the program with "
				      "LEAKSNAP_CONTROL=1)");
	/* the abstract name the hook binds: no trailing NUL counted */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n = snprintf(name, sizeof(name), "leaksnap.%d", (int)getpid());
	memcpy(sa.sun_path + 1, name, (size_t)n);
	struct listener l = {socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "", false};
	snprintf(l.answer, sizeof(l.answer), "leaksnap-control 1 0.1.0 %d\n", (int)getpid());
	assert_int_equal(bind(l.fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)),
			 0);
	assert_int_equal(listen(l.fd, 4), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, serve_one, &l), 0);
	assert_int_equal(control_open(pid, &fast, &c, &err), 0);
	struct control_version v;
	assert_int_equal(control_version(c, &v, &err), 0);
	assert_int_equal(v.pid, getpid());
	assert_string_equal(control_subject(c), pid);
	control_close(c);
	pthread_join(t, NULL);
	close(l.fd);

	/* a path socket */
	char dir[] = "/tmp/leaksnap-test-control.XXXXXX", path[100];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ctl", dir);
	assert_int_equal(control_open(path, &fast, &c, &err), CONTROL_E_NOSOCK);
	assert_string_equal(err.source, path);
	struct sockaddr_un sp = {.sun_family = AF_UNIX};
	snprintf(sp.sun_path, sizeof(sp.sun_path), "%s", path);
	l.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l.fd, (struct sockaddr *)&sp, sizeof(sp)), 0);
	assert_int_equal(listen(l.fd, 4), 0);
	l.close_at_once = true;
	assert_int_equal(pthread_create(&t, NULL, serve_one, &l), 0);
	assert_int_equal(control_open(path, &fast, &c, &err), 0);
	/* (the process closing is ours: not "another user") */
	assert_int_equal(control_version(c, &v, &err), CONTROL_E_CLOSED);
	assert_string_equal(err.text, "connection closed early (no answer)");
	control_close(c);
	pthread_join(t, NULL);
	close(l.fd);
	unlink(path);
	rmdir(dir);
	/* a regular file is no socket either */
	assert_int_equal(control_open("/etc/passwd", &fast, &c, &err), CONTROL_E_NOSOCK);
}

/* The holder of a Unix socket (SO_PEERCRED) against what was asked. */
static void test_peer_check(void **state)
{
	(void)state;
	struct leaksnap_error err;
	static const struct {
		int64_t want, peer_pid;
		unsigned peer_uid, me;
		const char *text; /* NULL: asked */
	} t[] = {
		{4242, 4242, 1000, 1000, NULL},
		{4242, 4242, 0, 1000, NULL},      /* a root process */
		{4242, 4242, 1001, 0, NULL},      /* root asks a user's process */
		{0, 77, 1000, 1000, NULL},        /* a path socket: any pid */
		{0, 77, 0, 1000, NULL},
		{4242, 977, 1000, 1000,
		 "the socket leaksnap.4242 is held by process 977, not 4242: nothing asked"},
		{4242, 977, 0, 0,
		 "the socket leaksnap.4242 is held by process 977, not 4242: nothing asked"},
		{4242, 0, 1000, 1000, /* a holder whose pid we cannot see */
		 "the socket leaksnap.4242 is held by process 0, not 4242: nothing asked"},
		{4242, 4242, 1001, 1000,
		 "the socket is held by a process of another user (uid 1001): nothing asked"},
		{0, 77, 1001, 1000,
		 "the socket is held by a process of another user (uid 1001): nothing asked"},
		{0, 77, 1001, 0, /* root, a path: the holder's uid counts */
		 "the socket is held by a process of another user (uid 1001): nothing asked"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = control_peer_check("S", t[i].want, t[i].peer_pid, (uid_t)t[i].peer_uid,
					   (uid_t)t[i].me, &err);
		if (!t[i].text) {
			assert_int_equal(r, 0);
			continue;
		}
		assert_int_equal(r, CONTROL_E_PEER);
		assert_string_equal(err.source, "S");
		assert_string_equal(err.text, t[i].text);
	}
}

/* A squatter: the name leaksnap.<a live pid> bound by another process (a
 * forked child of the test): nothing is sent to it. */
static void test_open_squatter(void **state)
{
	(void)state;
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t parent = getpid();
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		char name[64];
		int n = snprintf(name, sizeof(name), "leaksnap.%d", (int)parent);
		memcpy(sa.sun_path + 1, name, (size_t)n);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (bind(fd, (struct sockaddr *)&sa,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) ||
		    listen(fd, 4))
			_exit(1);
		(void)!write(ready[1], "r", 1);
		int cfd = accept(fd, NULL, NULL);
		char buf[64];
		/* what was sent, if anything, goes back as the exit status */
		ssize_t got = cfd >= 0 ? read(cfd, buf, sizeof(buf)) : -1;
		_exit(got == 0 ? 0 : 2);
	}
	close(ready[1]);
	char b;
	assert_int_equal(read(ready[0], &b, 1), 1);
	close(ready[0]);
	struct leaksnap_error err;
	struct control_conn *c;
	char pid[32], want[160];
	snprintf(pid, sizeof(pid), "%d", (int)parent);
	assert_int_equal(control_open(pid, &fast, &c, &err), CONTROL_E_PEER);
	assert_null(c);
	snprintf(want, sizeof(want),
		 "the socket leaksnap.%d is held by process %d, not %d: nothing asked", (int)parent,
		 (int)child, (int)parent);
	assert_string_equal(err.text, want);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0); /* not a byte */
}

static void test_remote_said_and_escape(void **state)
{
	(void)state;
	int peer;
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX], buf[64];
	struct control_conn *c = pair("error busy\n", 11, true, &peer);
	assert_int_equal(control_command(c, "dump", line, sizeof(line), &err), CONTROL_E_REMOTE);
	assert_true(control_remote_said(&err, CONTROL_REMOTE_BUSY));
	assert_false(control_remote_said(&err, CONTROL_REMOTE_EXITING));
	control_close(c);
	c = pair("error dump: the process is exiting\n", 35, true, &peer);
	assert_int_equal(control_command(c, "dump", line, sizeof(line), &err), CONTROL_E_REMOTE);
	assert_true(control_remote_said(&err, CONTROL_REMOTE_EXITING));
	assert_false(control_remote_said(&err, CONTROL_REMOTE_BUSY));
	control_close(c);
	c = pair("error busy now\n", 15, true, &peer);
	assert_int_equal(control_command(c, "dump", line, sizeof(line), &err), CONTROL_E_REMOTE);
	assert_false(control_remote_said(&err, CONTROL_REMOTE_BUSY));
	control_close(c);
	control_escape("0.1\x1b]0;x\x07", 9, 60, buf, sizeof(buf));
	assert_string_equal(buf, "0.1\\x1b]0;x\\x07");
}

static void test_open_no_process(void **state)
{
	(void)state;
	struct leaksnap_error err;
	struct control_conn *c;
	/* past the kernel's largest pid (2^22) */
	assert_int_equal(control_open("99999999", NULL, &c, &err), CONTROL_E_NOPROC);
	assert_string_equal(err.source, "99999999");
	assert_string_equal(err.text, "no such process");
	assert_int_equal(control_open("0", NULL, &c, &err), CONTROL_E_NOPROC);
	assert_true(control_arg_is_pid("12"));
	assert_false(control_arg_is_pid("12a"));
	assert_false(control_arg_is_pid("./12"));
	assert_false(control_arg_is_pid(""));
	assert_false(control_arg_is_pid("12345678901"));
}

static void test_tcp_closed_at_once(void **state)
{
	(void)state;
	struct leaksnap_error err;
	struct control_conn *c;
	struct listener l = {socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "", true};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	assert_int_equal(bind(l.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l.fd, 4), 0);
	assert_int_equal(getsockname(l.fd, (struct sockaddr *)&sa, &len), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, serve_one, &l), 0);
	assert_int_equal(control_open_tcp(ntohs(sa.sin_port), "com.acme.app", &fast, &c, &err), 0);
	char line[CONTROL_LINE_MAX];
	assert_int_equal(control_command(c, "dump", line, sizeof(line), &err), CONTROL_E_REFUSED);
	assert_string_equal(err.source, "com.acme.app");
	assert_string_equal(err.text, "connection closed at once: no control socket (start the "
				      "program with LEAKSNAP_CONTROL=1), or the process belongs "
				      "to another user");
	control_close(c);
	pthread_join(t, NULL);
	close(l.fd);
}

static void test_quote(void **state)
{
	(void)state;
	char buf[64];
	control_quote("a\tb'\xff", 5, 80, buf, sizeof(buf));
	assert_string_equal(buf, "'a\\x09b'\\xff'");
	control_quote("abcdef", 6, 3, buf, sizeof(buf));
	assert_string_equal(buf, "'abc'...");
	control_quote("abcdef", 6, 80, buf, 4);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_capture_and_several_commands),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_dump_lengths),
		cmocka_unit_test(test_no_newline),
		cmocka_unit_test(test_closed),
		cmocka_unit_test(test_error_answers),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_large_body),
		cmocka_unit_test(test_open_abstract_and_path),
		cmocka_unit_test(test_open_no_process),
		cmocka_unit_test(test_peer_check),
		cmocka_unit_test(test_open_squatter),
		cmocka_unit_test(test_remote_said_and_escape),
		cmocka_unit_test(test_tcp_closed_at_once),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_dump_exiting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
