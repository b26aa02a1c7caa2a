/* leaksnap hook: where glibc keeps a thread's facts in its descriptor
 * (struct pthread), learned once on the dump thread against its own
 * values: what the scan needs to read the cached stacks of ended threads
 * at their DTV only, and where a return from main() entered exit().  See
 * docs/reachability.md, "Stacks of ended threads" and "The exit dump".
 * Nothing here calls malloc (a first malloc on the dump thread would make
 * it an arena and move later mappings). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "reach.h"

static int my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

static struct reach_tcb_layout tcb_layout;

/* One word at @addr, read without faulting: through a pipe @fd, whose
 * write fails with EFAULT where nothing is mapped.  (Not process_vm_readv,
 * which qemu-user does not take.) */
static bool peek(const int fd[2], uintptr_t addr, uintptr_t *out)
{
	return write(fd[1], (const void *)addr, sizeof(*out)) == (ssize_t)sizeof(*out) &&
	       read(fd[0], out, sizeof(*out)) == (ssize_t)sizeof(*out);
}

/* The end of the mapping that holds @addr (its start in *@start), from
 * /proc/self/maps read a piece at a time into this frame (no malloc: a
 * first malloc on this thread would make it an arena, which moves later
 * mappings), or 0. */
static uintptr_t mapping_end(uintptr_t addr, uintptr_t *start)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[4096];
	size_t len = 0;
	uintptr_t end = 0;
	for (;;) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		char *line = buf, *nl;
		while ((nl = memchr(line, '\n', len - (size_t)(line - buf)))) {
			char *s;
			uintptr_t lo = (uintptr_t)strtoull(line, &s, 16), hi = 0;
			if (*s == '-')
				hi = (uintptr_t)strtoull(s + 1, NULL, 16);
			if (lo <= addr && addr < hi) {
				end = hi;
				*start = lo;
				goto out;
			}
			line = nl + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		if (len == sizeof(buf))
			len = 0; /* (a line longer than the buffer: its path) */
	}
out:
	close(fd);
	return end;
}

/* The word of the thread control block that holds the DTV pointer, from
 * the thread pointer: tcbhead_t's second word on x86 (after its self
 * pointer), its first where the TCB follows the thread pointer's target
 * (arm64, arm).  0 where not known. */
static uintptr_t dtv_word(void)
{
	uintptr_t tp;
#if defined(__x86_64__)
	__asm__("movq %%fs:0, %0" : "=r"(tp));
	return tp + sizeof(uintptr_t);
#elif defined(__i386__)
	__asm__("movl %%gs:0, %0" : "=r"(tp));
	return tp + sizeof(uintptr_t);
#elif defined(__aarch64__) || defined(__arm__)
	tp = (uintptr_t)__builtin_thread_pointer();
	return tp;
#else
	(void)tp;
	return 0;
#endif
}

#if defined(__GLIBC__) && !defined(__BIONIC__)
static size_t cleanup_off; /* the descriptor's cleanup_jmp_buf, or 0 */

static void no_cleanup(void *arg)
{
	(void)arg;
}

/* Where the descriptor names the innermost cancellation buffer (glibc's
 * cleanup_jmp_buf): the word that pthread_cleanup_push() sets to a buffer
 * in this frame.  0 when not found. */
static size_t __attribute__((noinline)) learn_cleanup_off(uintptr_t pd, size_t span)
{
	uintptr_t before[4096 / sizeof(uintptr_t)];
	size_t n = span / sizeof(uintptr_t);
	volatile size_t off = 0; /* (set between the macros' setjmp and its end) */
	if (n > sizeof(before) / sizeof(before[0]))
		n = sizeof(before) / sizeof(before[0]);
	memcpy(before, (const void *)pd, n * sizeof(uintptr_t));
	pthread_cleanup_push(no_cleanup, NULL);
	uintptr_t sp = reach_current_sp();
	const uintptr_t *now = (const uintptr_t *)pd;
	for (size_t i = 0; i < n && !off; i++)
		if (now[i] != before[i] && now[i] > sp && now[i] - sp < 4096)
			off = i * sizeof(uintptr_t);
	pthread_cleanup_pop(0);
	return off;
}
#endif

