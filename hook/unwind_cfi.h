/* leaksnap hook: the CFI unwinder's internal declarations, shared by its
 * files (and by nothing else):
 *   unwind_cfi_parse.c  reading .eh_frame / .eh_frame_hdr, the CFA program:
 *                       the rule of a PC (the slow path)
 *   unwind_cfi_rules.c  the rule cache, "no module" re-checks
 *   unwind_cfi_trace.c  the trace cache (per-thread previous walk)
 *   unwind_cfi.c        the walk, unwind_cfi() and unwind_cfi_flush()
 * The hot helpers (rule_lookup(), trace_begin(), trace_check(), ...) are
 * static inline here so that the walk stays one function. */
#ifndef LEAKSNAP_HOOK_UNWIND_CFI_H
#define LEAKSNAP_HOOK_UNWIND_CFI_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _dl_find_object: else CFI_SUPPORTED quietly is 0 */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__BIONIC__)
#include <link.h>
#else
#include <dlfcn.h>
#endif

#include "unwind.h"

/* _dl_find_object (glibc 2.35) is lock-free and async-signal-safe.  Older
 * glibc only has dl_iterate_phdr, which takes the loader's lock (held
 * while dlopen allocates): there unwind_cfi_supported() is false. */
#if (defined(__x86_64__) || defined(__aarch64__)) && \
	(defined(__BIONIC__) || defined(DLFO_EH_SEGMENT_TYPE))
#define CFI_SUPPORTED 1
#else
#define CFI_SUPPORTED 0
#endif

#if CFI_SUPPORTED


#if defined(__x86_64__)
#define DW_REG_FP 6 /* rbp */
#define DW_REG_SP 7 /* rsp */
#else
#define DW_REG_FP 29 /* x29 */
#define DW_REG_SP 31 /* sp */
#endif

/* ------------------------------------------------------------------------
 * Rules and their cache
 * ------------------------------------------------------------------------ */

enum rule_cfa {
	RULE_CFA_SP,	   /* CFA = sp + cfa_off */
	RULE_CFA_FP,	   /* CFA = fp + cfa_off */
	RULE_CFA_FP_DEREF, /* CFA = *(fp + cfa_off) */
	RULE_FALLBACK,	   /* no usable CFI: frame record, or stop */
	RULE_END,	   /* RA undefined: the outermost frame */
};

enum rule_fp {
	RULE_FP_SAME,	 /* the caller's fp is this frame's */
	RULE_FP_UNKNOWN, /* lost; fine until a rule needs it */
	RULE_FP_AT_CFA,	 /* saved at CFA + fp_off */
	RULE_FP_AT_FP,	 /* saved at fp + fp_off */
};

/* How to get the caller's sp (= the CFA), fp and return address from a
 * frame's sp and fp; the RA is at CFA + ra_off.  It travels packed in two
 * 32-bit words, the form it has in the cache, so that the warm path never
 * spills it to memory, and the offsets on the critical path decode in one
 * instruction:
 *   w0 = cfa_off (int32)
 *   w1 = ra_off (int16) | fp_off / WORD (10 bits, signed) << 16
 *        | cfa << 26 (3 bits) | fp << 29 (2) | signal << 31
 * A rule whose RA lies more than 32 KiB from the CFA becomes
 * RULE_FALLBACK (the walk stops or tries the frame record rather than
 * guess); an fp slot more than 4 KiB away becomes RULE_FP_UNKNOWN.
 * On x86-64 neither happens (RA at CFA-8, rbp pushed next).  On arm64,
 * GCC puts the x29/x30 pair at the bottom of a frame with large locals
 * (x29 at CFA-5024 for a 5 KiB frame): there fp is lost, and the walk
 * stops early at the first caller whose CFA needs it (never wrong). */
struct rule {
	uint32_t w0, w1;
};

#define RULE_FP_OFF_BITS 10
#define RULE_FP_OFF_MAX ((int64_t)WORD << (RULE_FP_OFF_BITS - 1))

static inline enum rule_cfa rule_cfa(struct rule r)
{
	return (enum rule_cfa)(r.w1 >> 26 & 7);
}

static inline enum rule_fp rule_fp(struct rule r)
{
	return (enum rule_fp)(r.w1 >> 29 & 3);
}

