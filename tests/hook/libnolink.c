/* libnolink.so: a file system without hard links, for the tests (LD_PRELOAD
 * it): link() and linkat() fail with EPERM, as on vfat or exFAT.  Outputs
 * that leaksnap publishes with a hard link must then be renamed in place,
 * still never replacing a file. */
#include <errno.h>
#include <unistd.h>

int link(const char *from, const char *to)
{
	(void)from;
	(void)to;
	errno = EPERM;
	return -1;
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
	(void)fromfd;
	(void)from;
	(void)tofd;
	(void)to;
	(void)flags;
	errno = EPERM;
	return -1;
}
