/* leaksnap record: the dump files of a run -- their names, the directory
 * listing before and after, and the listing while the program runs
 * (record.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "cli.h"
#include "kit_dumpname.h"
#include "record.h"

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------ */

bool record_dump_parse(const char *name, const char *base, uint64_t *pid, uint64_t *num)
{
	struct kit_dump_name dn;
	enum kit_dump_kind kind = kit_dump_name(name, &dn);
	if (kind == KIT_DUMP_OTHER || dn.prefix_len != strlen(base) ||
	    memcmp(name, base, dn.prefix_len) != 0 ||
	    (kind == KIT_DUMP_NUMBERED && dn.num >= RECORD_DUMP_CRASH))
		return false;
	*pid = dn.pid;
	*num = kind == KIT_DUMP_EXIT	? RECORD_DUMP_EXIT
	       : kind == KIT_DUMP_CRASH ? RECORD_DUMP_CRASH
					: dn.num;
	return true;
}

void record_dump_list_release(struct record_dump_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int dump_cmp(const void *a, const void *b)
{
	const struct record_dump *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return strcmp(x->name, y->name);
}

bool record_dump_list_has(const struct record_dump_list *l, const struct record_dump *d)
{
	/* bsearch's base must not be NULL, even for an empty list */
	return l && l->n && bsearch(d, l->v, l->n, sizeof(*l->v), dump_cmp) != NULL;
}

/* Append a copy of @d (unsorted).  0, or ENOMEM. */
static int list_push(struct record_dump_list *l, const struct record_dump *d)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct record_dump *v = realloc(l->v, cap * sizeof(*v));
		if (v == NULL)
			return ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	char *name = strdup(d->name);
	if (name == NULL)
		return ENOMEM;
	l->v[l->n] = *d;
	l->v[l->n++].name = name;
	return 0;
}

static void list_sort(struct record_dump_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), dump_cmp);
}

int record_dump_list_add(struct record_dump_list *into, const struct record_dump_list *l)
{
	int rc = 0;
	for (size_t i = 0; i < l->n && rc == 0; i++)
		rc = list_push(into, &l->v[i]);
	list_sort(into);
	return rc;
}

int record_dump_scan(const struct record_prefix *p, const struct record_dump_list *skip,
		     const struct record_dump_list *skip2, struct record_dump_list *out)
{
	const char *dir = *p->dir ? p->dir : ".";
	DIR *d = opendir(dir);
	if (d == NULL)
		return errno;
	struct dirent *de;
	int rc = 0;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		struct record_dump dn = {de->d_name, 0, 0};
		if (!record_dump_parse(de->d_name, p->base, &dn.pid, &dn.num) ||
		    record_dump_list_has(skip, &dn) || record_dump_list_has(skip2, &dn))
			continue;
		/* Only regular files: the hook never publishes anything else. */
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if ((rc = list_push(out, &dn)) != 0)
			break;
		errno = 0;
	}
	if (rc == 0 && errno != 0)
		rc = errno;
	closedir(d);
	list_sort(out);
	return rc;
}

void record_dump_list_print(const struct record_prefix *p, const struct record_dump_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t len = strlen(p->dir) + strlen(l->v[i].name) + 1;
		char *path = malloc(len);
		if (path == NULL) {
			cli_warn(l->v[i].name, "out of memory");
			continue;
		}
		snprintf(path, len, "%s%s", p->dir, l->v[i].name);
		struct leaksnap_error err;
		struct leaksnap_snapshot *s = leaksnap_snapshot_open(path, NULL, &err);
		if (s == NULL) {
			cli_input_error(&err);
			char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
			const char *msg = leaksnap_error_format(&err, buf, sizeof(buf));
			size_t slen = strlen(err.source);
			/* "SOURCE: what" -> "SOURCE: warning: what". */
			if (slen && strncmp(msg, err.source, slen) == 0 && msg[slen] == ':')
				cli_warn(err.source, "%s", msg + slen + 2);
			else
				cli_warn(path, "%s", msg);
		} else {
			char totals[160];
			cli_dump_totals(s, totals, sizeof(totals));
			cli_fail(NULL, "wrote %s: %s", path, totals);
			cli_print_warnings(s);
			leaksnap_snapshot_close(s);
		}
		free(path);
	}
	fflush(stderr);
}

/* ------------------------------------------------------------------------
 * While the program runs
 * ------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void record_watch_start(struct record_watch *w, const struct record_prefix *p,
			const struct record_dump_list *before)
{
	struct record_dump_list empty = RECORD_DUMP_LIST_INIT;
	w->p = p;
	w->before = before;
	w->listed = empty;
	w->dirty = false;
	w->looked = false;
	w->first_look_ns = now_ns() + (uint64_t)RECORD_FIRST_LOOK_MS * 1000000u;
	/* The hook publishes a dump with link() or a rename: IN_CREATE or
	 * IN_MOVED_TO in the directory. */
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd >= 0 &&
	    inotify_add_watch(w->fd, *p->dir ? p->dir : ".", IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
		close(w->fd);
		w->fd = -1;
	}
}

int record_watch_fd(const struct record_watch *w)
{
	return w->fd;
}

int record_watch_timeout(const struct record_watch *w)
{
	if (!w->looked) {
		uint64_t now = now_ns();
		return now >= w->first_look_ns ? 0
					       : (int)((w->first_look_ns - now) / 1000000u) + 1;
	}
	/* (the drop box is looked into by polling) */
	return w->fd >= 0 && !w->p->drop ? -1 : RECORD_POLL_MS;
}

/* Read the inotify events: whether one names a dump (or events were lost). */
static bool events_name_a_dump(struct record_watch *w)
{
	_Alignas(struct inotify_event) char buf[4096];
	bool dump = false;
	uint64_t pid, num;
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n <= 0)
			return dump;
		for (char *at = buf; at < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)at;
			if ((ev->mask & IN_Q_OVERFLOW) ||
			    (ev->len && record_dump_parse(ev->name, w->p->base, &pid, &num)))
				dump = true;
			at += sizeof(*ev) + ev->len;
		}
	}
}

void record_watch_step(struct record_watch *w, bool ready)
{
	if (ready && w->fd >= 0 && events_name_a_dump(w))
		w->dirty = true;
	if (record_drop_collect(w->p) > 0)
		w->dirty = true;
	if (w->fd < 0)
		w->dirty = true; /* polling: look every time */
	if (!w->looked) {
		if (now_ns() < w->first_look_ns)
			return;
		w->looked = w->dirty = true;
	}
	if (!w->dirty)
		return;
	w->dirty = false;
	struct record_dump_list found = RECORD_DUMP_LIST_INIT;
	/* an error (the directory gone) is said once, at the end */
	if (record_dump_scan(w->p, w->before, &w->listed, &found) == 0) {
		record_dump_list_print(w->p, &found);
		/* (out of memory: a dump not kept is listed again at the end) */
		(void)record_dump_list_add(&w->listed, &found);
	}
	record_dump_list_release(&found);
}

void record_watch_release(struct record_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	record_dump_list_release(&w->listed);
}
