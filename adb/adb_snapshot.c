/* leaksnap adb snapshot: heap snapshots of a running app, taken on the
 * device (am dumpheap -n with malloc_debug, the hook's dump signal, 47,
 * with the hook),
 * pulled under names that never replace a file, the device copies
 * removed; or (--socket) streamed from the hook's control socket through
 * adb forward, with no file on the device at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>
#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>

#include "adb.h"
#include "control.h"
#include "kit_publish.h"
#include "kit_run.h"

#define PATH_LEN 4400 /* local paths: --out (at most 4000 bytes) and a name */

struct target {
	char name[256];     /* the local file names' first part */
	const char *app;    /* the package for run-as, or NULL (native, or root) */
	long pid;
	bool hook;          /* else malloc_debug */
	char out[512];      /* hook: LEAKSNAP_OUT */
	size_t out_long;    /* hook: LEAKSNAP_OUT's length when it is too long here */
};

#define OUT_MAX 400 /* the longest LEAKSNAP_OUT taken (plain_path) */

/* A path we will quote into device commands and split into directory and
 * name: absolute, plain characters, no "..". */
static bool plain_path(const char *s)
{
	if (s[0] != '/' || strstr(s, "/../") || strstr(s, "/./") || strlen(s) > OUT_MAX)
		return false;
	size_t n = strlen(s);
	if (n >= 3 && strcmp(s + n - 3, "/..") == 0)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-' ||
		      *s == '/' || *s == '~' || *s == '='))
			return false;
	return true;
}

/* The value of @key (up to a space or NUL) in @text. */
static bool find_value(const char *text, size_t len, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl <= len; i++) {
		if ((i == 0 || text[i - 1] == ' ' || text[i - 1] == '\0') &&
		    memcmp(text + i, key, kl) == 0) {
			size_t n = 0;
			while (i + kl + n < len && text[i + kl + n] != ' ' &&
			       text[i + kl + n] != '\0' && text[i + kl + n] != '\n')
				n++;
			if (n >= size)
				return false;
			memcpy(out, text + i + kl, n);
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

/* The hook's prefix as it takes it from @text (an environ, or a wrap
 * property value): LEAKSNAP_OUT; unset, empty or too long for it, its
 * default (the in-app build's for an app: its data directory). */
static void out_from(struct target *t, const char *text, size_t len, bool inapp)
{
	static char out[LEAKSNAP_HOOK_OUT_MAX + 2];
	if (inapp && t->app)
		snprintf(t->out, sizeof(t->out), LEAKSNAP_HOOK_ANDROID_INAPP_APP_OUT, t->app);
	else
		snprintf(t->out, sizeof(t->out), LEAKSNAP_HOOK_ANDROID_DEFAULT_OUT);
	t->out_long = 0;
	if (find_value(text, len, LEAKSNAP_HOOK_ENV_OUT "=", out, sizeof(out)) && *out) {
		size_t n = strlen(out);
		if (n > OUT_MAX && n <= LEAKSNAP_HOOK_OUT_MAX)
			t->out_long = n;
		else if (n <= OUT_MAX)
			memcpy(t->out, out, n + 1);
	}
}

/* Decide the mode from @text (a wrap property value, or an environ). */
static void mode_from(struct target *t, const char *text, size_t len, bool *md, bool *hook)
{
	char v[512];
	*md = find_value(text, len, "LIBC_DEBUG_MALLOC_OPTIONS=", v, sizeof(v)) &&
	      strstr(v, "backtrace");
	*hook = find_value(text, len, "LD_PRELOAD=", v, sizeof(v)) && strstr(v, "leakhook");
	if (*hook)
		out_from(t, text, len, false);
}

/* /proc/PID/@name of the target, read as its app when it is one; nonzero
 * (said) on failure, @r then freed. */
static int proc_file(struct adb *a, const struct target *t, const char *name,
		     struct adb_result *r)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/%s", t->pid, name);
	if (adb_cat(a, t->app, path, ADB_LARGE, r)) {
		adb_result_free(r);
		return -1;
	}
	return 0;
}

/* The process: @o's package (its first pid) or pid (named by its command
 * line: a package, else the program's base name, else "pid"). */
static int target_process(struct adb *a, const struct adb_snapshot_opts *o, struct target *t)
{
	struct adb_result r = {0};
	if (o->package) {
		snprintf(t->name, sizeof(t->name), "%s", o->package);
		if (adb_pidof(a, o->package, &t->pid))
			return -1;
		if (!t->pid)
			return adb_fail("%s is not running (start it, or 'leaksnap adb enable %s')",
					o->package, o->package);
		t->app = o->package;
		return 0;
	}
	t->pid = o->pid;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "cat /proc/%ld/cmdline", t->pid);
	if (adb_shell(a, cmd, ADB_SMALL, 30, true, &r)) {
		adb_result_free(&r);
		return -1;
	}
	if (r.status != 0 || r.out_len == 0) {
		adb_result_free(&r);
		return adb_fail("no process %ld on the device", t->pid);
	}
	/* "com.acme.app", "com.acme.app:service" or "/data/local/tmp/prog" */
	char *colon = strchr(r.out, ':');
	if (colon)
		*colon = '\0';
	if (adb_package_valid(r.out)) {
		snprintf(t->name, sizeof(t->name), "%s", r.out);
		t->app = t->name;
	} else {
		const char *base = strrchr(r.out, '/') ? strrchr(r.out, '/') + 1 : r.out;
		size_t n = 0;
		for (; base[n] && n < 64; n++)
			if (!((base[n] >= 'a' && base[n] <= 'z') ||
			      (base[n] >= 'A' && base[n] <= 'Z') ||
			      (base[n] >= '0' && base[n] <= '9') || base[n] == '_' ||
			      base[n] == '-'))
				break;
		snprintf(t->name, sizeof(t->name), "%.*s", (int)n, base);
		if (n == 0 || base[n])
			snprintf(t->name, sizeof(t->name), "pid");
	}
	adb_result_free(&r);
	return 0;
}

