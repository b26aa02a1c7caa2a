/* leaksnap hook: the control socket (docs/control.md).
 *
 * LEAKSNAP_CONTROL (or the in-app option) opens a listening Unix stream
 * socket, abstract ("leaksnap.<pid>") or at a path, served by one thread of
 * the hook's own: the control thread.  It is never tracked (hook_busy), never
 * stopped by a reachability pause, its stack below its loop is never a root,
 * and all it holds is in one hook_map()'ed state (the connections' buffers,
 * the dumps it streams), never in the program's heap.
 *
 * Only this thread touches the sockets.  It sleeps in poll() while nothing
 * happens.  A dump is taken exactly as a file dump is (dump_take: the same
 * lock, the same snapshot), then streamed from memory with non-blocking
 * sends, so a client that reads slowly or not at all costs the program
 * nothing: it is dropped after CTL_SEND_MS without progress.  At most
 * CTL_CLIENTS connections at once, at most CTL_DUMPS dumps held; a dump asked
 * for meanwhile waits its turn.
 *
 * fork(): the child closes what it inherited at once (the fork handler),
 * and opens its own socket as its dump thread is started, at the end of
 * the fork handler.  Every descriptor is close-on-exec. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"
#include "control_sock.h"
#include "dump.h"
#include "sample.h"

#ifndef LEAKSNAP_HOOK_VERSION
#error "LEAKSNAP_HOOK_VERSION (the Makefile's VERSION) must be defined"
#endif

#define CTL_CLIENTS 8        /* connections at once; one more gets "error busy" */
#define CTL_DUMPS 2          /* dumps held in memory at once */
#define CTL_STATS_MS 100     /* one stats snapshot (all the table's locks) per this */
#define CTL_BLOCKED_MS 50    /* the thread kept from poll() this long: the
			      * clients' clocks are pushed on by as much */
#define CTL_ANSWER_MAX 384   /* the longest one-line answer */
#define CTL_READ_MAX 512     /* bytes read at once */
#define CTL_ACCEPT_ROUND 64  /* connections taken per wake-up */

enum client_state {
	C_FREE,
	C_READ,      /* waiting for a command line */
	C_ANSWER,    /* sending a one-line answer */
	C_WAIT_DUMP, /* a dump asked for, waiting for a free slot */
	C_WAIT_STATS, /* stats asked for within CTL_STATS_MS of the last */
	C_DUMP,      /* sending a dump */
};

struct client {
	int fd;
	enum client_state state;
	bool writable;       /* try to send (not known to be full) */
	bool eof;            /* the peer sent its last byte */
	bool close_after;    /* quit: closed once the answer is sent */
	bool want_reach;     /* the dump waited for: "dump reachability" */
	uint64_t ticket;     /* the order of the dumps waited for */
	uint64_t deadline;   /* ms (CLOCK_MONOTONIC): idle, send or wait limit */
	uint64_t until;      /* a dump's whole bound (ctl_dump_bound_ms), or 0 */
	struct ctl_line line;
	char in[CTL_READ_MAX];
	size_t in_pos, in_len;
	char out[CTL_ANSWER_MAX];
	size_t out_off, out_len;
	int dump;            /* its slot in dumps[] while C_DUMP */
	unsigned part;       /* the part being sent (0 the "dump N" line) */
	size_t part_off;
};

struct dump_slot {
	bool used;
	bool taking;         /* being filled (a fork meanwhile leaves it be) */
	char line[40];       /* "dump <BYTES>\n" */
	struct dump_image img;
};

struct control {
	struct client clients[CTL_CLIENTS];
	struct dump_slot dumps[CTL_DUMPS];
	uint64_t tickets;
	uint64_t accept_pause_until; /* out of descriptors: accept later */
	uint64_t stats_next;         /* no stats snapshot before this */
};

