/* Preloaded after the hook (LD_PRELOAD="libleakhook.so libexitwait.so"),
 * this library's destructor runs after the hook's: the process is then in
 * exit(), its exit dump done, its control socket still open, and every
 * dump asked for is answered "error dump: the process is exiting".  It
 * holds the process there until the fifo named by $EXITWAIT_FIFO ends
 * (t-watch.sh), so that the tests meet that state every time. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((destructor)) static void exit_wait(void)
{
	const char *fifo = getenv("EXITWAIT_FIFO");
	if (!fifo)
		return;
	int fd = open(fifo, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char b[64];
	while (read(fd, b, sizeof(b)) > 0)
		;
	close(fd);
}
