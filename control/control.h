/* leaksnap control: the client of a hooked process's control socket
 * (docs/control.md).
 *
 * A process started with LEAKSNAP_CONTROL=1 listens on the abstract Unix
 * socket "leaksnap.<pid>" (LEAKSNAP_CONTROL=PATH: a socket at PATH); on
 * Android, `adb forward` makes it a TCP port of the host.  The protocol is
 * line based: a command line goes out, one answer line comes back, and a
 * dump's answer "dump <BYTES>" is followed by exactly BYTES bytes of a
 * LEAKSNAP v1 dump.
 *
 * Like the other stages this module prints nothing and never exits: each
 * function returns 0, or a negative CONTROL_E_* code with a caller-owned
 * struct leaksnap_error filled, whose source is the subject of the message
 * (the PID or SOCKET as the user gave it) and whose text is one of the
 * fixed texts below, so that the command prints "leaksnap: SUBJECT: TEXT"
 * (each function clears @err first).
 * Every wait on the socket is bounded (struct control_opts.timeout); a
 * dump's body is copied through a fixed buffer, never held whole. */
#ifndef LEAKSNAP_CONTROL_H
#define LEAKSNAP_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include <leaksnap/error.h>
#include <leaksnap/leakhook.h>

/* The protocol's limits and words (design: docs/control.md). */
#define CONTROL_PROTOCOL "1"             /* the version's second word */
#define CONTROL_LINE_MAX 4096            /* an answer line, newline included */
#define CONTROL_DUMP_MAX ((uint64_t)1 << 40) /* the largest dump taken */
/* The hook's runtime contract names them (leakhook.h); the same words
 * here while a hook without its socket is built. */
#ifdef LEAKSNAP_HOOK_CONTROL_PREFIX
#define CONTROL_ABSTRACT_PREFIX LEAKSNAP_HOOK_CONTROL_PREFIX
#else
#define CONTROL_ABSTRACT_PREFIX "leaksnap." /* the abstract name: PREFIX<pid> */
#endif
#ifdef LEAKSNAP_HOOK_ENV_CONTROL
#define CONTROL_ENV LEAKSNAP_HOOK_ENV_CONTROL
#else
#define CONTROL_ENV "LEAKSNAP_CONTROL"   /* the variable that opens the socket */
#endif

/* The texts, after "SUBJECT: " (each fixed; the last three are followed by
 * what was seen, escaped). */
#define CONTROL_TEXT_NOPROC "no such process"
#define CONTROL_TEXT_NOSOCK "no control socket (start the program with " CONTROL_ENV "=1)"
#define CONTROL_TEXT_REFUSED "refused: the process belongs to another user"
#define CONTROL_TEXT_CLOSED "connection closed early"
#define CONTROL_TEXT_MALFORMED "malformed answer: "
#define CONTROL_TEXT_REMOTE "error from the process: "
/* The socket's holder is not the process asked for (SO_PEERCRED, after
 * "SUBJECT: "): "the socket leaksnap.PID is held by process N, not PID:
 * nothing asked", "the socket is held by a process of another user (uid
 * N): nothing asked". */
#define CONTROL_TEXT_NOTASKED ": nothing asked"

/* Two answers "error TEXT" the watch loop acts on: the process is too
 * busy for one more client now (try again later), and the process is
 * ending (its exit dump is being written: no more snapshots). */
#define CONTROL_REMOTE_BUSY "busy"
#define CONTROL_REMOTE_EXITING "dump: the process is exiting"

/* What went wrong, as the functions return it (the error record says it in
 * words).  The watch loop tells a process that went away (NOPROC, NOSOCK,
 * and CLOSED when nothing of the answer came) from a failure. */
enum {
	CONTROL_E_OTHER = -1,     /* a system error (the record says which) */
	CONTROL_E_NOPROC = -2,    /* the pid has no /proc entry */
	CONTROL_E_NOSOCK = -3,    /* nobody listens on the name */
	CONTROL_E_REFUSED = -4,   /* closed without a byte at once by a process
				   * of another user (/proc/PID's owner is not
				   * us; else it is CONTROL_E_CLOSED) */
	CONTROL_E_CLOSED = -5,    /* EOF before the answer (or the body) was whole */
	CONTROL_E_MALFORMED = -6, /* an answer the protocol does not have */
	CONTROL_E_REMOTE = -7,    /* the process answered "error ..." */
	CONTROL_E_TIMEOUT = -8,   /* no byte within the timeout */
	CONTROL_E_PEER = -9,      /* the socket is held by another process or user */
	CONTROL_E_EXITING = -10,   /* a dump answered CONTROL_ANSWER_EXITING: the
				   * process is in exit(), past its exit dump
				   * (said as a CONTROL_E_REMOTE is) */
};

/* What the hook answers a dump asked for while the process exits (its
 * exit dump taken or being taken): the process is going away, as a
 * closed socket says, not failing (hook/control.c, dump_error). */
#define CONTROL_ANSWER_EXITING "error dump: the process is exiting"

/* Options (begin with their size, LEAKSNAP_OPTS). */
struct control_opts {
	size_t sz;
	/* seconds any one wait may take (connect, a byte of an answer, a
	 * byte of a dump's body, a byte accepted by a file); 0: the default,
	 * CONTROL_TIMEOUT_DEFAULT */
	double timeout;
};
#define CONTROL_TIMEOUT_DEFAULT 60.0

/* One connection to a process (opaque). */
struct control_conn;