/* malloc_debug or the hook: from the app's wrap property, else the
 * process's environment, else (malloc_debug for the whole device) its
 * maps. */
static int target_mode(struct adb *a, struct target *t, bool *md, bool *hook)
{
	struct adb_result r = {0};
	*md = *hook = false;
	if (t->app) {
		char prop[300], cmd[400];
		adb_wrap_prop(a, t->app, prop, sizeof(prop));
		snprintf(cmd, sizeof(cmd), "getprop '%s'", prop);
		if (adb_shell(a, cmd, ADB_SMALL, 30, false, &r)) {
			adb_result_free(&r);
			return -1;
		}
		mode_from(t, r.out, r.out_len, md, hook);
		adb_result_free(&r);
	}
	if (!*md && !*hook) {
		if (proc_file(a, t, "environ", &r))
			return -1;
		mode_from(t, r.out, r.out_len, md, hook);
		adb_result_free(&r);
	}
	if (!*md && !*hook) {
		/* malloc_debug enabled for the whole device (libc.debug.malloc.*
		 * properties), and the in-app collector an app loaded itself
		 * (docs/inapp.md), show only in the maps */
		if (proc_file(a, t, "maps", &r))
			return -1;
		*md = strstr(r.out, "/libc_malloc_debug.so\n") != NULL;
		bool inapp = strstr(r.out, "/" LEAKSNAP_HOOK_INAPP_LIB "\n") != NULL;
		adb_result_free(&r);
		if (!*md && inapp) {
			*hook = true;
			/* its prefix: LEAKSNAP_OUT in the environment (a native
			 * program started with LEAKSNAP_LIBS), else its default */
			if (proc_file(a, t, "environ", &r))
				return -1;
			out_from(t, r.out, r.out_len, true);
			adb_result_free(&r);
		}
	}
	if (!*md && !*hook)
		return adb_fail("%s (pid %ld) runs neither malloc_debug nor libleakhook.so (run "
				"'leaksnap adb enable PACKAGE' first)",
				t->name, t->pid);
	return 0;
}

/* Whether the process catches @sig: its SigCgt mask in /proc/PID/status.
 * 1 yes, 0 no, -1 not known (no such line). */
