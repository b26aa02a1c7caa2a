/* leaksnap attach: the registers of an arm64 thread.
 *
 * NT_PRSTATUS (x0-x30, sp, pc, pstate) and NT_PRFPREG (v0-v31, fpsr,
 * fpcr).  A thread stopped in a system call the kernel will restart has
 * already been rewound when ptrace sees it (pc on the svc, x0 its first
 * argument again): putting the registers back restarts it.  A call:
 * arguments in x0-x7, the return address in x30 (lr), sp 16-byte aligned.
 * The system call a thread waits in is told by the instruction: an svc at
 * pc (to be restarted) or at pc - 4 (returned), its number in x8. */
#if defined(__aarch64__)
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <asm/ptrace.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "attach_internal.h"

_Static_assert(sizeof(struct user_pt_regs) <= sizeof(((struct arch_state *)0)->gp),
	       "arch_state.gp holds the general registers");

static struct user_pt_regs *gp(struct arch_state *s)
{
	return (struct user_pt_regs *)(void *)s->gp;
}

static const struct user_pt_regs *cgp(const struct arch_state *s)
{
	return (const struct user_pt_regs *)(const void *)s->gp;
}

int arch_get(int tid, struct arch_state *s)
{
	memset(s, 0, sizeof(*s));
	struct iovec iov = {s->gp, sizeof(struct user_pt_regs)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0)
		return -1;
	s->gp_len = iov.iov_len;
	struct iovec fiov = {s->fp, sizeof(s->fp)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &fiov) != 0)
		return -1;
	s->fp_len = fiov.iov_len;
	return 0;
}

int arch_set(int tid, struct arch_state *s)
{
	struct iovec iov = {s->gp, s->gp_len};
	if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0)
		return -1;
	struct iovec fiov = {s->fp, s->fp_len};
	return ptrace(PTRACE_SETREGSET, tid, (void *)NT_PRFPREG, &fiov) != 0 ? -1 : 0;
}

int arch_setup_call(struct arch_state *s, uint64_t fn, const uint64_t *args, unsigned n,
		    uint64_t sp, uint64_t ret, uint64_t *push_at)
{
	struct user_pt_regs *r = gp(s);
	if (n > 8)
		return -1;
	for (unsigned i = 0; i < n; i++)
		r->regs[i] = args[i];
	r->regs[30] = ret;
	r->pc = fn;
	r->sp = sp & ~15ull;
	*push_at = 0;
	return 0;
}

uint64_t arch_pc(const struct arch_state *s)
{
	return cgp(s)->pc;
}

uint64_t arch_sp(const struct arch_state *s)
{
	return cgp(s)->sp;
}

int64_t arch_return(const struct arch_state *s)
{
	return (int64_t)cgp(s)->regs[0];
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
	static const uint8_t svc0[4] = {0x01, 0x00, 0x00, 0xd4}; /* svc #0 */
	if (memcmp(insn, svc0, 4) == 0 || memcmp(insn + 4, svc0, 4) == 0)
		return (long)cgp(s)->regs[8];
	return -1;
}
#endif
