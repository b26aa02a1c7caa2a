/* leaksnap symbolizer: threads of its own (opts.jobs > 1).
 *
 * Indexing the units a list of addresses falls in is most of the work of
 * symbolizing it when the list is long, and units are independent.  After
 * a hint (leaksnap_sym_file_prefetch), up to jobs - 1 worker threads index the
 * hinted units, in the order they are first needed; leaksnap_sym_file_lookup_batch
 * hints a whole list and looks its addresses up as their units get done.
 *
 * libdw is not safe to share between threads: a Dwarf fills its caches
 * (units, abbreviations, line tables) lazily and without locks.  So each
 * worker has a Dwarf of its own, made (on the caller's thread, before any
 * worker runs) on the ELF image the file's Dwarf reads -- its section data
 * is shared and only ever read -- and nothing but that worker calls libdw
 * on it.  A worker indexes a unit exactly as the caller's thread would
 * (dwarf_index.c: DIE offsets, the same in every Dwarf of the file; ranges;
 * line addresses).  What it leaves that libdw owns -- the unit's
 * Dwarf_Lines and Dwarf_Files -- is complete when handed over and only read
 * afterwards (dwarf_onesrcline, dwarf_linesrc, dwarf_filesrc and the like
 * read fields and allocate nothing).  The caller's thread reads names and
 * attributes through its own Dwarf, file tables through the units' (see
 * decl_file), never through another thread's Dwarf.
 *
 * A unit's state (enum sym_cu_state) changes under the pool's lock, which
 * also hands over what the indexing thread wrote.  The caller's thread
 * marks a unit ready once it has seen it done, and after that reads it
 * without the lock.  When it needs a unit nobody has started, it indexes it
 * itself; when a worker is on it, it indexes other queued units while it
 * waits.  A unit found broken keeps its error, said by the caller's thread
 * when it first needs the unit -- just as without threads.  Workers take no
 * signals, stop between units (or within one) when the symbolizer is freed,
 * and are joined then; a worker whose Dwarf does not see the same units
 * indexes nothing.
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_internal.h"

#define SYM_MAX_WORKERS 64

struct sym_worker {
	struct sym_pool *pool;
	Dwarf *dbg;             /* this worker's own */
	pthread_t thread;
	bool started;
};

struct sym_pool {
	struct leaksnap_sym_file *f;
	pthread_mutex_t lock;
	pthread_cond_t work;      /* units queued, or cancel */
	pthread_cond_t done;      /* a unit indexed */
	uint32_t *queue;          /* unit indexes, in the order hinted */
	size_t head, count, cap;  /* queue[head..count): not taken yet */
	uint32_t *finished;       /* unit indexes, in the order they were done */
	size_t nfinished;
	_Atomic bool cancel;      /* leaksnap_symbolizer_free: stop */
	struct sym_worker *workers;
	size_t nworkers;
};

/* The next queued unit, claimed; NULL when none.  Under the lock. */
static struct sym_cu *take(struct sym_pool *p)
{
	while (p->head < p->count) {
		struct sym_cu *cu = &p->f->cus[p->queue[p->head++]];
		if (cu->state == SYM_CU_QUEUED) {
			cu->state = SYM_CU_CLAIMED;
			return cu;
		}
	}
	p->head = p->count = 0;
	return NULL;
}

/* A claimed unit is done.  Under the lock. */
static void finish(struct sym_pool *p, struct sym_cu *cu)
{
	cu->state = SYM_CU_DONE;
	p->finished[p->nfinished++] = (uint32_t)(cu - p->f->cus);
	pthread_cond_broadcast(&p->done);
}

/* Index a claimed unit that nobody is waiting for: a failure is kept for
 * the caller's thread to say. */
static void index_for_later(struct leaksnap_sym_file *f, struct sym_cu *cu, Dwarf_Die *cudie,
			    Dwarf_Die *treedie, const _Atomic bool *cancel)
{
	struct leaksnap_error e;
	leaksnap_error_clear(&e);
	if (sym_dwarf_index_unit(f, cu, cudie, treedie, cancel, &e) != 0 && e.code) {
		cu->error = malloc(sizeof(*cu->error));
		if (cu->error)
			*cu->error = e; /* (when it cannot be kept: "out of memory") */
	}
}

/* The worker's DIEs of the file's units, by unit index; NULL when its
 * Dwarf does not see the same units at the same offsets (then it indexes
 * nothing: the caller's thread does it all). */
