/* leaksnap hook: the shadow-stack unwinder, LEAKSNAP_UNWIND=instrument.
 *
 * Code built with -finstrument-functions calls __cyg_profile_func_enter(fn,
 * call_site) after each function's prologue and __cyg_profile_func_exit
 * before its epilogue, call_site being the function's own return address.
 * libleakhook.so defines both (glibc's are empty): each thread keeps the
 * return addresses of the instrumented functions it is inside on a stack
 * of its own, mapped on its first call (never the allocator's memory) and
 * bounded: calls deeper than SHADOW_CAP are counted, not stored.  Taking a
 * backtrace is then a copy: frame 0 is the allocation's own caller (the
 * entry point's return address), then the shadow stack from the top.
 * Those are the same return addresses the frame-pointer walk reads, bit
 * for bit; code that is not instrumented leaves a gap.
 *
 * Control flow that skips the exit calls (longjmp, C++ exceptions, thread
 * cancellation) leaves entries of frames that are gone.  Each entry holds
 * an address in its function's frame, the slot where the function keeps
 * its return address (found by looking up the stack from the call for
 * that value; the call's stack pointer if it is not within reach): live
 * frames lie above every frame they called.  So an entry at or below a
 * frame being entered is stale and dropped then, an exit drops the
 * entries below its own frame before its own, and a capture skips the
 * entries at or below the allocating frame.  A frame on another stack (a
 * signal handler on sigaltstack) is told by the thread's stack bounds: an
 * address inside them is never compared with one outside (and, where the
 * bounds are not known, by distance: entries more than SAME_STACK apart
 * are never compared).  Past SHADOW_CAP, the place of the first frame not
 * stored is kept: an enter or exit at or above it means the frames it
 * counted are gone (a longjmp or throw skipped their exits), and the
 * count starts again from 0.  A signal handler that
 * allocates on the thread's own stack sees the entries of the frames it
 * interrupted, then its own, as the frame-pointer walk would. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "hook_internal.h"

/* entries: one mapping of 64 KiB, less the header */
#define SHADOW_CAP (65536u / (3 * sizeof(uintptr_t)))
#define SAME_STACK ((uintptr_t)64 << 20)
#define RA_REACH 4096u         /* words looked through for a return address */

struct shadow_ent {
	uintptr_t ra;   /* the function's return address */
	uintptr_t at;   /* where its frame keeps it (the frame's place) */
	uintptr_t same; /* calls more of this very frame: functions inlined
			 * into it, whose calls give its return address */
};

struct shadow {
	uint32_t n;    /* entries stored */
	uint32_t over; /* calls deeper than SHADOW_CAP, not stored */
	uintptr_t over_at; /* the place of the first of them */
	uintptr_t lo, hi; /* the thread's stack (0, 0: not known) */
	struct shadow_ent e[SHADOW_CAP - 2];
};
_Static_assert(sizeof(struct shadow) <= 65536, "the shadow stack is one mapping of 64 KiB");
#define SHADOW_BYTES sizeof(struct shadow)
#define SHADOW_DONE ((struct shadow *)1) /* this thread's is gone (exiting) */

#ifndef HOOK_INAPP
static HOOK_TLS struct shadow *shadow_mine;
static pthread_key_t shadow_key;
static atomic_int shadow_key_state; /* 0 none, 1 being made, 2 made, 3 failed */
#else
/* (the in-app build interposes nothing: the mode is refused there) */
#define shadow_mine ((struct shadow *)NULL)
#endif

#ifndef HOOK_INAPP
static void shadow_release(void *p)
{
	shadow_mine = SHADOW_DONE;
	hook_unmap(p, SHADOW_BYTES);
}

static struct shadow *__attribute__((noinline, cold)) shadow_make(void)
{
	if (shadow_mine == SHADOW_DONE)
		return NULL;
	int saved = errno;
	hook_busy++; /* (pthread_setspecific may allocate) */
	int st = atomic_load(&shadow_key_state);
	if (st == 0) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&shadow_key_state, &expected, 1))
			atomic_store(&shadow_key_state,
				     pthread_key_create(&shadow_key, shadow_release) == 0 ? 2 : 3);
	}
	while ((st = atomic_load(&shadow_key_state)) == 1)
		;
	struct shadow *s = hook_map(SHADOW_BYTES);
	if (s && st == 2 && pthread_setspecific(shadow_key, s) != 0) {
		hook_unmap(s, SHADOW_BYTES);
		s = NULL;
	}
	/* the stack's bounds: no look for a return address reads past them */
	pthread_attr_t attr;
	if (s && pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			s->lo = (uintptr_t)addr;
			s->hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	shadow_mine = s ? s : SHADOW_DONE;
	hook_busy--;
	errno = saved;
	return s;
}
#endif

