/* leaksnap hook: its settings, from the environment (LEAKSNAP_FRAMES,
 * LEAKSNAP_UNWIND, LEAKSNAP_OUT, ...: docs/hook.md), and from
 * leaksnap_start()'s options in the in-app build (inapp.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"

static atomic_bool report_env;

static unsigned long env_uint(const char *name, unsigned long def, unsigned long lo,
			      unsigned long hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || *end || v[0] == '-' || x < lo || x > hi) {
		hook_report(&report_env, "%s=%s: not a number from %lu to %lu; using %lu", name,
			    v, lo, hi, def);
		return def;
	}
	return x;
}

int hook_config_unwind(const char *mode)
{
	struct hook_config *c = &hook_cfg;
	if (!mode || !*mode || !strcmp(mode, "auto"))
		c->unwind = HOOK_UNWIND_AUTO;
	else if (!strcmp(mode, "fp"))
		c->unwind = HOOK_UNWIND_FP;
	else if (!strcmp(mode, "dwarf"))
		c->unwind = HOOK_UNWIND_DWARF;
#ifndef HOOK_INAPP
	else if (!strcmp(mode, "instrument"))
		c->unwind = HOOK_UNWIND_INSTRUMENT;
#endif
	else
		return -1;
	if (c->unwind == HOOK_UNWIND_FP || c->unwind == HOOK_UNWIND_INSTRUMENT)
		c->unwinder_name = c->unwind == HOOK_UNWIND_FP ? "fp" : "instrument";
	else if (!unwind_cfi_supported())
		c->unwinder_name = c->unwind == HOOK_UNWIND_DWARF || !UNWIND_FP_RECORDS
					   ? UNWIND_GCC_NAME : "fp";
	else
		c->unwinder_name = c->unwind == HOOK_UNWIND_DWARF ? "dwarf" : "dwarf+fp";
	return 0;
}

int hook_config_out(const char *out)
{
	struct hook_config *c = &hook_cfg;
	if (strlen(out) > LEAKSNAP_HOOK_OUT_MAX)
		return -1;
	strcpy(c->out, out);
	/* A relative prefix names the directory the program starts in: a
	 * program that changes directory later must not split its dumps. */
	char cwd[PATH_MAX];
	if (c->out[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		size_t cl = strlen(cwd), ol = strlen(c->out);
		if (cl + 1 + ol <= LEAKSNAP_HOOK_OUT_MAX) {
			memmove(c->out + cl + 1, c->out, ol + 1);
			memcpy(c->out, cwd, cl);
			c->out[cl] = '/';
		} else {
			hook_report(&report_env, LEAKSNAP_HOOK_ENV_OUT "=%s: too long once made absolute; "
				    "dumps go where the program is when it writes them", c->out);
		}
	}
	return 0;
}

int hook_config_control(const char *value)
{
	struct hook_config *c = &hook_cfg;
	c->control = HOOK_CONTROL_OFF;
	c->control_path[0] = '\0';
	if (!value || !*value || !strcmp(value, "0"))
		return 0;
	if (!strcmp(value, "1")) {
		c->control = HOOK_CONTROL_ABSTRACT;
		return 0;
	}
	/* A relative path names the directory the program starts in (its
	 * socket is unlinked there at exit, wherever the program went). */
	char cwd[PATH_MAX] = "";
	if (value[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -1;
	size_t cl = strlen(cwd), vl = strlen(value);
	bool slash = cl && cwd[cl - 1] != '/';
	if (cl + slash + vl >= sizeof(c->control_path))
		return -1;
	memcpy(c->control_path, cwd, cl);
	if (slash)
		c->control_path[cl++] = '/';
	memcpy(c->control_path + cl, value, vl + 1);
	c->control = HOOK_CONTROL_PATH;
	return 0;
}

#if defined(__BIONIC__) && defined(HOOK_INAPP)
/* In an app's process (its command line a package name, "com.acme.app" or
 * "com.acme.app:service") whose data directory it can write: that
 * directory's "leaksnap" prefix (LEAKSNAP_HOOK_ANDROID_INAPP_APP_OUT, the
 * one `leaksnap adb snapshot` looks in). */
static bool app_default_out(char *out, size_t size)
{
	char name[128];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, name, sizeof(name) - 1);
	close(fd);
	if (n <= 0)
		return false;
	name[n] = '\0';
	size_t len = strcspn(name, ":");
	name[len] = '\0';
	bool dot = false;
	for (size_t i = 0; i < len; i++) {
		char ch = name[i];
		if (ch == '.')
			dot = true;
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			   (ch >= '0' && ch <= '9') || ch == '_'))
			return false;
	}
	if (!dot || name[0] == '.')
		return false;
	int k = snprintf(out, size, LEAKSNAP_HOOK_ANDROID_INAPP_APP_OUT, name);
	if (k < 0 || (size_t)k >= size)
		return false;
	char dir[256];
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(out, '/') - out), out);
	return access(dir, W_OK) == 0;
}
#endif

