/* A test client of the hook's control socket (t-control.sh, bench/control.sh),
 * independent of `leaksnap ctl`: it speaks the protocol of docs/control.md
 * by hand and prints what it got, for the tests to compare.
 *
 *   ctlclient [-o PREFIX] [-t SECS] TARGET LINE...
 *       Each LINE is sent (a newline added) and its answer printed; the
 *       body after "dump N" is written to PREFIX.K (K = 1, 2, ... per dump)
 *       and "dump N" printed once all N bytes came.
 *   ctlclient -r FILE [-t SECS] TARGET
 *       FILE's bytes sent as they are, then every answer line printed
 *       until SECS of silence, then "open" or "closed".
 *   ctlclient --flood N TARGET    N connections, each closed at once (every
 *       other one after half a command); prints "flood N".
 *   ctlclient --busy TARGET       8 connections answered, then a 9th: prints
 *       what the 9th got and "closed" or "open".
 *   ctlclient --silent TARGET     sends "version", prints "closed after B
 *       bytes" (or "open after B bytes" past SECS).
 *   ctlclient --stall K SECS TARGET  asks K dumps, reads nothing for SECS,
 *       then reads all: "got B bytes, closed" or "got B bytes, open".
 *   ctlclient --trickle BYTES MS SECS TARGET  asks a dump and reads BYTES
 *       of it every MS ms (never 10 s without progress) for SECS at most:
 *       "got B bytes, closed" or "got B bytes, open".
 *   ctlclient --overlap PREFIX TARGET  asks a dump on A and reads 1 byte of
 *       its body, asks one on B and reads it whole, then finishes A; writes
 *       PREFIX.a and PREFIX.b, prints both "dump N" lines.
 *   ctlclient --hold PREFIX TARGET [LINE]  asks a dump (or LINE: "dump
 *       reachability"), reads its "dump N" line and
 *       1 byte, prints "started", waits for a line on stdin, then reads the
 *       rest into PREFIX.1 and prints "dump N".
 * TARGET: a pid (the abstract socket leaksnap.PID) or a path.  Errors:
 * "ctlclient: ..." on stderr, exit 2. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "leakhook.h"

static int timeout_ms = 20000;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "ctlclient: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static int connect_to(const char *target)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	socklen_t len;
	if (strspn(target, "0123456789") == strlen(target)) {
		int k = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1,
				 LEAKSNAP_HOOK_CONTROL_PREFIX "%s", target);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
	} else {
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", target);
		len = sizeof(a);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, len) != 0)
		die("%s: %s", target, strerror(errno));
	return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			die("send: %s", strerror(errno));
		c += w;
		n -= (size_t)w;
	}
}

static void send_line(int fd, const char *line)
{
	send_all(fd, line, strlen(line));
	send_all(fd, "\n", 1);
}

/* Wait up to @ms for @fd to be readable: false on timeout. */
static bool wait_in(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* Read up to @n bytes within the timeout: the count (0 at EOF), or -1 on
 * timeout. */
static ssize_t read_some(int fd, void *p, size_t n, int ms)
{
	if (!wait_in(fd, ms))
		return -1;
	ssize_t r = read(fd, p, n);
	if (r < 0 && errno == ECONNRESET)
		return 0;
	if (r < 0)
		die("read: %s", strerror(errno));
	return r;
}

/* One answer line (with its newline) into @buf; false at EOF or timeout
 * (*@eof says which). */
static bool read_line(int fd, char *buf, size_t size, bool *eof)
{
	size_t n = 0;
	*eof = false;
	while (n + 1 < size) {
		ssize_t r = read_some(fd, buf + n, 1, timeout_ms);
		if (r <= 0) {
			*eof = r == 0;
			buf[n] = '\0';
			return false;
		}
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	return true;
}

/* Read @n bytes of a dump body into @out (a file, or NULL: counted only).
 * Returns how many came. */
static unsigned long long read_body(int fd, unsigned long long n, FILE *out)
{
	char buf[65536];
	unsigned long long got = 0;
	while (got < n) {
		size_t want = n - got < sizeof(buf) ? (size_t)(n - got) : sizeof(buf);
		ssize_t r = read_some(fd, buf, want, timeout_ms);
		if (r <= 0)
			break;
		if (out && fwrite(buf, 1, (size_t)r, out) != (size_t)r)
			die("write: %s", strerror(errno));
		got += (unsigned long long)r;
	}
	return got;
}

static FILE *open_out(const char *prefix, const char *tag)
{
	if (!prefix)
		return NULL;
	char path[4096];
	snprintf(path, sizeof(path), "%s.%s", prefix, tag);
	FILE *f = fopen(path, "wb");
	if (!f)
		die("%s: %s", path, strerror(errno));
	return f;
}

/* An answer on @fd; a dump's body goes to PREFIX.@tag. */
static void print_answer(int fd, const char *prefix, const char *tag)
{
	char line[4096];
	bool eof;
	if (!read_line(fd, line, sizeof(line), &eof)) {
		printf("%s%s\n", line, eof ? "(closed)" : "(timeout)");
		exit(1);
	}
	unsigned long long n;
	char extra;
	if (sscanf(line, "dump %llu%c", &n, &extra) == 2 && extra == '\n') {
		FILE *out = open_out(prefix, tag);
		unsigned long long got = read_body(fd, n, out);
		if (out && fclose(out) != 0)
			die("close: %s", strerror(errno));
		if (got != n) {
			printf("dump %llu: got %llu bytes\n", n, got);
			exit(1);
		}
	}
	fputs(line, stdout);
	fflush(stdout);
}

static bool peer_closed(int fd, int ms)
{
	char c;
	ssize_t r = read_some(fd, &c, 1, ms);
	return r == 0;
}

static int cmd_lines(const char *prefix, const char *target, char **lines, int n)
{
	int fd = connect_to(target);
	int dumps = 0;
	for (int i = 0; i < n; i++) {
		send_line(fd, lines[i]);
		if (!strncmp(lines[i], "dump", 4)) {
			char tag[16];
			snprintf(tag, sizeof(tag), "%d", ++dumps);
			print_answer(fd, prefix, tag);
		} else {
			print_answer(fd, NULL, "");
		}
	}
	close(fd);
	return 0;
}

static int cmd_raw(const char *file, const char *target)
{
	int in = open(file, O_RDONLY);
	if (in < 0)
		die("%s: %s", file, strerror(errno));
	int fd = connect_to(target);
	char buf[65536];
	ssize_t r;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		send_all(fd, buf, (size_t)r);
	close(in);
	for (;;) {
		char line[4096];
		bool eof;
		if (!read_line(fd, line, sizeof(line), &eof)) {
			if (line[0])
				printf("%s(partial)\n", line);
			printf("%s\n", eof ? "closed" : "open");
			break;
		}
		fputs(line, stdout);
	}
	close(fd);
	return 0;
}

static int cmd_flood(int n, const char *target)
{
	for (int i = 0; i < n; i++) {
		int fd = connect_to(target);
		/* (the hook may have turned it away already: busy) */
		if (i % 2)
			(void)!send(fd, "ver", 3, MSG_NOSIGNAL);
		close(fd);
	}
	printf("flood %d\n", n);
	return 0;
}

static int cmd_busy(const char *target)
{
	int fds[8];
	char line[256];
	bool eof;
	for (int i = 0; i < 8; i++) {
		fds[i] = connect_to(target);
		send_line(fds[i], "version");
		if (!read_line(fds[i], line, sizeof(line), &eof))
			die("connection %d: no answer", i + 1);
	}
	int ninth = connect_to(target);
	if (read_line(ninth, line, sizeof(line), &eof))
		fputs(line, stdout);
	printf("%s\n", peer_closed(ninth, timeout_ms) ? "closed" : "open");
	close(ninth);
	/* the eight still work */
	for (int i = 0; i < 8; i++) {
		send_line(fds[i], "version");
		if (!read_line(fds[i], line, sizeof(line), &eof))
			die("connection %d: no second answer", i + 1);
		close(fds[i]);
	}
	printf("eight answered\n");
	return 0;
}

/* Read @fd until the peer closes it (true) or nothing comes for @ms
 * (false: still open); the bytes read counted into *@got. */
static bool drain(int fd, int ms, unsigned long long *got)
{
	char buf[65536];
	for (;;) {
		ssize_t r = read_some(fd, buf, sizeof(buf), ms);
		if (r < 0)
			return false;
		if (r == 0)
			return true;
		*got += (unsigned long long)r;
	}
}

static int cmd_silent(const char *target)
{
	int fd = connect_to(target);
	/* (the hook may close before the line is sent) */
	(void)!send(fd, "version\n", 8, MSG_NOSIGNAL);
	unsigned long long got = 0;
	if (drain(fd, timeout_ms, &got))
		printf("closed after %llu bytes\n", got);
	else
		printf("open after %llu bytes\n", got);
	return 0;
}

static int cmd_stall(int k, int secs, const char *target)
{
	int fd = connect_to(target);
	/* a small receive buffer, so that the hook's sends fill it soon */
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	for (int i = 0; i < k; i++)
		send_line(fd, "dump");
	sleep((unsigned)secs);
	unsigned long long got = 0;
	if (drain(fd, 2000, &got))
		printf("got %llu bytes, closed\n", got);
	else
		printf("got %llu bytes, open\n", got);
	return 0;
}

static int cmd_trickle(int bytes, int ms, int secs, const char *target)
{
	int fd = connect_to(target);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	send_line(fd, "dump");
	char buf[65536];
	if (bytes > (int)sizeof(buf))
		bytes = (int)sizeof(buf);
	unsigned long long got = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= secs) {
			printf("got %llu bytes, open\n", got);
			return 0;
		}
		ssize_t r = read_some(fd, buf, (size_t)bytes, 2000);
		if (r == 0)
			break;
		if (r > 0)
			got += (unsigned long long)r;
		struct timespec nap = {ms / 1000, (long)(ms % 1000) * 1000000L};
		nanosleep(&nap, NULL);
	}
	printf("got %llu bytes, closed\n", got);
	return 0;
}

