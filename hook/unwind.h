/* leaksnap hook: stack capture.  Internal to hook/ (the hook's public header
 * is leakhook.h).  Nothing here allocates, takes a lock that malloc takes, or
 * calls into libc beyond what is async-signal-safe: every function may run
 * inside malloc, on any thread, concurrently. */
#ifndef LEAKSNAP_HOOK_UNWIND_H
#define LEAKSNAP_HOOK_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#define WORD sizeof(uintptr_t)

/* The walkers read stack words outside their own frame: to ASan (and HWASan)
 * that looks like an overflow; they are bounded by the stack range instead. */
#if defined(__clang__)
#define NO_SANITIZE __attribute__((no_sanitize("address", "hwaddress")))
#elif defined(__GNUC__) && __GNUC__ >= 8
#define NO_SANITIZE __attribute__((no_sanitize_address))
#else
#define NO_SANITIZE
#endif

/* Registers of the hook's entry function (malloc, free, ...) at a point after
 * its prologue.  The entry function is compiled with frame pointers, so @fp
 * is its frame record: fp[0] = the caller's frame pointer, fp[1] = its
 * return address (x86-64 rbp, arm64 x29; the same layout on both). */
struct unwind_regs {
	uintptr_t pc; /* an address inside the entry function */
	uintptr_t sp; /* its stack pointer */
	uintptr_t fp; /* its frame pointer */
#if !defined(__x86_64__) && !defined(__aarch64__)
	/* Its return address, where its frame pointer does not lead to it:
	 * GCC's 32-bit ARM frames have no fixed record layout (Thumb code's
	 * r7 points below the locals, ARM code's fp at the saved lr). */
	uintptr_t ra;
#endif
};

/* The calling thread's stack: every read the walkers make is inside
 * [lo, hi) (lo = the entry function's sp, hi = the top of the stack). */
struct unwind_stack {
	uintptr_t lo, hi;
};

/* Capture the registers of the function this macro is expanded in. */
#if defined(__x86_64__)
#define UNWIND_REGS_HERE(r)                                                     \
	do {                                                                    \
		__asm__ volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1"          \
				 : "=r"((r)->pc), "=r"((r)->sp));               \
		(r)->fp = (uintptr_t)__builtin_frame_address(0);                \
	} while (0)
#elif defined(__aarch64__)
#define UNWIND_REGS_HERE(r)                                                     \
	do {                                                                    \
		__asm__ volatile("adr %0, .\n\tmov %1, sp"                      \
				 : "=r"((r)->pc), "=r"((r)->sp));               \
		(r)->fp = (uintptr_t)__builtin_frame_address(0);                \
	} while (0)
#else
#define UNWIND_REGS_HERE(r)                                                     \
	do {                                                                    \
		(r)->fp = (uintptr_t)__builtin_frame_address(0);                \
		(r)->sp = (r)->fp;                                              \
		(r)->pc = 0;                                                    \
		(r)->ra = (uintptr_t)__builtin_return_address(0);               \
	} while (0)
#endif

/* The entry function's return address (the address its caller resumes
 * at; on 32-bit ARM with the Thumb bit as the call left it). */
static inline uintptr_t unwind_regs_ra(const struct unwind_regs *r)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return ((const uintptr_t *)r->fp)[1];
#else
	return r->ra;
#endif
}

/* Strip arm64 pointer-authentication bits from a return address (see
 * unwind_fp.c for the choice of mask); the inline form is for hot paths. */
static inline uintptr_t unwind_strip_pac_inline(uintptr_t pc)
{
#if defined(__aarch64__)
	if (!(pc & ((uintptr_t)1 << 55)))
		pc &= ((uintptr_t)1 << 48) - 1;
#endif
	return pc;
}
uintptr_t unwind_strip_pac(uintptr_t pc);

/* A running hash of the return addresses a walk writes: the stacks'
 * identity in the tables (table.c, stack_hash), taken during the frame
 * walk where its multiplies overlap the walk's loads.  Each step is a
 * rotate, a xor and a multiply by an odd constant: a bijection of the hash
 * for a given frame and of the frame for a given hash, so two stacks of one
 * depth that differ in a single frame never share a hash. */
