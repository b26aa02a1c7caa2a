/* leaksnap ctl and watch: a dump received over a process's control socket
 * into a temporary file, checked with the snapshot reader before it gets
 * its name (ctl.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "kit.h"
#include "kit_publish.h"

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
	free(*tmp);
	*tmp = NULL;
	return r;
}