static inline uintptr_t ra_clean(uintptr_t ra)
{
#if defined(__arm__)
	return ra & ~(uintptr_t)1; /* as the EHABI walk writes them */
#else
	return unwind_strip_pac_inline(ra);
#endif
}

/* Where, from @sp up, a frame on the stack [@lo, @hi) keeps the return
 * address @ra: its slot, or @sp when it is not within RA_REACH words (or
 * @sp is on another stack, whose bounds are not known). */
static inline uintptr_t NO_SANITIZE ra_slot(uintptr_t sp, uintptr_t ra, uintptr_t lo,
					    uintptr_t hi)
{
	if (sp < lo || sp >= hi)
		return sp;
	const uintptr_t *w = (const uintptr_t *)sp;
	size_t reach = (hi - sp) / sizeof(uintptr_t);
	if (reach > RA_REACH)
		reach = RA_REACH;
	for (size_t i = 0; i < reach; i++)
		if (ra_clean(w[i]) == ra)
			return (uintptr_t)&w[i];
	return sp;
}

/* Where the frames entered from a call site keep their return address, as
 * an offset from the stack pointer at the enter call, remembered per call
 * site: a frame's layout does not change, so the look-up is mostly one
 * read, checked (a call through a pointer may reach functions of other
 * layouts; alloca moves the offset: then the look-up is done again).
 * Entries {return address << 16 | offset in words}, read and written
 * without a lock: a stale one only fails its check. */
#define SLOT_MEMO_BITS 10
static _Atomic uint64_t slot_memo[1u << SLOT_MEMO_BITS];

static inline uintptr_t NO_SANITIZE ra_slot_memo(uintptr_t sp, uintptr_t ra, uintptr_t lo,
						 uintptr_t hi)
{
	if (sp < lo || sp >= hi)
		return sp;
	_Atomic uint64_t *m = &slot_memo[((uint64_t)ra * 0x9e3779b97f4a7c15ULL) >> (64 - SLOT_MEMO_BITS)];
	uint64_t v = atomic_load_explicit(m, memory_order_relaxed);
	if (v >> 16 == (uint64_t)ra) {
		uintptr_t at = sp + (uintptr_t)(v & 0xffff) * sizeof(uintptr_t);
		if (at < hi && ra_clean(*(const uintptr_t *)at) == ra)
			return at;
	}
	uintptr_t at = ra_slot(sp, ra, lo, hi);
	uint64_t off = (at - sp) / sizeof(uintptr_t);
	if (at != sp && off <= 0xffff && (uint64_t)ra >> 48 == 0)
		atomic_store_explicit(m, (uint64_t)ra << 16 | off, memory_order_relaxed);
	return at;
}

/* @a and @b (@a <= @b) lie on the same stack of the thread of @s: both
 * inside its stack's bounds or both outside them (a sigaltstack mapped
 * near the stack is another stack); bounds not known, closer than
 * SAME_STACK. */
static inline bool same_stack(const struct shadow *s, uintptr_t a, uintptr_t b)
{
	if (s->lo < s->hi)
		return (a >= s->lo && a < s->hi) == (b >= s->lo && b < s->hi) &&
		       ((a >= s->lo && a < s->hi) || b - a < SAME_STACK);
	return b - a < SAME_STACK;
}

/* @a lies at or below @b on the same stack. */
static inline bool at_or_below(const struct shadow *s, uintptr_t a, uintptr_t b)
{
	return a <= b && same_stack(s, a, b);
}

#if defined(__aarch64__) && !defined(HOOK_INAPP)
/* arm64 keeps a function's frame record at the bottom of its frame, so the
 * slot of a return address depends on the frame's size, and a frame that
 * replaced a gone one of another size is not told from it by the slots
 * alone.  GCC and clang keep frame records there even at -O2: when the
 * function entered (@fp, its frame pointer, whose record holds @ra) and its
 * caller both have one, the caller's return address is in the caller's
 * record, and the topmost entry of @s[0..@n) with that address is the
 * caller's own: every entry above it is gone.  Returns the entries that
 * stay (@n when the records do not tell). */
static uint32_t NO_SANITIZE caller_by_records(const struct shadow *s, uint32_t n, uintptr_t fp,
					      uintptr_t sp, uintptr_t ra)
{
	if (fp < sp || fp - sp > 65536 || (fp & 15) || ra_clean(((const uintptr_t *)fp)[1]) != ra)
		return n; /* no record of its own */
	uintptr_t up = ((const uintptr_t *)fp)[0];
	if (up <= fp || up - fp > SAME_STACK || (up & 15))
		return n;
	uintptr_t ra_up = ra_clean(((const uintptr_t *)up)[1]);
	for (uint32_t i = n, seen = 0; i-- > 0 && seen < 64; seen++)
		if (s->e[i].ra == ra_up)
			return i + 1;
	return n;
}
#endif

