/* Stack walk from DWARF call-frame information (.eh_frame), x86-64 and
 * aarch64, Linux glibc >= 2.35 and Android bionic.
 *
 * Runs inside malloc, on any number of threads at once: nothing here
 * allocates, locks or prints.  The only system calls are the mmap of the
 * rule cache (once), the mmap of a trace block on a thread's first walk
 * (blocks are recycled when threads exit), and on bionic dl_iterate_phdr
 * on a cache miss and on meeting a frame in no module.
 *
 * Per frame we only track what the next frame needs: the CFA (the caller's
 * stack pointer), the return address and the frame pointer (x86-64 rbp,
 * aarch64 x29).  The rule of a PC is reduced to a struct rule that says how
 * to get those three from the frame's sp and fp; rules are cached per PC in
 * a lock-free direct-mapped table, so a warm walk is a few loads per frame.
 * On top of that each thread keeps its last short walks whole (the walk
 * memo, up to 32 frames: a walk with the same inputs whose stack words all
 * still hold copies the result) and, for longer walks, its previous walk
 * (the trace cache: a walk that reaches a frame of it, with the stack words
 * read from there on unchanged, copies the rest instead of stepping); both
 * are described in unwind_cfi.h.
 *
 * Stack reads are whole aligned words inside [stk->lo, stk->hi).  The CFI
 * itself is read from the module's own mapped memory, inside the module's
 * address range; every loop over it is bounded by the record length and by
 * an explicit step count. */
#include "unwind_cfi.h"

#if CFI_SUPPORTED

/* ------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------ */

struct frame {
	uintptr_t sp, fp;
	bool fp_ok;    /* fp holds the frame's real frame pointer */
	bool sp_exact; /* sp is exact, not a lower bound */
};

/* The stack as the walk checks it: a word at addr may be read iff
 * addr - lo <= span (= hi - lo - WORD, unsigned) and addr is aligned. */
struct bounds {
	uintptr_t lo, hi, span;
};

/* What the current step read: reads r[n], up to r[lim - 1]. */
struct rlog {
	struct tread *r;
	unsigned int n, lim;
	uintptr_t lo_min; /* lo must stay above an aligned word it missed */
	bool bad;	  /* more reads than room */
};

/* The word at @addr, if it lies wholly inside the stack and is aligned.
 * @lg NULL: a walk that writes no trace (walk_lean()). */
NO_SANITIZE __attribute__((always_inline))
static inline bool stack_word(const struct bounds *b, uintptr_t addr,
			      uintptr_t *out, struct rlog *lg)
{
	uintptr_t v;

	if (addr - b->lo > b->span || addr % WORD) {
		if (lg != NULL && addr < b->lo && addr % WORD == 0 &&
		    addr >= lg->lo_min)
			lg->lo_min = addr + 1;
		return false;
	}
	v = *(const uintptr_t *)addr;
	*out = v;
	if (lg == NULL)
		return true;
	if (__builtin_expect(lg->n < lg->lim, 1)) {
		lg->r[lg->n].addr = addr;
		lg->r[lg->n].val = v;
		lg->n++;
	} else {
		lg->bad = true;
	}
	return true;
}

static inline uintptr_t addr_add(uintptr_t base, int32_t off)
{
	return base + (uintptr_t)(intptr_t)off;
}


/* Step @f to its caller by @r; *@ra gets the return address.  On failure
 * @f is unchanged. */
NO_SANITIZE __attribute__((always_inline))
static inline bool step_cfi(struct rule r, const struct bounds *stk,
			    struct frame *f, uintptr_t *ra, struct rlog *lg,
			    struct rlog *lgfp)
{
	int32_t cfa_off = rule_cfa_off(r);
	uintptr_t cfa;

	switch (rule_cfa(r)) {
	case RULE_CFA_SP:
		if (!f->sp_exact)
			return false;
		cfa = addr_add(f->sp, cfa_off);
		break;
	case RULE_CFA_FP:
		if (!f->fp_ok)
			return false;
		cfa = addr_add(f->fp, cfa_off);
		break;
	case RULE_CFA_FP_DEREF:
		if (!f->fp_ok ||
		    !stack_word(stk, addr_add(f->fp, cfa_off), &cfa, lg))
			return false;
		break;
	default:
		return false;
	}
	/* The caller's sp is above ours: this also bounds the walk. */
	if (cfa <= f->sp || cfa > stk->hi ||
	    !stack_word(stk, addr_add(cfa, rule_ra_off(r)), ra, lg))
		return false;

