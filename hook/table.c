/* leaksnap hook: the live-allocation tables.
 *
 * Two structures, both in memory of the hook's own (mmap), never from the
 * allocator being hooked:
 *  - stacks: one per distinct backtrace, stored in fixed-size slots in
 *    chunks that never move while the program runs, and found through an
 *    open-addressing index of {64-bit stack hash, depth and frame-0 check,
 *    slot} entries that is read and extended without a lock.  Lookups
 *    compare those only and never touch the stack itself (two stacks would
 *    have to agree on a 64-bit hash, depth and frame 0 to be merged); a
 *    per-thread memo of 128 stacks skips even that, and so does the
 *    number the unwinder's walk memo keeps for a walk it gives again.
 *  - pointers: 64 shards by address region, each an open-addressing table
 *    (linear probing, backward-shift deletion, at most half full) under a
 *    lock, mapping a live pointer to its size (with the zygote flag) and
 *    stack.  Beside it, a direct-mapped set of recently freed addresses: a
 *    free of a pointer that is not live but is in that set is a double
 *    free, counted and kept away from the allocator.  Any allocation the
 *    hook does not record (its own, or while capture is off) clears its
 *    address from the set, so the set never mistakes a reused address for
 *    a double free; detection covers recent frees, not all of history.
 *
 * The records of get_malloc_leak_info -- (zygote bit | size, stack) with a
 * count -- exist only in snapshots: the live pointers are grouped by stack
 * and size then.  So the hot path never touches anything that depends on
 * the size, and threads allocating from the same stack never write to a
 * shared cache line.
 *
 * Every malloc or free holds exactly one shard while it touches the
 * tables, so holding all of them stops every table user: that is how
 * snapshots, fork and the stack-store rebuild get a quiescent view
 * (table_lock.c takes them all).
 *
 * A forked child writes its changes into a small table of its own until
 * someone takes every lock (table_child.c): the shards' pages stay the
 * parent's, not copied.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "kit_hash.h"
#include "table_internal.h"

struct shard shards[NSHARDS];
unsigned rec_frames;
size_t stk_stride;
_Atomic(uint8_t *) stk_chunks[STK_MAX_CHUNKS];
atomic_uint stk_next = 1;        /* slot 0 means "no stack" */
static _Atomic(struct index_entry *) stk_index;
static uint32_t stk_index_mask;
static atomic_uint stk_indexed;        /* entries used in the index */
static atomic_bool report_full, report_nomem;

void table_index_range(uintptr_t range[2])
{
	struct index_entry *idx = atomic_load(&stk_index);
	range[0] = (uintptr_t)idx;
	range[1] = idx ? (uintptr_t)(idx + (size_t)stk_index_mask + 1) : 0;
}

/* The thread that holds every lock works on the tables without locking. */
HOOK_TLS int holds_all;
/* Set while this thread holds a shard lock: a signal handler that calls
 * exit() or leaksnap_dump() there must not wait for that lock. */
HOOK_TLS int in_shard;
/* Set by a signal handler that came while this thread was inside the
 * tables, for what it could not do there: a reachability stop
 * (table_defer_stop: the thread stops when it leaves them, through
 * table_deferred_stop), the dump thread's start (table_defer_start,
 * through table_deferred_start).  Bits, set and taken atomically: a
 * handler may come between the read and the clear. */
#define DEFER_STOP 1
#define DEFER_START 2
HOOK_TLS int stop_deferred;
void (*table_deferred_stop)(void);
void (*table_deferred_start)(void);
HOOK_TLS volatile uintptr_t *table_inflight;

void table_defer_stop(void)
{
	__atomic_fetch_or(&stop_deferred, DEFER_STOP, __ATOMIC_RELAXED);
}

void table_defer_start(void)
{
	__atomic_fetch_or(&stop_deferred, DEFER_START, __ATOMIC_RELAXED);
}

void __attribute__((noinline)) table_run_deferred_stop(void)
{
	int what = __atomic_exchange_n(&stop_deferred, 0, __ATOMIC_RELAXED);
	void (*stop)(void) = table_deferred_stop, (*start)(void) = table_deferred_start;
	if ((what & DEFER_STOP) && stop)
		stop();
	if ((what & DEFER_START) && start)
		start();
}

/* Set when the stack index could not grow (out of memory): stacks not
 * yet recorded are then left out rather than retried forever. */
static atomic_bool stk_frozen;

