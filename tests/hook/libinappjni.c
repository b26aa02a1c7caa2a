/* An app's native library as Android loads it (the in-app tests): its
 * load-time entry (JNI_OnLoad there, a constructor here) loads the in-app
 * hook named by $INAPP_HOOK with dlopen(RTLD_LOCAL) and starts it on this
 * very library, while the loader is still loading it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakhook.h"

void *jni_keep;
int jni_started = -2;

__attribute__((constructor)) static void jni_onload(void)
{
	const char *path = getenv("INAPP_HOOK");
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	int (*start)(const struct leaksnap_options *) =
		h ? (int (*)(const struct leaksnap_options *))dlsym(h, "leaksnap_start") : NULL;
	if (!start)
		return;
	struct leaksnap_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.libs = "/libinappjni\\.so$";
	o.out = getenv("INAPP_OUT");
	o.flags = LEAKSNAP_START_NO_EXIT_DUMP;
	jni_started = start(&o);
}

__attribute__((noinline)) void *jni_alloc(size_t size)
{
	void *p = malloc(size);
	jni_keep = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
