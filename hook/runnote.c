/* leaksnap hook: what a run of leaksnap record learns from the hook.
 *
 * A dump that cannot be written is said on stderr, which a server sends to
 * its own log, if anywhere: record would not know.  So the hook also sends
 * record one datagram, to the abstract socket record listens on for its run
 * (LEAKSNAP_RUN's last id), which a process that changed its user can reach
 * as well.  And where record made a drop box (LEAKSNAP_DROP), a dump the
 * process may not create under LEAKSNAP_OUT goes there.  Both settings are
 * read once, at start-up; nothing here allocates. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hook_internal.h"

static struct sockaddr_un note_addr;
static socklen_t note_len; /* 0: no run to tell */
static char drop_dir[PATH_MAX];

void hook_runnote_config(void)
{
	note_len = 0;
	drop_dir[0] = '\0';
	const char *run = getenv(LEAKSNAP_HOOK_ENV_RUN);
	if (run && *run) {
		const char *last = strrchr(run, ':');
		last = last ? last + 1 : run;
		memset(&note_addr, 0, sizeof(note_addr));
		note_addr.sun_family = AF_UNIX;
		int n = snprintf(note_addr.sun_path + 1, sizeof(note_addr.sun_path) - 1,
				 LEAKSNAP_HOOK_NOTE_PREFIX "%s", last);
		if (*last && n > 0 && (size_t)n < sizeof(note_addr.sun_path) - 1)
			note_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	}
	const char *drop = getenv(LEAKSNAP_HOOK_ENV_DROP);
	if (drop && drop[0] == '/' && strlen(drop) < sizeof(drop_dir) - NAME_MAX - 2)
		snprintf(drop_dir, sizeof(drop_dir), "%s", drop);
}

void hook_note_write_failure(const char *path, int err)
{
	if (!note_len)
		return;
	int saved = errno;
	char msg[PATH_MAX + 96];
	int n = snprintf(msg, sizeof(msg), LEAKSNAP_HOOK_NOTE_WRITE " %d %u %d %s", (int)getpid(),
			 (unsigned)geteuid(), err, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && n > 0) {
		if (sendto(fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1,
			   MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)&note_addr,
			   note_len) < 0) {
			/* (record is gone, or its queue is full: stderr has it) */
		}
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
}

bool hook_drop_prefix(char *out, size_t size)
{
	if (!drop_dir[0])
		return false;
	const char *base = strrchr(hook_cfg.out, '/');
	base = base ? base + 1 : hook_cfg.out;
	int n = snprintf(out, size, "%s%s%s", drop_dir,
			 drop_dir[strlen(drop_dir) - 1] == '/' ? "" : "/", base);
	return n > 0 && (size_t)n < size;
}
