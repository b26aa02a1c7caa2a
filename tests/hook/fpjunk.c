/* A frame-pointer walk through code without frame pointers (t-hook-leaks.sh).
 *
 * junk_alloc() calls malloc with the frame-pointer register pointing at a
 * two-word "record" in its caller's frame, as code built without frame
 * pointers may leave it (the register holds whatever that code kept there):
 * the record's return address is the word given, its link 0.  The walk
 * must take frame 0 (the hook's malloc's return address, in junk_alloc)
 * and stop at the record unless its word is a plausible return address:
 *   1101 bytes  a data address (a global variable)
 *   1102 bytes  a stack address
 *   1103 bytes  an address inside the hook's malloc
 *   1104 bytes  a small integer in the high half, 0x00007ffd0000000d
 *   1105 bytes  an address in the program's code (main's): taken, 2 frames
 * Every block is leaked.  x86-64 only; elsewhere prints "fpjunk skipped". */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uintptr_t data_word;

#if defined(__x86_64__)
/* malloc(@n) with rbp = @rec; the red zone and the call's alignment kept. */
static __attribute__((noinline)) void *junk_alloc(const uintptr_t *rec, size_t n)
{
	void *p;
	uintptr_t r = (uintptr_t)rec;
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %%rbp\n\t"
			 "push %%rbx\n\t"
			 "mov %%rsp, %%rbx\n\t"
			 "and $-16, %%rsp\n\t"
			 "mov %%rcx, %%rbp\n\t"
			 "call malloc@PLT\n\t"
			 "mov %%rbx, %%rsp\n\t"
			 "pop %%rbx\n\t"
			 "pop %%rbp\n\t"
			 "add $128, %%rsp"
			 : "=a"(p), "+c"(r), "+D"(n)
			 :
			 : "rdx", "rsi", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3",
			   "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
			   "xmm12", "xmm13", "xmm14", "xmm15", "memory", "cc");
	return p;
}

static __attribute__((noinline)) void run_junk(uintptr_t ra, size_t n)
{
	volatile uintptr_t rec[2] = {0, ra};
	void *p = junk_alloc((const uintptr_t *)rec, n);
	if (!p)
		abort();
	data_word += (uintptr_t)p & 1;
}

int main(void)
{
	uintptr_t stack_word = 0;
	void *hook_malloc = dlsym(RTLD_DEFAULT, "malloc");
	run_junk((uintptr_t)&data_word + 8, 1101);
	run_junk((uintptr_t)&stack_word, 1102);
	run_junk((uintptr_t)hook_malloc + 16, 1103);
	run_junk((uintptr_t)0x00007ffd0000000dULL, 1104);
	run_junk((uintptr_t)(void *)main + 8, 1105);
	printf("fpjunk ok\n");
	return 0;
}
#else
int main(void)
{
	printf("fpjunk skipped\n");
	return 0;
}
#endif