static int catches(const char *status, int sig)
{
	const char *l = status ? strstr(status, "\nSigCgt:") : NULL;
	if (!l)
		return -1;
	l += 8;
	while (*l == ' ' || *l == '\t')
		l++;
	size_t n = 0;
	while ((l[n] >= '0' && l[n] <= '9') || (l[n] >= 'a' && l[n] <= 'f') ||
	       (l[n] >= 'A' && l[n] <= 'F'))
		n++;
	/* a hex mask, bit N-1 for signal N, the lowest bits last */
	size_t digit = (size_t)(sig - 1) / 4;
	if (n == 0 || digit >= n)
		return n == 0 ? -1 : 0;
	char c = l[n - 1 - digit];
	int v = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
	return (v >> ((sig - 1) % 4)) & 1;
}

/* Who reads and signals: root directly, else the app through run-as
 * (which must work for the hook's signal and files). */
static int target_access(struct adb *a, struct target *t)
{
	if (a->root) {
		t->app = NULL; /* root reads and signals directly */
		return 0;
	}
	if (!t->hook || !t->app)
		return 0;
	/* signals and the app's files go through run-as */
	struct adb_result r = {0};
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "run-as '%s' id -u", t->app);
	if (adb_shell(a, cmd, ADB_SMALL, 30, true, &r)) {
		adb_result_free(&r);
		return -1;
	}
	int st = r.status;
	char why[512];
	snprintf(why, sizeof(why), "%s", adb_first_line(r.err));
	adb_result_free(&r);
	if (st != 0)
		return adb_fail("signalling pid %ld and reading its dumps need a debuggable app "
				"or a root shell (adb root): %s",
				t->pid, *why ? why : "run-as failed");
	return 0;
}

/* The wrap property says how the app starts next, not how this process
 * started: the dump signal ends a process without the hook, so the hook
 * must be in its maps first. */
static int target_hook_loaded(struct adb *a, const struct target *t)
{
	struct adb_result r = {0};
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/maps", t->pid);
	if (adb_cat(a, t->app, path, ADB_LARGE, &r)) {
		adb_result_free(&r);
		return -1;
	}
	bool loaded = r.out && strstr(r.out, "leakhook") != NULL;
	adb_result_free(&r);
	if (!loaded)
		return adb_fail("%s (pid %ld) does not map libleakhook.so (started before "
				"'leaksnap adb enable', or the hook did not load): signal %d "
				"would end it, so none is sent",
				t->name, t->pid, LEAKSNAP_HOOK_ANDROID_SIG_DUMP);
	/* Mapped is not enough: an in-app collector not started, or a hook
	 * that LEAKSNAP_ONLY left inert, has no handler for the signal. */
	snprintf(path, sizeof(path), "/proc/%ld/status", t->pid);
	if (adb_cat(a, t->app, path, ADB_SMALL, &r)) {
		adb_result_free(&r);
		return -1;
	}
	int caught = catches(r.out, LEAKSNAP_HOOK_ANDROID_SIG_DUMP);
	adb_result_free(&r);
	if (caught == 0)
		return adb_fail("%s (pid %ld) maps the hook but does not catch signal %d (the "
				"in-app collector is not started, or LEAKSNAP_ONLY left the hook "
				"inert): signal %d would end it, so none is sent",
				t->name, t->pid, LEAKSNAP_HOOK_ANDROID_SIG_DUMP,
				LEAKSNAP_HOOK_ANDROID_SIG_DUMP);
	return 0;
}

/* The process to snapshot, how it runs, and how to reach it. */
static int find_target(struct adb *a, const struct adb_snapshot_opts *o, struct target *t)
{
	memset(t, 0, sizeof(*t));
	bool md, hook;
	if (target_process(a, o, t) || target_mode(a, t, &md, &hook))
		return -1;
	t->hook = hook;
	if (hook && t->out_long)
		return adb_fail(LEAKSNAP_HOOK_ENV_OUT
				" of pid %ld is %zu bytes long: this tool takes "
				"up to %d",
				t->pid, t->out_long, OUT_MAX);
	if (hook && !plain_path(t->out))
		return adb_fail(LEAKSNAP_HOOK_ENV_OUT
				" '%s' of pid %ld is not a plain absolute path",
				t->out, t->pid);
	if (target_access(a, t))
		return -1;
	return hook ? target_hook_loaded(a, t) : 0;
}

