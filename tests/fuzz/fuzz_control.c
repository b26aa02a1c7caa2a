/* Fuzz the control client's reading of what a process answers
 * (control/control.c): byte 0 picks two commands in a row (version,
 * stats, capture on, dump), the rest is what the "process" sent before it
 * closed the connection.  Every call must end (the peer is gone: no wait
 * reaches its timeout), a failure must leave a one-line error record, and
 * what a success returns must hold the protocol's bounds. */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"
#include "fuzz.h"

/* One command of @kind: 0 done, else the CONTROL_E_* code (checked). */
static int one(struct control_conn *c, unsigned kind, int sink)
{
	struct leaksnap_error err;
	char line[CONTROL_LINE_MAX];
	int r;
	fuzz_stale_error(&err);
	switch (kind % 4) {
	case 0: {
		struct control_version v;
		r = control_version(c, &v, &err);
		if (r == 0)
			FUZZ_CHECK(v.pid > 0 && memchr(v.version, '\0', sizeof(v.version)));
		break;
	}
	case 1: {
		struct control_stats s;
		r = control_stats(c, &s, line, sizeof(line), &err);
		if (r == 0)
			FUZZ_CHECK(s.pid > 0 && strlen(line) < CONTROL_LINE_MAX);
		break;
	}
	case 2:
		r = control_capture(c, true, &err);
		break;
	default: {
		uint64_t bytes = 0;
		r = control_dump(c, (kind & 4) != 0, sink, &bytes, &err);
		FUZZ_CHECK(bytes <= CONTROL_DUMP_MAX);
		break;
	}
	}
	if (r == 0) {
		FUZZ_CHECK(err.code == LEAKSNAP_OK);
	} else {
		FUZZ_CHECK(r <= CONTROL_E_OTHER && r >= CONTROL_E_TIMEOUT);
		fuzz_check_error(&err);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return 0;
	int big = 1 << 20;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	int fl = fcntl(sv[1], F_GETFL);
	fcntl(sv[1], F_SETFL, fl | O_NONBLOCK);
	size_t done = 1;
	while (done < size) {
		ssize_t w = write(sv[1], data + done, size - done);
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	close(sv[1]);
	if (done < size) { /* (more than the socket holds: not this harness's input) */
		close(sv[0]);
		return 0;
	}
	static const struct control_opts opts = {sizeof(struct control_opts), 5.0};
	struct control_conn *c = control_adopt(sv[0], "fuzz", &opts);
	int sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (c && sink >= 0 && one(c, data[0], sink) == 0)
		one(c, (unsigned)data[0] >> 3, sink);
	if (sink >= 0)
		close(sink);
	control_close(c);
	return 0;
}
