/* leaksnap hook, CFI unwinder: the trace cache, each thread's previous walk
 * (its design is described in unwind_cfi.h, beside the structures): the
 * per-thread blocks and their pool, and the updates of a trace after a
 * walk.  Runs inside malloc: nothing here allocates (but the mmap of a new
 * thread's block), locks or prints. */
#include "unwind_cfi.h"

#if CFI_SUPPORTED


_Thread_local struct tblock *trace_tls
	CFI_TLS_MODEL;
_Atomic unsigned long trace_gen;

/* Blocks, each | 1 while a thread has it; 0 for an entry never used. */
static _Atomic uintptr_t trace_pool[TRACE_POOL];
static _Atomic size_t trace_pool_used;

enum { KEY_NONE, KEY_BUSY, KEY_OK, KEY_FAILED };
static _Atomic int trace_key_state;
static pthread_key_t trace_key;

/* The key's destructor: the thread exits, its block goes back.  Later
 * walks of this thread (in other destructors) go without. */
static void trace_detach(void *p)
{
	struct tblock *tb = p;

	trace_tls = TRACE_OFF;
	atomic_store_explicit(&trace_pool[tb->pool_index], (uintptr_t)tb,
			      memory_order_release);
}

static struct tblock *pool_take(void)
{
	size_t used = atomic_load_explicit(&trace_pool_used,
					   memory_order_acquire);
	struct tblock *tb;
	size_t i;
	void *p;