static inline bool rule_signal(struct rule r)
{
	return r.w1 >> 31;
}

static inline int32_t rule_cfa_off(struct rule r)
{
	return (int32_t)r.w0; /* gcc and clang convert modulo 2^32 */
}

static inline int32_t rule_ra_off(struct rule r)
{
	return (int16_t)r.w1;
}

static inline int32_t rule_fp_off(struct rule r)
{
	/* bits 16-25 to the top, then an arithmetic shift back down */
	return ((int32_t)(r.w1 << 6) >> (32 - RULE_FP_OFF_BITS)) * (int32_t)WORD;
}

static inline struct rule rule_make(enum rule_cfa cfa, int64_t cfa_off,
			     int64_t ra_off, enum rule_fp fp, int64_t fp_off,
			     bool signal)
{
	struct rule r;

	r.w0 = (uint32_t)cfa_off;
	r.w1 = ((uint32_t)ra_off & 0xffff) |
	       ((uint32_t)(fp_off / (int64_t)WORD) &
		((1u << RULE_FP_OFF_BITS) - 1)) << 16 |
	       (uint32_t)cfa << 26 | (uint32_t)fp << 29 | (uint32_t)signal << 31;
	return r;
}

static inline struct rule rule_special(enum rule_cfa what)
{
	return rule_make(what, 0, 0, RULE_FP_UNKNOWN, 0, false);
}

/* RULE_FALLBACK comes in two kinds.  Where a module has no usable CFI for
 * the PC, the answer holds until the module is unloaded (and the cache
 * flushed).  Where no module contains the PC at all (JIT code, or a bad
 * address), a library dlopen()ed later may come to cover it, and the hook
 * does not see dlopen (interposing it would break the caller's RUNPATH and
 * $ORIGIN lookup): a cached "no module" answer is re-checked on every use
 * by nomod_stale(), which is cheap and never the slow path.
 * Such a rule has RULE_NOMOD in w0 (its cfa_off, unused by RULE_FALLBACK),
 * and below it the loader epoch it was computed in (bionic; 0 on glibc). */
#define RULE_NOMOD 0x80000000u
#define RULE_EPOCH_MASK 0x7fffffffu
/* w1 of every RULE_FALLBACK rule (rule_special()) */
#define RULE_W1_FALLBACK \
	((uint32_t)RULE_FALLBACK << 26 | (uint32_t)RULE_FP_UNKNOWN << 29)

static inline bool rule_nomod(struct rule r)
{
	return r.w1 == RULE_W1_FALLBACK && (r.w0 & RULE_NOMOD);
}

static inline struct rule rule_nomod_make(uint32_t epoch)
{
	struct rule r = rule_special(RULE_FALLBACK);

	r.w0 = RULE_NOMOD | (epoch & RULE_EPOCH_MASK);
	return r;
}


/* Per walk: what nomod_stale() has already found out. */
struct wstate {
	bool stamp_checked; /* bionic: the loader's counters were compared */
};


#if defined(__BIONIC__)
/* The loader epoch of "no module" rules (see unwind_cfi_rules.c). */
extern _Atomic uint32_t nomod_epoch;
#endif

/* Whether the "no module" answer for @pc, computed in @epoch, may be
 * wrong now (unwind_cfi_rules.c). */
bool nomod_stale(uintptr_t pc, uint32_t epoch, struct wstate *ws);

/* The rule at @pc, from the CFI of its module (the slow path;
 * unwind_cfi_parse.c). */
struct rule rule_compute(uintptr_t pc);

/* The cache: CACHE_SLOTS slots of two 64-bit words, rule word w0 and w1
 * each in the low half of one, below the same 32-bit tag.  The slot is
 * the PC's low bits (above the instruction alignment on arm64) and the tag
 * holds all its other bits, so (slot, tag) gives back the whole PC: an
 * entry matches only the PC it was written for.  The words are written and
 * read separately, relaxed, without a lock; as both carry the tag, a
 * reader never pairs halves of two PCs' rules, and two writers of one PC
 * write the same rule.  PCs whose tag would not fit 32 bits (or be 0) are
 * computed every time.  A rule that describes an unloaded module stays
 * until unwind_cfi_flush(); a "no module" rule is re-checked on each hit
 * (see RULE_NOMOD). */