static struct control *ctl;          /* hook_map()'ed, kept once made */
static int listen_fd = -1;
static int wake_fd[2] = {-1, -1};    /* control_stop() -> the thread */
static pthread_t ctl_thread;
static bool thread_made;             /* ctl_thread is this process's */
static atomic_bool quit_asked;
static atomic_bool sock_open;        /* ctl_sock_name is served (metadata) */
static bool reach_ours;              /* reach_init() done for "dump reachability" */
static atomic_bool child_wants;      /* a forked child: open at the next chance */
static bool forked;                  /* this process is a forked child */
static atomic_uint starting;         /* a control thread is being made */
static bool wanted;                  /* control_start() asked for a socket: so do
				      * forked children (socket or not here) */
/* Held wherever a descriptor of the control's is made or closed, and by
 * fork() (control_fork_prepare): a fork sees every descriptor of the
 * control's recorded where the child handler finds it, never one
 * accept()ed and not yet stored, nor a slot half reset. */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_int control_thread_tid;
atomic_uintptr_t control_thread_stack;

/* Time ---------------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Connections ---------------------------------------------------------------------- */

static void slot_release(int k)
{
	struct dump_slot *d = &ctl->dumps[k];
	if (d->used)
		dump_image_free(&d->img);
	d->used = false;
}

/* A free slot: fd -1, the only value a free slot's fd has (0 is a
 * descriptor, stdin, that a fork's child handler must never close). */
static void client_clear(struct client *c, int fd)
{
	struct client blank;
	memset(&blank, 0, sizeof(blank));
	blank.fd = fd;
	blank.dump = -1;
	blank.state = C_FREE;
	*c = blank;
}

static void client_drop(struct client *c)
{
	if (c->state == C_DUMP && c->dump >= 0)
		slot_release(c->dump);
	pthread_mutex_lock(&fd_lock);
	if (c->fd >= 0)
		close(c->fd);
	client_clear(c, -1);
	pthread_mutex_unlock(&fd_lock);
}

static void to_read(struct client *c)
{
	c->state = C_READ;
	c->deadline = now_ms() + CTL_IDLE_MS;
	c->until = 0;
}

static void answer(struct client *c, const char *text)
{
	size_t n = strlen(text);
	if (n > sizeof(c->out))
		n = sizeof(c->out);
	memcpy(c->out, text, n);
	c->out_len = n;
	c->out_off = 0;
	c->state = C_ANSWER;
	c->writable = true;
	c->deadline = now_ms() + CTL_SEND_MS;
	c->until = 0;
}

/* "stats": the live blocks counted from a snapshot (the same locks a dump
 * takes, the same totals its records give). */
static void answer_stats(struct client *c)
{
	struct table_snapshot snap;
	if (table_snapshot(&snap) != 0) {
		answer(c, "error stats: out of memory\n");
		return;
	}
	/* sampled collection: the counts are of sampled blocks, and the
	 * estimates are summed as readers sum a dump's (each record's
	 * rounded); double frees are not looked for */
	uint64_t interval = hook_cfg.sample, blocks = 0, est_bytes = 0, est_blocks = 0;
	for (size_t i = 0; i < snap.record_count; i++) {
		uintptr_t size, count;
		memcpy(&size, snap.records + i * snap.info_size, sizeof(size));
		memcpy(&count, snap.records + i * snap.info_size + sizeof(uintptr_t), sizeof(count));
		blocks += count;
		if (interval)
			sample_estimate_add(size & ~HOOK_ZYGOTE_BIT, count, interval, &est_bytes,
					    &est_blocks);
	}
	char text[CTL_ANSWER_MAX];
	int n = snprintf(text, sizeof(text),
			 "{\"pid\":%d,\"live_bytes\":%" PRIu64 ",\"live_blocks\":%" PRIu64
			 ",\"records\":%zu,\"capture\":%s,\"dumps_written\":%lu",
			 (int)getpid(), snap.total_memory, blocks, snap.record_count,
			 atomic_load(&hook_capture_on) ? "true" : "false",
			 (unsigned long)atomic_load(&hook_dumps_written));
	if (interval)
		snprintf(text + n, sizeof(text) - (size_t)n,
			 ",\"sample_interval\":%" PRIu64 ",\"estimated_live_bytes\":%" PRIu64
			 ",\"estimated_live_blocks\":%" PRIu64 "}\n",
			 interval, est_bytes, est_blocks);
	else
		snprintf(text + n, sizeof(text) - (size_t)n, ",\"invalid_frees\":%lu}\n",
			 (unsigned long)atomic_load(&hook_invalid_frees));
	table_snapshot_free(&snap);
	ctl->stats_next = now_ms() + CTL_STATS_MS;
	answer(c, text);
}

