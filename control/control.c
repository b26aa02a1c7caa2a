/* leaksnap control: connecting to a process's control socket, sending a
 * command, reading its answer line and streaming a dump's body
 * (control.h).  Every socket is non-blocking and every wait goes through
 * poll() with the connection's timeout, so that no call can hang on a
 * process that stopped answering. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "kit.h"

struct control_conn {
	int fd;
	bool tcp;              /* through a forward: a refusal cannot be told */
	double timeout;        /* seconds, each wait */
	uint64_t received;     /* bytes received on this connection, ever */
	int64_t peer_pid;      /* the holder of a Unix socket (SO_PEERCRED), 0 unknown */
	size_t off, len;       /* the unread bytes: buf[off..len) */
	char subject[256];     /* what messages name */
	unsigned char buf[65536];
};

static double opts_timeout(const struct control_opts *o)
{
	if (o && o->sz >= offsetof(struct control_opts, timeout) + sizeof(double) &&
	    o->timeout > 0)
		return o->timeout;
	return CONTROL_TIMEOUT_DEFAULT;
}

bool control_arg_is_pid(const char *arg)
{
	size_t n = strspn(arg, "0123456789");
	return n > 0 && n <= 10 && arg[n] == '\0';
}

/* @n bytes of @s escaped into @buf: printable ASCII as it is, '\\' and
 * every other byte as \xNN, at most @max bytes (then "..."), in single
 * quotes when @quotes. */
static void escape(const char *s, size_t n, size_t max, char *buf, size_t size, bool quotes)
{
	size_t o = 0;
	if (size < 16) {
		if (size)
			buf[0] = '\0';
		return;
	}
	if (quotes)
		buf[o++] = '\'';
	size_t i = 0;
	for (; i < n && i < max; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (o + 10 >= size)
			break;
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
	}
	if (quotes)
		buf[o++] = '\'';
	if (i < n) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
}

void control_quote(const char *s, size_t n, size_t max, char *buf, size_t size)
{
	escape(s, n, max, buf, size, true);
}

void control_escape(const char *s, size_t n, size_t max, char *buf, size_t size)
{
	escape(s, n, max, buf, size, false);
}

bool control_remote_said(const struct leaksnap_error *err, const char *text)
{
	size_t n = strlen(CONTROL_TEXT_REMOTE);
	return strncmp(err->text, CONTROL_TEXT_REMOTE, n) == 0 && strcmp(err->text + n, text) == 0;
}

int control_peer_check(const char *subject, int64_t want_pid, int64_t peer_pid, uid_t peer_uid,
		       uid_t me, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (want_pid > 0 && peer_pid != want_pid) {
		kit_error(err, LEAKSNAP_ERR_IO, subject,
			  "the socket " CONTROL_ABSTRACT_PREFIX "%lld is held by process %lld, not "
			  "%lld" CONTROL_TEXT_NOTASKED,
			  (long long)want_pid, (long long)peer_pid, (long long)want_pid);
		return CONTROL_E_PEER;
	}
	if (peer_uid != me && peer_uid != 0 && !(me == 0 && want_pid > 0)) {
		kit_error(err, LEAKSNAP_ERR_IO, subject,
			  "the socket is held by a process of another user (uid %lu)"
			  CONTROL_TEXT_NOTASKED,
			  (unsigned long)peer_uid);
		return CONTROL_E_PEER;
	}
	return 0;
}

/* The SO_PEERCRED of the Unix socket @fd: 0, or -1 with errno. */
static int peer_cred(int fd, struct ucred *cr)
{
	socklen_t sl = sizeof(*cr);
	memset(cr, 0, sizeof(*cr));
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &sl);
}

static struct control_conn *conn_new(int fd, const char *subject, const struct control_opts *o)
{
	struct control_conn *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	c->fd = fd;
	c->tcp = false;
	c->timeout = opts_timeout(o);
	c->received = 0;
	c->peer_pid = 0;
	c->off = c->len = 0;
	snprintf(c->subject, sizeof(c->subject), "%s", subject);
	return c;
}

struct control_conn *control_adopt(int fd, const char *subject, const struct control_opts *opts)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	struct control_conn *c = conn_new(fd, subject, opts);
	if (!c) {
		close(fd);
		return NULL;
	}
	struct ucred cr;
	if (peer_cred(fd, &cr) == 0)
		c->peer_pid = cr.pid;
	return c;
}