#define CACHE_BITS 16
#define CACHE_SLOTS ((size_t)1 << CACHE_BITS)
#define CACHE_BYTES (CACHE_SLOTS * 2 * sizeof(uint64_t))
#if defined(__aarch64__)
#define CACHE_SHIFT 2 /* instructions are 4-byte aligned */
#else
#define CACHE_SHIFT 0
#endif

/* 0: not mapped yet; 1: mmap failed, run uncached; else the address. */
extern _Atomic uintptr_t cache_state;

/* The cache, mapped on first use; NULL to run uncached. */
_Atomic uint64_t *cache_map(void);

/* Tag (in the high half of a word) of @pc; 0 if it cannot be cached. */
static inline uint64_t cache_tag(uintptr_t pc)
{
	uint64_t hi = (uint64_t)pc >> (CACHE_SHIFT + CACHE_BITS);
	uint64_t t = hi << CACHE_SHIFT | (pc & ((1u << CACHE_SHIFT) - 1));

	return hi == 0 || t > UINT32_MAX ? 0 : t << 32;
}

static inline _Atomic uint64_t *cache_slot(_Atomic uint64_t *cache,
					   uintptr_t pc)
{
	return cache + 2 * (pc >> CACHE_SHIFT & (CACHE_SLOTS - 1));
}

/* The slow path: compute, then fill @slot (if any). */
struct rule rule_miss(uintptr_t pc, _Atomic uint64_t *slot, uint64_t tag);

static inline struct rule rule_lookup(_Atomic uint64_t *cache, uintptr_t pc,
				      struct wstate *ws)
{
	uint64_t tag = cache_tag(pc);
	_Atomic uint64_t *slot;
	uint64_t w0, w1;
	struct rule r;

	if (cache == NULL || tag == 0)
		return rule_miss(pc, NULL, 0);
	slot = cache_slot(cache, pc);
	w0 = atomic_load_explicit(&slot[0], memory_order_relaxed);
	w1 = atomic_load_explicit(&slot[1], memory_order_relaxed);
	if (__builtin_expect(((w0 ^ tag) | (w1 ^ tag)) >> 32, 0))
		return rule_miss(pc, slot, tag);
	r.w0 = (uint32_t)w0;
	r.w1 = (uint32_t)w1;
	if (__builtin_expect(rule_nomod(r), 0) &&
	    nomod_stale(pc, r.w0 & RULE_EPOCH_MASK, ws))
		return rule_miss(pc, slot, tag);
	return r;
}

/* ------------------------------------------------------------------------
 * The trace cache
 * ------------------------------------------------------------------------
 *
 * Programs allocate from the same call chains over and over, and two
 * captures on one thread mostly differ only in their innermost frames.
 * Each thread keeps its previous walk, the trace: per frame its state (the
 * lookup pc, sp, fp and flags), the return address the step out of it
 * produced, and every stack word that step read, address and value.
 *
 * A step depends on nothing but the frame's state, the rule of its pc, the
 * stack bounds and the words it reads.  So when a new walk reaches a frame
 * whose state equals a frame of the trace (sp strictly increases along a
 * walk: a cursor finds the candidate) and every word the trace read from
 * that frame outward still holds the value it had, the rest of the new walk
 * is the rest of the trace: its return addresses are copied instead of
 * stepped through.  A reused frame costs a load and a compare for each word
 * its step read (one or two), not a rule lookup.
 *
 * The other inputs are checked as well:
 *  - the rules: unwind_cfi_flush() starts a new trace_gen, which drops
 *    every trace; a frame whose rule was "no module here" is re-checked as
 *    a rule lookup would (nomod_stale());
 *  - the bounds: hi must be the same; lo only decides whether a read is in
 *    range, so each frame of the trace keeps, over itself and every frame
 *    outward, the range lo_min..lo_max of lo in which every read succeeds,
 *    or fails, as it did;
 *  - fp_fallback; and max: a walk cut by max ends in a CUT record, from
 *    whose state a longer walk goes on stepping.
 * So the result is the full walk's, bit for bit.  (A trace is thus not
 * necessarily one walk: it is a chain of steps, each valid when it was
 * recorded, and a walk checks the words of every step it takes from it.
 * A walk that reuses only part of a trace, being cut by max, leaves the
 * rest in place.)
 *
 * A trace lives in a per-thread block, mmap'ed on the thread's first walk,
 * found through an initial-exec TLS pointer, and handed back to trace_pool
 * by a pthread key's destructor when the thread exits, for the next new
 * thread.  A walk that finds its thread's block busy (a signal handler
 * interrupted a walk), or no block, or has a max above TRACE_MAX, walks
 * without a trace. */

