/* leaksnap ctl and watch: a dump received over a process's control socket
 * into a temporary file, checked with the snapshot reader before it gets
 * its name (ctl.h). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "kit.h"
#include "kit_publish.h"

/* What the SIGINT handler sees: the temporary being written (its name
 * complete while inflight_set), and watch's stop pipe. */
static char inflight[4096];
static volatile sig_atomic_t inflight_set;
static volatile sig_atomic_t sigint_seen;
static int sigint_stop_fd = -1;

static void on_sigint(int sig)
{
	int saved = errno;
	if (sigint_stop_fd >= 0 && !sigint_seen) {
		sigint_seen = 1;
		(void)!write(sigint_stop_fd, "", 1);
		errno = saved;
		return;
	}
	if (inflight_set)
		(void)unlink(inflight);
	/* die of it: delivered again (default action) when the handler
	 * returns, as it is blocked until then */
	signal(sig, SIG_DFL);
	raise(sig);
	errno = saved;
}

void ctl_sigint_catch(int stop_fd, struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigint_seen = 0;
	sigint_stop_fd = stop_fd;
	sigaction(SIGINT, NULL, old);
	if (stop_fd < 0 && old->sa_handler == SIG_IGN)
		return;
	sigaction(SIGINT, &sa, NULL);
}

void ctl_sigint_restore(const struct sigaction *old)
{
	sigaction(SIGINT, old, NULL);
	sigint_stop_fd = -1;
}

static void inflight_name(const char *tmp)
{
	inflight_set = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (strlen(tmp) >= sizeof(inflight))
		return; /* (no such path: the temporary would not have been made) */
	memcpy(inflight, tmp, strlen(tmp) + 1);
	atomic_signal_fence(memory_order_seq_cst);
	inflight_set = 1;
}

void ctl_dump_settled(void)
{
	inflight_set = 0;
	atomic_signal_fence(memory_order_seq_cst);
}

int ctl_fail(const struct leaksnap_error *err)
{
	return cli_fail(err->source[0] ? err->source : NULL, "%s", err->text);
}

int ctl_dump_receive(struct control_conn *c, const char *near, bool reachability, char **tmp,
		     struct leaksnap_snapshot **snap, struct leaksnap_error *err)
{
	*snap = NULL;
	leaksnap_error_clear(err);
	int fd = kit_temp_beside(near, tmp);
	if (fd < 0) {
		kit_error(err, LEAKSNAP_ERR_IO, near, "%s", strerror(errno));
		return CONTROL_E_OTHER;
	}
	inflight_name(*tmp);
	uint64_t bytes;
	int r = control_dump(c, reachability, fd, &bytes, err);
	if (close(fd) != 0 && r == 0) {
		kit_error(err, LEAKSNAP_ERR_IO, near, "%s", strerror(errno));
		r = CONTROL_E_OTHER;
	}
	if (r == 0) {
		/* what came must be a dump the readers accept, and a LEAKSNAP
		 * one with its maps, as the protocol promises */
		struct leaksnap_error rerr;
		struct leaksnap_snapshot *s = leaksnap_snapshot_open(*tmp, NULL, &rerr);
		if (!s) {
			char where[48] = "";
			if (rerr.line)
				snprintf(where, sizeof(where), "line %lu: ", rerr.line);
			else if (rerr.has_offset)
				snprintf(where, sizeof(where), "byte offset %llu: ",
					 (unsigned long long)rerr.offset);
			kit_error(err, LEAKSNAP_ERR_FORMAT, control_subject(c),
				  "the dump received is not readable: %s%s",
				 where, rerr.text[0] ? rerr.text : leaksnap_code_string(rerr.code));
			r = CONTROL_E_OTHER;
		} else if (leaksnap_snapshot_format(s) != LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP) {
			kit_error(err, LEAKSNAP_ERR_FORMAT, control_subject(c),
				  "the dump received is not a LEAKSNAP dump (it reads as %s)",
				 leaksnap_snapshot_format_name(leaksnap_snapshot_format(s)));
			leaksnap_snapshot_close(s);
			r = CONTROL_E_OTHER;
		} else {
			*snap = s;
			return 0;
		}
	}
	unlink(*tmp);
	ctl_dump_settled();
	free(*tmp);
	*tmp = NULL;
	return r;
}