	switch (rule_fp(r)) {
	case RULE_FP_SAME:
		break;
	case RULE_FP_UNKNOWN:
		f->fp_ok = false;
		break;
	case RULE_FP_AT_CFA:
		f->fp_ok = stack_word(stk, addr_add(cfa, rule_fp_off(r)),
				      &f->fp, lgfp);
		break;
	case RULE_FP_AT_FP:
		f->fp_ok = f->fp_ok &&
			   stack_word(stk, addr_add(f->fp, rule_fp_off(r)),
				      &f->fp, lg);
		break;
	}
	f->sp = cfa;
	f->sp_exact = true;
	return true;
}

/* Step @f through its frame record (fp[0] = the caller's fp, fp[1] = the
 * RA): code without CFI that keeps frame pointers, JIT code mostly. */
NO_SANITIZE __attribute__((always_inline))
static inline bool step_fp(const struct bounds *stk, struct frame *f, uintptr_t *ra,
		    struct rlog *lg)
{
	uintptr_t next;

	if (!f->fp_ok || f->fp < f->sp || !stack_word(stk, f->fp, &next, lg) ||
	    !stack_word(stk, f->fp + WORD, ra, lg))
		return false;
	f->sp = f->fp + 2 * WORD;
	f->fp = next;
#if defined(__aarch64__)
	/* arm64 code keeps the record at the bottom of its frame, so fp + 16
	 * is only a lower bound of the caller's sp.  (x86-64's push rbp;
	 * mov rbp,rsp puts it at the top: there it is exact.) */
	f->sp_exact = false;
#endif
	return true;
}

static inline unsigned int frame_flags(const struct frame *f)
{
	return (f->fp_ok ? F_FP_OK : 0) | (f->sp_exact ? F_SP_EXACT : 0);
}

/* Record @i of @s: frame @f at @pc, its reads from lg->n on. */
static inline void rec_open(struct trace *s, int i, uintptr_t pc,
			    const struct frame *f, struct rlog *lg)
{
	s->rec[i].pc = pc;
	s->rec[i].sp = f->sp;
	s->rec[i].fp = f->fp_ok ? f->fp : 0;
	s->rec[i].flags = (uint8_t)frame_flags(f);
	s->rec[i].kind = K_STOP;
	s->rec[i].rd = (uint16_t)lg->n;
	lg->lim = lg->n + TRACE_READS;
	lg->lo_min = 0;
	lg->bad = false;
}

/* Record @i of @s is done. */
static inline void rec_close(struct trace *s, int i, const struct rlog *lg)
{
	s->rec[i + 1].rd = (uint16_t)lg->n;
	s->rec[i].lo_min = lg->lo_min;
	if (lg->bad)
		s->rec[i].flags |= F_BAD;
}

/* The walk, from the registers of @regs, inside [@lo, @hi) (non-empty,
 * checked), with @max > 0; @tb: the thread's trace block, busy (or NULL),
 * whose trace's records up to @tskip are known not to replay.  Ends the
 * block's use. */