#define UNWIND_HASH_SEED 0x9e3779b97f4a7c15ULL
static inline uint64_t unwind_hash_step(uint64_t h, uintptr_t pc)
{
	return ((h << 23 | h >> 41) ^ (uint64_t)pc) * 0xff51afd7ed558ccdULL;
}

/* Frame-pointer walk.  Writes the return addresses of the frames above the
 * entry function described by @regs: pcs[0] = the entry function's own
 * return address (its caller), pcs[1] = the caller's, ...  Stops at @max,
 * at a frame pointer outside @stk, misaligned or not strictly increasing,
 * at a return address below 4096, or (after frame 0) at one that is not
 * plausible: inside @stk, inside the range unwind_fp_exclude() set, or
 * outside every executable segment of the loaded modules (where glibc has
 * _dl_find_object, and on bionic).  Returns the number written. */
int unwind_fp(const struct unwind_regs *regs, const struct unwind_stack *stk,
	      uintptr_t *pcs, int max);
/* The same, and @*hash: unwind_hash_step() from UNWIND_HASH_SEED over the
 * return addresses written. */
int unwind_fp_hashed(const struct unwind_regs *regs, const struct unwind_stack *stk,
		     uintptr_t *pcs, int max, uint64_t *hash);

/* Return addresses in [@lo, @hi) end a frame-pointer walk (the hook's own
 * code: a record that leads there is a stale one).  _self: the module
 * this code is in (called once at start-up; takes the loader's lock). */
void unwind_fp_exclude(uintptr_t lo, uintptr_t hi);
void unwind_fp_exclude_self(void);

/* Unwinding from the modules' DWARF call-frame information (.eh_frame via
 * PT_GNU_EH_FRAME), correct for code built without frame pointers.  Same
 * contract as unwind_fp().  With @fp_fallback, a frame whose PC has no CFI
 * (JIT code, a module without unwind tables) is stepped by its frame record
 * when that looks valid.  Rules are cached per PC. */
int unwind_cfi(const struct unwind_regs *regs, const struct unwind_stack *stk,
	       uintptr_t *pcs, int max, bool fp_fallback);

/* Where the table may keep the stack number of this thread's last
 * unwind_cfi() result: a word of the walk memo entry it came from (0 until
 * the table writes it, reset when the entry is refilled), or NULL.  Valid
 * until the thread's next walk (the hook does not walk in between: its
 * own allocations are untracked). */
uint64_t *unwind_cfi_stack_slot(void);

/* The shadow stack of -finstrument-functions code (unwind_instr.c,
 * LEAKSNAP_UNWIND=instrument): pcs[0] = the entry function's return
 * address, then the return addresses of the instrumented functions the
 * thread is inside, innermost first (entries of frames at or below the
 * entry function's, which longjmp or an exception left, skipped).
 * Returns the number written. */
int unwind_instr(const struct unwind_regs *regs, uintptr_t *pcs, int max);

/* Whether unwind_cfi() is implemented on this target (else the hook uses
 * unwind_gcc()). */
bool unwind_cfi_supported(void);

/* Forget cached rules (call when a module may have been unloaded). */
void unwind_cfi_flush(void);

/* Fallback for targets without unwind_cfi(): _Unwind_Backtrace from the
 * toolchain's unwinder (slow: about 1.5 us a capture; on 32-bit ARM it
 * reads the EHABI tables, .ARM.exidx).  Frames up to and including the
 * one whose return address is @skip_until (the entry function's return
 * address, unwind_regs_ra()) are dropped first.  On 32-bit ARM the
 * addresses written have the Thumb bit clear. */
int unwind_gcc(uintptr_t skip_until, uintptr_t *pcs, int max);

/* Whether the frame-pointer walk can follow frame records on this target.
 * Not on 32-bit ARM: GCC keeps none there (see struct unwind_regs), so
 * LEAKSNAP_UNWIND=fp records frame 0, the entry function's return address,
 * only, and the other modes use unwind_gcc(). */
#if defined(__arm__)
#define UNWIND_FP_RECORDS 0
#define UNWIND_GCC_NAME "ehabi" /* the dump's unwinder= for unwind_gcc() */
#else
#define UNWIND_FP_RECORDS 1
#define UNWIND_GCC_NAME "libgcc"
#endif

#endif
