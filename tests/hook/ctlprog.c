/* A program for the control-socket tests (t-control.sh), driven by lines on
 * its standard input, each answered by one line on its standard output:
 *   (at start)     5 blocks of 3001 bytes (keep_a), 2 of 3002 (keep_b),
 *                  then "ready <pid>"
 *   alloc N SIZE   N blocks of SIZE bytes, kept (alloc_n)    -> "ok"
 *   allocvar N SIZE  N blocks of SIZE, SIZE + 1, ... bytes (alloc_var: N
 *                  records)                                  -> "ok"
 *   leak N SIZE    N blocks of SIZE bytes, their addresses forgotten (leak_n)
 *                                                             -> "ok"
 *   free           those blocks freed                        -> "ok"
 *   doublefree     a block freed twice                        -> "ok"
 *   dump PATH      leaksnap_dump(PATH)                        -> "ok" or "error <errno>"
 *   spin MS        malloc/free in a loop for MS ms, timing each turn ->
 *                  "spin <turns> <longest turn in us>"
 *   fork           a child that allocates one block of 3003 bytes (child_alloc),
 *                  says "child <pid>" and waits to be killed -> (the child's line)
 *   gfork          a child that forks at once (before any allocation) and
 *                  _exits; the grandchild allocates one block of 3003
 *                  bytes, says "grandchild <pid> fd0 open|closed" and
 *                  waits to be killed -> (the grandchild's line)
 *   storm N        N children one after the other, each of which looks at
 *                  its descriptors with system calls only (no allocation)
 *                  and _exits: bad if stdin is closed or a socket is open
 *                  other than the child's own control socket (opened at
 *                  the fork: abstract leaksnap.<its pid> or PATH.<its pid>)
 *                  -> "storm N bad <children that were bad>"
 *   forkexit       a child that allocates one block (its socket opens) and
 *                  _exits at once, waited for -> "gone <pid>"
 *   forkexec       a child that execs this program as "ctlprog --exec-child"
 *                  (the environment kept), which allocates one block, says
 *                  "exec-child <pid>" and exits (exit(0)) on SIGUSR1 -> (its line)
 *   exec           exec sleep 30 with LEAKSNAP_CONTROL removed -> nothing
 *   stop / start   leaksnap_stop() / leaksnap_start() (in-app) -> "ok" or "error <errno>"
 *   exit           exit(0)
 * Lines are read with read(2) and answered with write(2), so that stdio
 * allocates nothing while the tests compare states. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leakhook.h"

void *ctl_keep[64];
static void **held;
static size_t nheld, capheld;
static volatile int sink;
static volatile int five = 5, two = 2; /* (loops the compiler cannot unroll) */
static void *volatile twice;              /* (a pair it cannot drop) */

#define NOTAIL() __asm__ volatile("" ::: "memory"); sink++

__attribute__((noinline)) void keep_a(void)
{
	for (int i = 0; i < five; i++) {
		ctl_keep[i] = malloc(3001);
		NOTAIL();
	}
}

__attribute__((noinline)) void keep_b(void)
{
	for (int i = 0; i < two; i++) {
		ctl_keep[5 + i] = malloc(3002);
		NOTAIL();
	}
}

__attribute__((noinline)) void alloc_n(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		held[nheld++] = malloc(size);
		NOTAIL();
	}
}

__attribute__((noinline)) void alloc_var(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		held[nheld++] = malloc(size + i);
		NOTAIL();
	}
}

__attribute__((noinline)) void leak_n(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		void *volatile p = malloc(size);
		p = NULL;
		(void)p;
		NOTAIL();
	}
}

__attribute__((noinline)) void child_alloc(void)
{
	ctl_keep[8] = malloc(3003);
	NOTAIL();
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		exit(3);
}