NO_SANITIZE __attribute__((noinline)) static int
walk(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
     uintptr_t *pcs, int max, bool fp_fallback, struct tblock *tb,
     int tskip)
{
	struct frame f = { regs->sp, regs->fp, true, true };
	struct bounds s = { lo, hi, hi - lo - WORD };
	struct wstate ws = { false };
	struct tread spare[TRACE_READS]; /* reads of a walk without a trace */
	struct rlog lg = { spare, 0, TRACE_READS, 0, false };
	struct trace *sc = NULL, *tr = NULL;
	_Atomic uint64_t *cache;
	uintptr_t pc = regs->pc; /* the lookup address of the current frame */
	unsigned long gen;
	int n = 0, tk = 0, tlast = 0;

	cache = cache_map();
	gen = atomic_load_explicit(&trace_gen, memory_order_acquire);
	if (tb != NULL) {
		sc = tb->scratch;
		lg.r = sc->reads;
		lg.n = TRACE_HEAD * TRACE_READS;
		if (tb->valid && tb->gen == gen && tb->hi == s.hi &&
		    tb->fp_fallback == fp_fallback) {
			tr = tb->trace;
			tk = tb->base;
			tlast = tb->last;
		}
	}
	/* Every step moves sp strictly up, never above stk->hi: the loop
	 * ends on its own even without @max. */
	while (n < max) {
		int i = TRACE_HEAD + n; /* the record of this frame */
		struct rule r;
		uintptr_t ra;
		bool signal = false;

		if (tr != NULL) {
			/* The trace's frame with this sp, if any. */
			while (tk < tlast && tr->rec[tk].sp < f.sp)
				tk++;
			if (tr->rec[tk].sp == f.sp && tr->rec[tk].pc == pc &&
			    tr->rec[tk].fp == (f.fp_ok ? f.fp : 0) &&
			    (tr->rec[tk].flags & F_STATE) == frame_flags(&f) &&
			    tk > tskip) {
				/* m frames to copy; then the trace's last
				 * record ends this walk too if it is a STOP
				 * within max. */
				int left = tlast - tk;
				int m = left < max - n ? left : max - n;
				bool stop = m == left && n + m < max &&
					    tr->rec[tlast].kind == K_STOP;
				int bad = trace_check(tr, tk, tk + m + stop,
						      s.lo, &ws);

				if (bad >= 0) {
					tskip = bad;
					goto step;
				}
				memcpy(&pcs[n], &tr->out[tk],
				       (size_t)m * sizeof(*pcs));
				if (n + m < max && !stop) {
					/* The trace was cut by a smaller max:
					 * go on from where it was. */
					const struct trec *c = &tr->rec[tlast];

					sc->rec[i].rd = (uint16_t)lg.n;
					trace_copy(sc, i, tr, tk, m);
					lg.n = sc->rec[i + m].rd;
					n += m;
					pc = c->pc;
					f.sp = c->sp;
					f.fp = c->fp;
					f.fp_ok = c->flags & F_FP_OK;
					f.sp_exact = c->flags & F_SP_EXACT;
					tr = NULL;
					continue;
				}
				/* (Cut by max, records past tk + m stay: each
				 * is a step that was valid, and a walk that
				 * uses it will check its words first.) */
				sc->rec[i].rd = (uint16_t)lg.n;
				trace_splice(tb, tk, tlast, n);
				n += m;
				goto out;
			}
		}
step:
		if (sc != NULL)
			rec_open(sc, i, pc, &f, &lg);
		else
			lg.n = 0;
		r = rule_lookup(cache, pc, &ws);
		if (__builtin_expect(rule_cfa(r) >= RULE_FALLBACK, 0)) {
			if (rule_cfa(r) == RULE_END)
				goto stop;
			if (sc != NULL && rule_nomod(r)) {
				sc->rec[i].flags |= F_NOMOD;
				sc->rec[i].epoch = r.w0 & RULE_EPOCH_MASK;
			}
			if (!fp_fallback || !step_fp(&s, &f, &ra, &lg))
				goto stop;
		} else if (step_cfi(r, &s, &f, &ra, &lg, &lg)) {
			signal = rule_signal(r);
		} else if (!fp_fallback || !step_fp(&s, &f, &ra, &lg)) {
			goto stop;
		}
		ra = unwind_strip_pac_inline(ra);
		if (ra < 4096)
			goto stop;
		if (sc != NULL) {
			rec_close(sc, i, &lg);
			sc->out[i] = ra;
			sc->rec[i].kind = K_STEP;
		}
		pcs[n++] = ra;
		/* A return address may follow a noreturn call that ends its
		 * function: look up the call itself.  The pc an interrupted
		 * (signal) frame returns to is exact. */
		pc = signal ? ra : ra - 1;
	}
	/* Cut by max: a last record to go on from. */
	if (sc != NULL) {
		rec_open(sc, TRACE_HEAD + n, pc, &f, &lg);
		sc->rec[TRACE_HEAD + n].kind = K_CUT;
	}
stop:
	if (sc != NULL) {
		rec_close(sc, TRACE_HEAD + n, &lg);
		trace_commit(tb, TRACE_HEAD + n, gen, s.hi, fp_fallback);
	}
out:
	trace_end(tb);
	return n;
}

/* The pending fp read of walk_plain() is an input of the walk now. */
static inline void fp_used(struct rlog *lg, struct rlog *fplog)
{
	if (lg == NULL || fplog->n == 0)
		return;
	if (lg->n < lg->lim)
		lg->r[lg->n++] = fplog->r[0];
	else
		lg->bad = true;
	fplog->n = 0;
}

/* The walk without a trace: what walk() does with no trace block, every
 * frame stepped.  @lg NULL: nothing written but @pcs; else every word read
 * is logged there (lg->bad if there was no room), and *@keep is cleared if
 * the walk met a "no module" rule (see the walk memo). */
