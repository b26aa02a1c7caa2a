/* leaksnap adb enable and disable: the app's wrap property, the hook
 * pushed, the restart and the check that it came back under the wrapper
 * (or without one).  docs/adb.md has the whole contract. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/leakhook.h>

#include "adb.h"
#include "kit_run.h"

#define HOOK_DIR "/data/local/tmp"

/* Run a device command made of @args (quoted); its output in @r. */
static int device(const struct adb *a, const char *const *args, bool quiet, struct adb_result *r)
{
	memset(r, 0, sizeof(*r));
	char *cmd = adb_cmd(NULL, args);
	if (!cmd)
		return adb_fail("out of memory");
	int rc = adb_shell(a, cmd, ADB_SMALL, 60, quiet, r);
	free(cmd);
	return rc;
}

static int device_ok(const struct adb *a, const char *const *args)
{
	struct adb_result r = {0};
	int rc = device(a, args, false, &r);
	adb_result_free(&r);
	return rc;
}

static int check_installed(const struct adb *a, const char *package)
{
	const char *args[] = {"pm", "path", package, NULL};
	struct adb_result r = {0};
	int rc = device(a, args, true, &r);
	if (rc == 0 && strncmp(r.out, "package:", 8) != 0)
		rc = adb_fail("package '%s' is not installed", package);
	adb_result_free(&r);
	return rc;
}

/* A wrap property needs a debuggable app or a root shell. */
static int check_access(const struct adb *a, const char *package, const char *prop)
{
	if (a->root)
		return 0;
	const char *args[] = {"run-as", package, "id", "-u", NULL};
	struct adb_result r = {0};
	int rc = device(a, args, true, &r);
	if (rc == 0 && r.status != 0) {
		const char *why = adb_first_line(r.err);
		rc = adb_fail("%s needs a debuggable app or a root shell (adb root): %s", prop,
			      *why ? why : "run-as failed");
	}
	adb_result_free(&r);
	return rc;
}

static int getprop(const struct adb *a, const char *prop, char **value)
{
	const char *args[] = {"getprop", prop, NULL};
	struct adb_result r = {0};
	*value = NULL;
	if (device(a, args, false, &r)) {
		adb_result_free(&r);
		return -1;
	}
	size_t n = r.out_len;
	while (n && (r.out[n - 1] == '\n' || r.out[n - 1] == '\r'))
		n--;
	r.out[n] = '\0';
	*value = r.out;
	r.out = NULL;
	adb_result_free(&r);
	return 0;
}

static int setprop(const struct adb *a, const char *prop, const char *value)
{
	const char *args[] = {"setprop", prop, value, NULL};
	if (device_ok(a, args))
		return -1;
	char *now;
	if (getprop(a, prop, &now))
		return -1;
	int rc = strcmp(now, value) == 0
			 ? 0
			 : adb_fail("setprop %s was refused: it reads '%s'", prop, now);
	free(now);
	return rc;
}