static void execute(struct client *c, enum ctl_cmd cmd)
{
	char text[CTL_ANSWER_MAX];
	switch (cmd) {
	case CTL_VERSION:
		snprintf(text, sizeof(text), "leaksnap-control 1 %s %d\n", LEAKSNAP_HOOK_VERSION,
			 (int)getpid());
		answer(c, text);
		break;
	case CTL_STATS:
		/* (answered by client_advance: at once, or once CTL_STATS_MS
		 * has passed since the last one: never an older state) */
		c->state = C_WAIT_STATS;
		c->deadline = ctl->stats_next;
		c->until = 0;
		break;
	case CTL_DUMP:
	case CTL_DUMP_REACH:
		c->state = C_WAIT_DUMP;
		c->want_reach = cmd == CTL_DUMP_REACH;
		c->ticket = ++ctl->tickets;
		c->deadline = now_ms() + CTL_WAIT_MS;
		c->until = 0;
		break;
	case CTL_CAPTURE_ON:
	case CTL_CAPTURE_OFF:
		atomic_store(&hook_capture_on, cmd == CTL_CAPTURE_ON);
		answer(c, cmd == CTL_CAPTURE_ON ? "ok capture on\n" : "ok capture off\n");
		break;
	case CTL_QUIT:
		answer(c, "ok quit\n");
		c->close_after = true;
		break;
	default:
		answer(c, ctl_error_answer(cmd) ? ctl_error_answer(cmd) : "error unknown command\n");
		break;
	}
}

static const int send_flags = MSG_DONTWAIT | MSG_NOSIGNAL;

/* Send what the socket takes.  Returns 1 when all is sent, 0 when it is
 * full (or nothing went), -1 when the connection is gone. */
static int send_some(struct client *c)
{
	if (c->state == C_ANSWER) {
		while (c->out_off < c->out_len) {
			ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, send_flags);
			if (w < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
			c->out_off += (size_t)w;
			c->deadline = now_ms() + CTL_SEND_MS;
		}
		return 1;
	}
	struct dump_slot *d = &ctl->dumps[c->dump];
	for (;;) {
		struct iovec iov[1 + DUMP_IMAGE_PARTS];
		int n = 0;
		for (unsigned p = c->part; p <= DUMP_IMAGE_PARTS; p++) {
			struct iovec v = p ? d->img.iov[p - 1]
					   : (struct iovec){d->line, strlen(d->line)};
			if (p == c->part) {
				v.iov_base = (char *)v.iov_base + c->part_off;
				v.iov_len -= c->part_off;
			}
			if (v.iov_len)
				iov[n++] = v;
		}
		if (!n)
			return 1;
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t w = sendmsg(c->fd, &m, send_flags);
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		c->deadline = now_ms() + CTL_SEND_MS;
		size_t left = (size_t)w;
		while (left && c->part <= DUMP_IMAGE_PARTS) {
			size_t len = c->part ? d->img.iov[c->part - 1].iov_len : strlen(d->line);
			size_t rest = len - c->part_off;
			if (left < rest) {
				c->part_off += left;
				left = 0;
			} else {
				left -= rest;
				c->part++;
				c->part_off = 0;
			}
		}
	}
}

/* Move @c on as far as it goes without waiting.  Returns whether anything
 * changed. */
