/* leaksnap attach: a stopped process and function calls in it, with ptrace.
 *
 * Only the main thread is traced (PTRACE_SEIZE, then PTRACE_INTERRUPT);
 * the others run on.  It is stopped where it holds no lock the called
 * functions may take: not inside the C library, the loader or a hook,
 * unless it waits in a blocking system call there, and never in a signal
 * handler (it is let run a moment and stopped again, until it is somewhere
 * else).  A call sets the
 * arguments, a return address nothing is mapped at, and resumes the
 * thread; the call ends in the SIGSEGV of its return there.  Signals that
 * arrive meanwhile are kept (not delivered to the thread in the middle of
 * the call) and sent again once it is let go, except the hook's own pause.  At the end every register
 * and errno are put back as they were, so that a system call the thread
 * was in restarts or returns EINTR as the kernel decides. */
/* /proc/PID/mem offsets are addresses: 64 bits on a 32-bit system too */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach_internal.h"
#include "kit.h"

/* Where a called function returns to: nothing is ever mapped at 0. */
#define RETURN_ADDR 0
/* How long a call may take, and how long the thread may stay inside the
 * C library before the attach gives up (seconds). */
#define CALL_TIMEOUT 60.0
#define SAFE_POINT_TIMEOUT 5.0
#define MAX_SIGNALS 256
#define MAX_RANGES 64

struct range {
	uint64_t start, end;
	bool libc; /* the C library's: where signal handlers return through */
};

struct attach_session {
	int pid;
	char subject[24];
	int memfd;
	bool gone;                /* the process exited */
	struct arch_state saved;  /* the thread as it was */
	struct arch_state work;   /* scratch for a call */
	uint64_t stack_low;       /* what was pushed begins here */
	uint64_t errno_addr;      /* the thread's errno (0: unknown) */
	int saved_errno;
	unsigned nsig;            /* signals that came during the attach */
	siginfo_t sig[MAX_SIGNALS];
	unsigned nunsafe;         /* code the thread must not be stopped in */
	struct range unsafe[MAX_RANGES];
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int gone_error(struct attach_session *s, int status, struct leaksnap_error *err)
{
	s->gone = true;
	if (WIFEXITED(status))
		return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
				 "the process exited during the attach (exit status %d)",
				 WEXITSTATUS(status));
	return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
			 "the process was killed by signal %d during the attach",
			 WTERMSIG(status));
}

/* The hook's pause for reachability (SIGRTMAX-18): its dump thread waits
 * until every thread took it, maybe while the call waits for that thread
 * (leaksnap_stop stops it).  Delivered at once, never held back. */
static bool deliver_now(int sig)
{
	return sig == LEAKSNAP_HOOK_SIG_STOP;
}

/* Keep a signal that came while the thread was ours, to send it again
 * when it is let go; a standard signal already kept is pending once. */
static void keep_signal(struct attach_session *s, int sig)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GETSIGINFO, s->pid, NULL, &si) != 0) {
		si.si_signo = sig;
		si.si_code = SI_TKILL;
	}
	if (sig < SIGRTMIN)
		for (unsigned i = 0; i < s->nsig; i++)
			if (s->sig[i].si_signo == sig)
				return;
	if (s->nsig < MAX_SIGNALS)
		s->sig[s->nsig++] = si;
}

/* Wait (at most @timeout seconds) for the thread's next stop.  Returns 1
 * stopped (*@status), 0 timed out, -1 the process is gone (@err). */
static int wait_stop(struct attach_session *s, double timeout, int *status,
		     struct leaksnap_error *err)
{
	double end = now() + timeout;
	long us = 50;
	for (;;) {
		pid_t r = waitpid(s->pid, status, __WALL | WNOHANG);
		if (r == s->pid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				return gone_error(s, *status, err);
			if (WIFSTOPPED(*status))
				return 1;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			s->gone = true;
			return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
					 "the process exited during the attach");
		}
		if (now() > end)
			return 0;
		pause_us(us);
		if (us < 2000)
			us *= 2;
	}
}

/* The executable code of the modules whose locks a call may need: 0 none
 * of them, 1 one (the loader, the C++ runtime, a hook), 2 the C library
 * (whose code also returns from signal handlers). */
static int unsafe_module(const char *name, const char *avoid)
{
	static const char *const libc[] = {"libc.so", "libc-", "ld-musl"};
	static const char *const others[] = {
		"ld-", "linker", "libpthread", "libdl.so", "libdl-", "libleakhook", "libstdc++",
		"libc++",
	};
	for (size_t i = 0; i < sizeof(libc) / sizeof(libc[0]); i++)
		if (strncmp(name, libc[i], strlen(libc[i])) == 0)
			return 2;
	if (avoid && strcmp(name, avoid) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strncmp(name, others[i], strlen(others[i])) == 0)
			return 1;
	return 0;
}