/* Force-stop and start the app's launcher activity; its new pid. */
static int restart(const struct adb *a, const char *package, long *pid)
{
	const char *stop[] = {"am", "force-stop", package, NULL};
	if (device_ok(a, stop))
		return -1;
	const char *resolve[] = {"cmd", "package", "resolve-activity", "--brief", "-c",
				 "android.intent.category.LAUNCHER", package, NULL};
	struct adb_result r = {0};
	if (device(a, resolve, true, &r)) {
		adb_result_free(&r);
		return -1;
	}
	/* the last line is PACKAGE/ACTIVITY when one was found */
	char comp[512] = "";
	for (char *line = strtok(r.out, "\r\n"); line; line = strtok(NULL, "\r\n"))
		snprintf(comp, sizeof(comp), "%s", line);
	size_t pl = strlen(package);
	bool ok = r.status == 0 && strncmp(comp, package, pl) == 0 && comp[pl] == '/' &&
		  comp[pl + 1];
	for (const char *p = comp + pl + 1; ok && *p; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		     (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '$';
	adb_result_free(&r);
	const char *start[] = {"am", "start", "-n", comp, NULL};
	const char *monkey[] = {"monkey", "-p", package, "-c", "android.intent.category.LAUNCHER",
				"1", NULL};
	if (device_ok(a, ok ? start : monkey))
		return -1;
	double deadline = kit_now() + a->timeout;
	for (;;) {
		if (adb_pidof(a, package, pid))
			return -1;
		if (*pid)
			return 0;
		if (kit_now() > deadline)
			return adb_fail("%s did not start within %.0f s", package, a->timeout);
		kit_sleep(0.2);
	}
}

/* Whether the NUL-separated @env has an entry starting with @prefix and
 * containing @part (NULL: anything). */
static bool env_has(const char *env, size_t len, const char *prefix, const char *part)
{
	for (size_t at = 0; at < len;) {
		const char *e = env + at;
		size_t n = strnlen(e, len - at);
		if (strncmp(e, prefix, strlen(prefix)) == 0 && (!part || strstr(e, part)))
			return true;
		at += n + 1;
	}
	return false;
}

/* Read the app's environment (and maps): is it under the wrapper? */
static int check_wrapped(const struct adb *a, const char *package, long pid, const char *hook,
			 bool want)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	struct adb_result r = {0};
	if (adb_cat(a, package, path, ADB_LARGE, &r)) {
		adb_result_free(&r);
		return -1;
	}
	bool md = env_has(r.out, r.out_len, "LIBC_DEBUG_MALLOC_OPTIONS=", "backtrace");
	bool pre = env_has(r.out, r.out_len, "LD_PRELOAD=", hook ? hook : "leakhook");
	adb_result_free(&r);
	bool mapped = false;
	if (pre) {
		snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
		if (adb_cat(a, package, path, ADB_LARGE, &r)) {
			adb_result_free(&r);
			return -1;
		}
		mapped = strstr(r.out, hook ? hook : "leakhook") != NULL;
		adb_result_free(&r);
	}
	if (!want && (md || pre))
		return adb_fail("%s (pid %ld) still runs under a wrapper after the restart",
				package, pid);
	if (want && !hook && !md)
		return adb_fail("%s (pid %ld) did not start under malloc_debug: no "
				"LIBC_DEBUG_MALLOC_OPTIONS in its environment",
				package, pid);
	if (want && hook && !pre)
		return adb_fail(
			"%s (pid %ld) did not start with the hook: no LD_PRELOAD of %s in its "
			"environment",
			package, pid, hook);
	if (want && hook && !mapped)
		return adb_fail("%s (pid %ld) did not load %s (SELinux? adb root && adb shell "
				"setenforce 0)",
				package, pid, hook);
	return 0;
}

/* What enable and disable both start with: the device, the package, the
 * right to set its wrap property (named into @prop), and the name of the
 * hook pushed for it (into @hook). */
static int prepare(struct adb *a, const char *package, char *prop, size_t prop_size, char *hook,
		   size_t hook_size)
{
	if (adb_connect(a, NULL) || check_installed(a, package))
		return -1;
	adb_wrap_prop(a, package, prop, prop_size);
	if (check_access(a, package, prop))
		return -1;
	snprintf(hook, hook_size, HOOK_DIR "/leakhook.%s.so", package);
	return 0;
}

/* The hook to push: an ELF file (0), or -1 (said). */
static int check_hook_lib(const char *hook_lib)
{
	int fd = open(hook_lib, O_RDONLY | O_CLOEXEC);
	char magic[4] = {0};
	if (fd < 0)
		return adb_fail_at(hook_lib, "%s", strerror(errno));
	ssize_t n = read(fd, magic, 4);
	close(fd);
	if (n != 4 || memcmp(magic, "\177ELF", 4) != 0)
		return adb_fail_at(hook_lib, "not an ELF shared library");
	return 0;
}

/* The wrap property's value: malloc_debug's options, or the hook
 * preloaded with its output in the app's data directory. */
static void wrap_value(const struct adb_enable_opts *o, const char *hook, char *value,
		       size_t size)
{
	if (o->hook_lib) {
		int n = snprintf(value, size,
				 "LD_PRELOAD=%s " LEAKSNAP_HOOK_ENV_OUT "=/data/data/%s/leaksnap",
				 hook, o->package);
		if (o->frames_set && n > 0 && (size_t)n < size)
			n += snprintf(value + n, size - (size_t)n, " " LEAKSNAP_HOOK_ENV_FRAMES "=%u",
				      o->frames);
		if (o->control && n > 0 && (size_t)n < size)
			snprintf(value + n, size - (size_t)n, " " LEAKSNAP_HOOK_ENV_CONTROL "=1");
	} else {
		snprintf(value, size, "LIBC_DEBUG_MALLOC_OPTIONS=backtrace=%u logwrapper",
			 o->frames);
	}
}

/* Push the hook where the app can map it. */
static int push_hook(const struct adb *a, const char *hook_lib, const char *hook)
{
	const char *push[] = {"push", hook_lib, hook, NULL};
	struct adb_result r = {0};
	int rc = adb_run(a, push, -1, ADB_SMALL, 300, false, &r);
	adb_result_free(&r);
	const char *chmod[] = {"chmod", "644", hook, NULL};
	if (rc || device_ok(a, chmod))
		return -1;
	adb_result_line("pushed %s to %s", hook_lib, hook);
	return 0;
}

int adb_enable(struct adb *a, const struct adb_enable_opts *o)
{
	const char *package = o->package, *hook_lib = o->hook_lib;
	unsigned frames = o->frames;
	char prop[300], value[512], hook[300];
	if (hook_lib && check_hook_lib(hook_lib))
		return -1;
	if (prepare(a, package, prop, sizeof(prop), hook, sizeof(hook)))
		return -1;
	wrap_value(o, hook, value, sizeof(value));
	if (a->sdk > 0 && a->sdk < 26 && strlen(value) > 91)
		return adb_fail(
			"the %s value '%s' is %zu bytes: Android before 8.0 (this device: SDK "
			"%d) allows 91",
			prop, value, strlen(value), a->sdk);
	if (hook_lib && push_hook(a, hook_lib, hook))
		return -1;
	if (setprop(a, prop, value)) {
		if (hook_lib) { /* nothing names it: not left behind */
			const char *rm[] = {"rm", "-f", hook, NULL};
			struct adb_result r = {0};
			if (device(a, rm, true, &r) == 0)
				adb_result_line("removed %s", hook);
			adb_result_free(&r);
		}
		return -1;
	}
	adb_result_line("%s: %s", prop, value);
	long pid;
	if (restart(a, package, &pid) ||
	    check_wrapped(a, package, pid, hook_lib ? hook : NULL, true))
		return -1;
	if (hook_lib)
		adb_result_line(
			"%s: running as pid %ld with %s (dumps: /data/data/%s/leaksnap.%ld.N.dump)",
			package, pid, hook, package, pid);
	else
		adb_result_line("%s: running as pid %ld with malloc_debug (backtrace=%u)", package,
				pid, frames);
	return 0;
}

int adb_disable(struct adb *a, const char *package)
{
	char prop[300], hook[300];
	if (prepare(a, package, prop, sizeof(prop), hook, sizeof(hook)))
		return -1;
	char *old;
	if (getprop(a, prop, &old))
		return -1;
	bool had_hook = strstr(old, hook) != NULL;
	int rc = 0;
	if (*old) {
		rc = setprop(a, prop, "");
		if (!rc)
			adb_result_line("%s: cleared (was '%s')", prop, old);
	} else {
		adb_result_line("%s: was not set", prop);
	}
	free(old);
	if (rc)
		return rc;
	/* The hook this tool pushes for the package, named by the property
	 * or left by an enable that failed after the push. */
	const char *ls[] = {"ls", hook, NULL};
	struct adb_result r = {0};
	/* (by what ls prints: adb before Android 7 does not pass on the
	 * status of the command) */
	bool there = had_hook || (device(a, ls, true, &r) == 0 && r.out &&
				  strncmp(r.out, hook, strlen(hook)) == 0 &&
				  (r.out[strlen(hook)] == '\n' || r.out[strlen(hook)] == '\r'));
	adb_result_free(&r);
	if (there) {
		const char *rm[] = {"rm", "-f", hook, NULL};
		if (device_ok(a, rm))
			return -1;
		adb_result_line("removed %s", hook);
	}
	long pid;
	if (restart(a, package, &pid) || check_wrapped(a, package, pid, NULL, false))
		return -1;
	adb_result_line("%s: running as pid %ld without a wrapper", package, pid);
	return 0;
}