static bool client_advance(struct client *c)
{
	bool changed = false;
	for (;;) {
		switch (c->state) {
		case C_FREE:
		case C_WAIT_DUMP:
			return changed;
		case C_WAIT_STATS:
			if (now_ms() < ctl->stats_next)
				return changed;
			answer_stats(c);
			changed = true;
			break;
		case C_READ: {
			if (c->in_pos == c->in_len) {
				if (!c->eof)
					return changed;
				client_drop(c); /* its last line is answered */
				return true;
			}
			enum ctl_cmd cmd;
			c->in_pos += ctl_line_feed(&c->line, c->in + c->in_pos, c->in_len - c->in_pos,
						   &cmd);
			if (cmd != CTL_NONE) {
				execute(c, cmd);
				changed = true;
			}
			break;
		}
		case C_ANSWER:
		case C_DUMP: {
			if (!c->writable)
				return changed;
			int r = send_some(c);
			if (r < 0) {
				client_drop(c);
				return true;
			}
			if (r == 0) {
				c->writable = false;
				return changed;
			}
			changed = true;
			if (c->state == C_DUMP) {
				slot_release(c->dump);
				c->dump = -1;
				atomic_fetch_add(&hook_dumps_written, 1);
			}
			if (c->close_after) {
				client_drop(c);
				return true;
			}
			to_read(c);
			break;
		}
		}
	}
}

static const char *dump_error(int e)
{
	switch (e) {
	case ECANCELED:
		return "the process is exiting";
	case ENOMEM:
		return "out of memory";
	default:
		return strerror(e);
	}
}

/* Give the free dump slots to the clients waiting longest.  Returns
 * whether one was served. */
static bool dumps_start(void)
{
	bool changed = false;
	for (int k = 0; k < CTL_DUMPS; k++) {
		struct dump_slot *d = &ctl->dumps[k];
		if (d->used)
			continue;
		struct client *next = NULL;
		for (int i = 0; i < CTL_CLIENTS; i++) {
			struct client *c = &ctl->clients[i];
			if (c->state == C_WAIT_DUMP && (!next || c->ticket < next->ticket))
				next = c;
		}
		if (!next)
			break;
		changed = true;
		if (next->want_reach && !hook_cfg.reachability && !hook_cfg.sample && !reach_ours) {
			reach_init();
			reach_ours = true;
		}
		d->taking = true;
		int rc = dump_take(&d->img, HOOK_TRIGGER_CONTROL, next->want_reach);
		int e = errno;
		d->taking = false;
		if (rc != 0) {
			char text[CTL_ANSWER_MAX];
			snprintf(text, sizeof(text), "error dump: %s\n", dump_error(e));
			answer(next, text);
			continue;
		}
		/* (the records' keys were for the classification: hashes,
		 * which on 32-bit look like addresses; the blocks' addresses
		 * are gone already, reach.c) */
		if (d->img.snap.keys)
			hook_unmap(d->img.snap.keys, d->img.snap.keys_size);
		d->img.snap.keys = NULL;
		d->used = true;
		snprintf(d->line, sizeof(d->line), "dump %" PRIu64 "\n", d->img.size);
		next->state = C_DUMP;
		next->dump = k;
		next->part = 0;
		next->part_off = 0;
		next->writable = true;
		next->deadline = now_ms() + CTL_SEND_MS;
		next->until = now_ms() + ctl_dump_bound_ms(d->img.size);
	}
	return changed;
}

static uid_t overflow_uid = 65534; /* (read at start: control_read_overflow) */

static void control_read_overflow(void)
{
	char b[32];
	int fd = open("/proc/sys/kernel/overflowuid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return;
	b[n] = '\0';
	unsigned long v = 0;
	int k = 0;
	for (; b[k] >= '0' && b[k] <= '9' && v < 0xffffffffUL; k++)
		v = v * 10 + (unsigned long)(b[k] - '0');
	if (k > 0 && v <= 0xffffffffUL)
		overflow_uid = (uid_t)v;
}

/* Whether process @pid is in this process's user namespace. */
static bool same_userns(pid_t pid)
{
	char path[48];
	struct stat a, b;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return pid > 0 && stat(path, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Who is answered: ctl_peer_allowed() with what this process is. */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred))
		return false;
	struct ctl_peer_ctx ctx = {
		.euid = geteuid(),
#ifdef __BIONIC__
		.bionic = true,
		.dumpable = prctl(PR_GET_DUMPABLE) == 1,
#endif
		.overflow_uid = overflow_uid,
	};
	if (cred.uid == overflow_uid)
		ctx.overflow_real = same_userns(cred.pid);
	return ctl_peer_allowed(cred.uid, &ctx);
}

