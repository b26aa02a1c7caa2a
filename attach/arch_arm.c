/* leaksnap attach: the registers of a 32-bit ARM thread.
 *
 * PTRACE_GETREGS (r0-r15, cpsr, orig_r0) and PTRACE_GETVFPREGS (d0-d31,
 * fpscr).  As on arm64, a system call to be restarted is already rewound
 * when ptrace sees the thread.  A call: arguments in r0-r3, the return
 * address in lr, sp 8-byte aligned (16 here); a Thumb function (its
 * address odd) runs with the T bit of cpsr set.  The system call a thread
 * waits in: an "svc 0" (ARM or Thumb) before pc or at it, its number in
 * r7. */
#if defined(__arm__)
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "attach_internal.h"

#ifndef PTRACE_GETVFPREGS
#define PTRACE_GETVFPREGS 27
#define PTRACE_SETVFPREGS 28
#endif
#define VFP_SIZE (32 * 8 + 4) /* d0-d31, fpscr */
#define CPSR_T 0x20u

struct arm_regs {
	unsigned long uregs[18]; /* r0-r15, cpsr, orig_r0 */
};

int arch_get(int tid, struct arch_state *s)
{
	memset(s, 0, sizeof(*s));
	if (ptrace(PTRACE_GETREGS, tid, NULL, s->gp) != 0)
		return -1;
	s->gp_len = sizeof(struct arm_regs);
	if (ptrace(PTRACE_GETVFPREGS, tid, NULL, s->fp) != 0)
		return -1;
	s->fp_len = VFP_SIZE;
	return 0;
}

int arch_set(int tid, struct arch_state *s)
{
	if (ptrace(PTRACE_SETREGS, tid, NULL, s->gp) != 0)
		return -1;
	return ptrace(PTRACE_SETVFPREGS, tid, NULL, s->fp) != 0 ? -1 : 0;
}

static struct arm_regs *gp(struct arch_state *s)
{
	return (struct arm_regs *)(void *)s->gp;
}

static const struct arm_regs *cgp(const struct arch_state *s)
{
	return (const struct arm_regs *)(const void *)s->gp;
}

int arch_setup_call(struct arch_state *s, uint64_t fn, const uint64_t *args, unsigned n,
		    uint64_t sp, uint64_t ret, uint64_t *push_at)
{
	struct arm_regs *r = gp(s);
	if (n > 4)
		return -1;
	for (unsigned i = 0; i < n; i++)
		r->uregs[i] = (unsigned long)args[i];
	r->uregs[14] = (unsigned long)ret;
	r->uregs[13] = (unsigned long)(sp & ~15ull);
	if (fn & 1) {
		r->uregs[15] = (unsigned long)(fn & ~1ull);
		r->uregs[16] |= CPSR_T;
	} else {
		r->uregs[15] = (unsigned long)fn;
		r->uregs[16] &= ~(unsigned long)CPSR_T;
	}
	r->uregs[16] &= ~0x0600fc00ul; /* no IT block in progress */
	r->uregs[17] = (unsigned long)-1; /* orig_r0: nothing to restart */
	*push_at = 0;
	return 0;
}

uint64_t arch_pc(const struct arch_state *s)
{
	return cgp(s)->uregs[15];
}

uint64_t arch_sp(const struct arch_state *s)
{
	return cgp(s)->uregs[13];
}

int64_t arch_return(const struct arch_state *s)
{
	return (int64_t)(int32_t)cgp(s)->uregs[0];
}

/* A signal handler is not told apart here yet: not called in on x86-64
 * only (docs/attach.md). */
bool arch_sigreturn(const uint8_t code[16])
{
	(void)code;
	return false;
}

bool arch_signal_frame(const uint8_t *frame, size_t len, uint64_t addr)
{
	(void)frame;
	(void)len;
	(void)addr;
	return false;
}

long arch_syscall(const struct arch_state *s, const uint8_t insn[8])
{
	static const uint8_t arm_svc0[4] = {0x00, 0x00, 0x00, 0xef};
	static const uint8_t thumb_svc0[2] = {0x00, 0xdf};
	if (memcmp(insn, arm_svc0, 4) == 0 || memcmp(insn + 4, arm_svc0, 4) == 0 ||
	    memcmp(insn + 2, thumb_svc0, 2) == 0 || memcmp(insn + 4, thumb_svc0, 2) == 0)
		return (long)cgp(s)->uregs[7];
	return -1;
}
#endif