static Dwarf_Die *worker_units(struct sym_worker *w)
{
	struct leaksnap_sym_file *f = w->pool->f;
	Dwarf_Die *dies = malloc(f->cu_count * sizeof(*dies));
	if (!dies)
		return NULL;
	size_t i = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	while (i < f->cu_count &&
	       dwarf_get_units(w->dbg, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_split_compile)
			continue;
		if (unit_type != DW_UT_compile || version != f->cus[i].version ||
		    dwarf_dieoffset(&cudie) != f->cus[i].offset)
			break;
		dies[i++] = cudie;
	}
	if (i < f->cu_count) {
		free(dies);
		return NULL;
	}
	return dies;
}

static void *worker_main(void *arg)
{
	struct sym_worker *w = arg;
	struct sym_pool *p = w->pool;
	struct leaksnap_sym_file *f = p->f;
	Dwarf_Die *dies = worker_units(w);
	pthread_mutex_lock(&p->lock);
	while (dies && !atomic_load_explicit(&p->cancel, memory_order_relaxed)) {
		struct sym_cu *cu = take(p);
		if (!cu) {
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		Dwarf_Die *d = &dies[cu - f->cus];
		index_for_later(f, cu, d, d, &p->cancel);
		pthread_mutex_lock(&p->lock);
		finish(p, cu);
	}
	pthread_mutex_unlock(&p->lock);
	free(dies);
	return NULL;
}

/* (when the names cannot be read: as if it had) */
static bool has_section(Elf *elf, const char *name)
{
	const char *const names[] = {name, NULL};
	return sym_elf_section(elf, names, 0, NULL) != 0;
}

/* Whether threads can index @f: each needs a Dwarf of its own seeing what
 * the file's sees.  Not for split DWARF (units in .dwo files, opened by
 * libdw as needed) nor dwz files (the alternate file, likewise), nor for
 * relocatable files (libdwfl relocates their DWARF). */
static bool threads_possible(struct leaksnap_sym_file *f)
{
	Elf *elf = dwarf_getelf(f->dbg);
	GElf_Ehdr eh;
	return f->cu_count >= 2 && !f->split_units && elf && elf_kind(elf) == ELF_K_ELF &&
	       gelf_getehdr(elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
	       !has_section(elf, ".gnu_debugaltlink") && !has_section(elf, ".debug_sup");
}

static void pool_destroy(struct sym_pool *p)
{
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->cancel, true, memory_order_relaxed);
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->nworkers; i++)
		if (p->workers[i].started)
			pthread_join(p->workers[i].thread, NULL);
	for (size_t i = 0; i < p->nworkers; i++)
		dwarf_end(p->workers[i].dbg);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->workers);
	free(p->queue);
	free(p->finished);
	free(p);
}