/* One connection taken: stored in a slot, or closed.  Returns false when
 * there was none.  Under fd_lock from accept() to there: a fork meanwhile
 * would give the child a descriptor nothing of its own knows of. */
static bool accept_one(void)
{
	pthread_mutex_lock(&fd_lock);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			ctl->accept_pause_until = now_ms() + 100;
		pthread_mutex_unlock(&fd_lock);
		return false;
	}
	if (!peer_allowed(fd)) {
		close(fd); /* without a byte */
		pthread_mutex_unlock(&fd_lock);
		return true;
	}
	struct client *c = NULL;
	for (int i = 0; i < CTL_CLIENTS && !c; i++)
		if (ctl->clients[i].state == C_FREE)
			c = &ctl->clients[i];
	if (!c) {
		static const char busy[] = "error busy\n";
		if (send(fd, busy, sizeof(busy) - 1, send_flags) < 0) {
			/* (closed all the same) */
		}
		close(fd);
		pthread_mutex_unlock(&fd_lock);
		return true;
	}
	client_clear(c, fd);
	to_read(c);
	pthread_mutex_unlock(&fd_lock);
	return true;
}

/* When every slot is taken: free those whose peer has closed its end
 * (nothing sent to it can arrive), so that a burst of connections opened
 * and dropped does not turn a live client away before the next round. */
static void reclaim_gone(void)
{
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (ctl->clients[i].state == C_FREE)
			return;
	for (int i = 0; i < CTL_CLIENTS; i++) {
		struct client *c = &ctl->clients[i];
		struct pollfd p = {.fd = c->fd, .events = 0};
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
			client_drop(c);
	}
}

static void accept_all(void)
{
	for (int round = 0; round < CTL_ACCEPT_ROUND; round++) {
		reclaim_gone();
		if (!accept_one())
			return;
	}
}

/* Read what @c sent, when it waits for a command and has none buffered. */
static void client_read(struct client *c)
{
	if (c->state != C_READ || c->in_pos < c->in_len || c->eof)
		return;
	ssize_t n = recv(c->fd, c->in, sizeof(c->in), MSG_DONTWAIT);
	if (n > 0) {
		c->in_pos = 0;
		c->in_len = (size_t)n;
	} else if (n == 0) {
		c->eof = true;
	} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
		client_drop(c);
	}
}

/* The thread --------------------------------------------------------------------- */

static int poll_timeout(uint64_t now)
{
	uint64_t next = UINT64_MAX;
	bool slot_free = false;
	for (int k = 0; k < CTL_DUMPS; k++)
		slot_free |= !ctl->dumps[k].used;
	for (int i = 0; i < CTL_CLIENTS; i++) {
		const struct client *c = &ctl->clients[i];
		/* (work left from the last round: no sleep) */
		if ((c->state == C_READ && c->in_pos < c->in_len) ||
		    ((c->state == C_ANSWER || c->state == C_DUMP) && c->writable) ||
		    (c->state == C_WAIT_DUMP && slot_free) ||
		    (c->state == C_WAIT_STATS && ctl->stats_next <= now))
			return 0;
		if (c->state != C_FREE && c->deadline < next)
			next = c->deadline;
		if (c->state != C_FREE && c->until && c->until < next)
			next = c->until;
	}
	if (ctl->accept_pause_until > now && ctl->accept_pause_until < next)
		next = ctl->accept_pause_until;
	if (next == UINT64_MAX)
		return -1; /* idle: sleep until something happens */
	return next <= now ? 0 : next - now > INT32_MAX ? INT32_MAX : (int)(next - now);
}

/* The thread was kept from poll() for @ms (a dump taken, a lock waited
 * for): the clients' clocks did not run meanwhile, but the waiters'. */