/* Shard locks.  The shared way in is one atomic exchange to take and a
 * plain release store to give back.  A waiter spins briefly, then yields;
 * shards follow threads' arenas, so waiting is rare outside snapshots.
 *
 * That exchange is a full barrier, and a program that has just filled a
 * block pays for draining every store it made: with one thread it was
 * most of the hook's cost.  So a shard that one thread keeps using is
 * biased to it: that thread enters with plain stores (owner_in = 1, then
 * a second look at the bias), no atomic read-modify-write and no fence.
 * Any other thread takes the shared lock, clears the bias and runs
 * membarrier(PRIVATE_EXPEDITED), which makes every thread of the process
 * execute a full barrier: after it, the owner either is seen inside
 * (owner_in = 1, so we wait for it to leave) or will see the bias gone and
 * take the shared lock, which we hold.  A revocation costs a system call,
 * so a shard whose bias was taken away BIAS_MAX_REVOKES times by other
 * threads stays shared for good; snapshots and fork clear every bias with
 * one membarrier and do not count.  Where membarrier is missing (old
 * kernels, valgrind) nothing is ever biased. */
#define BIAS_MAX_REVOKES 4
#define MEMBARRIER_CMD_GLOBAL_ 1
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED_ 8
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_ 16
static atomic_bool bias_ok;
static atomic_uint bias_next = 1;
static HOOK_TLS unsigned bias_id;     /* this thread's, 0 until it needs one */

void table_bias_register(void)
{
#ifdef SYS_membarrier
	atomic_store(&bias_ok, syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_,
					 0, 0) == 0);
#endif
}

/* A full barrier on every thread of the process. */
void table_bias_barrier(void)
{
#ifdef SYS_membarrier
	int saved_errno = errno;
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_, 0, 0) != 0) {
		/* registration lost (a child made by raw clone, say): again */
		table_bias_register();
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_, 0, 0) != 0 &&
		    syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_, 0, 0) != 0) {
			/* Cannot happen once registration worked; stop biasing
			 * and give an owner inside time to be seen. */
			atomic_store(&bias_ok, false);
			for (int i = 0; i < 100; i++)
				sched_yield();
		}
	}
	errno = saved_errno;
#endif
}

/* With @s's shared lock held: take its bias away from whoever has it. */
static void bias_revoke(struct shard *s)
{
	atomic_store_explicit(&s->bias, 0, memory_order_relaxed);
	table_bias_barrier();
	while (atomic_load_explicit(&s->owner_in, memory_order_acquire))
		cpu_relax();
}

/* The shared way in, then: revoke another thread's bias, or bias the
 * shard to this thread.  Returns true if this thread now holds the shard
 * by its bias (the shared lock is given back then). */
static bool __attribute__((noinline)) shard_lock_shared(struct shard *s)
{
	if (HOOK_UNLIKELY(atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)))
		table_lock_slow(&s->lock);
	unsigned owner = atomic_load_explicit(&s->bias, memory_order_relaxed);
	if (owner) {
		bias_revoke(s);
		s->revokes++;
		return false;
	}
	if (!atomic_load_explicit(&bias_ok, memory_order_relaxed) || s->revokes >= BIAS_MAX_REVOKES)
		return false;
	if (!bias_id)
		bias_id = atomic_fetch_add_explicit(&bias_next, 1, memory_order_relaxed);
	if (!bias_id) /* 2^32 threads later: no more biasing */
		return false;
	atomic_store_explicit(&s->owner_in, 1, memory_order_relaxed);
	atomic_store_explicit(&s->bias, bias_id, memory_order_relaxed);
	atomic_store_explicit(&s->lock, 0, memory_order_release);
	return true;
}

/* Returns how the shard was taken, for shard_unlock. */
static inline bool shard_lock(struct shard *s)
{
	if (holds_all)
		return false;
	/* marked before taking, cleared after giving back: a signal handler
	 * on this thread never sees a held lock unmarked */
	in_shard = 1;
	atomic_signal_fence(memory_order_seq_cst);
	unsigned me = bias_id;
	if (me && atomic_load_explicit(&s->bias, memory_order_relaxed) == me) {
		atomic_store_explicit(&s->owner_in, 1, memory_order_relaxed);
		/* only the compiler is fenced here: membarrier in a revoker
		 * orders this store before the load below */
		atomic_signal_fence(memory_order_seq_cst);
		/* (no acquire needed: only this thread sets the bias to
		 * itself, from the shared way in, so nobody else has written
		 * the shard since) */
		if (HOOK_LIKELY(atomic_load_explicit(&s->bias, memory_order_relaxed) == me))
			return true;
		atomic_store_explicit(&s->owner_in, 0, memory_order_release);
	}
	return shard_lock_shared(s);
}