NO_SANITIZE __attribute__((always_inline)) static inline int
walk_plain(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
	   uintptr_t *pcs, int max, bool fp_fallback, struct rlog *lg,
	   bool *keep)
{
	struct frame f = { regs->sp, regs->fp, true, true };
	struct bounds s = { lo, hi, hi - lo - WORD };
	struct wstate ws = { false };
	_Atomic uint64_t *cache = cache_map();
	uintptr_t pc = regs->pc;
	int n = 0;
	/* The caller's fp read from the stack (RULE_FP_AT_CFA) is logged
	 * only once a step uses it: code built without frame pointers keeps
	 * any value in that register, a loop counter say, and a walk that
	 * never uses it must not depend on it. */
	struct tread fpread = { 0, 0 };
	struct rlog fplog = { &fpread, 0, 1, 0, false };
	struct rlog *lgfp = lg != NULL ? &fplog : NULL;

	while (n < max) {
		struct rule r = rule_lookup(cache, pc, &ws);
		uintptr_t ra;
		bool signal = false;

		struct tread old = fpread; /* (unused unless old_n) */
		unsigned int old_n = fplog.n;

		if (lg != NULL) {
			if (rule_nomod(r))
				*keep = false;
			if (rule_cfa(r) == RULE_CFA_FP ||
			    rule_cfa(r) == RULE_CFA_FP_DEREF ||
			    rule_fp(r) == RULE_FP_AT_FP) {
				fp_used(lg, &fplog);
				old_n = 0;
			}
			if (rule_cfa(r) < RULE_FALLBACK)
				fplog.n = 0; /* room for this step's fp read */
		}
		if (__builtin_expect(rule_cfa(r) >= RULE_FALLBACK, 0)) {
			if (rule_cfa(r) == RULE_END || !fp_fallback)
				break;
			fp_used(lg, &fplog);
			if (!step_fp(&s, &f, &ra, lg))
				break;
		} else if (step_cfi(r, &s, &f, &ra, lg, lgfp)) {
			signal = rule_signal(r);
			if (rule_fp(r) == RULE_FP_SAME) { /* fp carried on */
				fpread = old;
				fplog.n = old_n;
			}
		} else {
			/* f is unchanged: so is its fp, pending or not */
			fpread = old;
			fplog.n = old_n;
			if (!fp_fallback)
				break;
			fp_used(lg, &fplog);
			if (!step_fp(&s, &f, &ra, lg))
				break;
		}
		ra = unwind_strip_pac_inline(ra);
		if (ra < 4096)
			break;
		pcs[n++] = ra;
		pc = signal ? ra : ra - 1;
	}
	return n;
}

NO_SANITIZE __attribute__((noinline)) static int
walk_lean(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
	  uintptr_t *pcs, int max, bool fp_fallback)
{
	return walk_plain(regs, lo, hi, pcs, max, fp_fallback, NULL, NULL);
}

NO_SANITIZE __attribute__((noinline)) static int
walk_logged(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
	    uintptr_t *pcs, int max, bool fp_fallback, struct rlog *lg,
	    bool *keep)
{
	return walk_plain(regs, lo, hi, pcs, max, fp_fallback, lg, keep);
}

/* Whether every word @m's walk read still holds its value. */
NO_SANITIZE
static inline bool wmemo_replays(const struct wmemo *m)
{
	uintptr_t diff = 0;

	for (unsigned int i = 0; i < m->nreads; i++)
		diff |= *(const uintptr_t *)m->reads[i].addr ^ m->reads[i].val;
	return diff == 0;
}

/* unwind_cfi_stack_slot() */
static _Thread_local uint64_t *memo_slot
	CFI_TLS_MODEL;

/* A short walk (max <= WALK_SHORT_MAX), through the walk memo of @tb
 * (busy; NULL: there is none), whose use it ends. */