static void push_clocks(uint64_t ms)
{
	for (int i = 0; i < CTL_CLIENTS; i++) {
		struct client *c = &ctl->clients[i];
		if (c->state == C_FREE || c->state == C_WAIT_DUMP || c->state == C_WAIT_STATS)
			continue;
		c->deadline += ms;
		if (c->until)
			c->until += ms;
	}
}

/* Whether @c's socket takes bytes now. */
static bool client_ready(const struct client *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLOUT};
	return poll(&p, 1, 0) == 1 && (p.revents & p.events);
}

/* Drop the clients past their bounds; a waiter past its own is answered. */
static void apply_deadlines(uint64_t now)
{
	for (int i = 0; i < CTL_CLIENTS; i++) {
		struct client *c = &ctl->clients[i];
		if (c->state == C_FREE || c->state == C_WAIT_STATS)
			continue;
		if (c->state == C_WAIT_DUMP) {
			if (now >= c->deadline)
				answer(c, "error dump: no turn within 60 s\n");
			continue;
		}
		enum ctl_verdict v = ctl_overdue(now, c->deadline, c->until, false);
		if (v == CTL_KEEP)
			continue;
		/* (a sender whose socket takes bytes: the client did its part,
		 * the thread was late; it is served next round) */
		bool ready = c->state != C_READ && client_ready(c);
		if (ctl_overdue(now, c->deadline, c->until, ready) == CTL_RETRY) {
			c->writable = true;
			continue;
		}
		client_drop(c);
	}
}

static void __attribute__((noinline)) serve(void)
{
	struct pollfd pfd[2 + CTL_CLIENTS];
	int who[2 + CTL_CLIENTS] = {0};
	while (!atomic_load(&quit_asked)) {
		uint64_t now = now_ms();
		int n = 0;
		pfd[n++] = (struct pollfd){.fd = wake_fd[0], .events = POLLIN};
		if (ctl->accept_pause_until <= now)
			pfd[n++] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
		int first_client = n;
		for (int i = 0; i < CTL_CLIENTS; i++) {
			struct client *c = &ctl->clients[i];
			if (c->state == C_FREE)
				continue;
			short ev = 0;
			if (c->state == C_READ && c->in_pos == c->in_len && !c->eof)
				ev |= POLLIN;
			if ((c->state == C_ANSWER || c->state == C_DUMP) && !c->writable)
				ev |= POLLOUT;
			who[n] = i;
			pfd[n++] = (struct pollfd){.fd = c->fd, .events = ev};
		}
		int r = poll(pfd, (nfds_t)n, poll_timeout(now));
		uint64_t woke = now_ms();
		if (r < 0) {
			struct timespec ts = {0, 10000000}; /* (ENOMEM: try again soon) */
			nanosleep(&ts, NULL);
			continue;
		}
		if (pfd[0].revents) {
			char b[16];
			while (read(wake_fd[0], b, sizeof(b)) > 0)
				;
			continue; /* (quit_asked is looked at) */
		}
		if (first_client == 2 && (pfd[1].revents & POLLIN))
			accept_all();
		for (int k = first_client; k < n; k++) {
			struct client *c = &ctl->clients[who[k]];
			short re = pfd[k].revents;
			if (!re || c->fd != pfd[k].fd)
				continue;
			if (re & (POLLERR | POLLNVAL)) {
				client_drop(c);
				continue;
			}
			if (re & POLLOUT)
				c->writable = true;
			if (re & POLLIN)
				client_read(c);
			else if ((re & POLLHUP) && c->state != C_FREE)
				client_drop(c); /* gone: nothing can reach it */
		}
		for (int round = 0; round < 4 * CTL_CLIENTS; round++) {
			bool changed = false;
			for (int i = 0; i < CTL_CLIENTS; i++)
				changed |= client_advance(&ctl->clients[i]);
			changed |= dumps_start();
			if (!changed)
				break;
		}
		now = now_ms();
		if (now - woke >= CTL_BLOCKED_MS)
			push_clocks(now - woke);
		apply_deadlines(now);
	}
}