/* The pool of @f with its workers running, or NULL (no threads then). */
static struct sym_pool *pool_start(struct leaksnap_sym_file *f)
{
	unsigned jobs = f->sym->opts.jobs;
	size_t want = jobs - 1 < SYM_MAX_WORKERS ? jobs - 1 : SYM_MAX_WORKERS;
	if (!threads_possible(f))
		return NULL;
	struct sym_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->f = f;
	atomic_init(&p->cancel, false);
	p->workers = calloc(want, sizeof(*p->workers));
	p->finished = malloc(f->cu_count * sizeof(*p->finished));
	if (!p->workers || !p->finished || pthread_mutex_init(&p->lock, NULL) != 0)
		goto fail;
	if (pthread_cond_init(&p->work, NULL) != 0)
		goto fail_lock;
	if (pthread_cond_init(&p->done, NULL) != 0)
		goto fail_work;
	/* Every worker's Dwarf is made here, before any worker runs: making
	 * one reads the shared ELF image through libelf, which nothing else
	 * does afterwards. */
	Elf *elf = dwarf_getelf(f->dbg);
	for (; p->nworkers < want; p->nworkers++) {
		struct sym_worker *w = &p->workers[p->nworkers];
		w->pool = p;
		w->dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (!w->dbg)
			break;
	}
	/* Workers take no signals: they stay the caller's threads'. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	size_t started = 0;
	for (size_t i = 0; i < p->nworkers; i++) {
		struct sym_worker *w = &p->workers[i];
		w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0;
		started += w->started;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!started) {
		pool_destroy(p);
		return NULL;
	}
	return p;
fail_work:
	pthread_cond_destroy(&p->work);
fail_lock:
	pthread_mutex_destroy(&p->lock);
fail:
	free(p->workers);
	free(p->finished);
	free(p);
	return NULL;
}

/* Queue the units @units[0..n) (indexes, in the order they are needed)
 * that nobody has asked for yet; the threads start the first time two
 * units or more would wait.  -1 when there are no threads for the file or
 * out of memory (units not queued stay idle). */
static int queue(struct leaksnap_sym_file *f, const uint32_t *units, size_t n)
{
	if (!f->pool) {
		uint32_t first = SYM_NONE;
		bool two = false;
		for (size_t k = 0; k < n && !two; k++) {
			if (f->cus[units[k]].state != SYM_CU_IDLE)
				continue;
			if (first == SYM_NONE)
				first = units[k];
			else
				two = units[k] != first;
		}
		if (!two)
			return -1;
		f->pool = pool_start(f);
		if (!f->pool) {
			f->no_pool = true;
			return -1;
		}
	}
	struct sym_pool *p = f->pool;
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	size_t before = p->count;
	for (size_t k = 0; k < n; k++) {
		struct sym_cu *cu = &f->cus[units[k]];
		if (cu->state != SYM_CU_IDLE)
			continue;
		if (p->count == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 64;
			uint32_t *q = realloc(p->queue, cap * sizeof(*q));
			if (!q) {
				rc = -1; /* the rest are indexed when needed */
				break;
			}
			p->queue = q;
			p->cap = cap;
		}
		p->queue[p->count++] = units[k];
		cu->state = SYM_CU_QUEUED;
	}
	if (p->count > before)
		pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void sym_pool_hint(struct leaksnap_sym_file *f, const uint64_t *vaddrs, size_t count)
{
	uint32_t units[1024];
	while (count) {
		size_t n = 0;
		for (; count && n < sizeof(units) / sizeof(units[0]); vaddrs++, count--) {
			struct sym_cu *cu = sym_dwarf_find_unit(f, *vaddrs - f->bias);
			if (cu && (!n || units[n - 1] != (uint32_t)(cu - f->cus)))
				units[n++] = (uint32_t)(cu - f->cus);
		}
		if (queue(f, units, n) != 0 && !f->pool)
			return;
	}
}

/* With p->lock held: index one queued unit (the lock is dropped meanwhile),
 * or, when none is queued, wait until some unit is finished. */
static void help_or_wait(struct leaksnap_sym_file *f, struct sym_pool *p)
{
	struct sym_cu *cu = take(p);
	if (!cu) {
		pthread_cond_wait(&p->done, &p->lock);
		return;
	}
	pthread_mutex_unlock(&p->lock);
	index_for_later(f, cu, &cu->cudie, &cu->treedie, NULL);
	pthread_mutex_lock(&p->lock);
	finish(p, cu);
}

int sym_unit_ready(struct leaksnap_sym_file *f, struct sym_cu *cu, struct leaksnap_error *err)
{
	struct sym_pool *p = f->pool;
	if (!p) {
		int rc = sym_dwarf_index_unit(f, cu, &cu->cudie, &cu->treedie, NULL, err);
		cu->state = SYM_CU_DONE;
		cu->ready = true;
		return rc;
	}
	pthread_mutex_lock(&p->lock);
	while (cu->state != SYM_CU_DONE) {
		if (cu->state != SYM_CU_CLAIMED) {
			/* nobody has started it: here, now */
			cu->state = SYM_CU_CLAIMED;
			pthread_mutex_unlock(&p->lock);
			int rc = sym_dwarf_index_unit(f, cu, &cu->cudie, &cu->treedie, NULL, err);
			pthread_mutex_lock(&p->lock);
			finish(p, cu);
			pthread_mutex_unlock(&p->lock);
			cu->ready = true;
			return rc;
		}
		help_or_wait(f, p); /* a worker has it: index queued units meanwhile */
	}
	pthread_mutex_unlock(&p->lock);
	cu->ready = true;
	if (!cu->broken)
		return 0;
	if (!cu->error)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, f->path, "out of memory");
	if (err && !err->code)
		*err = *cu->error;
	free(cu->error);
	cu->error = NULL;
	return -1;
}

void sym_pool_free(struct leaksnap_sym_file *f)
{
	if (f->pool)
		pool_destroy(f->pool);
	f->pool = NULL;
}

/* Batches ------------------------------------------------------------------
 * The answers are given in order, but found ahead, out of order: as each
 * unit of the batch gets indexed (by a worker, or here when there is
 * nothing else to do), the addresses in it are looked up at once and their
 * frames kept, while the workers index other units.  Giving the answers in
 * order is then quick.  Addresses of a broken unit are looked up in order,
 * so its error is said by the first of them, as without a batch. */

/* What is known of an address of the batch: nframes is AHEAD_NOT (not
 * yet), AHEAD_LOOKUP (look it up when its turn comes), or the number of
 * its frames, kept from frames[first]. */
#define AHEAD_NOT UINT32_MAX
#define AHEAD_LOOKUP (UINT32_MAX - 1)
struct ahead {
	uint32_t first, nframes;
};

/* An address of the batch, in the list of its unit's. */
struct item {
	uint64_t vaddr;
	uint32_t index;
};

struct batch {
	struct leaksnap_sym_file *f;
	const uint64_t *vaddrs;
	size_t count, next;        /* answers given: [0, next) */
	leaksnap_sym_answer_fn fn;
	void *ctx;
	struct ahead *ahead;       /* per address */
	struct leaksnap_sym_frame *frames;
	size_t frame_count, frame_cap;
	struct leaksnap_error err; /* clear between lookups */
};

/* The answer of address @i, looked up now. */
static void give_lookup(struct batch *b, size_t i)
{
	struct leaksnap_sym_result r;
	if (leaksnap_sym_file_lookup(b->f, b->vaddrs[i], &r, &b->err) == 0) {
		b->fn(b->ctx, i, &r, NULL);
		return;
	}
	r.frames = NULL;
	r.frame_count = 0;
	b->fn(b->ctx, i, &r, &b->err);
	leaksnap_error_clear(&b->err);
}

/* (out of line: GCC 12 drops some inlined prefetches as dead code) */
__attribute__((noinline, noipa)) static void prefetch(const void *p)
{
	__builtin_prefetch(p);
}

/* Fetch ahead what giving answer @i will read: its frames were kept in
 * the order units were done, not in the batch's order. */
static void prefetch_answer(const struct batch *b, size_t i, bool strings)
{
	if (i >= b->count)
		return;
	const struct ahead *a = &b->ahead[i];
	if (a->nframes == AHEAD_NOT || a->nframes == AHEAD_LOOKUP || !a->nframes)
		return;
	const struct leaksnap_sym_frame *f = &b->frames[a->first];
	if (!strings) {
		prefetch(f);
		prefetch(f + a->nframes - 1);
		return;
	}
	for (uint32_t k = 0; k < a->nframes && k < 4; k++) {
		if (f[k].function)
			prefetch(f[k].function);
		if (f[k].file)
			prefetch(f[k].file);
	}
}

/* Give the answers next in order that are known. */
static void give_ready(struct batch *b)
{
	for (; b->next < b->count && b->ahead[b->next].nframes != AHEAD_NOT; b->next++) {
		prefetch_answer(b, b->next + 16, false);
		prefetch_answer(b, b->next + 8, true);
		const struct ahead *a = &b->ahead[b->next];
		if (a->nframes == AHEAD_LOOKUP) {
			give_lookup(b, b->next);
			continue;
		}
		struct leaksnap_sym_result r = {b->frames + a->first, a->nframes};
		b->fn(b->ctx, b->next, &r, NULL);
	}
}

/* Keep the frames of an answer found ahead. */
static bool keep(struct batch *b, size_t i, const struct leaksnap_sym_result *r)
{
	if (b->frame_count + r->frame_count > b->frame_cap) {
		size_t cap = b->frame_cap ? b->frame_cap : 4096;
		while (cap < b->frame_count + r->frame_count)
			cap *= 2;
		struct leaksnap_sym_frame *fr = cap < UINT32_MAX
							? realloc(b->frames, cap * sizeof(*fr))
							: NULL;
		if (!fr)
			return false;
		b->frames = fr;
		b->frame_cap = cap;
	}
	if (r->frame_count)
		memcpy(b->frames + b->frame_count, r->frames, r->frame_count * sizeof(*r->frames));
	b->ahead[i] = (struct ahead){(uint32_t)b->frame_count, (uint32_t)r->frame_count};
	b->frame_count += r->frame_count;
	return true;
}

static int cmp_item(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	return a->vaddr < b->vaddr ? -1 : a->vaddr > b->vaddr;
}

/* @cu is done (seen so under the lock): find the answers of its
 * addresses @items[0..n) of the batch. */
static void find_ahead(struct batch *b, struct sym_cu *cu, struct item *items, size_t n)
{
	if (cu->broken) {
		for (size_t k = 0; k < n; k++)
			b->ahead[items[k].index].nframes = AHEAD_LOOKUP; /* its error, in order */
		return;
	}
	cu->ready = true;
	/* by address: each search then finds most of its way in the cache
	 * (the answers do not depend on the order) */
	qsort(items, n, sizeof(*items), cmp_item);
	for (size_t k = 0; k < n; k++) {
		struct sym_loc loc;
		struct leaksnap_sym_result r;
		sym_file_locate_in(b->f, cu, items[k].vaddr, &loc);
		if (sym_file_answer(b->f, items[k].vaddr, &loc, &r, &b->err) != 0 ||
		    !keep(b, items[k].index, &r)) {
			leaksnap_error_clear(&b->err);
			b->ahead[items[k].index].nframes =
				AHEAD_LOOKUP; /* (out of memory: said in order) */
		}
	}
}

/* Answer the batch with the pool's help.  -1 when that cannot be
 * (nothing answered then). */
static int answer_ahead(struct batch *b)
{
	struct leaksnap_sym_file *f = b->f;
	size_t count = b->count, nu = f->cu_count;
	int rc = -1;
	if (count >= UINT32_MAX || !nu)
		return -1;
	uint32_t *unit_of = malloc(count * sizeof(*unit_of));
	uint32_t *start = calloc(nu + 1, sizeof(*start)); /* the items of unit u: start[u].. */
	uint32_t *units = malloc(nu * sizeof(*units));   /* in the order first needed */
	uint32_t *ready = malloc(nu * sizeof(*ready));
	struct item *items = malloc(count * sizeof(*items));
	b->ahead = malloc(count * sizeof(*b->ahead));
	if (!unit_of || !start || !units || !ready || !items || !b->ahead)
		goto out;
	/* the first units asked for at once: the threads start on them
	 * while the rest are sorted out */
	sym_pool_hint(f, b->vaddrs, count < 1024 ? count : 1024);
	size_t nunits = 0;
	for (size_t i = 0; i < count; i++) {
		struct sym_cu *cu = sym_dwarf_find_unit(f, b->vaddrs[i] - f->bias);
		b->ahead[i].nframes = AHEAD_NOT;
		if (!cu || cu->ready) {
			unit_of[i] = SYM_NONE;
			b->ahead[i].nframes = AHEAD_LOOKUP;
			continue;
		}
		uint32_t u = (uint32_t)(cu - f->cus);
		unit_of[i] = u;
		if (!start[u + 1]++)
			units[nunits++] = u;
	}
	for (size_t u = 0; u < nu; u++)
		start[u + 1] += start[u];
	/* each unit's addresses together, in order (start[u] moves to the
	 * end of unit u's, the start of unit u + 1's) */
	for (size_t i = 0; i < count; i++)
		if (unit_of[i] != SYM_NONE)
			items[start[unit_of[i]]++] = (struct item){b->vaddrs[i], (uint32_t)i};
	free(unit_of);
	unit_of = NULL;
	/* Queued in the order they are needed: then each unit waited for
	 * below is queued, claimed or done. */
	if (!nunits || queue(f, units, nunits) != 0 || !f->pool)
		goto out; /* in order, then */
	struct sym_pool *p = f->pool;
	give_ready(b);
	pthread_mutex_lock(&p->lock);
	size_t seen = 0, left = nunits;
	while (left) {
		size_t nready = 0;
		for (; seen < p->nfinished; seen++) {
			uint32_t u = p->finished[seen];
			size_t from = u ? start[u - 1] : 0;
			if (start[u] > from) /* (each unit is in the list once) */
				ready[nready++] = u;
		}
		if (!nready) { /* nothing to look up: index a unit meanwhile, or wait */
			help_or_wait(f, p);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		for (size_t k = 0; k < nready; k++) {
			uint32_t u = ready[k];
			size_t from = u ? start[u - 1] : 0;
			find_ahead(b, &f->cus[u], items + from, start[u] - from);
			left--;
		}
		give_ready(b);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	give_ready(b);
	rc = 0;
out:
	free(unit_of);
	free(start);
	free(units);
	free(ready);
	free(items);
	free(b->ahead);
	free(b->frames);
	return rc;
}

void leaksnap_sym_file_lookup_batch(struct leaksnap_sym_file *f, const uint64_t *vaddrs,
				    size_t count, leaksnap_sym_answer_fn fn, void *ctx)
{
	struct batch b = {.f = f, .vaddrs = vaddrs, .count = count, .fn = fn, .ctx = ctx};
	if (f->sym->opts.jobs > 1 && f->dbg && !f->no_pool && count > 1) {
		if (!f->cus_loaded) {
			leaksnap_error_clear(&f->load_error);
			f->load_failed = sym_dwarf_load_units(f, &f->load_error) != 0;
		}
		if (!f->load_failed && answer_ahead(&b) == 0)
			return;
	}
	for (size_t i = 0; i < count; i++)
		give_lookup(&b, i);
}

/* Opening a compressed debug file ---------------------------------------------
 * A distribution's debug files (found by build ID under /usr/lib/debug) have
 * compressed sections, which dwarf_begin_elf inflates one after the other as
 * it opens them: most of the time it takes to open libc's.  With threads
 * allowed, such a file is opened here instead of by libdwfl: its sections
 * are inflated on several threads first (libelf's elf_compress, as
 * dwarf_begin_elf calls it; each section by one thread, after the section
 * headers are read: what elf_compress changes is the section's own), and
 * dwarf_begin_elf then finds them inflated.  Only in the plainest case,
 * where libdwfl would take this very file with the same bias: the file has
 * no DWARF of its own, the debug file is the one its build ID names under
 * /usr/lib/debug (libdwfl's first choice), with the same build ID and the
 * same first segment, and neither is prelinked nor uses a dwz file.
 * Anything else is left to libdwfl. */

#define INFLATE_MAX_SECTIONS 64

struct inflate_part {
	Elf_Scn *scn[INFLATE_MAX_SECTIONS];
	bool gnu[INFLATE_MAX_SECTIONS]; /* .zdebug_*: GNU-style */
	size_t n;
	uint64_t bytes;
	pthread_t thread;
	bool started;
};

static void *inflate_part(void *arg)
{
	struct inflate_part *p = arg;
	for (size_t i = 0; i < p->n; i++) {
		/* (a section that fails stays compressed: dwarf_begin_elf
		 * tries again, and says so as it would have) */
		if (p->gnu[i])
			elf_compress_gnu(p->scn[i], 0, 0);
		else
			elf_compress(p->scn[i], 0, 0);
	}
	return NULL;
}

static bool has_debug_sections(Elf *elf)
{
	static const char *const debug[] = {".debug_", ".zdebug_", NULL};
	return sym_elf_section(elf, debug, SYM_SCN_PREFIX, NULL) != 0; /* (-1: as if it had) */
}

/* libdwfl's "address sync" of a file: the end of its first PT_LOAD. */
static bool address_sync(Elf *elf, uint64_t *sync)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		if (ph.p_type == PT_LOAD) {
			*sync = ph.p_vaddr + ph.p_memsz;
			return true;
		}
	}
	*sync = 0;
	return true;
}

/* The path of the separate debug file of @f's build ID under
 * /usr/lib/debug/.build-id in @path: false when it does not fit. */
static bool build_id_debug_path(const struct leaksnap_sym_file *f, char *path, size_t size)
{
	int n = snprintf(path, size, "/usr/lib/debug/.build-id/%02x/", f->build_id[0]);
	for (size_t i = 1; i < f->build_id_len && n > 0 && (size_t)n + 9 < size; i++)
		n += snprintf(path + n, size - (size_t)n, "%02x", f->build_id[i]);
	if (n <= 0 || (size_t)n + 7 > size)
		return false;
	memcpy(path + n, ".debug", 7);
	return true;
}

/* The compressed DWARF sections of @elf into @all (every section header is
 * read here, before any thread starts): false when there are too many. */
static bool compressed_sections(Elf *elf, size_t shstrndx, struct inflate_part *all)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name)
							  : NULL;
		if (!name || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_GROUP))
			continue;
		size_t len = strlen(name);
		bool dwo = len > 4 && strcmp(name + len - 4, ".dwo") == 0;
		bool gnu = strncmp(name, ".zdebug_", 8) == 0;
		if (dwo ||
		    !(gnu || (strncmp(name, ".debug_", 7) == 0 && (sh.sh_flags & SHF_COMPRESSED))))
			continue;
		if (all->n == INFLATE_MAX_SECTIONS)
			return false;
		all->scn[all->n] = scn;
		all->gnu[all->n++] = gnu;
	}
	return true;
}

