/* Stack capture through the toolchain's unwinder (_Unwind_Backtrace), for
 * targets without unwind_cfi().  Slow (the unwinder looks up and interprets
 * the CFI of every frame on every call) but needs nothing from us.
 *
 * _Unwind_Backtrace starts at its own caller, so the hook's own frames come
 * first.  They are dropped until the entry function's caller, the frame
 * whose IP is the entry function's return address (read by the caller
 * from the entry function's frame record): that IP becomes pcs[0]. */
#include <stddef.h>
#include <stdint.h>
#include <unwind.h>

/* hook/unwind.h has the same name: with -Ihook, <unwind.h> is ours. */
#if !defined(_UNWIND_H) && !defined(__CLANG_UNWIND_H) && !defined(_UNWIND_H_) && \
	!defined(UNWIND_ARM_H)
#error "<unwind.h> is hook/unwind.h: add hook with -iquote, not -I"
#endif

#include "unwind.h"

struct gcc_trace {
	uintptr_t skip_until; /* PAC-stripped; 0 = keep every frame */
	uintptr_t *pcs;
	int max;
	int n;
	int seen; /* frames visited, to bound a looping unwinder */
	int skipping;
};

/* Far more frames than any real stack: only a broken unwinder gets here. */
#define GCC_MAX_VISITS 4096

static _Unwind_Reason_Code gcc_trace_frame(struct _Unwind_Context *ctx,
					   void *arg)
{
	struct gcc_trace *t = arg;
	uintptr_t pc = unwind_strip_pac((uintptr_t)_Unwind_GetIP(ctx));

	if (pc == 0 || ++t->seen > GCC_MAX_VISITS)
		return _URC_END_OF_STACK;
	/* A context's IP is its callee's return address: the entry
	 * function's caller is the first frame with IP == skip_until. */
	if (t->skipping && pc != t->skip_until)
		return _URC_NO_REASON;
	t->skipping = 0;
	t->pcs[t->n++] = pc;
	return t->n < t->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* When the walk never meets @skip_until, the frames seen are the hook's
 * own, not the program's: only the caller's return address, which is known
 * all the same, is written.  That happens on 32-bit ARM whenever the caller
 * has no unwind table entry (C code built without -funwind-tables, code
 * marked cantunwind): libgcc's EHABI walk stops before such a frame, where
 * its DWARF walk reports the frame and then stops. */
int unwind_gcc(uintptr_t skip_until, uintptr_t *pcs, int max)
{
#if defined(__arm__)
	skip_until &= ~(uintptr_t)1; /* _Unwind_GetIP clears the Thumb bit */
#endif
	struct gcc_trace t = {
		.skip_until = unwind_strip_pac(skip_until),
		.pcs = pcs,
		.max = max,
	};

	if (max <= 0)
		return 0;
	t.skipping = t.skip_until != 0;
	_Unwind_Backtrace(gcc_trace_frame, &t);
	if (t.skipping) {
		pcs[0] = t.skip_until;
		return 1;
	}
	return t.n;
}
