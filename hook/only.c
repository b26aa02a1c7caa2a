/* leaksnap hook: LEAKSNAP_ONLY, the processes that are recorded.
 *
 * `leaksnap record --only GLOB` sets it, so that a wrapper (a shell, a
 * version manager's shim) runs with the hook loaded but inert, and passes
 * it on to the program it starts.  Read once, in the constructor. */
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "hook_internal.h"

/* The file name of the executable: the last part of /proc/self/exe, whose
 * symbolic links are resolved (/usr/bin/python3 -> python3.11; for a
 * script, its interpreter).  Without /proc, the path given to execve().
 * NULL when neither is known. */
static const char *exe_name(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n > 0) {
		buf[n] = '\0';
		/* an executable replaced or removed since it started */
		static const char deleted[] = " (deleted)";
		size_t dl = sizeof(deleted) - 1;
		if ((size_t)n > dl && strcmp(buf + n - dl, deleted) == 0)
			buf[n - dl] = '\0';
	} else {
		const char *fn = (const char *)getauxval(AT_EXECFN);
		if (fn == NULL || strlen(fn) >= size)
			return NULL;
		strcpy(buf, fn);
	}
	const char *slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

bool hook_only_wanted(void)
{
	const char *only = getenv(LEAKSNAP_HOOK_ENV_ONLY);
	if (only == NULL || *only == '\0')
		return true;
	char exe[PATH_MAX], glob[PATH_MAX];
	const char *name = exe_name(exe, sizeof(exe));
	if (name == NULL)
		return true; /* cannot tell: record rather than lose it */
	/* GLOB[:GLOB...]: any one matching is enough */
	for (const char *p = only;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > 0 && len < sizeof(glob)) {
			memcpy(glob, p, len);
			glob[len] = '\0';
			if (fnmatch(glob, name, 0) == 0)
				return true;
		}
		if (end == NULL)
			return false;
		p = end + 1;
	}
}
