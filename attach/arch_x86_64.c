/* leaksnap attach: the registers of an x86-64 thread.
 *
 * The general registers with orig_rax (the system call the thread was in,
 * which the kernel restarts from when the thread resumes with rax holding
 * -ERESTART...), and the whole XSAVE area (x87, SSE, AVX, AVX-512...) as
 * one register set.  A call: arguments in rdi, rsi, rdx, rcx, r8, r9, rax
 * 0 (no vector registers for a variadic callee), the return address pushed
 * on a stack aligned to 16 bytes before the call, orig_rax -1 so that the
 * kernel restarts nothing when the call starts, the direction flag clear
 * as the ABI requires at a call. */
#if defined(__x86_64__)
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "attach_internal.h"

_Static_assert(sizeof(struct user_regs_struct) <= sizeof(((struct arch_state *)0)->gp),
	       "arch_state.gp holds the general registers");

static struct user_regs_struct *gp(struct arch_state *s)
{
	return (struct user_regs_struct *)(void *)s->gp;
}

static const struct user_regs_struct *cgp(const struct arch_state *s)
{
	return (const struct user_regs_struct *)(const void *)s->gp;
}

int arch_get(int tid, struct arch_state *s)
{
	memset(s, 0, sizeof(*s));
	if (ptrace(PTRACE_GETREGS, tid, NULL, s->gp) != 0)
		return -1;
	s->gp_len = sizeof(struct user_regs_struct);
	struct iovec iov = {s->fp, sizeof(s->fp)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		s->fp_len = iov.iov_len;
		return 0;
	}
	/* no XSAVE: the legacy FXSAVE area */
	if (ptrace(PTRACE_GETFPREGS, tid, NULL, s->fp) != 0)
		return -1;
	s->fp_len = sizeof(struct user_fpregs_struct);
	s->fp_kind = 1;
	return 0;
}

int arch_set(int tid, struct arch_state *s)
{
	if (ptrace(PTRACE_SETREGS, tid, NULL, s->gp) != 0)
		return -1;
	if (s->fp_kind == 1)
		return ptrace(PTRACE_SETFPREGS, tid, NULL, s->fp) != 0 ? -1 : 0;
	struct iovec iov = {s->fp, s->fp_len};
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) != 0 ? -1 : 0;
}

int arch_setup_call(struct arch_state *s, uint64_t fn, const uint64_t *args, unsigned n,
		    uint64_t sp, uint64_t ret, uint64_t *push_at)
{
	struct user_regs_struct *r = gp(s);
	unsigned long long *slot[] = {&r->rdi, &r->rsi, &r->rdx, &r->rcx, &r->r8, &r->r9};
	if (n > sizeof(slot) / sizeof(slot[0]))
		return -1;
	for (unsigned i = 0; i < n; i++)
		*slot[i] = args[i];
	(void)ret; /* the caller writes it at *push_at */
	r->rip = fn;
	r->rax = 0;
	r->orig_rax = (unsigned long long)-1;
	r->eflags &= ~0x400ull; /* DF */
	r->rsp = (sp & ~15ull) - 8; /* as after a call: (rsp + 8) % 16 == 0 */
	*push_at = r->rsp;
	return 0;
}

uint64_t arch_pc(const struct arch_state *s)
{
	return cgp(s)->rip;
}

uint64_t arch_sp(const struct arch_state *s)
{
	return cgp(s)->rsp;
}

int64_t arch_return(const struct arch_state *s)
{
	return (int64_t)cgp(s)->rax;
}

bool arch_sigreturn(const uint8_t code[16])
{
	/* glibc's and musl's __restore_rt: mov $15, %rax; syscall */
	static const uint8_t restore_rt[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
	return memcmp(code, restore_rt, sizeof(restore_rt)) == 0;
}

bool arch_signal_frame(const uint8_t *frame, size_t len, uint64_t addr)
{
	/* struct rt_sigframe: the trampoline's address, then the ucontext
	 * (flags, link, the 24-byte stack_t), whose mcontext holds r8-r15,
	 * rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp (word 15), rip, eflags, ...,
	 * the FP state's address (word 23) */
	const size_t mc = 8 + 8 + 8 + 24;
	if (len < mc + 24 * 8)
		return false;
	uint64_t rsp, fpstate;
	memcpy(&rsp, frame + mc + 15 * 8, 8);
	memcpy(&fpstate, frame + mc + 23 * 8, 8);
	/* the frame is below the stack pointer it saved; the FP state in it */
	return rsp > addr && rsp - addr < 64 * 1024 &&
	       (fpstate == 0 || (fpstate > addr && fpstate < rsp && fpstate % 64 == 0));
}

long arch_syscall(const struct arch_state *s, const uint8_t insn[8])
{
	(void)insn;
	return (long)cgp(s)->orig_rax;
}
#endif