/* Connect to the control socket named by @arg: all digits, the process
 * with that pid (the abstract name leaksnap.<pid>; NOPROC when /proc/PID
 * is absent); anything else a path socket.  Anyone can bind an abstract
 * name, so the socket's holder is checked (SO_PEERCRED, see
 * control_peer_check) before a byte is sent: CONTROL_E_PEER.  @opts may be
 * NULL.  0 with *@out, or a CONTROL_E_* code with @err filled (source
 * @arg). */
int control_open(const char *arg, const struct control_opts *opts, struct control_conn **out,
		 struct leaksnap_error *err);
/* Whether the holder of a Unix socket (@peer_pid, @peer_uid: its
 * SO_PEERCRED) may be asked, by a client of euid @me, for the process
 * @want_pid (0: a path socket, no pid given).  The holder must be
 * @want_pid itself when one was given, and of our uid or root -- except
 * that root may ask any user's process it named by pid (the hook answers
 * root).  0, or CONTROL_E_PEER with @err filled (source @subject). */
int control_peer_check(const char *subject, int64_t want_pid, int64_t peer_pid, uid_t peer_uid,
		       uid_t me, struct leaksnap_error *err);

/* Whether @err is CONTROL_E_REMOTE's record of the answer "error @text". */
bool control_remote_said(const struct leaksnap_error *err, const char *text);

/* Connect to 127.0.0.1:@port (a socket forwarded by `adb forward`);
 * messages name @subject.  A connection closed at once says that there is
 * no control socket or the process refused (a forward cannot tell which):
 * CONTROL_E_REFUSED. */
int control_open_tcp(unsigned port, const char *subject, const struct control_opts *opts,
		     struct control_conn **out, struct leaksnap_error *err);
/* Take over the connected stream socket @fd (tests, socketpairs): closed
 * by control_close.  NULL when out of memory (@fd closed). */
struct control_conn *control_adopt(int fd, const char *subject, const struct control_opts *opts);
/* The subject messages about @c name (borrowed from @c). */
const char *control_subject(const struct control_conn *c);
/* Close the connection (NULL-safe). */
void control_close(struct control_conn *c);

/* Send @cmd (one line, without its newline) and read the answer line into
 * @line (NUL-terminated, newline and a '\r' before it removed; @size at
 * least CONTROL_LINE_MAX).  An answer "error TEXT" is CONTROL_E_REMOTE
 * ("error from the process: TEXT").  0, or a CONTROL_E_* code. */
int control_command(struct control_conn *c, const char *cmd, char *line, size_t size,
		    struct leaksnap_error *err);

/* "version": "leaksnap-control 1 VERSION PID". */
struct control_version {
	char version[64]; /* the hook's LEAKSNAP_VERSION */
	int64_t pid;
};
int control_version(struct control_conn *c, struct control_version *v, struct leaksnap_error *err);

/* "stats": the JSON line as received in @line (@size at least
 * CONTROL_LINE_MAX), its fields in @s; every key must be there with a
 * value of its type.  A sampled process (docs/control.md) says
 * "sample_interval" (0 when absent: a hook before sampling, or full
 * tracking), its live_bytes and live_blocks are then of sampled blocks, its
 * "estimated_live_bytes" and "estimated_live_blocks" must be there, and its
 * "invalid_frees" may be absent or null (not looked for). */
struct control_stats {
	int64_t pid;
	uint64_t live_bytes, live_blocks, records, dumps_written, invalid_frees;
	bool capture;
	bool has_invalid_frees; /* false: a sampled process, none looked for */
	uint64_t sample_interval, estimated_live_bytes, estimated_live_blocks;
};
int control_stats(struct control_conn *c, struct control_stats *s, char *line, size_t size,
		  struct leaksnap_error *err);
/* The parse alone (@line without its newline). */
int control_stats_parse(const char *line, struct control_stats *s, const char *subject,
			struct leaksnap_error *err);

/* "capture on" / "capture off": answered "ok capture on|off". */
int control_capture(struct control_conn *c, bool on, struct leaksnap_error *err);

/* "dump" ("dump reachability" with @reachability): the answer
 * "dump BYTES" (decimal, at most CONTROL_DUMP_MAX), then the BYTES bytes
 * of the body written to @fd as they come.  The answer
 * CONTROL_ANSWER_EXITING is CONTROL_E_EXITING.  *@bytes gets BYTES (also on a
 * failure after the answer line).  EOF in the body is CONTROL_E_CLOSED
 * ("connection closed early (after N of BYTES bytes of the dump)"); a
 * failed write to @fd CONTROL_E_OTHER with its errno's text. */
int control_dump(struct control_conn *c, bool reachability, int fd, uint64_t *bytes,
		 struct leaksnap_error *err);

/* The pieces, for the tests and the commands: read one answer line (as
 * control_command does after sending); copy exactly @n bytes of the body
 * to @fd. */
int control_read_line(struct control_conn *c, char *line, size_t size, struct leaksnap_error *err);
int control_read_body(struct control_conn *c, uint64_t n, int fd, struct leaksnap_error *err);

/* Parse a dump answer line "dump BYTES": 0 with *@bytes, or
 * CONTROL_E_MALFORMED. */
int control_dump_length(const char *line, uint64_t *bytes, const char *subject,
			struct leaksnap_error *err);

/* Whether @arg names a process (all digits, 1 to 10 of them). */
bool control_arg_is_pid(const char *arg);

/* @n bytes of @s as a message shows an untrusted answer: printable ASCII
 * as it is, '\\' and other bytes as \xNN, at most @max of them (then
 * "..."), in single quotes, into @buf (always NUL-terminated). */
void control_quote(const char *s, size_t n, size_t max, char *buf, size_t size);
/* The same without the quotes (a word printed as part of a sentence). */
void control_escape(const char *s, size_t n, size_t max, char *buf, size_t size);

#endif
