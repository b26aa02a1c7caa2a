/* leaksnap adb: running adb (over kit_run: an argument vector, no host
 * shell, its output captured with bounds and a time limit); the driver's
 * messages; finding the device; quoting device shell commands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "adb.h"
#include "kit_run.h"

/* The driver's messages --------------------------------------------------- */

static const struct adb_output *output;

void adb_set_output(const struct adb_output *out)
{
	output = out;
}

const struct adb_output *adb_out(void)
{
	return output;
}

/* What the driver says, through the tool's output. */
enum say { SAY_ERROR, SAY_WARNING, SAY_PROGRESS, SAY_RESULT };

static void vsay(enum say what, const char *subject, const char *fmt, va_list ap)
{
	char msg[8192];
	/* (errors and warnings are cut at 1 KiB, as they always were) */
	size_t size = what == SAY_ERROR || what == SAY_WARNING ? 1024 : sizeof(msg);
	vsnprintf(msg, size, fmt, ap);
	switch (what) {
	case SAY_ERROR: output->error(subject, msg); break;
	case SAY_WARNING: output->warning(subject, msg); break;
	case SAY_PROGRESS: output->progress(msg); break;
	case SAY_RESULT: output->result(msg); break;
	}
}

int adb_fail_at(const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(SAY_ERROR, subject, fmt, ap);
	va_end(ap);
	return -1;
}

int adb_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(SAY_ERROR, "adb", fmt, ap);
	va_end(ap);
	return -1;
}

void adb_warn(const char *subject, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(SAY_WARNING, subject, fmt, ap);
	va_end(ap);
}

void adb_progress(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(SAY_PROGRESS, NULL, fmt, ap);
	va_end(ap);
}

void adb_result_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(SAY_RESULT, NULL, fmt, ap);
	va_end(ap);
}

/* Running adb -------------------------------------------------------------- */

void adb_result_free(struct adb_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

const char *adb_first_line(const char *text)
{
	static char line[512];
	const char *p = text ? text : "";
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *s = p;
		p += n + (e != NULL);
		while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
			n--;
		while (n && *s == ' ')
			s++, n--;
		if (n == 0 || (n >= 2 && s[0] == '*' && s[1] == ' ')) /* "* daemon started" */
			continue;
		for (int k = 0; k < 2; k++) {
			if (n > 5 && strncmp(s, "adb: ", 5) == 0)
				s += 5, n -= 5;
			if (n > 7 && strncmp(s, "error: ", 7) == 0)
				s += 7, n -= 7;
		}
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, s, n);
		line[n] = '\0';
		return line;
	}
	return "";
}

/* adb_fail, unless @a->silent (cleanup after a failure already said). */
static int run_fail(const struct adb *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int run_fail(const struct adb *a, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return a->silent ? -1 : adb_fail("%s", msg);
}

static void child_setup(void *ctx)
{
	(void)ctx;
	if (output && output->child_setup)
		output->child_setup();
}

/* What a finished run means: 0, or -1 after saying why. */
static int run_verdict(const struct adb *a, const char *const *args, int out_fd, size_t max_out,
		       double timeout, bool quiet_status, const struct kit_run_result *k)
{
	int st = k->wait_status;
	if (k->exec_errno)
		return run_fail(a, "cannot run '%s': %s (set $ADB or put adb on PATH)", a->prog,
				strerror(k->exec_errno));
	if (!k->out || !k->err)
		return run_fail(a, "out of memory");
	if (k->timed_out)
		return run_fail(a, "'%s %s' timed out after %g s", a->prog, args[0], timeout);
	if (k->out_truncated)
		return run_fail(a, "'%s %s' printed more than %zu MiB", a->prog, args[0],
				max_out >> 20);
	if (k->status == 0 || quiet_status)
		return 0;
	const char *why = adb_first_line(k->err);
	if (!*why && out_fd < 0)
		why = adb_first_line(k->out);
	if (*why)
		return run_fail(a, "%s", why);
	if (!WIFEXITED(st))
		return run_fail(a, "'%s %s' was killed by signal %d", a->prog, args[0],
				WTERMSIG(st));
	return run_fail(a, "'%s %s' exited with status %d", a->prog, args[0], k->status);
}

int adb_run(const struct adb *a, const char *const *args, int out_fd, size_t max_out,
	    double timeout, bool quiet_status, struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *argv[64];
	size_t n = 0;
	argv[n++] = a->prog;
	if (a->serial[0]) {
		argv[n++] = "-s";
		argv[n++] = a->serial;
	}
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;

	struct kit_run_opts o = {out_fd >= 0 ? out_fd : KIT_RUN_CAPTURE, max_out, 65536, timeout,
				 child_setup, NULL};
	struct kit_run_result k;
	struct kit_run_error e;
	if (kit_run_capture(argv, &o, &k, &e) != 0)
		return run_fail(a, "cannot run '%s': %s", a->prog, strerror(e.errnum));
	int rc = run_verdict(a, args, out_fd, max_out, timeout, quiet_status, &k);
	r->status = k.status;
	r->out = k.out;
	r->err = k.err;
	r->out_len = k.out_len;
	r->err_len = k.err_len;
	r->truncated = k.out_truncated;
	return rc;
}

int adb_shell(const struct adb *a, const char *cmd, size_t max_out, double timeout,
	      bool quiet_status, struct adb_result *r)
{
	const char *args[] = {"shell", cmd, NULL};
	return adb_run(a, args, -1, max_out, timeout, quiet_status, r);
}

char *adb_cmd(const char *prefix, const char *const *args)
{
	size_t len = prefix ? strlen(prefix) + 1 : 0;
	for (size_t i = 0; args[i]; i++) {
		len += 3;
		for (const char *p = args[i]; *p; p++)
			len += *p == '\'' ? 4 : 1;
	}
	char *s = malloc(len + 1), *o = s;
	if (!s)
		return NULL;
	if (prefix && *prefix)
		o += sprintf(o, "%s ", prefix);
	for (size_t i = 0; args[i]; i++) {
		if (i)
			*o++ = ' ';
		*o++ = '\'';
		for (const char *p = args[i]; *p; p++) {
			if (*p == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *p;
			}
		}
		*o++ = '\'';
	}
	*o = '\0';
	return s;
}

bool adb_package_valid(const char *s)
{
	size_t len = strlen(s), segments = 0;
	if (len == 0 || len > 255)
		return false;
	const char *p = s;
	for (;;) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_'))
			return false;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		segments++;
		if (*p == '\0')
			return segments >= 2;
		if (*p != '.')
			return false;
		p++;
	}
}