static void find_unsafe(struct attach_session *s, const struct attach_proc *p, const char *avoid)
{
	for (const char *line = p->maps; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		unsigned long long a, b;
		char perms[5];
		int off = 0;
		if (sscanf(line, "%llx-%llx %4s %*s %*s %*s %n", &a, &b, perms, &off) >= 3 && off > 0 &&
		    (size_t)off < len && perms[2] == 'x') {
			const char *path = line + off;
			size_t plen = len - (size_t)off;
			const char *slash = memrchr(path, '/', plen);
			char name[256];
			if (slash) {
				size_t nlen = plen - (size_t)(slash + 1 - path);
				if (nlen < sizeof(name)) {
					memcpy(name, slash + 1, nlen);
					name[nlen] = '\0';
					int u = unsafe_module(name, avoid);
					if (u && s->nunsafe < MAX_RANGES)
						s->unsafe[s->nunsafe++] = (struct range){a, b, u == 2};
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
}

/* System calls a thread waits in without holding a lock the calls take
 * (the C library's allocator and loader locks are never held across
 * them; a lock it waits for in futex is held by another thread, which
 * goes on).  A stdio lock may be held across a write: dlopen and the hook
 * use no stdio. */
static bool blocking_syscall(long nr)
{
	static const long calls[] = {
		SYS_read, SYS_readv, SYS_pread64, SYS_recvfrom, SYS_recvmsg, SYS_accept4,
		SYS_nanosleep, SYS_clock_nanosleep, SYS_ppoll, SYS_pselect6, SYS_epoll_pwait,
		SYS_wait4, SYS_waitid, SYS_rt_sigsuspend, SYS_rt_sigtimedwait, SYS_futex,
		SYS_msgrcv, SYS_semtimedop, SYS_io_getevents, SYS_write, SYS_writev,
		SYS_pwrite64, SYS_sendto, SYS_sendmsg, SYS_connect, SYS_mq_timedreceive,
#ifdef SYS_accept
		SYS_accept,
#endif
#ifdef SYS_poll
		SYS_poll,
#endif
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_epoll_wait
		SYS_epoll_wait,
#endif
#ifdef SYS_pause
		SYS_pause,
#endif
#ifdef SYS_epoll_pwait2
		SYS_epoll_pwait2,
#endif
#ifdef SYS_restart_syscall
		/* a sleep an earlier attach interrupted goes on in this one */
		SYS_restart_syscall,
#endif
	};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (calls[i] == nr)
			return true;
	return false;
}

/* How far up the stack a signal frame is looked for. */
#define STACK_SCAN (64 * 1024)

/* Whether the thread runs a signal handler: a signal frame (the return
 * address of the C library's sigreturn trampoline, and the saved context
 * that follows it) on its stack, from the stack pointer up.  A handler may
 * have interrupted anything, a lock held (the hook's reachability pause
 * waits in its handler while its dump thread works). */
static bool in_signal_handler(struct attach_session *s)
{
	uint64_t sp = arch_sp(&s->saved);
	static uint64_t words[STACK_SCAN / 8];
	size_t got = 0;
	while (got < sizeof(words)) { /* a page at a time: up to the stack's end */
		size_t chunk = 4096 - (size_t)((sp + got) % 4096);
		if (chunk > sizeof(words) - got)
			chunk = sizeof(words) - got;
		ssize_t r = pread(s->memfd, (char *)words + got, chunk, (off_t)(sp + got));
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	size_t n = got / ARCH_PTR;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = ARCH_PTR == 8 ? words[i] : ((const uint32_t *)(const void *)words)[i];
		bool in_libc = false;
		for (unsigned j = 0; j < s->nunsafe && !in_libc; j++)
			in_libc = s->unsafe[j].libc && v >= s->unsafe[j].start && v < s->unsafe[j].end;
		uint8_t code[16];
		if (!in_libc ||
		    pread(s->memfd, code, sizeof(code), (off_t)(v & ~(uint64_t)1)) != (ssize_t)sizeof(code) ||
		    !arch_sigreturn(code))
			continue;
		if (arch_signal_frame((const uint8_t *)words + i * ARCH_PTR, got - i * ARCH_PTR,
				      sp + i * ARCH_PTR))
			return true;
	}
	return false;
}

/* Whether the thread stopped where the calls may run; *@nr the system
 * call it is in (-1: none). */
static bool safe_point(struct attach_session *s, long *nr)
{
	uint64_t pc = arch_pc(&s->saved);
	bool inside = false;
	*nr = -1;
	for (unsigned i = 0; i < s->nunsafe; i++)
		if (pc >= s->unsafe[i].start && pc < s->unsafe[i].end)
			inside = true;
	if (inside) {
		uint8_t insn[8] = {0};
		if (pc >= 4 &&
		    pread(s->memfd, insn, sizeof(insn), (off_t)(pc - 4)) != (ssize_t)sizeof(insn))
			memset(insn, 0, sizeof(insn));
		*nr = arch_syscall(&s->saved, insn);
		if (*nr < 0 || !blocking_syscall(*nr))
			return false;
	}
	return !in_signal_handler(s);
}

/* How much stack the calls may use below the thread's stack pointer: a
 * main thread on a stack of its own making (a coroutine's, a signal
 * stack) with less room than this is not called in.  The main stack
 * ("[stack]") grows as it is used. */
#define STACK_ROOM (128 * 1024)

static int stack_check(struct attach_session *s, const struct attach_proc *p,
		       struct leaksnap_error *err)
{
	uint64_t sp = arch_sp(&s->saved);
	for (const char *line = p->maps; line && *line;) {
		const char *end = strchr(line, '\n');
		unsigned long long a, b;
		int off = 0;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &a, &b, &off) >= 2 && sp > a &&
		    sp <= b) {
			bool main_stack = off > 0 && strncmp(line + off, "[stack]", 7) == 0;
			if (!main_stack && sp - a < STACK_ROOM)
				return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
						 "the main thread runs on a small stack (%llu KiB "
						 "below its stack pointer, at 0x%llx): too little for "
						 "dlopen; try again when it is back on its own stack",
						 (unsigned long long)(sp - a) / 1024,
						 (unsigned long long)sp);
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
			 "the main thread's stack pointer 0x%llx is in no mapping",
			 (unsigned long long)sp);
}

/* Stop the thread (PTRACE_INTERRUPT): 0, or -1 with @err. */
static int interrupt(struct attach_session *s, struct leaksnap_error *err)
{
	if (ptrace(PTRACE_INTERRUPT, s->pid, NULL, NULL) != 0)
		return kit_error(err, LEAKSNAP_ERR_IO, s->subject, "ptrace(PTRACE_INTERRUPT): %s",
				 strerror(errno));
	for (;;) {
		int st;
		int r = wait_stop(s, CALL_TIMEOUT, &st, err);
		if (r < 0)
			return -1;
		if (r == 0)
			return kit_error(err, LEAKSNAP_ERR_IO, s->subject,
					 "the process did not stop within %g seconds", CALL_TIMEOUT);
		if ((st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		/* a signal came first: kept, and the interrupt still comes */
		int pass = 0;
		if ((st >> 16) == 0 && deliver_now(WSTOPSIG(st)))
			pass = WSTOPSIG(st);
		else if ((st >> 16) == 0)
			keep_signal(s, WSTOPSIG(st));
		if (ptrace(PTRACE_CONT, s->pid, NULL, (void *)(intptr_t)pass) != 0)
			return kit_error(err, LEAKSNAP_ERR_IO, s->subject, "ptrace(PTRACE_CONT): %s",
					 strerror(errno));
	}
}

static int mem_write(struct attach_session *s, uint64_t addr, const void *data, size_t len,
		     struct leaksnap_error *err)
{
	if (pwrite(s->memfd, data, len, (off_t)addr) != (ssize_t)len)
		return kit_error(err, LEAKSNAP_ERR_IO, s->subject,
				 "cannot write the process's memory at 0x%llx: %s",
				 (unsigned long long)addr, strerror(errno));
	return 0;
}

/* The errno location of the thread: __errno_location() (glibc, musl) or
 * __errno() (bionic), called in it. */
static void find_errno(struct attach_session *s, const struct attach_proc *p)
{
	static const char *const where[][2] = {
		{"libc.so.6", "__errno_location"},
		{"libc.so", "__errno"},
		{"ld-musl-x86_64.so.1", "__errno_location"},
		{"ld-musl-aarch64.so.1", "__errno_location"},
		{"ld-musl-armhf.so.1", "__errno_location"},
	};
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		uint64_t fn;
		struct leaksnap_error e = {0};
		int64_t loc;
		if (attach_module_symbol(p, where[i][0], where[i][1], &fn, &e) != 0)
			continue;
		if (attach_session_call(s, where[i][1], fn, NULL, 0, &loc, &e) != 0 || loc == 0)
			return;
		int v;
		if (pread(s->memfd, &v, sizeof(v), (off_t)loc) == (ssize_t)sizeof(v)) {
			s->errno_addr = (uint64_t)loc;
			s->saved_errno = v;
		}
		return;
	}
}

struct attach_session *attach_session_begin(const struct attach_proc *p, const char *avoid,
					    struct leaksnap_error *err)
{
	struct attach_session *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, p->subject, "out of memory");
		return NULL;
	}
	s->pid = p->pid;
	s->memfd = -1;
	snprintf(s->subject, sizeof(s->subject), "%s", p->subject);
	find_unsafe(s, p, avoid);
	if (ptrace(PTRACE_SEIZE, s->pid, NULL, NULL) != 0) {
		int e = errno;
		free(s);
		if (e == EPERM || e == EACCES)
			attach_perm_error(p->pid, p->subject, err);
		else if (e == ESRCH)
			kit_error(err, LEAKSNAP_ERR_USAGE, p->subject, "no such process");
		else
			kit_error(err, LEAKSNAP_ERR_IO, p->subject, "ptrace(PTRACE_SEIZE): %s",
				  strerror(e));
		return NULL;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", s->pid);
	s->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (s->memfd < 0) {
		kit_error(err, LEAKSNAP_ERR_IO, p->subject, "%s: %s", path, strerror(errno));
		goto fail;
	}
	/* stopped where it holds no lock of the C library's */
	double end = now() + SAFE_POINT_TIMEOUT;
	for (unsigned tries = 0;; tries++) {
		if (interrupt(s, err) != 0)
			goto fail;
		if (arch_get(s->pid, &s->saved) != 0) {
			kit_error(err, LEAKSNAP_ERR_IO, p->subject, "cannot read the registers: %s",
				  strerror(errno));
			goto fail;
		}
		long nr;
		if (safe_point(s, &nr))
			break;
		if (now() > end) {
			char in[64] = "";
			if (nr >= 0)
				snprintf(in, sizeof(in), ", in system call %ld", nr);
			kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
				  "the main thread stayed inside the C library, the loader, a "
				  "hook or a signal handler for %g seconds (pc 0x%llx%s): try "
				  "again",
				  SAFE_POINT_TIMEOUT, (unsigned long long)arch_pc(&s->saved), in);
			goto fail;
		}
		if (ptrace(PTRACE_CONT, s->pid, NULL, NULL) != 0) {
			kit_error(err, LEAKSNAP_ERR_IO, p->subject, "ptrace(PTRACE_CONT): %s",
				  strerror(errno));
			goto fail;
		}
		pause_us(100 + (long)(tries * 37 % 900)); /* not in step with a loop */
	}
	if (stack_check(s, p, err) != 0)
		goto fail;
	s->stack_low = (arch_sp(&s->saved) - ARCH_RED_ZONE) & ~(uint64_t)15;
	find_errno(s, p);
	if (s->gone) {
		kit_error(err, LEAKSNAP_ERR_USAGE, p->subject,
			  "the process exited during the attach");
		goto fail;
	}
	return s;
fail:
	attach_session_end(s, NULL);
	return NULL;
}

uint64_t attach_session_next(const struct attach_session *s, size_t len)
{
	return (s->stack_low - len) & ~(uint64_t)15;
}

uint64_t attach_session_push(struct attach_session *s, const void *data, size_t len,
			     struct leaksnap_error *err)
{
	uint64_t at = attach_session_next(s, len);
	if (mem_write(s, at, data, len, err) != 0)
		return 0;
	s->stack_low = at;
	return at;
}

int attach_session_call(struct attach_session *s, const char *what, uint64_t fn,
			const uint64_t *args, unsigned n, int64_t *ret, struct leaksnap_error *err)
{
	if (s->gone)
		return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
				 "the process exited during the attach");
	uint64_t sp = (s->stack_low - 256) & ~(uint64_t)15, push_at = 0;
	s->work = s->saved;
	if (arch_setup_call(&s->work, fn, args, n, sp, RETURN_ADDR, &push_at) != 0)
		return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject, "%s: too many arguments", what);
	uint64_t expect_sp = arch_sp(&s->work);
	if (push_at) {
		uint64_t ra = RETURN_ADDR;
		if (mem_write(s, push_at, &ra, ARCH_PTR, err) != 0)
			return -1;
		expect_sp = push_at + ARCH_PTR;
	}
	if (arch_set(s->pid, &s->work) != 0)
		return kit_error(err, LEAKSNAP_ERR_IO, s->subject, "cannot set the registers: %s",
				 strerror(errno));
	if (ptrace(PTRACE_CONT, s->pid, NULL, NULL) != 0)
		return kit_error(err, LEAKSNAP_ERR_IO, s->subject, "ptrace(PTRACE_CONT): %s",
				 strerror(errno));
	double end = now() + CALL_TIMEOUT;
	for (;;) {
		int st;
		double left = end - now();
		int r = wait_stop(s, left > 0 ? left : 0, &st, err);
		if (r < 0)
			return -1;
		if (r == 0) {
			/* stopped again, and put back as it was by attach_session_end */
			if (interrupt(s, NULL) != 0)
				s->gone = true;
			return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
					 "%s did not return within %g seconds (a lock held by the "
					 "main thread?); its registers were put back, but what the "
					 "call had done by then stays (a lock it took, a library "
					 "half loaded): the process may not run as before",
					 what, CALL_TIMEOUT);
		}
		int sig = WSTOPSIG(st), event = st >> 16;
		if (event == 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL)) {
			if (arch_get(s->pid, &s->work) != 0)
				return kit_error(err, LEAKSNAP_ERR_IO, s->subject,
						 "cannot read the registers: %s", strerror(errno));
			if ((arch_pc(&s->work) & ~(uint64_t)1) == RETURN_ADDR &&
			    arch_sp(&s->work) == expect_sp) {
				*ret = arch_return(&s->work);
				return 0;
			}
			return kit_error(err, LEAKSNAP_ERR_USAGE, s->subject,
					 "%s crashed (signal %d at pc 0x%llx); its registers were "
					 "put back as they were before the call (what the call did "
					 "before the crash stays)",
					 what, sig, (unsigned long long)arch_pc(&s->work));
		}
		int pass = 0;
		if (event == 0 && deliver_now(sig))
			pass = sig;
		else if (event == 0)
			keep_signal(s, sig);
		if (ptrace(PTRACE_CONT, s->pid, NULL, (void *)(intptr_t)pass) != 0) {
			if (errno == ESRCH) {
				int st2;
				if (wait_stop(s, 1.0, &st2, err) < 0)
					return -1;
			}
			return kit_error(err, LEAKSNAP_ERR_IO, s->subject, "ptrace(PTRACE_CONT): %s",
					 strerror(errno));
		}
	}
}