/* Deal the sections of @all to @nparts parts: the largest first, each
 * into the part with the fewest bytes.  false when a header is unreadable. */
static bool deal_sections(const struct inflate_part *all, struct inflate_part *parts,
			  size_t nparts)
{
	bool taken[INFLATE_MAX_SECTIONS] = {false};
	for (size_t t = 0; t < all->n; t++) {
		size_t best = SIZE_MAX;
		uint64_t best_size = 0;
		for (size_t i = 0; i < all->n; i++) {
			GElf_Shdr sh;
			if (!taken[i] && gelf_getshdr(all->scn[i], &sh) &&
			    (best == SIZE_MAX || sh.sh_size > best_size)) {
				best = i;
				best_size = sh.sh_size;
			}
		}
		if (best == SIZE_MAX)
			return false;
		taken[best] = true;
		struct inflate_part *p = &parts[0];
		for (size_t k = 1; k < nparts; k++)
			if (parts[k].bytes < p->bytes)
				p = &parts[k];
		p->scn[p->n] = all->scn[best];
		p->gnu[p->n++] = all->gnu[best];
		p->bytes += best_size;
	}
	return true;
}

/* Inflate the parts, one a thread (this one takes the first; a thread
 * that cannot start leaves its part to this one). */
static void inflate_parts(struct inflate_part *parts, size_t nparts)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t k = 1; k < nparts; k++)
		if (parts[k].n)
			parts[k].started = pthread_create(&parts[k].thread, NULL, inflate_part,
							  &parts[k]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (size_t k = 1; k < nparts; k++)
		if (parts[k].n && !parts[k].started)
			inflate_part(&parts[k]);
	inflate_part(&parts[0]);
	for (size_t k = 1; k < nparts; k++)
		if (parts[k].started)
			pthread_join(parts[k].thread, NULL);
}