/* A device command run as the app (run-as) when t->app is set. */
static int as_app(const struct adb *a, const struct target *t, const char *const *args,
		  bool quiet, struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *v[12];
	size_t n = 0;
	if (t->app) {
		v[n++] = "run-as";
		v[n++] = t->app;
	}
	for (size_t i = 0; args[i] && n < 11; i++)
		v[n++] = args[i];
	v[n] = NULL;
	char *cmd = adb_cmd(NULL, v);
	if (!cmd)
		return adb_fail("out of memory");
	int rc = adb_shell(a, cmd, ADB_SMALL, 60, quiet, r);
	free(cmd);
	return rc;
}

/* Remove the device copies; after a failure (@rc set) quietly, and @rc
 * stays what it was. */
static int remove_device(const struct adb *a, const struct target *t, const char *f1,
			 const char *f2, int rc)
{
	const char *args[] = {"rm", "-f", f1, f2, NULL};
	struct adb q = *a;
	q.silent = rc != 0;
	struct adb_result r = {0};
	int rm = as_app(&q, t, args, false, &r);
	adb_result_free(&r);
	return rc ? rc : rm;
}

/* A temporary file in @dir for a pulled file. */
static int temp_in(const char *dir, char *path, size_t size)
{
	if (snprintf(path, size, "%s/.leaksnap-adb.XXXXXX", dir) >= (int)size)
		return adb_fail_at(dir, "path too long");
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return adb_fail_at(dir, "cannot create a file: %s", strerror(errno));
	kit_temp_mode(fd);
	return fd;
}

/* Copy a device file to the local @fd (exec-out cat, through run-as). */
static int fetch(const struct adb *a, const struct target *t, const char *dev, int fd)
{
	const char *v[] = {"run-as", t->app, "cat", dev, NULL};
	char *cmd = adb_cmd(NULL, t->app ? v : v + 2);
	if (!cmd)
		return adb_fail("out of memory");
	const char *args[] = {"exec-out", cmd, NULL};
	struct adb_result r = {0};
	int rc = adb_run(a, args, fd, ADB_SMALL, 600, false, &r);
	adb_result_free(&r);
	free(cmd);
	return rc;
}

/* A pulled file the readers refuse: said as `leaksnap show` would say it,
 * with where in it, but named by its device path (the local name is a
 * temporary one). */
static int unreadable(const char *dev, const struct leaksnap_error *err)
{
	struct leaksnap_error named = *err;
	snprintf(named.source, sizeof(named.source), "%s", dev);
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	return adb_fail("%s (pulled, but not a readable dump)",
			leaksnap_error_format(&named, buf, sizeof(buf)));
}

/* Check that @tmp is a dump the readers accept. */
static int check_dump(const char *tmp, const char *dev)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open(tmp, NULL, &err);
	if (!s)
		return unreadable(dev, &err);
	leaksnap_snapshot_close(s);
	return 0;
}

/* The hook's dump and its maps file, read together: a pulled copy that
 * carries an error message instead of the file is refused. */
static int check_pair(const char *tmp, const char *dev, const char *tmp_maps,
		      const char *dev_maps)
{
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open(tmp, NULL, &err);
	if (!s)
		return unreadable(dev, &err);
	leaksnap_snapshot_close(s);
	char *text;
	size_t len;
	if (adb_out()->read_maps(tmp_maps, &text, &len))
		return -1;
	struct leaksnap_maps *m = leaksnap_maps_parse(text, len, dev_maps, 1, 0, &err);
	free(text);
	if (!m)
		return adb_fail("%s: pulled, but not a maps file: line %lu: %s", dev_maps, err.line,
				err.text);
	leaksnap_maps_free(m);
	return 0;
}