#ifndef HOOK_INAPP
EXPORT void __attribute__((no_instrument_function)) __cyg_profile_func_enter(void *fn,
									    void *call_site)
{
	(void)fn;
	if (HOOK_LIKELY(hook_cfg.unwind != HOOK_UNWIND_INSTRUMENT))
		return;
	struct shadow *s = shadow_mine;
	if (HOOK_UNLIKELY(!s) || HOOK_UNLIKELY(s == SHADOW_DONE)) {
		if (s == SHADOW_DONE || !(s = shadow_make()))
			return;
	}
	uintptr_t ra = ra_clean((uintptr_t)call_site);
	uintptr_t at = ra_slot_memo(caller_sp(), ra, s->lo, s->hi);
	uint32_t n = s->n;
	if (HOOK_UNLIKELY(s->over)) {
		/* at or above the first frame not stored: the frames counted
		 * are gone (their exits skipped), the stored ones are compared */
		if (!at_or_below(s, s->over_at, at)) {
			s->over++;
			return;
		}
		s->over = 0;
	}
	/* a function inlined into the one on top: the same frame */
	if (n && s->e[n - 1].ra == ra && s->e[n - 1].at == at) {
		s->e[n - 1].same++;
		return;
	}
	/* entries at or below this frame are of frames that are gone */
	while (n && at_or_below(s, s->e[n - 1].at, at))
		n--;
#if defined(__aarch64__)
	n = caller_by_records(s, n, ((const uintptr_t *)__builtin_frame_address(0))[0], caller_sp(),
			      ra);
#endif
	if (HOOK_UNLIKELY(n >= SHADOW_CAP - 2)) {
		s->n = n;
		s->over_at = at;
		s->over = 1;
		return;
	}
	s->e[n].ra = ra;
	s->e[n].at = at;
	s->e[n].same = 0;
	/* the entry is whole before a signal handler on this thread can see it */
	atomic_signal_fence(memory_order_release);
	s->n = n + 1;
}

EXPORT void __attribute__((no_instrument_function)) __cyg_profile_func_exit(void *fn,
									   void *call_site)
{
	(void)fn;
	if (HOOK_LIKELY(hook_cfg.unwind != HOOK_UNWIND_INSTRUMENT))
		return;
	struct shadow *s = shadow_mine;
	if (HOOK_UNLIKELY(!s) || HOOK_UNLIKELY(s == SHADOW_DONE))
		return;
	uintptr_t ra = ra_clean((uintptr_t)call_site);
	uint32_t n = s->n;
	uintptr_t sp = caller_sp();
	if (HOOK_UNLIKELY(s->over)) {
		uintptr_t at = ra_slot_memo(sp, ra, s->lo, s->hi);
		if (!at_or_below(s, s->over_at, at)) {
			s->over--; /* a frame below the first not stored */
			return;
		}
		/* the first frame not stored, or one above it: every frame
		 * counted is gone */
		s->over = 0;
		if (at == s->over_at)
			return;
	}
	/* the usual case: this function's own entry on top */
	if (HOOK_LIKELY(n && s->e[n - 1].ra == ra && !at_or_below(s, s->e[n - 1].at, sp - 1))) {
		if (s->e[n - 1].same)
			s->e[n - 1].same--;
		else
			s->n = n - 1;
		return;
	}
	uintptr_t at = ra_slot_memo(sp, ra, s->lo, s->hi);
	while (n && s->e[n - 1].at < at && at_or_below(s, s->e[n - 1].at, at))
		n--;
	if (n && s->e[n - 1].at == at && s->e[n - 1].same) {
		s->e[n - 1].same--;
	} else if (n && s->e[n - 1].at == at) {
		n--;
	}
	s->n = n;
}
#endif

int unwind_instr(const struct unwind_regs *regs, uintptr_t *pcs, int max)
{
	if (max <= 0)
		return 0;
	pcs[0] = ra_clean(unwind_regs_ra(regs));
	int k = 1;
	struct shadow *s = shadow_mine;
	if (!s || s == SHADOW_DONE)
		return k;
	/* the allocating frame: where the entry point keeps its return
	 * address (its frame record on x86-64 and arm64) */
#if defined(__x86_64__) || defined(__aarch64__)
	uintptr_t here = regs->fp + sizeof(uintptr_t);
#else
	uintptr_t here = ra_slot(regs->sp, pcs[0], s->lo, s->hi);
#endif
	atomic_signal_fence(memory_order_acquire);
	for (uint32_t i = s->n; i-- > 0 && k < max;) {
		const struct shadow_ent *e = &s->e[i];
		if (at_or_below(s, e->at, here))
			continue; /* a frame below the allocation's: gone */
		pcs[k++] = e->ra;
	}
	return k;
}