bool sym_open_debug_inflated(struct leaksnap_sym_file *f)
{
	unsigned jobs = f->sym->opts.jobs;
	if (jobs < 2 || f->build_id_len < 2 || has_debug_sections(f->elf) ||
	    has_section(f->elf, ".gnu.prelink_undo"))
		return false;
	GElf_Addr bias;
	Elf *main = dwfl_module_getelf(f->mod, &bias);
	GElf_Ehdr meh, eh;
	uint64_t msync, sync;
	if (!main || !gelf_getehdr(main, &meh) || (meh.e_type != ET_DYN && meh.e_type != ET_EXEC) ||
	    !address_sync(main, &msync))
		return false;
	char path[64 + 2 * 64];
	if (!build_id_debug_path(f, path, sizeof(path)))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t idlen = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	size_t shstrndx;
	struct inflate_part *parts = NULL;
	Dwarf *dbg = NULL;
	char *own_path = NULL;
	if (idlen <= 0 || (size_t)idlen != f->build_id_len ||
	    memcmp(id, f->build_id, f->build_id_len) || !gelf_getehdr(elf, &eh) ||
	    eh.e_type != meh.e_type || !address_sync(elf, &sync) || sync != msync ||
	    has_section(elf, ".gnu_debugaltlink") || has_section(elf, ".debug_sup") ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto no;
	struct inflate_part all_scns = {0};
	if (!compressed_sections(elf, shstrndx, &all_scns) || all_scns.n < 2)
		goto no; /* too many, or nothing to win */
	size_t nparts = jobs < 8 ? jobs : 8;
	parts = calloc(nparts, sizeof(*parts));
	if (!parts || !deal_sections(&all_scns, parts, nparts))
		goto no;
	inflate_parts(parts, nparts);
	dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	own_path = strdup(path);
	if (!dbg || !own_path)
		goto no;
	free(parts);
	f->dbg = dbg;
	f->bias = bias;
	f->own_elf = elf;
	f->own_fd = fd;
	f->own_debug_path = own_path;
	f->debug_path = own_path;
	return true;
no:
	free(own_path);
	free(parts);
	if (dbg)
		dwarf_end(dbg);
	if (elf)
		elf_end(elf);
	close(fd);
	return false;
}