/* One line of stdin into @buf (without its newline); false at EOF. */
static bool read_line(char *buf, size_t size)
{
	size_t n = 0;
	for (;;) {
		char c;
		ssize_t r = read(STDIN_FILENO, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		if (c == '\n')
			break;
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = '\0';
	return true;
}

static uint64_t now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void spin(unsigned ms)
{
	uint64_t start = now_us(), last = start, longest = 0, turns = 0;
	while (last - start < (uint64_t)ms * 1000u) {
		void *p = malloc(64 + turns % 512);
		NOTAIL();
		free(p);
		uint64_t t = now_us();
		if (t - last > longest)
			longest = t - last;
		last = t;
		turns++;
	}
	say("spin %llu %llu", (unsigned long long)turns, (unsigned long long)longest);
}

/* In a forked child, without allocating: 0 when stdin is open and no
 * socket is among the descriptors, else 1. */
/* Whether descriptor @fd is this process's own control socket. */
static bool own_control(int fd)
{
	struct sockaddr_un a;
	socklen_t len = sizeof(a);
	char want[32];
	memset(&a, 0, sizeof(a));
	if (getsockname(fd, (struct sockaddr *)&a, &len) != 0 || a.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) + 1)
		return false;
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	if (a.sun_path[0] == '\0') { /* abstract: "leaksnap.<pid>" */
		snprintf(want, sizeof(want), "leaksnap.%d", (int)getpid());
		return n - 1 == strlen(want) && !memcmp(a.sun_path + 1, want, n - 1);
	}
	snprintf(want, sizeof(want), ".%d", (int)getpid()); /* PATH.<pid> */
	size_t pl = strnlen(a.sun_path, sizeof(a.sun_path)), wl = strlen(want);
	return pl > wl && !memcmp(a.sun_path + pl - wl, want, wl);
}

static int fds_clean(void)
{
	if (fcntl(STDIN_FILENO, F_GETFD) < 0)
		return 1;
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 1;
	char buf[4096];
	int bad = 0;
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			char link[64];
			ssize_t k = readlinkat(dir, d->d_name, link, sizeof(link) - 1);
			if (k > 7 && !memcmp(link, "socket:", 7) && !own_control(atoi(d->d_name)))
				bad = 1;
			at += d->d_reclen;
		}
	}
	close(dir);
	return bad;
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void *hook_fn(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--exec-child")) {
		signal(SIGUSR1, on_usr1);
		child_alloc();
		say("exec-child %d", (int)getpid());
		while (!usr1)
			pause();
		exit(0);
	}
	capheld = 1 << 16;
	held = calloc(capheld, sizeof(*held));
	keep_a();
	keep_b();
	say("ready %d", (int)getpid());
	char line[512];
	while (read_line(line, sizeof(line))) {
		size_t n, size;
		unsigned ms;
		if (sscanf(line, "alloc %zu %zu", &n, &size) == 2) {
			if (n > capheld - nheld)
				n = capheld - nheld;
			alloc_n(n, size);
			say("ok");
		} else if (sscanf(line, "allocvar %zu %zu", &n, &size) == 2) {
			if (n > capheld - nheld)
				n = capheld - nheld;
			alloc_var(n, size);
			say("ok");
		} else if (sscanf(line, "leak %zu %zu", &n, &size) == 2) {
			leak_n(n, size);
			say("ok");
		} else if (!strcmp(line, "free")) {
			for (size_t i = 0; i < nheld; i++)
				free(held[i]);
			nheld = 0;
			say("ok");
		} else if (!strcmp(line, "doublefree")) {
			twice = malloc(77);
			free(twice);
			free(twice);
			say("ok");
		} else if (!strncmp(line, "dump ", 5)) {
			int (*dump)(const char *) = (int (*)(const char *))hook_fn("leaksnap_dump");
			if (dump && dump(line + 5) == 0)
				say("ok");
			else
				say("error %d", dump ? errno : ENOSYS);
		} else if (sscanf(line, "spin %u", &ms) == 1) {
			spin(ms);
		} else if (!strcmp(line, "fork")) {
			pid_t pid = fork();
			if (pid == 0) {
				child_alloc();
				say("child %d", (int)getpid());
				for (;;)
					pause();
			}
			if (pid < 0)
				say("error %d", errno);
		} else if (!strcmp(line, "gfork")) {
			pid_t pid = fork();
			if (pid == 0) {
				if (fork() == 0) {
					bool fd0 = fcntl(STDIN_FILENO, F_GETFD) >= 0;
					child_alloc();
					say("grandchild %d fd0 %s", (int)getpid(), fd0 ? "open" : "closed");
					for (;;)
						pause();
				}
				_exit(0);
			}
			if (pid < 0)
				say("error %d", errno);
			else
				waitpid(pid, NULL, 0);
		} else if (sscanf(line, "storm %zu", &n) == 1) {
			size_t bad = 0;
			for (size_t i = 0; i < n; i++) {
				pid_t pid = fork();
				if (pid == 0)
					_exit(fds_clean());
				int st;
				if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
				    WEXITSTATUS(st) != 0)
					bad++;
			}
			say("storm %zu bad %zu", n, bad);
		} else if (!strcmp(line, "forkexit")) {
			pid_t pid = fork();
			if (pid == 0) {
				child_alloc();
				_exit(0);
			}
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				say("error %d", errno);
			else
				say("gone %d", (int)pid);
		} else if (!strcmp(line, "forkexec")) {
			pid_t pid = fork();
			if (pid == 0) {
				execl("/proc/self/exe", "ctlprog", "--exec-child", (char *)NULL);
				_exit(127);
			}
			if (pid < 0)
				say("error %d", errno);
		} else if (!strcmp(line, "exec")) {
			unsetenv(LEAKSNAP_HOOK_ENV_CONTROL);
			execlp("sleep", "sleep", "30", (char *)NULL);
			say("error %d", errno);
		} else if (!strcmp(line, "stop")) {
			int (*stop)(void) = (int (*)(void))hook_fn("leaksnap_stop");
			if (stop && stop() >= 0)
				say("ok");
			else
				say("error %d", stop ? errno : ENOSYS);
		} else if (!strncmp(line, "start", 5)) {
			/* "start [CONTROL]": the in-app start with that control option */
			int (*start)(const struct leaksnap_options *) =
				(int (*)(const struct leaksnap_options *))hook_fn("leaksnap_start");
			struct leaksnap_options o;
			memset(&o, 0, sizeof(o));
			o.size = sizeof(o);
			o.control = line[5] == ' ' ? line + 6 : NULL;
			if (start && start(&o) == 0)
				say("ok");
			else
				say("error %d", start ? errno : ENOSYS);
		} else if (!strcmp(line, "exit")) {
			exit(0);
		} else {
			say("what? %s", line);
		}
	}
	return 0;
}
