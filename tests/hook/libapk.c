/* The library the APK test stores in base.apk (tests/t-android-apk.sh): a
 * leak made through an inlined helper, so that symbolizing through the
 * APK shows the inline chain from its DWARF. */
#include <stdlib.h>

void *apk_keep[16];
static int apk_n;

static inline void *apk_block(size_t size)
{
	return malloc(size); /* LINE apk_block */
}

__attribute__((noinline)) void *apk_leak(size_t size)
{
	void *p = apk_block(size); /* LINE apk_leak */
	apk_keep[apk_n++ % 16] = p;
	__asm__ volatile("" ::: "memory");
	return p;
}