static inline void shard_unlock(struct shard *s, bool biased)
{
	if (holds_all)
		return;
	if (biased)
		atomic_store_explicit(&s->owner_in, 0, memory_order_release);
	else
		atomic_store_explicit(&s->lock, 0, memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	in_shard = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (HOOK_UNLIKELY(stop_deferred))
		table_run_deferred_stop();
}

bool table_busy_here(void)
{
	return in_shard || holds_all;
}


/* A 64-bit hash of a stack, and a 32-bit check made of its depth and
 * frame 0 themselves: two stacks are merged only if they agree on both.
 * @run: unwind_hash_step() from UNWIND_HASH_SEED over the frames (the
 * frame-pointer walk takes it as it goes). */
static inline void stack_hash_of_run(uint64_t run, const uintptr_t *pcs, unsigned n,
				     uint64_t *h1, uint32_t *h2)
{
	*h1 = kit_mix64(run ^ (uint64_t)n << 48);
	uint64_t f = (uint64_t)n * 0x9e3779b97f4a7c15ULL ^ (n ? (uint64_t)pcs[0] : 0);
	*h2 = (uint32_t)(f ^ (f >> 32));
}

static inline void stack_hash(const uintptr_t *pcs, unsigned n, uint64_t *h1, uint32_t *h2)
{
	uint64_t run = UNWIND_HASH_SEED;
	for (unsigned i = 0; i < n; i++)
		run = unwind_hash_step(run, pcs[i]);
	stack_hash_of_run(run, pcs, n, h1, h2);
}

/* Programs allocate from the same stacks again and again, so each thread
 * remembers the stacks it looked up last and their numbers, in a
 * direct-mapped memo keyed by the stack's hash: that and one probe of
 * thread-local memory are much cheaper than a probe of the shared index
 * (a cache miss, shared lines).  An entry answers for the stacks whose
 * (h1, h2) it holds, as the index does (stack_hash).  Where call paths
 * branch, a few sites behind a few callers make dozens of stacks; a
 * program's whole working set of stacks is often a few hundred.  Numbers
 * change only when the store is rebuilt (stk_gen counts rebuilds): a
 * thread that sees a new count forgets its memo. */
#define STACK_MEMO_BITS 7 /* 2 KiB: thread-local storage comes out of
			    * every thread's stack, which may be 16 KiB */
struct stack_memo {
	uint64_t h1;
	uint32_t h2;
	uint32_t id;  /* 0: nothing remembered */
};
#define STACK_MEMO_BYTES (sizeof(struct stack_memo) << STACK_MEMO_BITS)
#ifndef HOOK_INAPP
static HOOK_TLS struct stack_memo stack_memo[1u << STACK_MEMO_BITS];
static HOOK_TLS uint32_t stack_memo_gen;
#endif

static uint32_t stk_gen; /* changed with every lock held */

/* Small tables -------------------------------------------------------------
 * Shard tables start tiny, so that a program with few live blocks keeps its
 * whole table in a few cache lines.  Tables below a page come from free
 * lists per power-of-two size, carved from pages and never returned. */

#define SMALL_MIN_SHIFT 8  /* 256 bytes = 16 slots */
#define SMALL_MAX_SHIFT 12 /* 4 KiB */
static void *small_free[SMALL_MAX_SHIFT + 1];
static atomic_int small_lock;

static void *table_mem_alloc(size_t bytes)
{
	if (bytes > ((size_t)1 << SMALL_MAX_SHIFT))
		return hook_map(bytes);
	unsigned k = SMALL_MIN_SHIFT;
	while (((size_t)1 << k) < bytes)
		k++;
	while (atomic_exchange_explicit(&small_lock, 1, memory_order_acquire))
		cpu_relax();
	void *p = small_free[k];
	if (p) {
		memcpy(&small_free[k], p, sizeof(void *));
	} else {
		uint8_t *page = hook_map((size_t)1 << SMALL_MAX_SHIFT);
		if (page) {
			/* keep the first block, free-list the rest */
			size_t sz = (size_t)1 << k;
			for (size_t off = sz; off < ((size_t)1 << SMALL_MAX_SHIFT); off += sz) {
				void *blk = page + off;
				memcpy(blk, &small_free[k], sizeof(void *));
				small_free[k] = blk;
			}
			p = page;
		}
	}
	atomic_store_explicit(&small_lock, 0, memory_order_release);
	if (p)
		memset(p, 0, (size_t)1 << k);
	return p;
}

/* The calling thread's memo of stacks and its generation (NULL: none).
 * The in-app build keeps it with the thread's stripe: its own TLS must fit
 * the little room glibc keeps for a dlopen()ed library's (hook_internal.h). */
static struct stack_memo *memo_here(uint32_t **gen)
{
#ifndef HOOK_INAPP
	*gen = &stack_memo_gen;
	return stack_memo;
#else
	struct inapp_stripe *s = inapp_mine;
	if (HOOK_UNLIKELY(!s || s->shared))
		return NULL;
	if (HOOK_UNLIKELY(!s->memo)) {
		s->memo = table_mem_alloc(STACK_MEMO_BYTES); /* zeroed: all unknown */
		if (!s->memo)
			return NULL;
	}
	*gen = &s->memo_gen;
	return s->memo;
#endif
}

void table_memo_range(uintptr_t range[2])
{
	range[0] = range[1] = 0;
#ifndef HOOK_INAPP
	range[0] = (uintptr_t)stack_memo;
	range[1] = range[0] + STACK_MEMO_BYTES;
#elif !defined(__BIONIC__) /* (bionic's dynamic TLS: not from a signal handler) */
	struct inapp_stripe *s = inapp_mine;
	struct stack_memo *m = s && !s->shared ? s->memo : NULL;
	if (m) {
		range[0] = (uintptr_t)m;
		range[1] = range[0] + STACK_MEMO_BYTES;
	}
#endif
}

static void table_mem_free(void *p, size_t bytes)
{
	if (bytes > ((size_t)1 << SMALL_MAX_SHIFT)) {
		hook_unmap(p, bytes);
		return;
	}
	unsigned k = SMALL_MIN_SHIFT;
	while (((size_t)1 << k) < bytes)
		k++;
	/* no stale block address stays behind: reachability scans this
	 * memory as a root once it is no shard's table */
	memset(p, 0, (size_t)1 << k);
	while (atomic_exchange_explicit(&small_lock, 1, memory_order_acquire))
		cpu_relax();
	memcpy(p, &small_free[k], sizeof(void *));
	small_free[k] = p;
	atomic_store_explicit(&small_lock, 0, memory_order_release);
}

int table_init(unsigned frames)
{
	/* (after table_reset the store is empty: its stride may change) */
	rec_frames = frames;
	stk_stride = sizeof(struct stk) + (size_t)frames * sizeof(uintptr_t);
	for (unsigned i = 0; i < NSHARDS; i++) {
		if (!shards[i].slots) {
			shards[i].slots = table_mem_alloc(SHARD_MIN_CAP * sizeof(struct ptr_slot));
			if (!shards[i].slots)
				return -1;
			shards[i].mask = SHARD_MIN_CAP - 1;
		}
		if (!shards[i].freed) {
			shards[i].freed = table_mem_alloc(FREED_SET * sizeof(atomic_uintptr_t));
			if (!shards[i].freed)
				return -1;
		}
	}
	if (!atomic_load(&stk_index)) {
		struct index_entry *idx = hook_map(STK_INDEX_MIN_CAP * sizeof(struct index_entry));
		if (!idx)
			return -1;
		stk_index_mask = STK_INDEX_MIN_CAP - 1;
		atomic_store(&stk_index, idx);
	}
	table_bias_register();
	return 0;
}

void table_reset(void)
{
	table_lock_all();
	while (atomic_load(&snap_readers))
		sched_yield();
	for (unsigned i = 0; i < NSHARDS; i++) {
		struct shard *s = &shards[i];
		if (s->slots && s->mask + 1 > SHARD_MIN_CAP) {
			table_mem_free(s->slots, (s->mask + 1) * sizeof(struct ptr_slot));
			s->slots = table_mem_alloc(SHARD_MIN_CAP * sizeof(struct ptr_slot));
			s->mask = SHARD_MIN_CAP - 1;
		} else if (s->slots) {
			memset(s->slots, 0, (s->mask + 1) * sizeof(struct ptr_slot));
		}
		s->live = 0;
		if (s->freed)
			memset(s->freed, 0, FREED_SET * sizeof(atomic_uintptr_t));
	}
	/* every stack goes: the chunks, the index, the numbers */
	for (uint32_t c = 0; c < STK_MAX_CHUNKS; c++) {
		uint8_t *mem = atomic_exchange(&stk_chunks[c], NULL);
		if (mem)
			hook_unmap(mem, STK_CHUNK * stk_stride);
	}
	struct index_entry *idx = atomic_load(&stk_index);
	if (idx)
		memset(idx, 0, ((size_t)stk_index_mask + 1) * sizeof(struct index_entry));
	atomic_store(&stk_indexed, 0);
	atomic_store(&stk_next, 1);
	atomic_store(&stk_frozen, false);
	stk_gen++; /* every thread's memo and every cached stack number is stale */
	table_unlock_all();
}

/* Records ------------------------------------------------------------------ */

/* A fresh stack slot, or 0 when the store is full or out of memory. */
static uint32_t stk_alloc(void)
{
	/* Check before taking a number, so that stk_next cannot wrap however
	 * many allocations fail once the store is full. */
	if (atomic_load_explicit(&stk_next, memory_order_relaxed) >= STK_MAX_CHUNKS * STK_CHUNK) {
		hook_report(&report_full, "stack table full: further stacks are not recorded");
		return 0;
	}
	uint32_t idx = atomic_fetch_add_explicit(&stk_next, 1, memory_order_relaxed);
	uint32_t c = idx >> STK_CHUNK_SHIFT;
	if (c >= STK_MAX_CHUNKS) {
		hook_report(&report_full, "stack table full: further stacks are not recorded");
		return 0;
	}
	if (!atomic_load_explicit(&stk_chunks[c], memory_order_acquire)) {
		uint8_t *mem = hook_map(STK_CHUNK * stk_stride);
		if (!mem) {
			hook_report(&report_nomem, "out of memory for the allocation tables");
			return 0;
		}
		uint8_t *expected = NULL;
		if (!atomic_compare_exchange_strong(&stk_chunks[c], &expected, mem))
			hook_unmap(mem, STK_CHUNK * stk_stride);
	}
	return idx;
}

/* The number of the stack, added if new.  0 = not stored (store full or
 * out of memory), UINT32_MAX = the index must grow first.  Called with a
 * shard lock held (so never during a rebuild). */
static uint32_t stk_index_find_or_add(const uintptr_t *pcs, unsigned n, uint64_t h1,
				      uint32_t h2);
static uint32_t stk_lookup(const uintptr_t *pcs, unsigned n, const uint64_t *run);

/* @slot (NULL: none): a word the unwinder keeps with these very pcs (see
 * unwind_cfi_stack_slot()), holding stk_gen << 32 | the stack's number once
 * known, 0 before. */
static uint32_t stk_find_or_add(const uintptr_t *pcs, unsigned n, uint64_t *slot,
			       const uint64_t *run)
{
	if (slot) {
		uint64_t v = *slot;
		if ((uint32_t)v && (uint32_t)(v >> 32) == stk_gen)
			return (uint32_t)v;
	}
	uint32_t id = stk_lookup(pcs, n, run);
	if (slot && id && id != UINT32_MAX)
		*slot = (uint64_t)stk_gen << 32 | id;
	return id;
}

static uint32_t stk_lookup(const uintptr_t *pcs, unsigned n, const uint64_t *run)
{
	uint64_t h1;
	uint32_t h2;
	if (run)
		stack_hash_of_run(*run, pcs, n, &h1, &h2);
	else
		stack_hash(pcs, n, &h1, &h2);
	uint32_t *gen;
	struct stack_memo *memo = memo_here(&gen), *m = NULL;
	if (HOOK_LIKELY(memo != NULL)) {
		if (HOOK_UNLIKELY(*gen != stk_gen)) {
			memset(memo, 0, STACK_MEMO_BYTES);
			*gen = stk_gen;
		}
		m = &memo[h1 >> (64 - STACK_MEMO_BITS)];
		if (m->id && m->h1 == h1 && m->h2 == h2)
			return m->id;
	}
	uint32_t id = stk_index_find_or_add(pcs, n, h1, h2);
	if (m && id && id != UINT32_MAX) {
		m->h1 = h1;
		m->h2 = h2;
		m->id = id;
	}
	return id;
}

static uint32_t stk_index_find_or_add(const uintptr_t *pcs, unsigned n, uint64_t h1, uint32_t h2)
{
	struct index_entry *index = atomic_load_explicit(&stk_index, memory_order_relaxed);
	uint32_t mask = stk_index_mask;
	for (uint32_t i = (uint32_t)h1 & mask;; i = (i + 1) & mask) {
		struct index_entry *e = &index[i];
		uint32_t idx = atomic_load_explicit(&e->idx, memory_order_acquire);
		if (idx == 0) {
			if (atomic_load_explicit(&stk_indexed, memory_order_relaxed) >= mask / 2)
				return UINT32_MAX;
			if (!atomic_compare_exchange_strong_explicit(&e->idx, &idx, IDX_CLAIMED,
								    memory_order_acquire,
								    memory_order_acquire))
				goto taken; /* another thread claimed it first */
			uint32_t fresh = stk_alloc();
			if (!fresh) {
				atomic_store_explicit(&e->idx, 0, memory_order_release);
				return 0;
			}
			struct stk *r = stk_at(fresh);
			r->n = n;
			memcpy(r->pcs, pcs, n * sizeof(uintptr_t));
			atomic_store_explicit(&e->h1, h1, memory_order_relaxed);
			e->h2 = h2;
			atomic_store_explicit(&e->idx, fresh, memory_order_release);
			atomic_fetch_add_explicit(&stk_indexed, 1, memory_order_relaxed);
			return fresh;
		}
taken:
		while (idx == IDX_CLAIMED) {
			cpu_relax();
			idx = atomic_load_explicit(&e->idx, memory_order_acquire);
		}
		if (idx && atomic_load_explicit(&e->h1, memory_order_relaxed) == h1 && e->h2 == h2)
			return idx;
	}
}

/* Pointer shards ------------------------------------------------------------ */

/* The slot holding @key, or the empty slot that ends its chain. */
static struct ptr_slot *shard_find(struct ptr_slot *slots, size_t mask, uintptr_t key,
				    uint32_t home)
{
	for (size_t i = slot_of(home, mask);; i = (i + 1) & mask) {
		struct ptr_slot *e = &slots[i];
		if (e->key == key || e->key == 0)
			return e;
	}
}

static inline atomic_uintptr_t *freed_slot(struct shard *s, uint64_t h)
{
	return &s->freed[(h >> 20) & (FREED_SET - 1)];
}

/* @key (hash @h) is handed out again without a record: no longer a freed
 * address (with @s's lock held). */
static inline void freed_forget(struct shard *s, uint64_t h, uintptr_t key)
{
	atomic_uintptr_t *f = freed_slot(s, h);
	if (atomic_load_explicit(f, memory_order_relaxed) == key)
		atomic_store_explicit(f, 0, memory_order_relaxed);
}

/* Resize @s to four times its live entries.  Returns -1 if memory ran
 * out (the old table stays, still correct, only fuller). */
static int shard_resize(struct shard *s)
{
	int saved_errno = errno; /* free() must not change errno, even here */
	size_t cap = SHARD_MIN_CAP;
	while (cap < s->live * 4)
		cap *= 2;
	struct ptr_slot *slots = table_mem_alloc(cap * sizeof(struct ptr_slot));
	if (!slots) {
		errno = saved_errno;
		return -1;
	}
	struct ptr_slot *old = s->slots;
	size_t old_cap = s->mask + 1;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			*shard_find(slots, cap - 1, old[i].key, home_of(old[i].key)) = old[i];
	s->slots = slots;
	s->mask = cap - 1;
	table_mem_free(old, old_cap * sizeof(struct ptr_slot));
	errno = saved_errno;
	return 0;
}

static inline __attribute__((always_inline)) void shard_put(struct shard *s, uintptr_t key,
							    uint64_t h, size_t size, bool zygote,
							    uint32_t stack)
{
	if (HOOK_UNLIKELY((s->live + 1) * 4 > (s->mask + 1) * 3)) {
		/* A resize failed before (out of memory): leave this block out
		 * rather than fill the table (lookups need an empty slot). */
		freed_forget(s, h, key);
		return;
	}
	struct ptr_slot *e = shard_find(s->slots, s->mask, key, (uint32_t)(h >> 32));
	/* A live entry already there means the allocator handed out an
	 * address whose free went by a path we did not see: take it over. */
	if (!e->key)
		s->live++;
	e->key = key;
	e->size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
	e->stack = stack | (zygote ? SLOT_ZYGOTE : 0);
	/* (The freed-address set may still hold @key: harmless, it is only
	 * consulted for pointers that are not live.) */
	if (s->live * 2 > s->mask + 1 && shard_resize(s) != 0)
		hook_report(&report_nomem, "out of memory for the allocation tables");
}

/* Remove the entry at @e (linear probing: shift the rest of the chain
 * back so that no lookup ever needs a tombstone). */
static void shard_delete(struct shard *s, struct ptr_slot *e)
{
	size_t mask = s->mask, i = (size_t)(e - s->slots);
	for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
		struct ptr_slot *n = &s->slots[j];
		if (!n->key)
			break;
		size_t home = slot_of(home_of(n->key), mask);
		/* n may move to i if its home is not in the cyclic range (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->slots[i] = *n;
			i = j;
		}
	}
	s->slots[i].key = 0;
	s->live--;
	if (s->mask + 1 > SHARD_MIN_CAP && s->live * 16 < s->mask + 1)
		shard_resize(s); /* shrink; failure only leaves it larger */
}

struct ptr_slot *table_shard_find(struct shard *s, uintptr_t key)
{
	return shard_find(s->slots, s->mask, key, home_of(key));
}

void table_shard_put(struct shard *s, uintptr_t key, uint64_t h, size_t size, bool zygote,
		     uint32_t stack)
{
	shard_put(s, key, h, size, zygote, stack);
}

void table_shard_drop(struct shard *s, struct ptr_slot *e)
{
	shard_delete(s, e);
}

atomic_uintptr_t *table_freed_slot(struct shard *s, uint64_t h)
{
	return freed_slot(s, h);
}

/* Rebuild the stack store and index (every lock held): drop stacks no
 * live pointer uses, compact the rest, size the index for them.  Memory is
 * mapped before anything changes; if it cannot be, nothing changes and
 * the index is frozen (new stacks go unrecorded, with one report). */
static void stk_rebuild(void)
{
	uint32_t n = atomic_load(&stk_next);
	uint32_t limit = n < STK_MAX_CHUNKS * STK_CHUNK ? n : STK_MAX_CHUNKS * STK_CHUNK;
	size_t map_size = (size_t)limit * sizeof(uint32_t), live = 0;
	uint32_t *remap = hook_map(map_size);
	if (!remap)
		goto frozen;
	for (unsigned i = 0; i < NSHARDS; i++) {
		live += shards[i].live;
		for (size_t j = 0; j <= shards[i].mask; j++)
			if (shards[i].slots[j].key)
				remap[shards[i].slots[j].stack & ~SLOT_ZYGOTE] = 1;
	}
	uint32_t survivors = 0;
	for (uint32_t i = 1; i < limit; i++)
		survivors += remap[i] && atomic_load(&stk_chunks[i >> STK_CHUNK_SHIFT]);
	/* Room for 4x the survivors and for 2x the live pointers: the next
	 * rebuild comes after as many new stacks as this one cost to make,
	 * so a program that keeps creating and dropping stacks pays O(1) per
	 * stack, not a rebuild every few thousand allocations. */
	uint64_t want = ((uint64_t)survivors + 1) * 4;
	if (want < (uint64_t)live * 2)
		want = (uint64_t)live * 2;
	uint32_t cap = STK_INDEX_MIN_CAP;
	while (cap < want && cap < (1u << 30))
		cap *= 2;
	struct index_entry *index = hook_map((size_t)cap * sizeof(struct index_entry));
	if (!index) {
		hook_unmap(remap, map_size);
		goto frozen;
	}
	uint32_t next = 1;
	for (uint32_t i = 1; i < limit; i++) {
		if (!remap[i] || !atomic_load(&stk_chunks[i >> STK_CHUNK_SHIFT]))
			continue;
		/* skip chunks whose mapping failed (never below i's own) */
		while (!atomic_load(&stk_chunks[next >> STK_CHUNK_SHIFT]))
			next = ((next >> STK_CHUNK_SHIFT) + 1) << STK_CHUNK_SHIFT;
		if (next != i)
			memcpy(stk_at(next), stk_at(i), stk_stride);
		remap[i] = next++;
	}
	for (unsigned i = 0; i < NSHARDS; i++)
		for (size_t j = 0; j <= shards[i].mask; j++) {
			struct ptr_slot *e = &shards[i].slots[j];
			if (e->key)
				e->stack = remap[e->stack & ~SLOT_ZYGOTE] | (e->stack & SLOT_ZYGOTE);
		}
	hook_unmap(remap, map_size);
	/* Give back the chunks above the survivors. */
	for (uint32_t c = (next + STK_CHUNK - 1) >> STK_CHUNK_SHIFT;
	     c <= (limit - 1) >> STK_CHUNK_SHIFT; c++) {
		uint8_t *mem = atomic_exchange(&stk_chunks[c], NULL);
		if (mem)
			hook_unmap(mem, STK_CHUNK * stk_stride);
	}
	atomic_store(&stk_next, next);
	stk_gen++; /* numbers changed: forget every thread's memo */
	uint32_t indexed = 0;
	for (uint32_t i = 1; i < next; i++) {
		if (!atomic_load(&stk_chunks[i >> STK_CHUNK_SHIFT]))
			continue;
		const struct stk *r = stk_at(i);
		uint64_t h1;
		uint32_t h2;
		stack_hash(r->pcs, (unsigned)r->n, &h1, &h2);
		uint32_t k = (uint32_t)h1 & (cap - 1);
		while (atomic_load_explicit(&index[k].idx, memory_order_relaxed))
			k = (k + 1) & (cap - 1);
		atomic_store_explicit(&index[k].h1, h1, memory_order_relaxed);
		index[k].h2 = h2;
		atomic_store_explicit(&index[k].idx, i, memory_order_relaxed);
		indexed++;
	}
	struct index_entry *old = atomic_load(&stk_index);
	hook_unmap(old, ((size_t)stk_index_mask + 1) * sizeof(struct index_entry));
	stk_index_mask = cap - 1;
	atomic_store(&stk_index, index);
	atomic_store(&stk_indexed, indexed);
	return;
frozen:
	atomic_store(&stk_frozen, true);
	hook_report(&report_nomem, "out of memory for the allocation tables; "
		    "new stacks are no longer recorded");
}

/* Snapshots under way past their copy of the pointer tables (they still
 * read the stack store, without a lock): no rebuild may move a stack then.
 * Raised with every lock held, lowered without (table_snap.c). */
atomic_uint snap_readers;

static void stk_grow(void)
{
	/* The thread holding every lock (a fork handler allocating, say)
	 * rebuilds in place: locking again would be a no-op, unlocking would
	 * release the locks its caller still relies on. */
	bool nested = holds_all;
	for (;;) {
		if (!nested)
			table_lock_all();
		if (!atomic_load(&snap_readers))
			break;
		/* A snapshot is reading stacks: wait for it, without the
		 * locks (it needs none) unless they are the caller's. */
		if (nested) {
			while (atomic_load(&snap_readers))
				sched_yield();
			break;
		}
		table_unlock_all();
		sched_yield();
	}
	if (atomic_load(&stk_indexed) >= stk_index_mask / 2 && !atomic_load(&stk_frozen))
		stk_rebuild();
	if (!nested)
		table_unlock_all();
}

/* For table_child.c: the shards' way in and out for a forked child's own
 * table (in_shard raised, a deferred stop run), the stack store. */
void table_busy_enter(void)
{
	in_shard = 1;
	atomic_signal_fence(memory_order_seq_cst);
}

void table_busy_leave(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	in_shard = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (HOOK_UNLIKELY(stop_deferred))
		table_run_deferred_stop();
}

uint32_t table_stack_find(const uintptr_t *pcs, unsigned n, uint64_t *stack_slot,
			  const uint64_t *run)
{
	uint32_t stack = stk_find_or_add(pcs, n, stack_slot, run);
	if (stack == UINT32_MAX && atomic_load_explicit(&stk_frozen, memory_order_relaxed))
		stack = 0;
	return stack;
}

void table_stack_grow(void)
{
	stk_grow();
}

uint32_t table_stack_gen(void)
{
	return stk_gen;
}

void table_insert(void *p, size_t size, bool zygote, const uintptr_t *pcs, unsigned n,
		  uint64_t *stack_slot, const uint64_t *run)
{
	uintptr_t key = (uintptr_t)p;
	uint64_t h = ptr_hash(key);
	struct shard *s = shard_of(key);
	if (HOOK_UNLIKELY(in_shard) && !holds_all) {
		/* a signal handler allocating while this thread is inside the
		 * tables: they cannot be touched, so the block goes unrecorded */
		table_note_untracked(p);
		return;
	}
	if (HOOK_UNLIKELY(atomic_load_explicit(&child_on, memory_order_relaxed)) && !holds_all &&
	    child_insert(key, size, zygote, pcs, n, stack_slot, run))
		return;
	for (;;) {
		bool biased = shard_lock(s);
		uint32_t stack = stk_find_or_add(pcs, n, stack_slot, run);
		if (stack == UINT32_MAX && atomic_load_explicit(&stk_frozen, memory_order_relaxed))
			stack = 0;
		if (stack != UINT32_MAX) {
			if (stack) {
				shard_put(s, key, h, size, zygote, stack);
			} else {
				/* not recorded: the address is no longer a freed one */
				freed_forget(s, h, key);
			}
			shard_unlock(s, biased);
			return;
		}
		shard_unlock(s, biased);
		stk_grow();
	}
}

enum table_remove_result table_remove(void *p, struct table_key *key)
{
	uintptr_t k = (uintptr_t)p;
	uint64_t h = ptr_hash(k);
	struct shard *s = shard_of(k);
	enum table_remove_result res = TABLE_UNTRACKED;
	if (HOOK_UNLIKELY(in_shard) && !holds_all)
		return res; /* a signal handler freeing while this thread is inside
			     * the tables: its entry stays until the address is reused */
	if (HOOK_UNLIKELY(atomic_load_explicit(&child_on, memory_order_relaxed)) && !holds_all &&
	    child_free(k, key, &res))
		return res;
	/* (the slot's line is on its way while the lock is taken) */
	__builtin_prefetch(&s->slots[slot_of((uint32_t)(h >> 32), s->mask)]);
	bool biased = shard_lock(s);
	struct ptr_slot *e = shard_find(s->slots, s->mask, k, (uint32_t)(h >> 32));
	atomic_uintptr_t *f = freed_slot(s, h);
	if (e->key) {
		if (key) {
			key->size = e->size | (e->stack & SLOT_ZYGOTE ? HOOK_ZYGOTE_FLAG : 0);
			key->stack = e->stack & ~SLOT_ZYGOTE;
			key->gen = stk_gen;
			volatile uintptr_t *in = table_inflight;
			if (in) {
				in[0] = k;
				in[1] = k + e->size;
			}
		}
		shard_delete(s, e);
		atomic_store_explicit(f, k, memory_order_relaxed);
		res = TABLE_REMOVED;
	} else if (atomic_load_explicit(f, memory_order_relaxed) == k) {
		res = TABLE_DOUBLE_FREE;
	}
	shard_unlock(s, biased);
	return res;
}

void table_restore(void *p, const struct table_key *key)
{
	uintptr_t k = (uintptr_t)p;
	uint64_t h = ptr_hash(k);
	struct shard *s = shard_of(k);
	if (HOOK_UNLIKELY(in_shard) && !holds_all) {
		table_note_untracked(p);
		return;
	}
	if (HOOK_UNLIKELY(atomic_load_explicit(&child_on, memory_order_relaxed)) && !holds_all &&
	    child_restore(k, key))
		return;
	bool biased = shard_lock(s);
	/* (stk_gen changes only with every lock held: stable here) */
	if (key->gen == stk_gen)
		shard_put(s, k, h, key->size & ~(uintptr_t)HOOK_ZYGOTE_FLAG,
			  (key->size & HOOK_ZYGOTE_FLAG) != 0, key->stack);
	else
		freed_forget(s, h, k);
	shard_unlock(s, biased);
}

void table_note_untracked(void *p)
{
	uintptr_t k = (uintptr_t)p;
	if (HOOK_UNLIKELY(atomic_load_explicit(&child_on, memory_order_relaxed)) && !in_shard &&
	    !holds_all) {
		if (child_untracked(k))
			return;
	}
	atomic_uintptr_t *f = freed_slot(shard_of(k), ptr_hash(k));
	uintptr_t expected = k;
	if (atomic_load_explicit(f, memory_order_relaxed) == k)
		atomic_compare_exchange_strong_explicit(f, &expected, 0, memory_order_relaxed,
							memory_order_relaxed);
}