int attach_session_read_string(struct attach_session *s, uint64_t addr, char *buf, size_t size)
{
	if (size == 0)
		return -1;
	size_t got = 0;
	while (got + 1 < size) {
		/* a page at a time: the string may end just before an unmapped one */
		size_t chunk = 4096 - (size_t)((addr + got) % 4096);
		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		ssize_t r = pread(s->memfd, buf + got, chunk, (off_t)(addr + got));
		if (r <= 0)
			break;
		if (memchr(buf + got, '\0', (size_t)r))
			return 0;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return got > 0 ? 0 : -1;
}

int attach_session_errno(struct attach_session *s)
{
	int v;
	if (s->errno_addr == 0 ||
	    pread(s->memfd, &v, sizeof(v), (off_t)s->errno_addr) != (ssize_t)sizeof(v))
		return -1;
	return v;
}

bool attach_session_gone(const struct attach_session *s)
{
	return s->gone;
}

int attach_session_end(struct attach_session *s, struct leaksnap_error *err)
{
	if (s == NULL)
		return 0;
	int rc = 0;
	if (!s->gone) {
		struct leaksnap_error e = {0};
		if (s->errno_addr)
			mem_write(s, s->errno_addr, &s->saved_errno, sizeof(s->saved_errno), &e);
		if (s->saved.gp_len && arch_set(s->pid, &s->saved) != 0)
			rc = kit_error(err, LEAKSNAP_ERR_IO, s->subject,
				       "cannot put the registers back: %s", strerror(errno));
		/* the signals that came meanwhile, to the thread they came to,
		 * queued while it is still stopped: before any newer one */
		for (unsigned i = 0; i < s->nsig; i++) {
			siginfo_t *si = &s->sig[i];
			if (si->si_code < 0 && si->si_code != SI_TKILL &&
			    syscall(SYS_rt_tgsigqueueinfo, s->pid, s->pid, si->si_signo, si) == 0)
				continue;
			syscall(SYS_tgkill, s->pid, s->pid, si->si_signo);
		}
		if (ptrace(PTRACE_DETACH, s->pid, NULL, NULL) != 0 && errno != ESRCH)
			rc = kit_error(err, LEAKSNAP_ERR_IO, s->subject, "ptrace(PTRACE_DETACH): %s",
				       strerror(errno));
	}
	if (s->memfd >= 0)
		close(s->memfd);
	free(s);
	return rc;
}
