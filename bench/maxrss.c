/* maxrss: run a command, report its wall time and peak resident set size.
 *
 *   maxrss [-o FILE] [-k] [--] CMD [ARGS...]
 *
 * Runs CMD with its standard output sent to /dev/null (-k keeps it), waits
 * for it with wait4() and writes one line
 *
 *   <wall seconds> <peak RSS KiB> <exit status>
 *
 * to standard error, or appended to FILE with -o.  The exit status is the
 * child's exit code, or 128 + the signal number if a signal killed it; maxrss
 * exits with that same status (127 when CMD cannot be run).  Peak RSS is the
 * kernel's ru_maxrss for the child (KiB on Linux): the high-water mark of its
 * resident pages, file-backed (mmap'd input) included.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"Usage: maxrss [-o FILE] [-k] [--] CMD [ARGS...]\n"
	"Run CMD (standard output to /dev/null unless -k) and print\n"
	"'<wall seconds> <peak RSS KiB> <exit status>' on standard error\n"
	"(or append it to FILE with -o).  Exits with CMD's status.\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *outfile = NULL;
	bool keep_stdout = false;
	int c;
	while ((c = getopt(argc, argv, "+o:kh")) != -1) {
		switch (c) {
		case 'o': outfile = optarg; break;
		case 'k': keep_stdout = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	char **cmd = argv + optind;

	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "maxrss: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		if (!keep_stdout) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
				fprintf(stderr, "maxrss: /dev/null: %s\n", strerror(errno));
				_exit(127);
			}
			close(fd);
		}
		execvp(cmd[0], cmd);
		fprintf(stderr, "maxrss: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}

	int wstatus;
	struct rusage ru;
	pid_t r;
	do
		r = wait4(pid, &wstatus, 0, &ru);
	while (r < 0 && errno == EINTR);
	double wall = now() - t0;
	if (r < 0) {
		fprintf(stderr, "maxrss: wait4: %s\n", strerror(errno));
		return 127;
	}
	int status = WIFEXITED(wstatus)     ? WEXITSTATUS(wstatus)
		     : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
					    : 127;

	FILE *out = stderr;
	if (outfile && (out = fopen(outfile, "a")) == NULL) {
		fprintf(stderr, "maxrss: %s: %s\n", outfile, strerror(errno));
		return 127;
	}
	fprintf(out, "%.6f %ld %d\n", wall, ru.ru_maxrss, status);
	if (out != stderr && fclose(out) != 0) {
		fprintf(stderr, "maxrss: %s: %s\n", outfile, strerror(errno));
		return 127;
	}
	return status;
}