#define TRACE_MAX 256	/* frames in a trace */
#define TRACE_HEAD 32	/* free records in front of a new trace */
#define TRACE_RECS (TRACE_HEAD + TRACE_MAX + 1)
#define TRACE_READS 3	/* words one step reads: *(fp + off), the RA, fp */
#define TRACE_POOL 1024 /* blocks that can be recycled */

enum trec_kind {
	K_STEP, /* stepped: out is the caller's return address */
	K_STOP, /* the walk ended here (its reads decided that) */
	K_CUT,	/* the walk was cut by max before stepping this frame */
};

#define F_FP_OK 1u    /* the frame's fp is valid */
#define F_SP_EXACT 2u /* its sp is exact */
#define F_STATE (F_FP_OK | F_SP_EXACT)
#define F_NOMOD 4u /* its rule said "no module": re-check when reused */
#define F_BAD 8u   /* more reads than TRACE_READS: never reused */
#define F_SPECIAL (F_NOMOD | F_BAD)

struct tread {
	uintptr_t addr, val;
};

/* A frame of a walk (its return address is in out[], to be copied in
 * one go). */
struct trec {
	uintptr_t pc, sp, fp; /* the frame (fp is 0 unless F_FP_OK) */
	/* This and every outer record replay only for lo_min <= lo <= lo_max.
	 * While a walk writes the record, lo_min is its own bound. */
	uintptr_t lo_min, lo_max;
	uint32_t epoch;	  /* F_NOMOD: the rule's epoch */
	uint16_t rd;	  /* its reads: reads[rd .. (this + 1)->rd) */
	uint16_t special; /* the first record from here with F_SPECIAL */
	uint8_t flags, kind;
};

/* A trace is records [base, last], a walk under way writes from
 * TRACE_HEAD; rec[last + 1].rd (and .special) end them. */
struct trace {
	struct trec rec[TRACE_RECS + 1];
	uintptr_t out[TRACE_RECS]; /* K_STEP: the return address */
	struct tread reads[TRACE_READS * TRACE_RECS];
};

/* ------------------------------------------------------------------------
 * The walk memo
 * ------------------------------------------------------------------------
 *
 * Walks of at most WALK_SHORT_MAX frames (LEAKSNAP_FRAMES is 16 by
 * default) do not use the trace: where call paths branch, a new walk
 * rarely replays the previous one, and matching a trace part-way, then
 * writing the new one, costs several times a plain walk (docs/hook.md,
 * "Where the time goes").  Each thread keeps instead its last few short
 * walks whole, in WMEMO_SETS sets of WMEMO_WAYS, chosen by the entry
 * function's pc and sp: the inputs (registers, stack bounds, max,
 * fp_fallback, trace_gen), every stack word the walk read (address and
 * value) and its result.  A walk is a function of exactly those (and of
 * the rules, which only change with trace_gen), so one whose inputs are
 * equal and whose words all still hold their values gives the same
 * result: it is copied, bit for bit.  A walk that met a "no module" rule
 * (re-checked on every use) or read more than WMEMO_READS words is not
 * kept.  Misses walk without a trace (walk_lean()), logging their reads
 * into the entry they replace. */
#define WALK_SHORT_MAX 32
#define WMEMO_READS 64
#define WMEMO_SET_BITS 2
#define WMEMO_SETS (1 << WMEMO_SET_BITS)
#define WMEMO_WAYS 8