const char *control_subject(const struct control_conn *c)
{
	return c->subject;
}

void control_close(struct control_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until @fd is ready for @events, at most @timeout seconds (a signal
 * does not shorten the wait: a snapshot in flight is finished).  1 ready,
 * 0 timed out, -1 errno. */
static int wait_fd(int fd, short events, double timeout)
{
	double end = now() + timeout;
	for (;;) {
		double left = end - now();
		if (left <= 0)
			return 0;
		struct pollfd p = {fd, events, 0};
		int ms = left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
		int r = poll(&p, 1, ms);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Connect the non-blocking socket @fd to @sa: 0, or -1 with errno
 * (ETIMEDOUT when the listener's queue stayed full). */
static int connect_fd(int fd, const struct sockaddr *sa, socklen_t len, double timeout)
{
	double end = now() + timeout;
	for (;;) {
		if (connect(fd, sa, len) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) { /* a Unix listener's queue is full: try again */
			if (now() >= end) {
				errno = ETIMEDOUT;
				return -1;
			}
			struct timespec ts = {0, 10 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		if (errno != EINPROGRESS)
			return -1;
		int r = wait_fd(fd, POLLOUT, end - now());
		if (r <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
			return -1;
		if (soerr) {
			errno = soerr;
			return -1;
		}
		return 0;
	}
}

int control_open(const char *arg, const struct control_opts *opts, struct control_conn **out,
		 struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	*out = NULL;
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	socklen_t len;
	bool pid = control_arg_is_pid(arg);
	if (pid) {
		char proc[32];
		struct stat st;
		snprintf(proc, sizeof(proc), "/proc/%s", arg);
		if (stat(proc, &st) != 0 || strtoull(arg, NULL, 10) == 0) {
			kit_error(err, LEAKSNAP_ERR_USAGE, arg, CONTROL_TEXT_NOPROC);
			return CONTROL_E_NOPROC;
		}
		/* the abstract name: a NUL, then the name, no NUL counted */
		int n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
				 CONTROL_ABSTRACT_PREFIX "%llu", strtoull(arg, NULL, 10));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	} else {
		size_t n = strlen(arg);
		if (n == 0 || n >= sizeof(sa.sun_path)) {
			if (n)
				kit_error(err, LEAKSNAP_ERR_USAGE, arg,
					  "socket path too long (at most %zu bytes)",
					  sizeof(sa.sun_path) - 1);
			else
				kit_error(err, LEAKSNAP_ERR_USAGE, arg, "empty socket path");
			return CONTROL_E_OTHER;
		}
		memcpy(sa.sun_path, arg, n + 1);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		kit_error(err, LEAKSNAP_ERR_IO, arg, "socket: %s", strerror(errno));
		return CONTROL_E_OTHER;
	}
	double timeout = opts_timeout(opts);
	if (connect_fd(fd, (const struct sockaddr *)&sa, len, timeout) != 0) {
		int e = errno;
		close(fd);
		if (e == ECONNREFUSED || e == ENOENT) {
			/* (a pid's process may have ended meanwhile) */
			char proc[32];
			struct stat st;
			snprintf(proc, sizeof(proc), "/proc/%s", arg);
			if (pid && stat(proc, &st) != 0) {
				kit_error(err, LEAKSNAP_ERR_USAGE, arg, CONTROL_TEXT_NOPROC);
				return CONTROL_E_NOPROC;
			}
			kit_error(err, LEAKSNAP_ERR_IO, arg, CONTROL_TEXT_NOSOCK);
			return CONTROL_E_NOSOCK;
		}
		kit_error(err, LEAKSNAP_ERR_IO, arg, "cannot connect: %s", strerror(e));
		return e == ETIMEDOUT ? CONTROL_E_TIMEOUT : CONTROL_E_OTHER;
	}
	/* whoever holds the name is answering: is it the one asked for? */
	struct ucred cr;
	if (peer_cred(fd, &cr) != 0) {
		kit_error(err, LEAKSNAP_ERR_IO, arg, "SO_PEERCRED: %s", strerror(errno));
		close(fd);
		return CONTROL_E_OTHER;
	}
	int r = control_peer_check(arg, pid ? (int64_t)strtoull(arg, NULL, 10) : 0, cr.pid,
				   cr.uid, geteuid(), err);
	if (r) {
		close(fd);
		return r;
	}
	*out = conn_new(fd, arg, opts);
	if (!*out) {
		close(fd);
		kit_error(err, LEAKSNAP_ERR_NOMEM, arg, "out of memory");
		return CONTROL_E_OTHER;
	}
	(*out)->peer_pid = cr.pid;
	return 0;
}

int control_open_tcp(unsigned port, const char *subject, const struct control_opts *opts,
		     struct control_conn **out, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	*out = NULL;
	if (port == 0 || port > 65535) {
		kit_error(err, LEAKSNAP_ERR_USAGE, subject, "port %u out of range", port);
		return CONTROL_E_OTHER;
	}
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		kit_error(err, LEAKSNAP_ERR_IO, subject, "socket: %s", strerror(errno));
		return CONTROL_E_OTHER;
	}
	if (connect_fd(fd, (const struct sockaddr *)&sa, sizeof(sa), opts_timeout(opts)) != 0) {
		int e = errno;
		close(fd);
		kit_error(err, LEAKSNAP_ERR_IO, subject, "cannot connect to 127.0.0.1:%u: %s", port,
			  strerror(e));
		return e == ETIMEDOUT ? CONTROL_E_TIMEOUT : CONTROL_E_OTHER;
	}
	*out = conn_new(fd, subject, opts);
	if (!*out) {
		close(fd);
		kit_error(err, LEAKSNAP_ERR_NOMEM, subject, "out of memory");
		return CONTROL_E_OTHER;
	}
	(*out)->tcp = true;
	return 0;
}

/* Whether the process holding @c's socket belongs to another user: its
 * /proc entry's owner is not our euid.  (A process that ends, or a hook
 * stopping, closes connections without a byte too: that is no refusal.) */
static bool other_user(const struct control_conn *c)
{
	char proc[32];
	struct stat st;
	if (c->peer_pid <= 0)
		return false;
	snprintf(proc, sizeof(proc), "/proc/%lld", (long long)c->peer_pid);
	return stat(proc, &st) == 0 && st.st_uid != geteuid();
}

/* The process closed the connection (EOF, or a reset: a process that
 * closes without reading what we sent resets it) after @have bytes of
 * the answer line. */
static int closed(struct control_conn *c, size_t have, struct leaksnap_error *err)
{
	if (c->received == 0 && c->tcp) {
		kit_error(err, LEAKSNAP_ERR_IO, c->subject,
			  "connection closed at once: no control socket (start the program with "
			  CONTROL_ENV "=1), or the process belongs to another user");
		return CONTROL_E_REFUSED;
	}
	if (c->received == 0 && other_user(c)) {
		kit_error(err, LEAKSNAP_ERR_IO, c->subject, CONTROL_TEXT_REFUSED);
		return CONTROL_E_REFUSED;
	}
	if (have == 0)
		kit_error(err, LEAKSNAP_ERR_IO, c->subject, CONTROL_TEXT_CLOSED " (no answer)");
	else
		kit_error(err, LEAKSNAP_ERR_IO, c->subject,
			  CONTROL_TEXT_CLOSED " (after %zu bytes of an answer line)", have);
	return CONTROL_E_CLOSED;
}

/* Read more bytes into the buffer (which the caller emptied or moved):
 * >0 bytes read, 0 EOF (or reset), CONTROL_E_TIMEOUT / _OTHER (said). */
static long fill(struct control_conn *c, const char *what, struct leaksnap_error *err)
{
	for (;;) {
		int r = wait_fd(c->fd, POLLIN, c->timeout);
		if (r == 0) {
			kit_error(err, LEAKSNAP_ERR_IO, c->subject, "no %s within %g s", what,
				  c->timeout);
			return CONTROL_E_TIMEOUT;
		}
		if (r < 0) {
			kit_error(err, LEAKSNAP_ERR_IO, c->subject, "poll: %s", strerror(errno));
			return CONTROL_E_OTHER;
		}
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
		if (n > 0) {
			c->len += (size_t)n;
			c->received += (uint64_t)n;
			return (long)n;
		}
		if (n == 0 || errno == ECONNRESET)
			return 0;
		if (errno == EINTR || errno == EAGAIN)
			continue;
		kit_error(err, LEAKSNAP_ERR_IO, c->subject, "recv: %s", strerror(errno));
		return CONTROL_E_OTHER;
	}
}

int control_read_line(struct control_conn *c, char *line, size_t size, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	for (;;) {
		size_t have = c->len - c->off;
		size_t look = have < CONTROL_LINE_MAX ? have : CONTROL_LINE_MAX;
		unsigned char *nl = memchr(c->buf + c->off, '\n', look);
		if (nl) {
			size_t n = (size_t)(nl - (c->buf + c->off));
			size_t keep = n;
			if (keep > 0 && c->buf[c->off + keep - 1] == '\r')
				keep--;
			if (keep >= size)
				keep = size ? size - 1 : 0;
			if (size) {
				memcpy(line, c->buf + c->off, keep);
				line[keep] = '\0';
			}
			c->off += n + 1;
			return 0;
		}
		if (have >= CONTROL_LINE_MAX) {
			char q[128];
			control_quote((const char *)c->buf + c->off, have, 40, q, sizeof(q));
			kit_error(err, LEAKSNAP_ERR_FORMAT, c->subject,
				  CONTROL_TEXT_MALFORMED "no newline in the first %d bytes (%s)",
				  CONTROL_LINE_MAX, q);
			return CONTROL_E_MALFORMED;
		}
		/* room for a whole line at the buffer's end */
		if (c->off > 0) {
			memmove(c->buf, c->buf + c->off, have);
			c->off = 0;
			c->len = have;
		}
		long r = fill(c, "answer", err);
		if (r == 0)
			return closed(c, have, err);
		if (r < 0)
			return (int)r;
	}
}

/* Send all of @s. */
static int send_all(struct control_conn *c, const char *s, size_t n, struct leaksnap_error *err)
{
	while (n > 0) {
		int r = wait_fd(c->fd, POLLOUT, c->timeout);
		if (r == 0) {
			kit_error(err, LEAKSNAP_ERR_IO, c->subject,
				  "the process accepted no command within %g s", c->timeout);
			return CONTROL_E_TIMEOUT;
		}
		if (r < 0) {
			kit_error(err, LEAKSNAP_ERR_IO, c->subject, "poll: %s", strerror(errno));
			return CONTROL_E_OTHER;
		}
		ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == EPIPE || errno == ECONNRESET)
				return closed(c, 0, err);
			kit_error(err, LEAKSNAP_ERR_IO, c->subject, "send: %s", strerror(errno));
			return CONTROL_E_OTHER;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int control_command(struct control_conn *c, const char *cmd, char *line, size_t size,
		    struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	char out[300];
	int n = snprintf(out, sizeof(out), "%s\n", cmd);
	if (n < 0 || (size_t)n >= sizeof(out) || strchr(cmd, '\n')) {
		kit_error(err, LEAKSNAP_ERR_USAGE, c->subject, "command too long or not one line");
		return CONTROL_E_OTHER;
	}
	int r = send_all(c, out, (size_t)n, err);
	if (r == CONTROL_E_REFUSED || r == CONTROL_E_CLOSED) {
		/* The process closed the connection: what it said before, if
		 * anything (error busy), is the better message. */
		leaksnap_error_clear(err);
		r = control_read_line(c, line, size, err);
	} else if (r == 0) {
		r = control_read_line(c, line, size, err);
	}
	if (r)
		return r;
	if (strncmp(line, "error ", 6) == 0 || strcmp(line, "error") == 0) {
		char q[600];
		const char *t = line[5] ? line + 6 : "";
		escape(t, strlen(t), 200, q, sizeof(q), false);
		kit_error(err, LEAKSNAP_ERR_IO, c->subject, CONTROL_TEXT_REMOTE "%s", q);
		return CONTROL_E_REMOTE;
	}
	return 0;
}

/* An answer that is not the one expected: "malformed answer: 'LINE'
 * (@why)". */
static int unexpected(const char *subject, const char *line, const char *why,
		      struct leaksnap_error *err)
{
	char q[200];
	control_quote(line, strlen(line), 80, q, sizeof(q));
	kit_error(err, LEAKSNAP_ERR_FORMAT, subject, CONTROL_TEXT_MALFORMED "%s (%s)", q, why);
	return CONTROL_E_MALFORMED;
}

/* Decimal digits, the whole of @s, at most 20 of them: 0, else -1. */
static int decimal(const char *s, uint64_t *v)
{
	size_t n = strspn(s, "0123456789");
	if (n == 0 || n > 20 || s[n] != '\0')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, NULL, 10);
	if (errno)
		return -1;
	*v = x;
	return 0;
}

int control_version(struct control_conn *c, struct control_version *v, struct leaksnap_error *err)
{
	char line[CONTROL_LINE_MAX];
	int r = control_command(c, "version", line, sizeof(line), err);
	if (r)
		return r;
	/* leaksnap-control 1 VERSION PID */
	char w[4][64];
	const char *p = line;
	size_t k = 0;
	while (*p && k < 5) {
		size_t n = strcspn(p, " ");
		if (k < 4) {
			if (n == 0 || n >= sizeof(w[0]))
				break;
			memcpy(w[k], p, n);
			w[k][n] = '\0';
		}
		k++;
		p += n;
		if (*p == ' ')
			p++;
		else if (*p)
			break;
	}
	uint64_t pid;
	if (k != 4 || *p || strcmp(w[0], "leaksnap-control") != 0 || decimal(w[3], &pid) ||
	    pid == 0 || pid > INT64_MAX)
		return unexpected(c->subject, line,
				  "expected \"leaksnap-control " CONTROL_PROTOCOL " VERSION PID\"",
				  err);
	if (strcmp(w[1], CONTROL_PROTOCOL) != 0)
		return unexpected(c->subject, line,
				  "protocol " CONTROL_PROTOCOL " expected: this leaksnap is too old "
				  "for the process's hook",
				  err);
	snprintf(v->version, sizeof(v->version), "%s", w[2]);
	v->pid = (int64_t)pid;
	return 0;
}

int control_capture(struct control_conn *c, bool on, struct leaksnap_error *err)
{
	char line[CONTROL_LINE_MAX];
	const char *cmd = on ? "capture on" : "capture off";
	int r = control_command(c, cmd, line, sizeof(line), err);
	if (r)
		return r;
	if (strcmp(line, on ? "ok capture on" : "ok capture off") != 0)
		return unexpected(c->subject, line,
				  on ? "expected \"ok capture on\"" : "expected \"ok capture off\"",
				  err);
	return 0;
}

int control_dump_length(const char *line, uint64_t *bytes, const char *subject,
			struct leaksnap_error *err)
{
	uint64_t v;
	leaksnap_error_clear(err);
	if (strncmp(line, "dump ", 5) != 0 || decimal(line + 5, &v) != 0)
		return unexpected(subject, line, "expected \"dump BYTES\"", err);
	if (v > CONTROL_DUMP_MAX)
		return unexpected(subject, line, "a dump of more than 2^40 bytes", err);
	*bytes = v;
	return 0;
}

/* Write all of @p to @fd. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd q = {fd, POLLOUT, 0};
				(void)poll(&q, 1, 1000);
				continue;
			}
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int control_read_body(struct control_conn *c, uint64_t n, int fd, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	uint64_t done = 0;
	while (done < n) {
		if (c->off == c->len) {
			c->off = c->len = 0;
			long r = fill(c, "byte of the dump", err);
			if (r == 0) {
				kit_error(err, LEAKSNAP_ERR_IO, c->subject,
					  CONTROL_TEXT_CLOSED " (after %llu of %llu bytes of the dump)",
					  (unsigned long long)done, (unsigned long long)n);
				return CONTROL_E_CLOSED;
			}
			if (r < 0)
				return (int)r;
		}
		size_t take = c->len - c->off;
		if ((uint64_t)take > n - done)
			take = (size_t)(n - done);
		if (write_all(fd, c->buf + c->off, take) != 0) {
			kit_error(err, LEAKSNAP_ERR_IO, c->subject, "writing the dump: %s",
				  strerror(errno));
			return CONTROL_E_OTHER;
		}
		c->off += take;
		done += take;
	}
	return 0;
}

int control_dump(struct control_conn *c, bool reachability, int fd, uint64_t *bytes,
		 struct leaksnap_error *err)
{
	char line[CONTROL_LINE_MAX];
	*bytes = 0;
	int r = control_command(c, reachability ? "dump reachability" : "dump", line, sizeof(line),
				err);
	if (r == CONTROL_E_REMOTE && strcmp(line, CONTROL_ANSWER_EXITING) == 0)
		return CONTROL_E_EXITING;
	if (r)
		return r;
	if ((r = control_dump_length(line, bytes, c->subject, err)) != 0)
		return r;
	return control_read_body(c, *bytes, fd, err);
}
