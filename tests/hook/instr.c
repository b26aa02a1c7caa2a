/* Program for LEAKSNAP_UNWIND=instrument (t-instrument.sh), built with
 * -finstrument-functions (and frame pointers, so that the fp walk can be
 * compared with it).  Each case leaks blocks of a size of its own:
 *   3001 x2  malloc at the end of a chain (chain1 ... chain5)
 *   3002 x1  after a longjmp out of jump3 (jump1 -> jump2 -> jump3) back
 *            into jump_root: allocated by after_jump, called from jump_root
 *   3003 x1  in a signal handler (on_signal), raised from sig2 (sig1 -> sig2)
 *   3004 x1  in a cancelled thread's cleanup handler (cleanup), the thread
 *            cancelled in cancel3 (cancel1 -> cancel2 -> cancel3)
 *   3005 x1  after the longjmp, from a deeper chain (after_jump -> deeper)
 *   3006 x1  in a thread that never called an instrumented function before
 *            (bare_thread is, but the allocation is in its first call)
 *   3007 x1  through a function built without instrumentation (plain_alloc,
 *            tests/hook/instr_plain.c): a gap
 *   3008 x1  in with_inline, after a call of a function inlined into it
 *            (whose enter and exit calls give with_inline's own return
 *            address)
 *   3009 x1  at the bottom of a recursion 5000 deep (deeper than the shadow
 *            stack holds), 3010 x1 from after_deep once it has returned
 *   3011 x1  after a longjmp from the bottom of a recursion 5000 deep back
 *            into deep_root: deep_root -> deep_c1 -> deep_c2 (the calls
 *            counted past the shadow stack's end are gone)
 *   3020 x1  in a signal handler (alt_handler) on a sigaltstack mapped just
 *            above its thread's stack, raised from alt_c2 (alt_thread ->
 *            alt_c1 -> alt_c2): the thread's entries stay (another stack is
 *            told by the thread's stack bounds, not by distance).  Not
 *            compared with the fp walk, which stops at the signal frame
 *            there.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *instr_keep[16];
static int nkeep;
static volatile int sink;
static jmp_buf jb;

#define NOTAIL() __asm__ volatile("" ::: "memory"); sink++
#define FN __attribute__((noinline))

void *plain_alloc(size_t n); /* instr_plain.c, not instrumented */

FN void chain5(void) { instr_keep[nkeep++] = malloc(3001); NOTAIL(); }
FN void chain4(void) { chain5(); NOTAIL(); }
FN void chain3(void) { chain4(); NOTAIL(); }
FN void chain2(void) { chain3(); NOTAIL(); }
FN void chain1(void) { chain2(); NOTAIL(); }

FN void jump3(void) { longjmp(jb, 1); }
FN void jump2(void) { jump3(); NOTAIL(); }
FN void jump1(void) { jump2(); NOTAIL(); }
FN void deeper(void) { instr_keep[nkeep++] = malloc(3005); NOTAIL(); }
FN void after_jump(void)
{
	instr_keep[nkeep++] = malloc(3002);
	NOTAIL();
	deeper();
	NOTAIL();
}
FN void jump_root(void)
{
	if (setjmp(jb) == 0)
		jump1();
	after_jump();
	NOTAIL();
}

FN void on_signal(int sig)
{
	(void)sig;
	instr_keep[nkeep++] = malloc(3003);
	NOTAIL();
}
FN void sig2(void) { raise(SIGUSR1); NOTAIL(); }
FN void sig1(void) { sig2(); NOTAIL(); }

FN void cleanup(void *arg)
{
	(void)arg;
	instr_keep[nkeep++] = malloc(3004);
	NOTAIL();
}
FN void cancel3(void)
{
	for (;;)
		pthread_testcancel();
}
FN void cancel2(void) { cancel3(); NOTAIL(); }
FN void cancel1(void) { cancel2(); NOTAIL(); }
FN void *cancel_thread(void *arg)
{
	pthread_cleanup_push(cleanup, arg);
	cancel1();
	pthread_cleanup_pop(0);
	return NULL;
}

FN void *bare_thread(void *arg)
{
	(void)arg;
	instr_keep[nkeep++] = malloc(3006);
	NOTAIL();
	return NULL;
}

static inline __attribute__((always_inline)) void inlined(void) { NOTAIL(); }
FN void with_inline(void)
{
	inlined();
	instr_keep[nkeep++] = malloc(3008);
	NOTAIL();
}

FN void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	else
		instr_keep[nkeep++] = malloc(3009);
	NOTAIL();
}
FN void after_deep(void) { instr_keep[nkeep++] = malloc(3010); NOTAIL(); }

static jmp_buf deep_jb;
static volatile int deep_go = 1; /* (the recursion has an end, for the compiler) */
FN void deep_jump(int n)
{
	if (n > 0)
		deep_jump(n - 1);
	else if (deep_go)
		longjmp(deep_jb, 1);
	NOTAIL();
}
FN void deep_c2(void) { instr_keep[nkeep++] = malloc(3011); NOTAIL(); }
FN void deep_c1(void) { deep_c2(); NOTAIL(); }
FN void deep_root(void)
{
	if (setjmp(deep_jb) == 0)
		deep_jump(5000);
	deep_c1();
	NOTAIL();
}

FN void alt_handler(int sig)
{
	(void)sig;
	instr_keep[nkeep++] = malloc(3020);
	NOTAIL();
}
FN void alt_c2(void) { raise(SIGUSR2); NOTAIL(); }
FN void alt_c1(void) { alt_c2(); NOTAIL(); }
FN void *alt_thread(void *arg)
{
	(void)arg;
	pthread_attr_t attr;
	void *lo;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0 ||
	    pthread_attr_getstack(&attr, &lo, &size) != 0)
		return NULL;
	pthread_attr_destroy(&attr);
	/* the first free 64 KiB from 1 MiB above the stack's top (well
	 * within the 64 MiB the distance rule took for one stack) */
	void *alt = MAP_FAILED;
	for (uintptr_t off = 1u << 20; off < (48u << 20) && alt == MAP_FAILED; off += 1u << 20)
		alt = mmap((char *)lo + size + off, 1u << 16, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (alt == MAP_FAILED)
		return NULL;
	stack_t ss = {.ss_sp = alt, .ss_size = 1u << 16};
	sigaltstack(&ss, NULL);
	alt_c1();
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return NULL;
}

int main(void)
{
	chain1();
	chain1();
	jump_root();
	signal(SIGUSR1, on_signal);
	sig1();
	pthread_t t;
	pthread_create(&t, NULL, cancel_thread, NULL);
	usleep(20000);
	pthread_cancel(t);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, bare_thread, NULL);
	pthread_join(t, NULL);
	instr_keep[nkeep++] = plain_alloc(3007);
	with_inline();
	deep(5000);
	after_deep();
	deep_root();
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alt_handler;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	pthread_create(&t, NULL, alt_thread, NULL);
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