/* Give the temporaries @tmp[0..n) their names DIR/NAME.PID.K.@ext[i] with
 * the first K >= *next that is free for all; never replaces a file. */
static int publish(const char *dir, const struct target *t, char tmp[][PATH_LEN],
		   const char *const *ext, size_t n, unsigned *next, char *first, size_t size)
{
	for (unsigned k = *next; k < *next + 100000; k++) {
		char names[2][PATH_LEN];
		int how[2] = {0, 0}, r = 0;
		size_t done = 0;
		for (; done < n; done++) {
			snprintf(names[done], sizeof(names[done]), "%s%s%s.%ld.%u.%s",
				 strcmp(dir, ".") ? dir : "", strcmp(dir, ".") ? "/" : "", t->name,
				 t->pid, k, ext[done]);
			if ((r = how[done] = kit_publish_noreplace(tmp[done], names[done])) < 0)
				break;
		}
		if (done == n) {
			for (size_t i = 0; i < n; i++)
				if (how[i] == 0)
					unlink(tmp[i]);
			*next = k + 1;
			snprintf(first, size, "%s", names[0]);
			return 0;
		}
		/* the pair goes back: a link is removed, a rename undone */
		for (size_t i = 0; i < done; i++)
			if (how[i] == 0)
				unlink(names[i]);
			else
				rename(names[i], tmp[i]);
		if (r != -EEXIST)
			return adb_fail_at(names[done], "%s", strerror(-r));
	}
	return adb_fail_at(dir, "no free file name for %s.%ld", t->name, t->pid);
}

/* The line of am's output that says it failed, or NULL. */
static const char *am_error(const char *out)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t n = strcspn(l, "\r\n");
		if (strncmp(l, "Error:", 6) == 0 ||
		    (memmem(l, n, "Exception", 9) && strncmp(l, "java.", 5) == 0))
			return l;
	}
	return NULL;
}

/* Whether the device file @dev holds bionic's "not available" advice. */
static bool not_available(struct adb *a, const char *dev)
{
	struct adb_result r = {0};
	bool na = adb_cat(a, NULL, dev, ADB_SMALL, &r) == 0 && r.out &&
		  strncmp(r.out, "Native heap dump not available", 30) == 0;
	adb_result_free(&r);
	return na;
}