	if (used > TRACE_POOL)
		used = TRACE_POOL;
	for (i = 0; i < used; i++) {
		uintptr_t v = atomic_load_explicit(&trace_pool[i],
						   memory_order_relaxed);

		if (v != 0 && !(v & 1) &&
		    atomic_compare_exchange_strong_explicit(
			    &trace_pool[i], &v, v | 1, memory_order_acq_rel,
			    memory_order_relaxed)) {
			tb = (struct tblock *)v;
			tb->valid = false;
			for (size_t w = 0; w < WMEMO_SETS * WMEMO_WAYS; w++)
				tb->wmemo[w].valid = false;
			return tb;
		}
	}
	p = mmap(NULL, sizeof(struct tblock), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	i = atomic_fetch_add_explicit(&trace_pool_used, 1,
				      memory_order_acq_rel);
	if (i >= TRACE_POOL) { /* so many threads at once: go without */
		munmap(p, sizeof(struct tblock));
		return NULL;
	}
	tb = p; /* zeroed: not valid, not busy */
	tb->trace = NULL; /* trace_map() */
	tb->scratch = NULL;
	tb->pool_index = i;
	atomic_store_explicit(&trace_pool[i], (uintptr_t)tb | 1,
			      memory_order_release);
	return tb;
}

bool trace_map(struct tblock *tb)
{
	int saved_errno = errno;
	void *p = mmap(NULL, 2 * sizeof(struct trace), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	errno = saved_errno;
	if (p == MAP_FAILED)
		return false;
	tb->trace = p;
	tb->scratch = (struct trace *)p + 1;
	tb->valid = false;
	return true;
}

/* The calling thread's first walk: a block for it, NULL to go without. */
__attribute__((noinline, cold)) struct tblock *trace_attach(void)
{
	int saved_errno = errno;
	int state = atomic_load_explicit(&trace_key_state,
					 memory_order_acquire);
	struct tblock *tb = NULL;

	/* A signal handler's walk meanwhile goes without. */
	trace_tls = TRACE_OFF;
	atomic_signal_fence(memory_order_seq_cst);
	if (state == KEY_NONE &&
	    atomic_compare_exchange_strong_explicit(
		    &trace_key_state, &state, KEY_BUSY, memory_order_acq_rel,
		    memory_order_acquire)) {
		/* Neither call allocates or locks (glibc, bionic), but
		 * glibc's pthread_setspecific() callocs for keys from 32. */
		bool ok = pthread_key_create(&trace_key, trace_detach) == 0;
#if defined(__GLIBC__)
		if (ok && trace_key >= 32) {
			pthread_key_delete(trace_key);
			ok = false;
		}
#endif
		state = ok ? KEY_OK : KEY_FAILED;
		atomic_store_explicit(&trace_key_state, state,
				      memory_order_release);
	}
	if (state == KEY_BUSY) { /* another thread creates it: later */
		trace_tls = NULL;
		goto out;
	}
	if (state == KEY_OK)
		tb = pool_take();
	if (tb != NULL && pthread_setspecific(trace_key, tb) != 0) {
		atomic_store_explicit(&trace_pool[tb->pool_index],
				      (uintptr_t)tb, memory_order_release);
		tb = NULL;
	}
	trace_tls = tb != NULL ? tb : TRACE_OFF;
out:
	errno = saved_errno;
	return tb;
}
/* Turn the own bounds of records [from, to] into bounds over themselves
 * and every outer record, and set their special; @lo_min, @lo_max and
 * @special: those of record to + 1 (or 0, UINTPTR_MAX, TRACE_RECS).  A
 * lo_min that already covers outer records only makes the result
 * stricter. */
static void trace_bound(struct trace *t, int from, int to, uintptr_t lo_min,
			uintptr_t lo_max, int special)
{
	for (int i = to; i >= from; i--) {
		for (unsigned int j = t->rec[i].rd; j < t->rec[i + 1].rd; j++)
			if (t->reads[j].addr < lo_max)
				lo_max = t->reads[j].addr;
		if (t->rec[i].lo_min > lo_min)
			lo_min = t->rec[i].lo_min;
		t->rec[i].lo_min = lo_min;
		t->rec[i].lo_max = lo_max;
		if (t->rec[i].flags & F_SPECIAL)
			special = i;
		t->rec[i].special = (uint16_t)special;
	}
}

/* Copy records [k, k + cnt) of @from to @to from record @at, their reads
 * to @to's from reads[to->rec[at].rd]; to->rec[at + cnt].rd gets the end. */
void trace_copy(struct trace *to, int at, const struct trace *from,
		       int k, int cnt)
{
	unsigned int r0 = from->rec[k].rd, r1 = from->rec[k + cnt].rd;
	unsigned int rb = to->rec[at].rd;

	/* (lo_max and special are for the caller to set.) */
	for (int j = 0; j < cnt; j++) {
		uint16_t rd = to->rec[at + j].rd;

		to->rec[at + j] = from->rec[k + j];
		to->rec[at + j].rd = rd;
		to->out[at + j] = from->out[k + j];
		to->rec[at + j + 1].rd =
			(uint16_t)(from->rec[k + j + 1].rd - r0 + rb);
	}
	for (unsigned int j = 0; j < r1 - r0; j++)
		to->reads[rb + j] = from->reads[r0 + j];
}

static void trace_swap(struct tblock *tb)
{
	struct trace *t = tb->trace;

	tb->trace = tb->scratch;
	tb->scratch = t;
}

/* The walk just made, scratch records [TRACE_HEAD, @last], becomes the
 * trace. */
void trace_commit(struct tblock *tb, int last, unsigned long gen,
			 uintptr_t hi, bool fp_fallback)
{
	struct trace *s = tb->scratch;

	trace_bound(s, TRACE_HEAD, last, 0, UINTPTR_MAX, TRACE_RECS);
	s->rec[last + 1].special = TRACE_RECS;
	trace_swap(tb);
	tb->base = TRACE_HEAD;
	tb->last = last;
	tb->gen = gen;
	tb->hi = hi;
	tb->fp_fallback = fp_fallback;
	tb->valid = true;
}

/* The walk just made is scratch records [TRACE_HEAD, TRACE_HEAD + n)
 * followed by trace records [k, last]: make that the trace. */
void trace_splice(struct tblock *tb, int k, int last, int n)
{
	struct trace *t = tb->trace, *s = tb->scratch;
	unsigned int nreads = s->rec[TRACE_HEAD + n].rd - s->rec[TRACE_HEAD].rd;

	if (n == 0) { /* the common case: the same walk again */
		tb->base = k;
		tb->last = last;
		return;
	}
	if (k >= n && t->rec[k].rd >= nreads) {
		/* Room in front of record k: the new records go there. */
		uint16_t rd_k = t->rec[k].rd;

		t->rec[k - n].rd = (uint16_t)(rd_k - nreads);
		trace_copy(t, k - n, s, TRACE_HEAD, n);
		t->rec[k].rd = rd_k; /* (trace_copy() wrote the same) */
		trace_bound(t, k - n, k - 1, t->rec[k].lo_min, t->rec[k].lo_max,
			    t->rec[k].special);
		tb->base = k - n;
		tb->last = last;
		return;
	}
	trace_copy(s, TRACE_HEAD + n, t, k, last - k + 1);
	trace_commit(tb, TRACE_HEAD + n + last - k, tb->gen, tb->hi,
		     tb->fp_fallback);
}

/* The record of @t holding read @r, from record @k on. */
int trace_reader(const struct trace *t, int k, unsigned int r)
{
	while (k < TRACE_RECS - 1 && t->rec[k + 1].rd <= r)
		k++;
	return k;
}
#endif /* CFI_SUPPORTED */