/* The "dump N" line and one byte of the body; returns N. */
static unsigned long long dump_begin(int fd, FILE *out, char *line, size_t size, const char *cmd)
{
	bool eof;
	send_line(fd, cmd);
	unsigned long long n;
	if (!read_line(fd, line, size, &eof) || sscanf(line, "dump %llu", &n) != 1)
		die("no dump line: %s", line);
	if (read_body(fd, 1, out) != 1)
		die("no first byte");
	return n;
}

static void dump_finish(int fd, FILE *out, unsigned long long n, const char *line)
{
	unsigned long long got = read_body(fd, n - 1, out) + 1;
	if (fclose(out) != 0)
		die("close: %s", strerror(errno));
	if (got != n) {
		printf("dump %llu: got %llu bytes\n", n, got);
		exit(1);
	}
	fputs(line, stdout);
	fflush(stdout);
}

static int cmd_overlap(const char *prefix, const char *target)
{
	char la[64], lb[64];
	int a = connect_to(target), b = connect_to(target);
	FILE *fa = open_out(prefix, "a"), *fb = open_out(prefix, "b");
	unsigned long long na = dump_begin(a, fa, la, sizeof(la), "dump");
	unsigned long long nb = dump_begin(b, fb, lb, sizeof(lb), "dump");
	dump_finish(b, fb, nb, lb);
	dump_finish(a, fa, na, la);
	close(a);
	close(b);
	return 0;
}

