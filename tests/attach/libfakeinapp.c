/* A stand-in for libleakhook-inapp.so in tests/t-attach.sh: the in-app
 * API with the installed header's signatures, which records how it was
 * called instead of collecting.
 *
 * leaksnap_start(opts) writes OUT.PID.fake-start (OUT: opts->out), one
 * line: every field of the options as received, and whether it ran on the
 * process's main thread.  Options' libs set to "fake:exit" end the process
 * (exit status 7) in the call; "fake:einval" makes it fail with EINVAL;
 * "fake:crash" makes it crash (a write to address 8).
 * A second start fails with EALREADY, as the hook's does.
 * leaksnap_dump(NULL) writes OUT.PID.NNNN.dump (N = 1, 2 ...).
 * leaksnap_stop() fails with EINVAL when not started, else returns the
 * number in $FAKE_LEFT (slots left alone; 0 when unset). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leakhook.h"

#define API __attribute__((visibility("default")))

static int started;
static unsigned dumps;
static char out[4096];

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

API int leaksnap_start(const struct leaksnap_options *o)
{
	if (started) {
		errno = EALREADY;
		return -1;
	}
	if (o && o->libs && strcmp(o->libs, "fake:exit") == 0)
		_exit(7);
	if (o && o->libs && strcmp(o->libs, "fake:crash") == 0) {
		volatile int *volatile bad = (volatile int *)(uintptr_t)8;
		*bad = 1;
	}
	if (o && o->libs && strcmp(o->libs, "fake:einval") == 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(out, sizeof(out), "%s", o && o->out ? o->out : "/tmp/leaksnap");
	char path[4200];
	snprintf(path, sizeof(path), "%s.%d.fake-start", out, (int)getpid());
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	if (o == NULL)
		fprintf(f, "opts=NULL");
	else
		fprintf(f, "size=%zu libs=%s frames=%u unwind=%s out=%s interval=%g flags=%u control=%s"
			" sample=%llu",
			o->size, str(o->libs), o->frames, str(o->unwind), str(o->out), o->interval,
			o->flags, str(o->control), (unsigned long long)o->sample);
	fprintf(f, " thread=%s\n", syscall(SYS_gettid) == getpid() ? "main" : "other");
	fclose(f);
	started = 1;
	errno = 0;
	return 0;
}

API int leaksnap_stop(void)
{
	if (!started) {
		errno = EINVAL;
		return -1;
	}
	started = 0;
	const char *left = getenv("FAKE_LEFT");
	return left ? atoi(left) : 0;
}

API int leaksnap_dump(const char *path)
{
	if (!started) {
		errno = EINVAL;
		return -1;
	}
	char name[4200];
	if (path == NULL)
		snprintf(name, sizeof(name), "%s.%d.%04u.dump", out, (int)getpid(), ++dumps);
	else
		snprintf(name, sizeof(name), "%s", path);
	FILE *f = fopen(name, "wx");
	if (f == NULL)
		return -1;
	fprintf(f, "fake dump\n");
	fclose(f);
	return 0;
}
