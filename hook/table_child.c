/* leaksnap hook: the tables of a forked child, until it needs them whole.
 *
 * A child of fork() shares the parent's table pages copy-on-write.  A
 * child that serves one request and exits (fork per connection) makes a
 * few hundred allocations, and each lands on a page of its own in the
 * shards' slot arrays (a block's slot is a hash of its address): each
 * write copied a page of the parent's, a fault and 4 KiB, a seventh of a
 * 1.6 ms child's time (bench/fork.sh).
 *
 * So a forked child keeps its changes apart, in a small table of its own
 * (the overlay), and leaves the parent's pages alone: an allocation is an
 * entry here; a free of a block recorded here changes its entry; a free of
 * an inherited block looks the block up in the inherited shards (a read
 * copies nothing) and leaves an entry saying it is gone.  Whoever takes
 * every table lock (a dump, a fork, a rebuild of the stack store) first
 * applies the overlay to the shards (child_flatten) and turns it off: from
 * then on the child uses the shards as any process does, so every dump of
 * it reads the shards alone, its inherited blocks and its own, less those
 * it freed.  An overlay that grows past CHILD_MAX entries is applied too:
 * a child that lives on pays the copies once.
 *
 * While the overlay is on, nothing writes the shards but child_flatten (with
 * every lock and the overlay's held): the overlay's lock makes them
 * read-only for its holder.  A thread holds only that lock for an
 * operation, never a shard's with it. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

#include "table_internal.h"

#define CHILD_MIN_CAP 256u
#define CHILD_MAX 16384u

enum child_state {
	C_LIVE = 1,       /* allocated here (or again): the entry's size and stack */
	C_GONE,           /* not live, whatever the shards say */
	C_GONE_FREED,     /* freed here: not live, and a second free is a double free */
	C_FORGOT,         /* as the shards say, but no longer a recently freed address */
};

struct child_slot {
	uintptr_t key;    /* 0 = empty */
	uint32_t size;    /* saturated at UINT32_MAX, as the shards keep it */
	uint32_t stack;   /* | SLOT_ZYGOTE */
	uint32_t state;   /* enum child_state */
};

atomic_bool child_on;
static atomic_int child_lock_word;
/* The thread using the overlay (the address of its own child_tag): a
 * second thread has it applied, so that threads a child starts do not
 * share one lock for good. */
static HOOK_TLS char child_tag;
static const char *child_user;
static struct child_slot *child_slots;
static size_t child_mask, child_used;

/* The overlay's lock: 0 free, 1 held, 2 held with a thread asleep for it
 * (a futex: a waiter sleeps until the holder lets go, rather than yield in
 * a loop, which at real-time priority keeps the holder off its CPU). */
static void child_word_lock(void)
{
	int c = 0;
	if (atomic_compare_exchange_strong_explicit(&child_lock_word, &c, 1, memory_order_acquire,
						    memory_order_relaxed))
		return;
	int saved = errno;
	if (c != 2)
		c = atomic_exchange_explicit(&child_lock_word, 2, memory_order_acquire);
	while (c != 0) {
		syscall(SYS_futex, (int *)(uintptr_t)&child_lock_word, FUTEX_WAIT_PRIVATE, 2, NULL,
			NULL, 0);
		c = atomic_exchange_explicit(&child_lock_word, 2, memory_order_acquire);
	}
	errno = saved;
}