static int cmd_hold(const char *prefix, const char *target, const char *cmd)
{
	char line[64], in[64];
	int fd = connect_to(target);
	FILE *out = open_out(prefix, "1");
	unsigned long long n = dump_begin(fd, out, line, sizeof(line), cmd);
	printf("started\n");
	fflush(stdout);
	if (!fgets(in, sizeof(in), stdin))
		die("stdin closed");
	dump_finish(fd, out, n, line);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *prefix = NULL, *raw = NULL;
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			prefix = argv[++i];
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			timeout_ms = atoi(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			raw = argv[++i];
		else if (!strcmp(argv[i], "--flood") && i + 2 < argc)
			return cmd_flood(atoi(argv[i + 1]), argv[i + 2]);
		else if (!strcmp(argv[i], "--busy") && i + 1 < argc)
			return cmd_busy(argv[i + 1]);
		else if (!strcmp(argv[i], "--silent") && i + 1 < argc)
			return cmd_silent(argv[i + 1]);
		else if (!strcmp(argv[i], "--stall") && i + 3 < argc)
			return cmd_stall(atoi(argv[i + 1]), atoi(argv[i + 2]), argv[i + 3]);
		else if (!strcmp(argv[i], "--trickle") && i + 4 < argc)
			return cmd_trickle(atoi(argv[i + 1]), atoi(argv[i + 2]), atoi(argv[i + 3]),
					   argv[i + 4]);
		else if (!strcmp(argv[i], "--overlap") && i + 2 < argc)
			return cmd_overlap(argv[i + 1], argv[i + 2]);
		else if (!strcmp(argv[i], "--hold") && i + 2 < argc)
			return cmd_hold(argv[i + 1], argv[i + 2], i + 3 < argc ? argv[i + 3] : "dump");
		else
			break;
	}
	if (i >= argc)
		die("usage: ctlclient [-o PREFIX] [-t SECS] [-r FILE] TARGET LINE...");
	if (raw)
		return cmd_raw(raw, argv[i]);
	return cmd_lines(prefix, argv[i], argv + i + 1, argc - i - 1);
}