static int snap_malloc_debug(struct adb *a, const struct target *t, unsigned i, const char *dir,
			     unsigned *next, char *local, size_t size)
{
	char dev[400], pidbuf[32];
	snprintf(dev, sizeof(dev), "/data/local/tmp/leaksnap.%s.%ld.%u.txt", t->name, t->pid, i);
	snprintf(pidbuf, sizeof(pidbuf), "%ld", t->pid);
	struct adb_result r = {0};
	const char *rm[] = {"rm", "-f", dev, NULL};
	char *cmd = adb_cmd(NULL, rm);
	int rc = cmd ? adb_shell(a, cmd, ADB_SMALL, 60, false, &r) : adb_fail("out of memory");
	free(cmd);
	adb_result_free(&r);
	if (rc)
		return rc;
	const char *dump[] = {"am", "dumpheap", "-n", pidbuf, dev, NULL};
	cmd = adb_cmd(NULL, dump);
	rc = cmd ? adb_shell(a, cmd, ADB_SMALL, 60, false, &r) : adb_fail("out of memory");
	free(cmd);
	/* Before Android 7 adb shell has no exit status: a failure of am shows
	 * only in what it prints ("Error: ...", "java.lang....Exception: ..."). */
	const char *said_err = rc ? NULL : am_error(r.out);
	if (said_err)
		rc = adb_fail("%.*s", (int)strcspn(said_err, "\r\n"), said_err);
	adb_result_free(&r);
	if (rc)
		return rc;
	/* The app writes the file after am returns: wait for its END line. */
	const char *tail[] = {"tail", "-n", "1", dev, NULL};
	cmd = adb_cmd(NULL, tail);
	if (!cmd)
		return adb_fail("out of memory");
	double start = kit_now();
	bool said = false;
	char last[128] = "";
	for (;;) {
		rc = adb_shell(a, cmd, ADB_SMALL, 60, true, &r);
		bool end = rc == 0 && r.status == 0 && strcmp(adb_first_line(r.out), "END") == 0;
		if (rc == 0)
			snprintf(last, sizeof(last), "%s", adb_first_line(r.out));
		adb_result_free(&r);
		if (rc || end)
			break;
		/* bionic's answer when the process runs without malloc_debug's
		 * backtrace option: a few lines of advice, no dump */
		if ((strncmp(last, "# adb shell", 11) == 0 ||
		     strncmp(last, "$ adb shell", 11) == 0) &&
		    not_available(a, dev)) {
			rc = adb_fail(
				"pid %ld does not run malloc_debug with its backtrace option: %s "
				"says 'Native heap dump not available' (was the app started before "
				"`leaksnap adb enable`, or by another way than the zygote?)",
				t->pid, dev);
			break;
		}
		if (kit_now() - start > a->timeout) {
			rc = adb_fail("pid %ld did not finish %s within %.0f s (last line: '%s')",
				      t->pid, dev, a->timeout, last);
			break;
		}
		if (!said) {
			adb_progress("waiting for pid %ld to write %s", t->pid, dev);
			said = true;
		}
		kit_sleep(0.25);
	}
	free(cmd);
	char tmp[1][PATH_LEN];
	int fd = rc ? -1 : temp_in(dir, tmp[0], sizeof(tmp[0]));
	if (fd >= 0) {
		close(fd);
		const char *pull[] = {"pull", dev, tmp[0], NULL};
		rc = adb_run(a, pull, -1, ADB_SMALL, 600, false, &r);
		adb_result_free(&r);
		if (!rc)
			rc = check_dump(tmp[0], dev);
		static const char *const ext[] = {"txt"};
		if (!rc)
			rc = publish(dir, t, tmp, ext, 1, next, local, size);
		if (rc)
			unlink(tmp[0]);
	} else if (!rc) {
		rc = -1;
	}
	return remove_device(a, &(struct target){.app = NULL}, dev, dev, rc);
}

/* The numbers n of STEM.PID.n.maps in the hook's directory, each with the
 * number of digits its name has (the hook pads them to 4, LEAKSNAP_HOOK_DUMP_NAME;
 * hooks before that did not): nums[i] = n | digits << HOOK_DIGITS_SHIFT. */
#define HOOK_DIGITS_SHIFT 28
#define HOOK_NUM_MASK ((1u << HOOK_DIGITS_SHIFT) - 1)
static int hook_list(const struct adb *a, const struct target *t, unsigned *nums, size_t cap,
		     size_t *count)
{
	char dir[512], stem[512];
	const char *slash = strrchr(t->out, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash == t->out ? 1 : (int)(slash - t->out), t->out);
	snprintf(stem, sizeof(stem), "%s.%ld.", slash + 1, t->pid);
	const char *ls[] = {"ls", "-a", dir, NULL}; /* -a: LEAKSNAP_OUT may end in '/' */
	struct adb_result r = {0};
	*count = 0;
	if (as_app(a, t, ls, false, &r)) {
		adb_result_free(&r);
		return -1;
	}
	size_t sl = strlen(stem);
	for (char *line = strtok(r.out, "\r\n"); line; line = strtok(NULL, "\r\n")) {
		char *end;
		if (strncmp(line, stem, sl) != 0 || line[sl] < '0' || line[sl] > '9')
			continue;
		unsigned long n = strtoul(line + sl, &end, 10);
		size_t digits = (size_t)(end - (line + sl));
		if (strcmp(end, LEAKSNAP_HOOK_MAPS_SUFFIX) == 0 && n >= 1 && n <= HOOK_NUM_MASK &&
		    digits <= 9 && *count < cap)
			nums[(*count)++] = (unsigned)n | (unsigned)digits << HOOK_DIGITS_SHIFT;
	}
	adb_result_free(&r);
	return 0;
}

