/* leaksnap hook: the control socket's command lines (docs/control.md).
 *
 * Pure functions, no system calls and no allocation, so that the unit
 * tests and the fuzz harness (tests/fuzz/fuzz_control.c) run them as they
 * are, outside the hook:
 *   - ctl_line_feed() assembles lines from the bytes a client sends, in
 *     any pieces: a line ends at '\n', a '\r' just before it is dropped, an
 *     empty line is skipped, a line longer than CTL_LINE_MAX is discarded
 *     and reported once its newline arrives;
 *   - ctl_parse() makes one command of a line;
 *   - ctl_peer_allowed() decides who is answered. */
#ifndef LEAKSNAP_HOOK_CONTROL_PROTO_H
#define LEAKSNAP_HOOK_CONTROL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest command line, not counting its newline (nor a '\r' before it). */
#define CTL_LINE_MAX 255

enum ctl_cmd {
	CTL_NONE,         /* no complete line yet */
	CTL_VERSION,      /* "version" */
	CTL_STATS,        /* "stats" */
	CTL_DUMP,         /* "dump" */
	CTL_DUMP_REACH,   /* "dump reachability" */
	CTL_CAPTURE_ON,   /* "capture on" */
	CTL_CAPTURE_OFF,  /* "capture off" */
	CTL_QUIT,         /* "quit" */
	CTL_UNKNOWN,      /* any other line */
	CTL_TOO_LONG,     /* a line of more than CTL_LINE_MAX bytes */
};

/* A line being assembled.  Zero it (CTL_LINE_INIT) before the first byte. */
struct ctl_line {
	char text[CTL_LINE_MAX + 1]; /* the bytes so far (room for a '\r') */
	size_t len;
	bool overlong;               /* past CTL_LINE_MAX: discarding to '\n' */
};
#define CTL_LINE_INIT {{0}, 0, false}

/* Take bytes from @p[0..n) up to the end of the first non-empty line (its
 * '\n' included) or all of them.  Returns how many were taken; *@cmd is
 * that line's command, or CTL_NONE when no line ended among them (the
 * state keeps the partial line for the next call).  Call again with the
 * rest for the next command. */
size_t ctl_line_feed(struct ctl_line *l, const char *p, size_t n, enum ctl_cmd *cmd);

/* The command of the line @s[0..len) (no newline): words separated by
 * spaces, compared exactly; anything but the commands above, extra words
 * or another byte (a tab, a NUL) included, is CTL_UNKNOWN. */
enum ctl_cmd ctl_parse(const char *s, size_t len);

/* The answer to a line that is no command: "error unknown command\n" or
 * "error line too long\n" (@cmd CTL_UNKNOWN or CTL_TOO_LONG), else NULL. */
const char *ctl_error_answer(enum ctl_cmd cmd);

/* The bounds of a connection (docs/control.md, docs/hook.md), in ms. */
#define CTL_IDLE_MS 60000    /* no complete line for this long: closed */
#define CTL_SEND_MS 10000    /* an answer of which no byte is taken for this long: dropped */
#define CTL_MS_PER_MIB 1000  /* a dump's whole time: CTL_SEND_MS and this per MiB */
#define CTL_WAIT_MS 60000    /* a dump waiting its turn this long: "error dump: ..." */

/* How long a dump of @bytes may take to send at most, from its first
 * byte: CTL_SEND_MS and CTL_MS_PER_MIB for every MiB begun (a reader
 * slower than 1 MiB/s, or one that takes a byte now and then, is dropped). */
uint64_t ctl_dump_bound_ms(uint64_t bytes);

/* What becomes of a connection at @now past its @deadline (no progress
 * for that long) or its @until (its whole bound, 0 none): CTL_DROP, or
 * CTL_KEEP when neither passed, or CTL_RETRY when only the deadline passed
 * and the socket is @ready (it takes bytes, or has some: the thread was
 * kept from it, not the client) -- the connection goes on. */
enum ctl_verdict { CTL_KEEP, CTL_RETRY, CTL_DROP };
enum ctl_verdict ctl_overdue(uint64_t now, uint64_t deadline, uint64_t until, bool ready);

/* Android's shell user, adbd's on user builds (AID_SHELL). */
#define CTL_AID_SHELL 2000

/* What decides whether a peer is answered, besides its uid. */
struct ctl_peer_ctx {
	uid_t euid;         /* this process's effective uid */
	bool bionic;        /* an Android build */
	bool dumpable;      /* prctl(PR_GET_DUMPABLE): on Android, a debuggable
			     * app (one the shell may run-as) */
	uid_t overflow_uid; /* /proc/sys/kernel/overflowuid: the uid a peer from
			     * outside this user namespace shows when unmapped */
	bool overflow_real; /* a peer showing @overflow_uid is in this user
			     * namespace: its uid really is that one */
};

/* Whether a peer of uid @peer is answered: this process's euid or root;
 * on Android also the shell (adbd, `adb forward`) when the process is
 * dumpable.  A peer showing the overflow uid is refused unless it really
 * has that uid (an unmapped user of another namespace is anyone). */
bool ctl_peer_allowed(uid_t peer, const struct ctl_peer_ctx *ctx);

#endif