static long futex_u(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, (unsigned *)(uintptr_t)addr, op, val, ts, NULL, 0);
}

void control_thread_wait_started(void)
{
	for (int i = 0; i < 5000 && atomic_load(&starting); i++) {
		struct timespec ts = {0, 1000000};
		futex_u(&starting, FUTEX_WAIT_PRIVATE, 1, &ts);
	}
}

static void *control_main(void *arg)
{
	(void)arg;
	hook_busy = 1; /* nothing this thread allocates is the program's */
	prctl(PR_SET_NAME, "leaksnap-ctl"); /* (from inside: see dump_main) */
	atomic_store(&control_thread_tid, (int)syscall(SYS_gettid));
	/* below this frame the thread holds nothing of the program's */
	sigset_t set;
	atomic_store(&control_thread_stack, (uintptr_t)&set);
	if (!hook_cfg.reachability)
		reach_learn_thread_layout(); /* (the dump thread does it otherwise) */
	atomic_store(&starting, 0);
	futex_u(&starting, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	sigfillset(&set);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	ctl_sock_sweep(); /* (what forked children left: they never unlink at _exit) */
	serve();
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (ctl->clients[i].state != C_FREE)
			client_drop(&ctl->clients[i]);
	atomic_store(&control_thread_stack, 0);
	atomic_store(&control_thread_tid, 0);
	return NULL;
}

/* Every slot free, no dump held (the fds -1: see client_clear). */
static void ctl_clear(void)
{
	memset(ctl, 0, sizeof(*ctl));
	for (int i = 0; i < CTL_CLIENTS; i++)
		client_clear(&ctl->clients[i], -1);
}

/* Close the listener and the wake pipe (under fd_lock). */
static void close_own_fds(void)
{
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	for (int i = 0; i < 2; i++)
		if (wake_fd[i] >= 0)
			close(wake_fd[i]);
	wake_fd[0] = wake_fd[1] = -1;
}

/* Open the socket and start the thread (hook_busy raised by the caller). */
static void open_and_start(void)
{
	if (!ctl) {
		ctl = hook_map(sizeof(*ctl));
		if (!ctl) {
			hook_report(NULL, LEAKSNAP_HOOK_ENV_CONTROL ": no memory; no control socket");
			return;
		}
	}
	ctl_clear();
	control_read_overflow();
	const char *why;
	pthread_mutex_lock(&fd_lock);
	listen_fd = ctl_sock_open(forked, &why);
	if (listen_fd < 0) {
		pthread_mutex_unlock(&fd_lock);
		if (why)
			hook_report(NULL, LEAKSNAP_HOOK_ENV_CONTROL ": %s: %s", ctl_sock_name, why);
		return;
	}
	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) != 0) {
		int e = errno;
		wake_fd[0] = wake_fd[1] = -1;
		close_own_fds();
		ctl_sock_unlink_ours();
		pthread_mutex_unlock(&fd_lock);
		hook_report(NULL, LEAKSNAP_HOOK_ENV_CONTROL ": %s: %s", ctl_sock_name, strerror(e));
		return;
	}
	pthread_mutex_unlock(&fd_lock);
	atomic_store(&quit_asked, false);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* born with every signal blocked, as the dump thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&starting, 1);
	int rc = pthread_create(&ctl_thread, &attr, control_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		atomic_store(&starting, 0);
		hook_report(NULL, LEAKSNAP_HOOK_ENV_CONTROL ": cannot start the control thread: %s",
			    strerror(rc));
		pthread_mutex_lock(&fd_lock);
		close_own_fds();
		ctl_sock_unlink_ours();
		pthread_mutex_unlock(&fd_lock);
		return;
	}
	thread_made = true;
	control_thread_wait_started();
	atomic_store(&sock_open, true);
}

void control_start(void)
{
	atomic_store(&child_wants, false);
	wanted = hook_cfg.control != HOOK_CONTROL_OFF;
	if (wanted)
		open_and_start();
}