void hook_read_config(void)
{
	struct hook_config *c = &hook_cfg;
	c->frames = (unsigned)env_uint(LEAKSNAP_HOOK_ENV_FRAMES, 16, 1, HOOK_MAX_FRAMES);
	const char *on_exit = getenv(LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT);
	c->dump_on_exit_forked = on_exit && !strcmp(on_exit, "all");
	c->dump_on_exit = c->dump_on_exit_forked ||
			  env_uint(LEAKSNAP_HOOK_ENV_DUMP_ON_EXIT, 1, 0, 1) != 0;
	c->dump_on_crash = env_uint(LEAKSNAP_HOOK_ENV_DUMP_ON_CRASH, 1, 0, 1) != 0;
	c->fork_thread = env_uint(LEAKSNAP_HOOK_ENV_FORK_THREAD, 1, 0, 1) != 0;
	c->dump_thread = env_uint(LEAKSNAP_HOOK_ENV_DUMP_THREAD, 0, 0, 1) != 0;
	c->start_disabled = env_uint(LEAKSNAP_HOOK_ENV_START_DISABLED, 0, 0, 1) != 0;
	c->reachability = env_uint(LEAKSNAP_HOOK_ENV_REACHABILITY, 0, 0, 1) != 0;
	c->keep_unloaded = env_uint(LEAKSNAP_HOOK_ENV_KEEP_UNLOADED, 1, 0, 1) != 0;

	c->sample = env_uint(LEAKSNAP_HOOK_ENV_SAMPLE, 0, 0, LEAKSNAP_HOOK_SAMPLE_MAX);
	c->sample_seed = env_uint(LEAKSNAP_HOOK_ENV_SAMPLE_SEED, 0, 0, ULONG_MAX);

	const char *mode = getenv(LEAKSNAP_HOOK_ENV_UNWIND);
	if (hook_config_unwind(mode) != 0) {
#ifndef HOOK_INAPP
		hook_report(&report_env, LEAKSNAP_HOOK_ENV_UNWIND "=%s: not auto, fp, dwarf or "
			    "instrument; using auto", mode);
#else
		hook_report(&report_env, LEAKSNAP_HOOK_ENV_UNWIND "=%s: not auto, fp or dwarf; using auto",
			    mode);
#endif
		hook_config_unwind(NULL);
	}

#ifdef __BIONIC__
	const char *def_out = LEAKSNAP_HOOK_ANDROID_DEFAULT_OUT;
#ifdef HOOK_INAPP
	/* an app cannot write /data/local/tmp: its own data directory */
	static char app_out[256];
	if (app_default_out(app_out, sizeof(app_out)))
		def_out = app_out;
#endif
#else
	const char *def_out = LEAKSNAP_HOOK_DEFAULT_OUT;
#endif
	const char *out = getenv(LEAKSNAP_HOOK_ENV_OUT);
	if (out && strlen(out) > LEAKSNAP_HOOK_OUT_MAX) {
		hook_report(&report_env, LEAKSNAP_HOOK_ENV_OUT " is too long; using %s", def_out);
		out = NULL;
	}
	hook_config_out(out && *out ? out : def_out);
	hook_runnote_config();

	const char *ctl = getenv(LEAKSNAP_HOOK_ENV_CONTROL);
	if (hook_config_control(ctl) != 0)
		hook_report(NULL, LEAKSNAP_HOOK_ENV_CONTROL ": %s: longer than a socket address "
			    "holds (%zu bytes) once made absolute; no control socket", ctl,
			    sizeof(c->control_path) - 1);

	c->interval_ns = 0;
	const char *iv = getenv(LEAKSNAP_HOOK_ENV_INTERVAL);
	if (iv && *iv) {
		char *end;
		errno = 0;
		double s = strtod(iv, &end);
		if (errno || *end || !(s >= 0.001 && s <= 1e6))
			hook_report(&report_env,
				    LEAKSNAP_HOOK_ENV_INTERVAL "=%s: not a number of seconds from 0.001 "
				    "to 1000000; no interval dumps", iv);
		else
			c->interval_ns = (uint64_t)(s * 1e9);
	}
}
