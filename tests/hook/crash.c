/* A program that leaks known blocks, then dies of a fatal signal, for
 * tests/t-hook-crash.sh.  Before dying it leaks, each from a function of its
 * own: 3 x 1111 bytes (crash_leak_malloc), 1 x 2222 (crash_leak_calloc),
 * 2 x 3333 (crash_leak_realloc); it frees a block of 4444 bytes.  Then:
 *   crash segv       writes through a null pointer (SIGSEGV)
 *   crash abort      abort() (SIGABRT)
 *   crash fpe        an integer division by zero (SIGFPE on x86; arm64 does
 *                    not trap)
 *   crash kill       kill(getpid(), SIGBUS): a fatal signal another process
 *                    could have sent
 *   crash overflow   endless recursion on the main thread (SIGSEGV on the
 *                    guard page: the handler needs the alternate stack)
 *   crash thread     a second thread writes through a null pointer
 *   crash smallstack a second thread with the least stack there is
 *                    (PTHREAD_STACK_MIN) calls abort()
 *   crash heap       overwrites the size field of a block's neighbour, then
 *                    frees the block: glibc's free() finds the heap corrupt
 *                    and calls abort() with its arena lock held (a dump
 *                    that called malloc would wait for it for ever)
 *   crash own        installs its own SIGSEGV handler (which prints "own
 *                    handler" and restores the default), then as segv
 *   crash chain      the same, but its handler calls the handler it
 *                    replaced before restoring the default
 *   crash onstack    a SIGUSR1 handler with SA_ONSTACK, SIGUSR1 sent to the
 *                    main thread every 20 us by another thread, then abort():
 *                    the handler must not run over the crash handler's
 *                    frames on the alternate stack while the dump is written
 *   crash locked     asks for a dump with leaksnap_dump(); its readlink()
 *                    (which the dump calls, once the dump lock is held)
 *                    writes through a null pointer: a crash inside the
 *                    hook's own locked section
 * It prints "leaked" on stdout once the blocks are leaked. */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void *volatile crash_sink[10];
static volatile int crash_in_readlink;
static struct sigaction crash_prev;
static volatile sig_atomic_t crash_usr1;
static long crash_main_tid;

static void on_usr1(int sig)
{
	(void)sig;
	crash_usr1++;
}

static void *pester(void *arg)
{
	(void)arg;
	for (;;) {
		syscall(SYS_tgkill, (long)getpid(), crash_main_tid, (long)SIGUSR1);
		usleep(20);
	}
	return NULL;
}

__attribute__((noinline)) void crash_leak_malloc(int i)
{
	crash_sink[i] = malloc(1111);
}

__attribute__((noinline)) void crash_leak_calloc(void)
{
	crash_sink[3] = calloc(1, 2222);
}

__attribute__((noinline)) void crash_leak_realloc(int i)
{
	crash_sink[i] = realloc(malloc(10), 3333);
}

/* The hook calls readlink() while it writes a dump; this one crashes when
 * asked to (the executable's definition comes first in symbol lookup). */
ssize_t readlink(const char *path, char *buf, size_t size)
{
	if (crash_in_readlink)
		*(volatile int *)(uintptr_t)crash_in_readlink = 1; /* address 1: SIGSEGV */
	return syscall(SYS_readlinkat, AT_FDCWD, path, buf, size);
}

static void write_str(const char *s)
{
	(void)!write(STDOUT_FILENO, s, strlen(s));
}

static void own_handler(int sig, siginfo_t *si, void *ctx)
{
	write_str("own handler\n");
	if (getenv("CRASH_CHAIN") && (crash_prev.sa_flags & SA_SIGINFO))
		crash_prev.sa_sigaction(sig, si, ctx);
	signal(sig, SIG_DFL);
}

__attribute__((noinline)) static void null_write(void)
{
	*(volatile int *)(uintptr_t)crash_sink[7] = 1;
}

static volatile int crash_depth_limit = -1; /* never reached */

__attribute__((noinline)) static int recurse(volatile char *up, int depth)
{
	volatile char frame[1024];
	frame[0] = up ? up[0] : 0;
	if (depth == crash_depth_limit)
		return 0;
	return recurse(frame, depth + 1) + frame[1];
}

static void *thread_main(void *arg)
{
	if (arg)
		abort();
	null_write();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: crash segv|abort|fpe|kill|heap|overflow|thread|smallstack|onstack|own|chain|locked\n");
		return 2;
	}
	const char *mode = argv[1];
	for (int i = 0; i < 3; i++)
		crash_leak_malloc(i);
	crash_leak_calloc();
	crash_leak_realloc(4);
	crash_leak_realloc(5);
	void *freed = malloc(4444);
	crash_sink[6] = freed;
	free(freed);
	crash_sink[6] = NULL;
	crash_sink[7] = NULL;
	write_str("leaked\n");

	if (!strcmp(mode, "segv")) {
		null_write();
	} else if (!strcmp(mode, "abort")) {
		abort();
	} else if (!strcmp(mode, "fpe")) {
		volatile int zero = 0;
		volatile int x = 7 / zero;
		(void)x;
	} else if (!strcmp(mode, "kill")) {
		kill(getpid(), SIGBUS);
		sleep(5);
	} else if (!strcmp(mode, "heap")) {
		/* larger than the thread cache takes: freed under the arena lock */
		crash_sink[8] = malloc(5000);
		crash_sink[9] = malloc(5000);
		size_t bad = 1;
		memcpy((void *)((uintptr_t)crash_sink[9] - sizeof(size_t)), &bad, sizeof(bad));
		free(crash_sink[8]);
	} else if (!strcmp(mode, "overflow")) {
		recurse(NULL, 0);
	} else if (!strcmp(mode, "thread") || !strcmp(mode, "smallstack")) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		bool small = !strcmp(mode, "smallstack");
		if (small)
			pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
		pthread_t t;
		pthread_create(&t, &attr, thread_main, small ? (void *)1 : NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "own") || !strcmp(mode, "chain")) {
		if (!strcmp(mode, "chain"))
			setenv("CRASH_CHAIN", "1", 1);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = own_handler;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, &crash_prev);
		null_write();
	} else if (!strcmp(mode, "onstack")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_ONSTACK | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		crash_main_tid = syscall(SYS_gettid);
		pthread_t t;
		pthread_create(&t, NULL, pester, NULL);
		usleep(20000);
		abort();
	} else if (!strcmp(mode, "locked")) {
		int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
		if (!dump) {
			fprintf(stderr, "crash: no hook\n");
			return 2;
		}
		crash_in_readlink = 1;
		dump(NULL);
	} else {
		fprintf(stderr, "crash: unknown mode %s\n", mode);
		return 2;
	}
	write_str("still alive\n");
	return 0;
}