struct wmemo {
	uintptr_t pc, sp, fp, lo, hi; /* the walk's inputs */
	unsigned long gen;
	int max, n;
	unsigned int nreads;
	bool fp_fallback, valid;
	uint64_t stack_slot; /* see unwind_cfi_stack_slot() */
	uintptr_t out[WALK_SHORT_MAX];
	struct tread reads[WMEMO_READS];
};

struct tblock {
	struct wmemo wmemo[WMEMO_SETS * WMEMO_WAYS];
	uint8_t wmemo_next[WMEMO_SETS]; /* the way each set replaces next */
	struct trace *trace;   /* the previous walk: records [base, last] */
	struct trace *scratch; /* the walk under way */
	int base, last;
	bool valid, fp_fallback;
	_Atomic bool busy;
	unsigned long gen;
	uintptr_t hi;
	size_t pool_index;
	/* trace and scratch: mapped on the thread's first long walk (NULL
	 * before), kept with the block when it is recycled */
};


/* (initial-exec but in the in-app build for bionic, which refuses it in a
 * dlopen()ed library: as HOOK_TLS in hook_internal.h) */
#if defined(HOOK_INAPP) && defined(__BIONIC__)
#define CFI_TLS_MODEL
#else
#define CFI_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif

#define TRACE_OFF ((struct tblock *)1) /* none for this thread: don't ask */

extern _Thread_local struct tblock *trace_tls
	CFI_TLS_MODEL;
extern _Atomic unsigned long trace_gen;

/* The calling thread's first walk: a block for it, NULL to go without. */
struct tblock *trace_attach(void);
/* Map @tb's trace and scratch (its first walk of more than
 * WALK_SHORT_MAX frames); false if that failed (walk without). */
bool trace_map(struct tblock *tb);

static inline struct tblock *trace_begin(int max)
{
	struct tblock *tb = trace_tls;

	if (__builtin_expect(tb == NULL, 0))
		tb = trace_attach();
	if (tb == NULL || tb == TRACE_OFF || max > TRACE_MAX ||
	    atomic_load_explicit(&tb->busy, memory_order_relaxed))
		return NULL;
	atomic_store_explicit(&tb->busy, true, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return tb;
}

static inline void trace_end(struct tblock *tb)
{
	if (tb != NULL) {
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&tb->busy, false, memory_order_relaxed);
	}
}

/* Copy records [k, k + cnt) of @from to @to from record @at, their reads
 * to @to's from reads[to->rec[at].rd]; to->rec[at + cnt].rd gets the end. */
void trace_copy(struct trace *to, int at, const struct trace *from, int k,
		int cnt);
/* The walk just made, scratch records [TRACE_HEAD, @last], becomes the
 * trace. */
void trace_commit(struct tblock *tb, int last, unsigned long gen,
		  uintptr_t hi, bool fp_fallback);
/* The walk just made is scratch records [TRACE_HEAD, TRACE_HEAD + n)
 * followed by trace records [k, last]: make that the trace. */
void trace_splice(struct tblock *tb, int k, int last, int n);
/* The record of @t holding read @r, from record @k on. */
int trace_reader(const struct trace *t, int k, unsigned int r);


/* Whether trace records [k, end) replay: -1 if they do, else the first
 * record that does not (every candidate at or before it fails too).
 * Every address was read in range by the walk that recorded it, and with
 * the same hi and lo <= lo_max it still is. */
NO_SANITIZE __attribute__((always_inline))
static inline int trace_check(const struct trace *t, int k, int end,
			      uintptr_t lo, struct wstate *ws)
{
	const struct tread *r = &t->reads[t->rec[k].rd];
	const struct tread *e = &t->reads[t->rec[end].rd];

	if (lo < t->rec[k].lo_min || lo > t->rec[k].lo_max)
		return end; /* another lo, another walk */
	for (; r < e; r++)
		if (__builtin_expect(*(const uintptr_t *)r->addr != r->val, 0))
			return trace_reader(t, k, (unsigned int)(r - t->reads));
	for (int j = t->rec[k].special; j < end;) {
		if ((t->rec[j].flags & F_BAD) ||
		    nomod_stale(t->rec[j].pc, t->rec[j].epoch, ws))
			return j;
		j = t->rec[j + 1].special > j ? t->rec[j + 1].special : end;
	}
	return -1;
}

#endif /* CFI_SUPPORTED */

#endif
