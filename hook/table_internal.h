/* leaksnap hook: the tables' layout, shared by table.c (the tables and
 * their shards' locks), table_lock.c (every lock at once), table_child.c
 * (a forked child's own table) and table_snap.c (snapshots and the live
 * blocks read from them, always with every lock held).  Internal to
 * hook/: each of them includes this header, none includes another. */
#ifndef LEAKSNAP_HOOK_TABLE_INTERNAL_H
#define LEAKSNAP_HOOK_TABLE_INTERNAL_H

#include "hook_internal.h"

#define SHARD_BITS 6
#define NSHARDS (1u << SHARD_BITS)
#define SHARD_MIN_CAP 16u    /* slots; tables up to 4 KiB come from size classes */

#define STK_CHUNK_SHIFT 12
#define STK_CHUNK (1u << STK_CHUNK_SHIFT)
#define STK_MAX_CHUNKS 32768u /* 134M stacks */
#define STK_INDEX_MIN_CAP 8192u
#define IDX_CLAIMED UINT32_MAX

#define FREED_SET 512 /* recently freed addresses remembered per shard */

/* 16 bytes (12 on 32-bit): four to a cache line.  A size that does not
 * fit 32 bits is kept as UINT32_MAX, which is just as good: dumps clamp
 * every size from 2 GiB up anyway (see table_snapshot). */
struct ptr_slot {
	uintptr_t key;    /* 0 = empty */
	uint32_t size;    /* saturated at UINT32_MAX */
	uint32_t stack;   /* its stack in the stack store | SLOT_ZYGOTE */
};
#define SLOT_ZYGOTE 0x80000000u /* stack numbers stay below 2^27 */

struct shard {
	atomic_int lock;  /* 0 free, 1 held: the shared way in */
	atomic_uint bias; /* the thread this shard is biased to (bias_id), 0 none */
	atomic_int owner_in; /* that thread is inside by the biased way */
	unsigned revokes; /* biases taken away by another thread (under lock) */
	struct ptr_slot *slots;
	size_t mask;      /* capacity - 1; capacity is a power of two */
	size_t live;      /* entries in use */
	atomic_uintptr_t *freed; /* FREED_SET recently freed addresses */
} __attribute__((aligned(64)));

struct stk {
	uintptr_t n;
	uintptr_t pcs[];
};

struct index_entry {
	atomic_uint_least64_t h1;
	atomic_uint idx;  /* 0 = empty, IDX_CLAIMED = being filled */
	uint32_t h2;
};

extern struct shard shards[NSHARDS];
extern unsigned rec_frames;
extern size_t stk_stride;
extern _Atomic(uint8_t *) stk_chunks[STK_MAX_CHUNKS];
extern atomic_uint stk_next;        /* slot 0 means "no stack" */
extern atomic_uint snap_readers;    /* snapshots reading stacks unlocked */
/* The stack index's memory (its hashes look like addresses on 32-bit). */
void table_index_range(uintptr_t range[2]);

/* Fibonacci hashing: one multiply; the high half is well mixed. */
static inline uint64_t ptr_hash(uintptr_t p)
{
	return (uint64_t)p * 0x9e3779b97f4a7c15ULL;
}

/* Shards follow 64 MiB regions of the address space, which is how glibc
 * (and bionic's scudo/jemalloc) give each thread an arena of its own: a
 * thread's blocks land in its own shards, so threads rarely share a lock
 * or a cache line. */
static inline struct shard *shard_of(uintptr_t key)
{
	return &shards[((uint64_t)(key >> 26) * 0x9e3779b97f4a7c15ULL) >> (64 - SHARD_BITS)];
}

static inline size_t slot_of(uint32_t home, size_t mask)
{
	return (size_t)home & mask;
}

/* Where @key's chain starts under any mask (recomputed rather than
 * stored: one multiply is cheaper than a bigger slot). */
static inline uint32_t home_of(uintptr_t key)
{
	return (uint32_t)(ptr_hash(key) >> 32);
}

/* Ask for the cache line where table_insert(@p, ...) will look first
 * (before the stack walk, which then hides its latency).  Read without
 * the lock: only a hint (a stale table is harmless). */
static inline void table_prefetch(const void *p)
{
	const struct shard *s = shard_of((uintptr_t)p);
	__builtin_prefetch(&s->slots[slot_of(home_of((uintptr_t)p), s->mask)], 1);
}

static inline struct stk *stk_at(uint32_t idx)
{
	uint8_t *chunk = atomic_load_explicit(&stk_chunks[idx >> STK_CHUNK_SHIFT],
					      memory_order_acquire);
	return (struct stk *)(chunk + (size_t)(idx & (STK_CHUNK - 1)) * stk_stride);
}

/* For table_child.c (table.c): a shard's slot for @key (or the empty one
 * ending its chain), an entry added or taken away (every lock held), the
 * recently freed address where @key's hash @h goes. */
struct ptr_slot *table_shard_find(struct shard *s, uintptr_t key);
void table_shard_put(struct shard *s, uintptr_t key, uint64_t h, size_t size, bool zygote,
		     uint32_t stack);
void table_shard_drop(struct shard *s, struct ptr_slot *e);
atomic_uintptr_t *table_freed_slot(struct shard *s, uint64_t h);

/* table.c, for table_child.c: the way into the tables and out (a deferred
 * stop run there), the stack store's number for a stack (0: not stored,
 * UINT32_MAX: the index must grow, table_stack_grow), its numbering. */
void table_busy_enter(void);
void table_busy_leave(void);
uint32_t table_stack_find(const uintptr_t *pcs, unsigned n, uint64_t *stack_slot,
			  const uint64_t *run);
void table_stack_grow(void);
uint32_t table_stack_gen(void);

/* table.c's thread state, for table_lock.c: this thread holds every lock
 * (and works on the tables without locking), is inside the tables, has a
 * reachability stop deferred to its leaving them (table_run_deferred_stop
 * runs it). */
extern HOOK_TLS int holds_all;
extern HOOK_TLS int in_shard;
extern HOOK_TLS int stop_deferred;
void table_run_deferred_stop(void);
/* Biased shards (table.c): register for membarrier, a full barrier on
 * every thread of the process. */
void table_bias_register(void);
void table_bias_barrier(void);
/* table_lock.c: a shard's lock when its first exchange failed. */
void table_lock_slow(atomic_int *l);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ volatile("yield");
#endif
}

/* A forked child's own table of changes (table_child.c), in use while
 * child_on.  child_insert, child_free, child_restore, child_untracked:
 * table_insert, table_remove, table_restore, table_note_untracked on it;
 * false when it did nothing (the caller goes the shards' way).
 * child_flatten: apply it to the shards and turn it off (every shard lock
 * held).  child_start: turn it on, empty (in a forked child). */
extern atomic_bool child_on;
bool child_insert(uintptr_t key, size_t size, bool zygote, const uintptr_t *pcs, unsigned n,
		  uint64_t *stack_slot, const uint64_t *run);
bool child_free(uintptr_t key, struct table_key *out, enum table_remove_result *res);
bool child_restore(uintptr_t key, const struct table_key *k);
bool child_untracked(uintptr_t key);
void child_flatten(void);
void child_start(void);

#endif