static int snap_hook(struct adb *a, const struct target *t, const char *dir, unsigned *next,
		     char *local, size_t size)
{
	static unsigned before[4096], after[4096];
	size_t nb, na;
	if (hook_list(a, t, before, 4096, &nb))
		return -1;
	char pidbuf[32], sigbuf[16];
	snprintf(pidbuf, sizeof(pidbuf), "%ld", t->pid);
	snprintf(sigbuf, sizeof(sigbuf), "-%d", LEAKSNAP_HOOK_ANDROID_SIG_DUMP);
	const char *kill[] = {"kill", sigbuf, pidbuf, NULL};
	struct adb_result r = {0};
	int rc = as_app(a, t, kill, false, &r);
	adb_result_free(&r);
	if (rc)
		return rc;
	double start = kit_now();
	bool said = false;
	unsigned found = 0;
	while (!found) {
		if (hook_list(a, t, after, 4096, &na))
			return -1;
		for (size_t i = 0; i < na; i++) {
			bool old = false;
			for (size_t j = 0; j < nb && !old; j++)
				old = before[j] == after[i];
			if (!old && (!found || (after[i] & HOOK_NUM_MASK) < (found & HOOK_NUM_MASK)))
				found = after[i];
		}
		if (found)
			break;
		if (kit_now() - start > a->timeout)
			return adb_fail("pid %ld wrote no new dump as %s.%ld.N.dump within %.0f s",
					t->pid, t->out, t->pid, a->timeout);
		if (!said) {
			adb_progress("waiting for pid %ld to write %s.%ld.N.dump", t->pid,
				t->out, t->pid);
			said = true;
		}
		kit_sleep(0.25);
	}
	/* The hook publishes the maps after the dump: both are complete. */
	char dev[2][PATH_LEN], tmp[2][PATH_LEN];
	static const char *const ext[] = {"dump", "maps"};
	static const char *const suffix[] = {LEAKSNAP_HOOK_DUMP_SUFFIX, LEAKSNAP_HOOK_MAPS_SUFFIX};
	int fds[2] = {-1, -1};
	for (int i = 0; i < 2; i++)
		snprintf(dev[i], sizeof(dev[i]), "%s.%ld.%0*u%s", t->out, t->pid,
			 (int)(found >> HOOK_DIGITS_SHIFT), found & HOOK_NUM_MASK, suffix[i]);
	for (int i = 0; i < 2 && !rc; i++) {
		fds[i] = temp_in(dir, tmp[i], sizeof(tmp[i]));
		if (fds[i] < 0)
			rc = -1;
	}
	for (int i = 0; i < 2 && !rc; i++)
		rc = fetch(a, t, dev[i], fds[i]);
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0 && close(fds[i]) != 0 && !rc)
			rc = adb_fail_at(tmp[i], "%s", strerror(errno));
	if (!rc)
		rc = check_pair(tmp[0], dev[0], tmp[1], dev[1]);
	if (!rc)
		rc = publish(dir, t, tmp, ext, 2, next, local, size);
	for (int i = 0; rc && i < 2; i++)
		if (fds[i] >= 0)
			unlink(tmp[i]);
	return remove_device(a, t, dev[0], dev[1], rc);
}

/* adb forward tcp:0 localabstract:leaksnap.PID: the port adb chose (it
 * prints it). */
static int forward_open(const struct adb *a, long pid, unsigned *port)
{
	char remote[64];
	snprintf(remote, sizeof(remote), "localabstract:" CONTROL_ABSTRACT_PREFIX "%ld", pid);
	const char *args[] = {"forward", "tcp:0", remote, NULL};
	struct adb_result r = {0};
	int rc = adb_run(a, args, -1, ADB_SMALL, 30, false, &r);
	if (rc == 0) {
		const char *l = adb_first_line(r.out);
		char *end;
		unsigned long v = strtoul(l, &end, 10);
		if (*l < '0' || *l > '9' || *end || v == 0 || v > 65535)
			rc = adb_fail("adb forward tcp:0 %s printed no port: '%s'", remote, l);
		else
			*port = (unsigned)v;
	}
	adb_result_free(&r);
	return rc;
}

/* adb forward --remove tcp:PORT, always; quietly after a failure (@rc set),
 * and @rc stays what it was. */
