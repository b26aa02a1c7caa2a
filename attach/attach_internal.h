/* leaksnap attach: what the driver's files share (never included from
 * outside attach/).  Private names: attach_ (the session, ELF reading),
 * arch_ (the one file per architecture that knows its registers). */
#ifndef LEAKSNAP_ATTACH_INTERNAL_H
#define LEAKSNAP_ATTACH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach.h"

/* The architecture leaksnap itself is built for: the only one it attaches
 * to (a register set of another is not what its ptrace calls read). */
#if defined(__x86_64__)
#define ARCH_NAME "x86-64"
#define ARCH_MACHINE 62 /* EM_X86_64 */
#define ARCH_CLASS 2    /* ELFCLASS64 */
#elif defined(__aarch64__)
#define ARCH_NAME "arm64"
#define ARCH_MACHINE 183 /* EM_AARCH64 */
#define ARCH_CLASS 2
#elif defined(__arm__)
#define ARCH_NAME "32-bit ARM"
#define ARCH_MACHINE 40 /* EM_ARM */
#define ARCH_CLASS 1
#else
#define ARCH_NAME "unsupported"
#define ARCH_MACHINE 0
#define ARCH_CLASS 0
#endif

/* ------------------------------------------------------------------------
 * The registers of a stopped thread (arch_<name>.c, one per architecture)
 * ------------------------------------------------------------------------ */

/* Every register the thread has that a called function may change:
 * general registers (with the syscall bookkeeping the kernel keeps there)
 * and the floating-point / vector state, as raw ptrace register sets. */
struct arch_state {
	uint8_t gp[512];
	size_t gp_len;
	uint8_t fp[16384];
	size_t fp_len;
	int fp_kind; /* which register set @fp holds (the architecture's choice) */
};

/* Read and write @tid's registers (@s is only read by arch_set): 0, or -1
 * with errno. */
int arch_get(int tid, struct arch_state *s);
int arch_set(int tid, struct arch_state *s);

/* Turn @s (a copy of the saved state) into a call of @fn(@args[0..n))
 * returning to @ret, the stack pointer at @sp (16-byte aligned, with room
 * below for what the call pushes).  When the call needs its return
 * address on the stack, *@push_at is where it goes (*@push_at 0: nothing
 * to push).  -1 when more arguments than registers are given. */
int arch_setup_call(struct arch_state *s, uint64_t fn, const uint64_t *args, unsigned n,
		    uint64_t sp, uint64_t ret, uint64_t *push_at);

uint64_t arch_pc(const struct arch_state *s);
uint64_t arch_sp(const struct arch_state *s);
/* The return value of a finished call (sign-extended to 64 bits for a
 * 32-bit process). */
int64_t arch_return(const struct arch_state *s);
/* The system call the thread is in or about to restart (-1: none known),
 * @insn the 4 bytes at pc - 4 and pc (for the architectures that tell by
 * the instruction). */
long arch_syscall(const struct arch_state *s, const uint8_t insn[8]);
/* Whether @code (16 bytes) is the C library's sigreturn trampoline, where
 * a signal handler returns to (the kernel's signal frame begins with its
 * address). */
bool arch_sigreturn(const uint8_t code[16]);
/* Whether the @len bytes at @frame (at address @addr in the target), which
 * begin with the trampoline's address, hold a signal frame: its saved
 * context points above it as a real one does.  false where unknown. */
bool arch_signal_frame(const uint8_t *frame, size_t len, uint64_t addr);
/* The red zone below the stack pointer that the ABI lets a function use
 * without moving it: never written. */
#define ARCH_RED_ZONE 128
/* Pointer size of the target (leaksnap's own). */
#define ARCH_PTR ((unsigned)sizeof(void *))

/* ------------------------------------------------------------------------
 * ELF files of the target (elfsym.c)
 * ------------------------------------------------------------------------ */

struct attach_elf_facts {
	unsigned cls;     /* ELFCLASS32 / ELFCLASS64 */
	unsigned machine; /* e_machine */
	unsigned type;    /* ET_EXEC, ET_DYN ... */
	bool interp;      /* has PT_INTERP */
};
/* The ELF facts of @path: 0, 1 when it is not an ELF file, -1 with errno
 * when it cannot be read. */
int attach_elf_facts(const char *path, struct attach_elf_facts *f);

/* The address, in a process that maps @path with file offset @offset at
 * @start, of its defined function or object @name (from .dynsym, else
 * .symtab; the default version of a versioned name).  0 found, 1 not
 * found, -1 (errno) the file cannot be read. */
int attach_elf_symbol(const char *path, uint64_t start, uint64_t offset, const char *name,
		      uint64_t *addr);

/* The address of @name in the module of @p's maps whose file name (the
 * last part of its path) is @module, read through @p's root: 0, 1 not
 * found (no such module or symbol), -1 with @err filled. */
int attach_module_symbol(const struct attach_proc *p, const char *module, const char *name,
			 uint64_t *addr, struct leaksnap_error *err);

/* ------------------------------------------------------------------------
 * A stopped process and calls in it (session.c)
 * ------------------------------------------------------------------------ */

struct attach_session;

/* Stop @p's main thread where it holds no lock of the C library, save
 * its registers and errno.  The thread is never stopped inside the code
 * of the C library, the loader, either hook or the module named @avoid
 * (a file name; NULL: none), unless it waits in a blocking system call
 * there.  NULL with @err filled (the process is left running as it was). */
struct attach_session *attach_session_begin(const struct attach_proc *p, const char *avoid,
					    struct leaksnap_error *err);
/* Call @fn(@args[0..n)) in the stopped thread: 0 with *@ret, or -1 with
 * @err (the process exited, crashed in the call, or it took too long).
 * @what names the function in messages. */
int attach_session_call(struct attach_session *s, const char *what, uint64_t fn,
			const uint64_t *args, unsigned n, int64_t *ret, struct leaksnap_error *err);
/* Copy @len bytes to the thread's stack, below what is in use: the
 * address, or 0 with @err filled. */
uint64_t attach_session_push(struct attach_session *s, const void *data, size_t len,
			     struct leaksnap_error *err);
/* The address the next attach_session_push of @len bytes will return. */
uint64_t attach_session_next(const struct attach_session *s, size_t len);
/* Read up to @size - 1 bytes of the string at @addr in the target into @buf
 * (NUL-terminated): 0, or -1. */
int attach_session_read_string(struct attach_session *s, uint64_t addr, char *buf, size_t size);
/* The errno of the stopped thread now: -1 when it cannot be told. */
int attach_session_errno(struct attach_session *s);
/* Put everything back (registers, errno, signals that came meanwhile) and
 * let the process go.  NULL-safe.  -1 (with @err, when not NULL) when
 * the process could not be restored (it exited). */
int attach_session_end(struct attach_session *s, struct leaksnap_error *err);
/* Whether the process exited while attached (no restore possible). */
bool attach_session_gone(const struct attach_session *s);

/* Fill @err with why process @pid cannot be traced (ptrace or /proc said
 * EPERM or EACCES), said of @subject; returns -1 (proc.c). */
int attach_perm_error(int pid, const char *subject, struct leaksnap_error *err);

/* The state of @p's main thread ('R', 'S', 'T', 'Z'...), or 0 when it
 * cannot be read (proc.c). */
char attach_thread_state(int pid);

#endif