void adb_wrap_prop(const struct adb *a, const char *package, char *buf, size_t size)
{
	snprintf(buf, size, "wrap.%s", package);
	if (a->sdk > 0 && a->sdk < 26 && strlen(buf) > 31)
		buf[31] = '\0';
}

/* Lines "SERIAL<TAB>STATE" of adb devices (other lines skipped). */
static int find_device(struct adb *a, const char *text, const char *want)
{
	char serials[8][256], states[8][256];
	size_t count = 0, total = 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *tab = memchr(p, '\t', n);
		if (tab && tab > p) {
			size_t sl = (size_t)(tab - p), tl = n - sl - 1;
			while (tl && (tab[tl] == '\r' || tab[tl] == ' '))
				tl--;
			if (sl < 256 &&
			    (!want || (strlen(want) == sl && memcmp(p, want, sl) == 0))) {
				if (count < 8) {
					memcpy(serials[count], p, sl);
					serials[count][sl] = '\0';
					tl = tl < 255 ? tl : 255;
					memcpy(states[count], tab + 1, tl);
					states[count][tl] = '\0';
					count++;
				}
			}
			total++;
		}
		p += n + (e != NULL);
	}
	if (want && count == 0)
		return adb_fail("device '%s' not found (%zu attached)", want, total);
	if (count == 0)
		return adb_fail("no devices/emulators found");
	if (count > 1 || (!want && total > 1))
		return adb_fail("more than one device/emulator: choose one with -s SERIAL or "
				"$ANDROID_SERIAL");
	const char *st = states[0];
	if (strcmp(st, "unauthorized") == 0)
		return adb_fail("device '%s' is unauthorized: allow USB debugging on the device",
				serials[0]);
	if (strcmp(st, "offline") == 0)
		return adb_fail("device '%s' is offline", serials[0]);
	if (strcmp(st, "device") != 0)
		return adb_fail("device '%s' is not ready: %s", serials[0], st);
	snprintf(a->serial, sizeof(a->serial), "%s", serials[0]);
	return 0;
}

int adb_connect(struct adb *a, const char *serial)
{
	const char *env = getenv("ADB");
	char asked[256];
	snprintf(asked, sizeof(asked), "%s", serial && *serial ? serial : a->serial);
	serial = asked[0] ? asked : NULL;
	a->prog = env && *env ? env : "adb";
	a->serial[0] = '\0';
	a->timeout = 60;
	const char *t = getenv("LEAKSNAP_ADB_TIMEOUT");
	if (t && *t) {
		char *end;
		double v = strtod(t, &end);
		if (*end == '\0' && v > 0 && v <= 86400)
			a->timeout = v;
	}
	if (!serial) {
		const char *s = getenv("ANDROID_SERIAL");
		serial = s && *s ? s : NULL;
	}
	struct adb_result r = {0};
	const char *args[] = {"devices", NULL};
	if (adb_run(a, args, -1, ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return -1;
	}
	int rc = find_device(a, r.out, serial);
	adb_result_free(&r);
	if (rc)
		return rc;
	if (adb_shell(a, "getprop ro.build.version.sdk", ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return -1;
	}
	a->sdk = atoi(r.out);
	adb_result_free(&r);
	if (adb_shell(a, "id -u", ADB_SMALL, 30, false, &r)) {
		adb_result_free(&r);
		return -1;
	}
	a->root = strcmp(adb_first_line(r.out), "0") == 0;
	adb_result_free(&r);
	return 0;
}

/* Device commands the actions share ---------------------------------------- */

int adb_pidof(const struct adb *a, const char *package, long *pid)
{
	const char *args[] = {"pidof", package, NULL};
	char *cmd = adb_cmd(NULL, args);
	struct adb_result r = {0};
	*pid = 0;
	if (!cmd)
		return adb_fail("out of memory");
	/* pidof exits 1 when nothing runs by that name */
	int rc = adb_shell(a, cmd, ADB_SMALL, 30, true, &r);
	free(cmd);
	if (rc == 0 && r.status > 1)
		rc = adb_fail("pidof %s: %s", package,
			      *adb_first_line(r.err) ? adb_first_line(r.err) : "failed");
	if (rc == 0)
		*pid = strtol(r.out, NULL, 10);
	if (*pid < 0)
		*pid = 0;
	adb_result_free(&r);
	return rc;
}

int adb_cat(const struct adb *a, const char *package, const char *path, size_t max,
	    struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	const char *direct[] = {"cat", path, NULL};
	const char *runas[] = {"run-as", package, "cat", path, NULL};
	char *cmd = adb_cmd(NULL, a->root || !package ? direct : runas);
	if (!cmd)
		return adb_fail("out of memory");
	int rc = adb_shell(a, cmd, max, 60, false, r);
	free(cmd);
	return rc;
}