/* glibc keeps the stacks of ended threads for reuse, its descriptor
 * (struct pthread) at the same distance from each stack's end.  Learnt
 * from this thread's own, by what glibc's layout has had for ever: a list
 * node (next, prev) linked both ways, then the tid; further on, joinid,
 * which is the descriptor itself for a detached thread such as this one.
 * Everything is checked against this thread's values; any doubt leaves
 * ended stacks to be read whole, as before. */
void reach_learn_thread_layout(void)
{
#if defined(__GLIBC__) && !defined(__BIONIC__)
	struct reach_tcb_layout l = {0};
	uintptr_t lo = 0, pd = (uintptr_t)pthread_self(), top = mapping_end(pd, &lo);
	const size_t ws = sizeof(uintptr_t), limit = 4096;
	if (!top || top - pd < 4 * ws || top - pd > ((uintptr_t)1 << 20))
		return;
	size_t span = top - pd < limit ? top - pd : limit;
	int tid = my_tid(), fd[2];
	bool found = false;
	if (pipe2(fd, O_CLOEXEC) != 0)
		return;
	for (size_t off = 0; off + 3 * ws <= span && !found; off += ws) {
		uintptr_t node = pd + off, next, prev, back, fwd;
		if (!peek(fd, node, &next) || !peek(fd, node + ws, &prev) || !next || !prev ||
		    (next | prev) % ws || !peek(fd, next + ws, &back) || !peek(fd, prev, &fwd) ||
		    back != node || fwd != node)
			continue;
		int t;
		memcpy(&t, (const void *)(node + 2 * ws), sizeof(t));
		if (t != tid)
			continue;
		l.list_off = off;
		l.tid_off = off + 2 * ws;
		found = true;
	}
	close(fd[0]);
	close(fd[1]);
	if (!found)
		return;
	found = false;
	for (size_t off = l.tid_off + ws; off + ws <= span && !found; off += ws)
		if (*(const uintptr_t *)(pd + off) == pd) {
			l.joinid_off = off;
			found = true;
		}
	uintptr_t dtv = dtv_word();
	if (!found || !dtv || dtv < pd || dtv + ws > top || dtv % ws)
		return;
	l.dtv_off = dtv - pd;
	l.top_to_pd = top - pd;
	/* stackblock, stackblock_size: the stack's mapping with its guard
	 * below, which ends where the stack does */
	found = false;
	for (size_t off = 0; off + 2 * ws <= span && !found; off += ws) {
		const uintptr_t *w = (const uintptr_t *)(pd + off);
		if (w[0] <= lo && lo - w[0] <= ((uintptr_t)1 << 20) && w[0] + w[1] == top) {
			l.block_off = off;
			found = true;
		}
	}
	if (!found)
		return;
	l.ok = true;
	tcb_layout = l;
	cleanup_off = learn_cleanup_off(pd, span);
#endif
}

/* Where a return from main() entered exit(), on the main thread: glibc's
 * __libc_start_call_main keeps its cancellation buffer among its locals
 * and names it in the main thread's descriptor (cleanup_jmp_buf) before it
 * calls main, then exit.  That buffer's address, a few slots above the
 * stack pointer of that call, or 0 when not known (another thread, or no
 * such buffer between here and the stack's start). */
uintptr_t reach_main_exit_sp(void)
{
#if defined(__GLIBC__) && !defined(__BIONIC__)
	extern void *__libc_stack_end;
	if (!cleanup_off || my_tid() != (int)getpid())
		return 0;
	uintptr_t buf = *(const uintptr_t *)((uintptr_t)pthread_self() + cleanup_off);
	uintptr_t sp = reach_current_sp();
	return buf > sp && buf < (uintptr_t)__libc_stack_end ? buf : 0;
#else
	return 0;
#endif
}

struct reach_tcb_layout reach_tcb(void)
{
	return tcb_layout;
}