void control_ensure_thread(void)
{
	if (atomic_exchange(&child_wants, false))
		open_and_start();
}

void control_stop(void)
{
	wanted = false;
	atomic_store(&child_wants, false);
	if (thread_made) {
		control_thread_wait_started();
		atomic_store(&quit_asked, true);
		if (write(wake_fd[1], "q", 1) < 0) {
			/* (the pipe is never full: the thread drains it) */
		}
		pthread_join(ctl_thread, NULL);
		thread_made = false;
	}
	atomic_store(&sock_open, false);
	pthread_mutex_lock(&fd_lock);
	close_own_fds();
	ctl_sock_unlink_ours();
	pthread_mutex_unlock(&fd_lock);
	if (ctl)
		for (int k = 0; k < CTL_DUMPS; k++)
			slot_release(k);
	if (reach_ours)
		reach_stop();
	reach_ours = false;
}

void control_end_thread(void)
{
	bool was = wanted;
	if (!thread_made)
		return;
	control_stop();
	wanted = was;
	atomic_store(&child_wants, was);
}

void control_at_exit(void)
{
	ctl_sock_unlink_ours();
}

void control_fork_prepare(void)
{
	pthread_mutex_lock(&fd_lock);
}

void control_fork_parent(void)
{
	pthread_mutex_unlock(&fd_lock);
}

void control_after_fork_child(void)
{
	/* Only this thread came along: what the parent's control had open
	 * is closed here and now (fd_lock held since control_fork_prepare:
	 * every descriptor of the control's is in listen_fd, wake_fd or a
	 * slot that is not free), and the child opens its own later, if
	 * control_start() asked for one, whether this process has a socket
	 * or not (a child that forks before its first allocation). */
	pthread_mutex_init(&fd_lock, NULL);
	forked = true;
	thread_made = false;
	atomic_store(&control_thread_tid, 0);
	atomic_store(&control_thread_stack, 0);
	atomic_store(&starting, 0);
	atomic_store(&sock_open, false);
	ctl_sock_forget(); /* (the parent's to unlink) */
	close_own_fds();
	if (ctl) {
		for (int i = 0; i < CTL_CLIENTS; i++)
			if (ctl->clients[i].state != C_FREE && ctl->clients[i].fd >= 0)
				close(ctl->clients[i].fd);
		for (int k = 0; k < CTL_DUMPS; k++)
			if (!ctl->dumps[k].taking) /* (half made: its memory is let be) */
				slot_release(k);
		ctl_clear();
	}
	if (wanted) {
		atomic_store(&child_wants, true);
		atomic_store(&dump_thread_missing, true);
	}
}

void control_meta(struct buf *meta)
{
	if (!atomic_load(&sock_open))
		return;
	buf_add(meta, "control=", 8);
	buf_add_clean(meta, ctl_sock_name, strlen(ctl_sock_name));
	buf_add(meta, "\n", 1);
}

void control_own_range(uintptr_t range[2])
{
	range[0] = (uintptr_t)ctl;
	range[1] = ctl ? (uintptr_t)(ctl + 1) : 0;
}

size_t control_image_ranges(uintptr_t (*out)[2], size_t cap)
{
	size_t n = 0;
	if (!ctl)
		return 0;
	for (int k = 0; k < CTL_DUMPS; k++) {
		const struct dump_slot *d = &ctl->dumps[k];
		if (!d->used)
			continue;
		const uintptr_t r[][2] = {
			{(uintptr_t)d->img.snap.records, d->img.snap.map_size},
			{(uintptr_t)d->img.maps.p, d->img.maps.cap},
			{(uintptr_t)d->img.meta.p, d->img.meta.cap},
			{(uintptr_t)d->img.reach.map, d->img.reach.map_size},
		};
		for (size_t i = 0; i < sizeof(r) / sizeof(r[0]) && n < cap; i++) {
			if (!r[i][0])
				continue;
			out[n][0] = r[i][0];
			out[n][1] = r[i][0] + r[i][1];
			n++;
		}
	}
	return n;
}