static int forward_remove(const struct adb *a, unsigned port, int rc)
{
	char local[32];
	snprintf(local, sizeof(local), "tcp:%u", port);
	const char *args[] = {"forward", "--remove", local, NULL};
	struct adb q = *a;
	q.silent = rc != 0;
	struct adb_result r = {0};
	int rm = adb_run(&q, args, -1, ADB_SMALL, 30, false, &r);
	adb_result_free(&r);
	return rc ? rc : rm;
}

/* One snapshot streamed from the control socket forwarded to @port. */
static int snap_socket(const struct adb *a, const struct target *t, unsigned port,
		       const char *dir, unsigned *next, char *local, size_t size)
{
	char subject[64], tmp[1][PATH_LEN];
	snprintf(subject, sizeof(subject), "pid %ld", t->pid);
	struct leaksnap_error err;
	struct control_conn *c;
	LEAKSNAP_OPTS(control_opts, co, .timeout = a->timeout > 0 ? a->timeout : 60);
	if (control_open_tcp(port, subject, &co, &c, &err))
		return adb_fail("%s: %s", err.source, err.text);
	int fd = temp_in(dir, tmp[0], sizeof(tmp[0]));
	if (fd < 0) {
		control_close(c);
		return -1;
	}
	uint64_t bytes;
	int rc = control_dump(c, false, fd, &bytes, &err);
	control_close(c);
	if (rc)
		rc = adb_fail("%s: %s", err.source, err.text);
	if (close(fd) != 0 && !rc)
		rc = adb_fail_at(tmp[0], "%s", strerror(errno));
	char name[128];
	snprintf(name, sizeof(name), "the dump of pid %ld's control socket", t->pid);
	if (!rc)
		rc = check_dump(tmp[0], name);
	static const char *const ext[] = {"dump"};
	if (!rc)
		rc = publish(dir, t, tmp, ext, 1, next, local, size);
	if (rc)
		unlink(tmp[0]);
	return rc;
}

/* --socket: the process and a forward to its socket, then the snapshots;
 * the forward is removed whatever happened. */
static int snapshot_socket(struct adb *a, const struct adb_snapshot_opts *o, struct target *t,
			   char (*files)[PATH_LEN])
{
	memset(t, 0, sizeof(*t));
	unsigned port = 0, next = 1;
	if (target_process(a, o, t) || forward_open(a, t->pid, &port))
		return -1;
	int rc = 0;
	for (unsigned i = 1; i <= o->count && !rc; i++) {
		if (i > 1)
			kit_sleep(o->interval);
		rc = snap_socket(a, t, port, o->out_dir, &next, files[i - 1], sizeof(files[0]));
		if (!rc)
			adb_progress("snapshot %u of %u: %s", i, o->count, files[i - 1]);
	}
	return forward_remove(a, port, rc);
}

int adb_snapshot(struct adb *a, const struct adb_snapshot_opts *o)
{
	struct target t;
	if (strlen(o->out_dir) > 4000)
		return adb_fail_at(o->out_dir, "path too long");
	if (adb_connect(a, NULL) || (!o->socket && find_target(a, o, &t)))
		return -1;
	char(*files)[PATH_LEN] = calloc(o->count, sizeof(*files));
	if (!files)
		return adb_fail("out of memory");
	unsigned next = 1;
	int rc = o->socket ? snapshot_socket(a, o, &t, files) : 0;
	for (unsigned i = 1; i <= o->count && !rc && !o->socket; i++) {
		if (i > 1)
			kit_sleep(o->interval);
		rc = t.hook ? snap_hook(a, &t, o->out_dir, &next, files[i - 1], sizeof(files[0]))
			    : snap_malloc_debug(a, &t, i, o->out_dir, &next, files[i - 1],
						sizeof(files[0]));
		if (!rc)
			adb_progress("snapshot %u of %u: %s", i, o->count, files[i - 1]);
	}
	/* What was pulled, ready for leakdiff (also after a failure). */
	for (unsigned i = 0; i < o->count && files[i][0]; i++)
		adb_result_line("%s", files[i]);
	free(files);
	return rc;
}