NO_SANITIZE static int
walk_short(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
	   uintptr_t *pcs, int max, bool fp_fallback, struct tblock *tb)
{
	unsigned long gen;
	struct wmemo *set, *m;
	unsigned int k;
	bool keep = true;
	int n;

	if (tb == NULL)
		return walk_lean(regs, lo, hi, pcs, max, fp_fallback);
	gen = atomic_load_explicit(&trace_gen, memory_order_acquire);
	k = (unsigned int)(((uint64_t)(regs->pc ^ regs->sp) *
			    0x9e3779b97f4a7c15ULL) >> (64 - WMEMO_SET_BITS));
	set = &tb->wmemo[k * WMEMO_WAYS];
	for (int w = 0; w < WMEMO_WAYS; w++) {
		m = &set[w];
		if (m->valid && m->pc == regs->pc && m->sp == regs->sp &&
		    m->fp == regs->fp && m->lo == lo && m->hi == hi &&
		    m->gen == gen && m->max == max &&
		    m->fp_fallback == fp_fallback && wmemo_replays(m)) {
			memcpy(pcs, m->out, (size_t)m->n * sizeof(*pcs));
			n = m->n;
			memo_slot = &m->stack_slot;
			trace_end(tb);
			return n;
		}
	}
	m = &set[tb->wmemo_next[k]];
	tb->wmemo_next[k] = (uint8_t)((tb->wmemo_next[k] + 1) % WMEMO_WAYS);
	m->valid = false;
	m->stack_slot = 0;
	{
		struct rlog lg = { m->reads, 0, WMEMO_READS, 0, false };

		n = walk_logged(regs, lo, hi, pcs, max, fp_fallback, &lg, &keep);
		if (keep && !lg.bad) {
			m->pc = regs->pc;
			m->sp = regs->sp;
			m->fp = regs->fp;
			m->lo = lo;
			m->hi = hi;
			m->gen = gen;
			m->max = max;
			m->n = n;
			m->nreads = lg.n;
			m->fp_fallback = fp_fallback;
			memcpy(m->out, pcs, (size_t)n * sizeof(*pcs));
			m->valid = true;
			memo_slot = &m->stack_slot;
		}
	}
	trace_end(tb);
	return n;
}

NO_SANITIZE
int unwind_cfi(const struct unwind_regs *regs, const struct unwind_stack *stk,
	       uintptr_t *pcs, int max, bool fp_fallback)
{
	/* Copies: stores to pcs[] could alias *stk, forcing reloads. */
	uintptr_t lo = stk->lo, hi = stk->hi;
	struct tblock *tb;
	int skip = -1;

	memo_slot = NULL;
	if (hi <= lo || hi - lo < WORD || max <= 0)
		return 0;
	tb = trace_begin(max);
	if (max <= WALK_SHORT_MAX)
		return walk_short(regs, lo, hi, pcs, max, fp_fallback, tb);
	if (tb != NULL && tb->trace == NULL && !trace_map(tb)) {
		trace_end(tb);
		tb = NULL;
	}
	/* The common case, kept short: the walk starts at the first frame
	 * of the trace, and the trace replays from there within max.  (The
	 * generation is read before the trace: see unwind_cfi_flush().) */
	if (tb != NULL && tb->valid &&
	    tb->gen == atomic_load_explicit(&trace_gen, memory_order_acquire) &&
	    tb->hi == hi && tb->fp_fallback == fp_fallback) {
		const struct trace *t = tb->trace;
		int k = tb->base, last = tb->last, m = last - k;

		const struct trec *first = &t->rec[k];

		if (first->sp == regs->sp && first->pc == regs->pc &&
		    first->fp == regs->fp &&
		    (first->flags & F_STATE) == F_STATE &&
		    (m >= max || t->rec[last].kind == K_STOP)) {
			struct wstate ws = { false };
			bool stop = m < max;

			if (m > max)
				m = max;
			skip = trace_check(t, k, k + m + stop, lo, &ws);
			if (skip < 0) {
				memcpy(pcs, &t->out[k], (size_t)m * sizeof(*pcs));
				trace_end(tb);
				return m;
			}
		}
	}
	return walk(regs, lo, hi, pcs, max, fp_fallback, tb, skip);
}

uint64_t *unwind_cfi_stack_slot(void)
{
	return memo_slot;
}

bool unwind_cfi_supported(void)
{
	return true;
}

void unwind_cfi_flush(void)
{
	uintptr_t v = atomic_load_explicit(&cache_state, memory_order_acquire);
	_Atomic uint64_t *cache = (_Atomic uint64_t *)v;

	if (v > 1)
		for (size_t i = 0; i < 2 * CACHE_SLOTS; i++)
			atomic_store_explicit(&cache[i], 0,
					      memory_order_relaxed);
	/* After the clearing: a walk that began before it, and may have
	 * used a rule since cleared, records the old generation. */
	atomic_fetch_add_explicit(&trace_gen, 1, memory_order_release);
}

#else /* !CFI_SUPPORTED */

int unwind_cfi(const struct unwind_regs *regs, const struct unwind_stack *stk,
	       uintptr_t *pcs, int max, bool fp_fallback)
{
	(void)regs;
	(void)stk;
	(void)pcs;
	(void)max;
	(void)fp_fallback;
	return 0;
}

uint64_t *unwind_cfi_stack_slot(void)
{
	return NULL;
}

bool unwind_cfi_supported(void)
{
	return false;
}

void unwind_cfi_flush(void)
{
}

#endif