static void child_word_unlock(void)
{
	if (atomic_exchange_explicit(&child_lock_word, 0, memory_order_release) == 2) {
		int saved = errno;
		syscall(SYS_futex, (int *)(uintptr_t)&child_lock_word, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
		errno = saved;
	}
}

static bool child_lock(void)
{
	child_word_lock();
	if (atomic_load_explicit(&child_on, memory_order_relaxed))
		return true;
	child_word_unlock();
	return false;
}

static bool child_mine(void)
{
	if (!child_user)
		child_user = &child_tag;
	return child_user == &child_tag;
}

static void child_unlock(void)
{
	child_word_unlock();
}

void child_start(void)
{
	/* (the parent's overlay, if it was a child too, went at its fork:
	 * its fork handler took every lock) */
	child_slots = NULL;
	child_mask = 0;
	child_used = 0;
	child_user = &child_tag; /* the forking thread */
	atomic_store_explicit(&child_lock_word, 0, memory_order_relaxed);
	atomic_store_explicit(&child_on, true, memory_order_release);
}

static struct child_slot *child_find(struct child_slot *slots, size_t mask, uintptr_t key)
{
	for (size_t i = (size_t)(ptr_hash(key) >> 32) & mask;; i = (i + 1) & mask)
		if (slots[i].key == key || slots[i].key == 0)
			return &slots[i];
}

/* Room for one more entry; false when there is none (full, or no memory):
 * the caller then has the overlay applied. */
static bool child_room(void)
{
	if (child_used >= CHILD_MAX)
		return false;
	if (child_slots && (child_used + 1) * 2 <= child_mask + 1)
		return true;
	size_t cap = child_slots ? (child_mask + 1) * 2 : CHILD_MIN_CAP;
	struct child_slot *slots = hook_map(cap * sizeof(*slots));
	if (!slots)
		return false;
	if (child_slots) {
		for (size_t i = 0; i <= child_mask; i++)
			if (child_slots[i].key)
				*child_find(slots, cap - 1, child_slots[i].key) = child_slots[i];
		hook_unmap(child_slots, (child_mask + 1) * sizeof(*slots));
	}
	child_slots = slots;
	child_mask = cap - 1;
	return true;
}

/* @key's entry, added empty if there is none and @add; NULL when there
 * is none (or no room). */
static struct child_slot *child_entry(uintptr_t key, bool add)
{
	struct child_slot *e = child_slots ? child_find(child_slots, child_mask, key) : NULL;
	if (e && e->key)
		return e;
	if (!add || !child_room())
		return NULL;
	e = child_find(child_slots, child_mask, key);
	e->key = key;
	child_used++;
	return e;
}

/* The inherited shards' live entry for @key, or NULL (read only). */
static const struct ptr_slot *inherited(uintptr_t key)
{
	struct shard *s = shard_of(key);
	if (!s->slots)
		return NULL;
	const struct ptr_slot *e = table_shard_find(s, key);
	return e->key ? e : NULL;
}

static bool inherited_freed(uintptr_t key)
{
	if (!shard_of(key)->freed)
		return false;
	atomic_uintptr_t *f = table_freed_slot(shard_of(key), ptr_hash(key));
	return atomic_load_explicit(f, memory_order_relaxed) == key;
}

static int child_put(uintptr_t key, size_t size, bool zygote, uint32_t stack)
{
	struct child_slot *e = child_entry(key, true);
	if (!e)
		return -1;
	e->size = size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
	e->stack = stack | (zygote ? SLOT_ZYGOTE : 0);
	e->state = C_LIVE;
	return 0;
}

static int child_forget(uintptr_t key)
{
	struct child_slot *e = child_entry(key, false);
	if (e) {
		if (e->state == C_GONE_FREED)
			e->state = C_GONE;
		return 0;
	}
	if (!inherited_freed(key))
		return 0;
	e = child_entry(key, true);
	if (!e)
		return -1;
	e->state = C_FORGOT;
	return 0;
}

static int child_remove(uintptr_t key, struct table_key *out, uint32_t gen,
			enum table_remove_result *res)
{
	struct child_slot *e = child_entry(key, false);
	uint32_t size, stack;
	if (e && e->state == C_LIVE) {
		size = e->size;
		stack = e->stack;
	} else if (e && e->state != C_FORGOT) {
		*res = e->state == C_GONE_FREED ? TABLE_DOUBLE_FREE : TABLE_UNTRACKED;
		return 0;
	} else {
		const struct ptr_slot *i = inherited(key);
		if (!i) {
			*res = !e && inherited_freed(key) ? TABLE_DOUBLE_FREE : TABLE_UNTRACKED;
			return 0;
		}
		size = i->size;
		stack = i->stack;
		if (!e && !(e = child_entry(key, true)))
			return -1;
	}
	e->state = C_GONE_FREED;
	if (out) {
		out->size = size | (stack & SLOT_ZYGOTE ? HOOK_ZYGOTE_FLAG : 0);
		out->stack = stack & ~SLOT_ZYGOTE;
		out->gen = gen;
	}
	*res = TABLE_REMOVED;
	return 0;
}

void child_flatten(void)
{
	if (!atomic_load_explicit(&child_on, memory_order_acquire))
		return;
	/* (its holder is inside the tables, waiting for nothing but memory:
	 * it lets go) */
	child_word_lock();
	for (size_t i = 0; child_slots && i <= child_mask; i++) {
		const struct child_slot *c = &child_slots[i];
		if (!c->key)
			continue;
		uint64_t h = ptr_hash(c->key);
		struct shard *s = shard_of(c->key);
		if (!s->slots || !s->freed)
			continue; /* (tables not set up: nothing recorded anywhere) */
		atomic_uintptr_t *f = table_freed_slot(s, h);
		if (c->state == C_LIVE) {
			table_shard_put(s, c->key, h, c->size, (c->stack & SLOT_ZYGOTE) != 0,
					c->stack & ~SLOT_ZYGOTE);
			continue;
		}
		if (c->state != C_FORGOT) {
			struct ptr_slot *e = table_shard_find(s, c->key);
			if (e->key)
				table_shard_drop(s, e);
		}
		if (c->state == C_GONE_FREED)
			atomic_store_explicit(f, c->key, memory_order_relaxed);
		else if (atomic_load_explicit(f, memory_order_relaxed) == c->key)
			atomic_store_explicit(f, 0, memory_order_relaxed);
	}
	if (child_slots)
		hook_unmap(child_slots, (child_mask + 1) * sizeof(*child_slots));
	child_slots = NULL;
	child_mask = 0;
	child_used = 0;
	child_user = NULL;
	atomic_store_explicit(&child_on, false, memory_order_release);
	child_word_unlock();
}

/* The ways in from table.c ------------------------------------------------------
 * Each returns false when it did nothing: the table went off meanwhile, or
 * it had to be applied first (no room, another thread, or the stack index
 * must grow), and the caller goes the shards' way. */

static void child_leave(void)
{
	child_unlock();
	table_busy_leave();
}

/* Apply the child's table (table_lock_all does, with every lock taken). */
static void child_apply(void)
{
	table_lock_all();
	table_unlock_all();
}

/* Take the child's table for this thread: 1 held, 0 off (nothing held),
 * -1 another thread's (applied: nothing held). */
static int child_take(void)
{
	table_busy_enter();
	if (!child_lock()) {
		table_busy_leave();
		return 0;
	}
	if (child_mine())
		return 1;
	child_leave();
	child_apply();
	return -1;
}

bool child_insert(uintptr_t key, size_t size, bool zygote, const uintptr_t *pcs, unsigned n,
		  uint64_t *stack_slot, const uint64_t *run)
{
	if (child_take() != 1)
		return false;
	uint32_t stack = table_stack_find(pcs, n, stack_slot, run);
	int rc = -1;
	if (stack != UINT32_MAX)
		rc = stack ? child_put(key, size, zygote, stack) : child_forget(key);
	child_leave();
	if (rc == 0)
		return true;
	if (stack == UINT32_MAX)
		table_stack_grow();
	else
		child_apply();
	return false;
}

bool child_free(uintptr_t key, struct table_key *out, enum table_remove_result *res)
{
	if (child_take() != 1)
		return false;
	int rc = child_remove(key, out, table_stack_gen(), res);
	volatile uintptr_t *f = table_inflight;
	if (rc == 0 && out && *res == TABLE_REMOVED && f) { /* (before a stop can come) */
		f[0] = key;
		f[1] = key + (out->size & ~(uintptr_t)HOOK_ZYGOTE_FLAG);
	}
	child_leave();
	if (rc == 0)
		return true;
	child_apply();
	return false;
}

bool child_restore(uintptr_t key, const struct table_key *k)
{
	if (child_take() != 1)
		return false;
	int rc = k->gen == table_stack_gen()
			 ? child_put(key, k->size & ~(uintptr_t)HOOK_ZYGOTE_FLAG,
				     (k->size & HOOK_ZYGOTE_FLAG) != 0, k->stack)
			 : child_forget(key);
	child_leave();
	if (rc == 0)
		return true;
	child_apply();
	return false;
}

bool child_untracked(uintptr_t key)
{
	if (child_take() != 1)
		return false;
	int rc = child_forget(key);
	child_leave();
	if (rc == 0)
		return true;
	child_apply();
	return false;
}
