/* Preloaded after the hook by tests/t-hook-dlsym.sh, with libnextb.so after
 * it: lookups with RTLD_NEXT from here must start after this library, not
 * after the hook that interposes dlsym.  next_a_forward() gives what the
 * next next_probe() says ("b"; "a" would be this library's own); open()
 * counts its calls and forwards to the next open(). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

const char *next_probe(void);
const char *next_a_forward(void);
int open(const char *path, int flags, ...);

int next_a_opens;

const char *next_probe(void)
{
	return "a";
}

const char *next_a_forward(void)
{
	const char *(*next)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "next_probe");
	return next ? next() : "none";
}

int open(const char *path, int flags, ...)
{
	static int (*next)(const char *, int, ...);
	if (!next)
		next = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	mode_t mode = 0;
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	__atomic_add_fetch(&next_a_opens, 1, __ATOMIC_RELAXED);
	return next(path, flags, mode);
}
