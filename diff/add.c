/* leaksnap diff: adding a snapshot.
 *
 * leaksnap_diff_add_snapshot() turns each PC into a frame (module, offset) through
 * the snapshot's maps -- a per-snapshot cache keeps that to one maps
 * lookup per distinct PC -- and each record's frames into an interned
 * stack whose bytes and count are summed per snapshot.  The snapshot
 * itself is not kept. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

/* Modules ---------------------------------------------------------------------- */

uint32_t lsd_module_hash(const char *path, const uint8_t *id, size_t len)
{
	uint64_t h = kit_fnv1a(kit_fnv1a(KIT_FNV1A_START, path, strlen(path)), id, len);
	return (uint32_t)kit_mix64(h ^ len);
}

/* Open addressing over u32 ids (modules, frames): a table of @n slots, a
 * power of two, all empty; NULL when out of memory. */
uint32_t *lsd_slots_new(size_t n)
{
	uint32_t *s = n <= SIZE_MAX / sizeof(*s) ? malloc(n * sizeof(*s)) : NULL;
	if (s)
		memset(s, 0xff, n * sizeof(*s));
	return s;
}

/* The first empty slot from hash @h on. */
static size_t slot_free(const uint32_t *s, size_t mask, uint32_t h)
{
	size_t k = h & mask;
	while (s[k] != NONE)
		k = (k + 1) & mask;
	return k;
}

static uint32_t module_hash_of(const struct leaksnap_diff *d, size_t i)
{
	return d->mods[i].hash;
}

uint32_t lsd_frame_hash(uint32_t module, uint64_t addr);
static uint32_t frame_hash_of(const struct leaksnap_diff *d, size_t i)
{
	return lsd_frame_hash(d->frames[i].module, d->frames[i].addr);
}

/* Double *@slots (or make it with @first slots) and put ids 0..@count back. */
static int ids_rehash(const struct leaksnap_diff *d, uint32_t **slots, size_t *mask, size_t first,
		      size_t count, uint32_t (*hash_of)(const struct leaksnap_diff *, size_t))
{
	size_t n = *slots ? (*mask + 1) * 2 : first;
	uint32_t *s = lsd_slots_new(n);
	if (!s)
		return -1;
	for (size_t i = 0; i < count; i++)
		s[slot_free(s, n - 1, hash_of(d, i))] = (uint32_t)i;
	free(*slots);
	*slots = s;
	*mask = n - 1;
	return 0;
}

/* The module (@path, build ID), added when new.  NONE: out of memory. */
static uint32_t module_intern(struct leaksnap_diff *d, const char *path, const uint8_t *id,
			      size_t len)
{
	if ((d->mod_count + 1) * 2 > (d->mod_slots ? d->mod_mask + 1 : 0) &&
	    ids_rehash(d, &d->mod_slots, &d->mod_mask, 256, d->mod_count, module_hash_of) != 0)
		return NONE;
	uint32_t h = lsd_module_hash(path, id, len);
	size_t k = h & d->mod_mask;
	for (uint32_t e; (e = d->mod_slots[k]) != NONE; k = (k + 1) & d->mod_mask) {
		const struct dmodule *m = &d->mods[e];
		if (m->hash == h && m->build_id_len == len && !memcmp(m->build_id, id, len) &&
		    !strcmp(m->path, path))
			return e;
	}
	if (d->mod_count >= MAX_ITEMS ||
	    kit_grow((void **)&d->mods, &d->mod_cap, d->mod_count + 1, sizeof(*d->mods)) != 0)
		return NONE;
	struct dmodule *m = &d->mods[d->mod_count];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return NONE;
	memcpy(m->build_id, id, len);
	m->build_id_len = len;
	m->hash = h;
	m->canon = (uint32_t)d->mod_count;
	m->wrapper = -1;
	d->mod_slots[k] = (uint32_t)d->mod_count;
	return (uint32_t)d->mod_count++;
}

/* Frames ------------------------------------------------------------------------ */

uint32_t lsd_frame_hash(uint32_t module, uint64_t addr)
{
	return (uint32_t)kit_mix64(addr * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)module << 17) ^
				   module);
}

static uint32_t frame_intern(struct leaksnap_diff *d, uint32_t module, uint64_t addr, uint64_t pc)
{
	if ((d->frame_count + 1) * 2 > (d->frame_slots ? d->frame_mask + 1 : 0) &&
	    ids_rehash(d, &d->frame_slots, &d->frame_mask, 4096, d->frame_count, frame_hash_of) !=
		    0)
		return NONE;
	size_t k = lsd_frame_hash(module, addr) & d->frame_mask;
	for (uint32_t e; (e = d->frame_slots[k]) != NONE; k = (k + 1) & d->frame_mask) {
		struct dframe *f = &d->frames[e];
		if (f->module == module && f->addr == addr) {
			f->pc = pc;
			return e;
		}
	}
	if (d->frame_count >= MAX_ITEMS || kit_grow((void **)&d->frames, &d->frame_cap,
						    d->frame_count + 1, sizeof(*d->frames)) != 0)
		return NONE;
	d->frames[d->frame_count] = (struct dframe){module, (uint32_t)d->frame_count, addr, pc};
	d->frame_slots[k] = (uint32_t)d->frame_count;
	return (uint32_t)d->frame_count++;
}

/* Adding a snapshot -------------------------------------------------------------- */

static bool android_path(const char *p)
{
	static const char *const prefixes[] = {"/system/", "/apex/", "/vendor/", "/product/",
					       "/data/app/", "/system_ext/"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(p, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

struct adder {
	struct leaksnap_diff *d;
	const struct leaksnap_snapshot *snap;
	const struct leaksnap_maps *maps;
	uint32_t *mod_of;   /* per maps module: our module, NONE: not yet */
	size_t nmods;
};

static int pc_cache_grow(struct leaksnap_diff *d)
{
	size_t n = d->pcs ? (d->pc_mask + 1) * 2 : 8192;
	struct pc_slot *s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < n; i++)
		s[i].frame = NONE;
	for (size_t i = 0; d->pcs && i <= d->pc_mask; i++) {
		if (d->pcs[i].frame == NONE)
			continue;
		size_t k = kit_mix64(d->pcs[i].pc) & (n - 1);
		while (s[k].frame != NONE)
			k = (k + 1) & (n - 1);
		s[k] = d->pcs[i];
	}
	free(d->pcs);
	d->pcs = s;
	d->pc_mask = n - 1;
	return 0;
}

/* Keep the mappings of @mm (a module of @maps) for @m, unless it has
 * some already.  -1: out of memory. */
static int module_keep_maps(struct dmodule *m, const struct leaksnap_maps *maps,
			    const struct leaksnap_maps_module *mm)
{
	if (m->maps || !mm->mapping_count)
		return 0;
	m->maps = malloc(mm->mapping_count * sizeof(*m->maps));
	if (!m->maps)
		return -1;
	for (size_t i = 0; i < mm->mapping_count; i++) {
		const struct leaksnap_maps_mapping *x = leaksnap_maps_mapping(
			maps, mm->first_mapping + i);
		m->maps[i] = (struct leaksnap_sym_mapping){x->start, x->end, x->offset,
							   x->perms[2] == 'x'};
	}
	m->nmaps = mm->mapping_count;
	return 0;
}

/* The frame of @pc in the snapshot being added.  NONE: out of memory. */
static uint32_t pc_frame(struct adder *a, uint64_t pc)
{
	struct leaksnap_diff *d = a->d;
	size_t k = kit_mix64(pc) & d->pc_mask;
	for (; d->pcs[k].frame != NONE; k = (k + 1) & d->pc_mask)
		if (d->pcs[k].pc == pc)
			return d->pcs[k].frame;
	uint32_t module = NONE;
	uint64_t addr = pc;
	struct leaksnap_maps_location loc;
	/* (code in an anonymous mapping, JIT code above all, is no file's:
	 * its offsets mean nothing in another process, so it stays raw) */
	if (a->maps && leaksnap_maps_locate(a->maps, pc, &loc) && loc.module &&
	    leaksnap_maps_path_is_shared_code(loc.module->path)) {
		const struct leaksnap_maps_module *first = leaksnap_maps_module(a->maps, 0);
		size_t mi = (size_t)(loc.module - first);
		if (mi >= a->nmods)
			return NONE; /* cannot happen: modules are one array */
		if (a->mod_of[mi] == NONE) {
			uint8_t id[MAX_BUILD_ID];
			size_t len = leaksnap_maps_module_build_id(a->maps, loc.module, a->snap, id,
								   sizeof(id));
			if (len > sizeof(id))
				len = 0; /* not a build ID we can compare: use the path */
			a->mod_of[mi] = module_intern(d, loc.module->path, id, len);
			if (a->mod_of[mi] == NONE ||
			    module_keep_maps(&d->mods[a->mod_of[mi]], a->maps, loc.module) != 0)
				return NONE;
		}
		module = a->mod_of[mi];
		addr = loc.rel_pc;
	}
	uint32_t f = frame_intern(d, module, addr, pc);
	if (f == NONE)
		return NONE;
	d->pcs[k] = (struct pc_slot){pc, f};
	if (++d->pc_count * 10 > (d->pc_mask + 1) * 7 && pc_cache_grow(d) != 0)
		return NONE;
	return f;
}

static void pc_prefetch(const struct leaksnap_diff *d, const struct leaksnap_snapshot_record *rec)
{
	uint32_t nf = rec->frame_count > 256 ? 256 : rec->frame_count;
	for (uint32_t f = 0; f < nf; f++)
		__builtin_prefetch(&d->pcs[kit_mix64(rec->frames[f]) & d->pc_mask]);
}

/* A snapshot is added in batches of records, in two steps: translate (PCs
 * to frame ids, stack hashes; the frame, module and PC tables) and intern
 * (stacks and their sums; the stack table).  The steps share no table, so
 * with opts.jobs > 1 a thread translates batch k + 1 while the caller
 * interns batch k.  Within a step, the hash slots of a record a few ahead are
 * prefetched: tables far larger than the caches are then read at memory
 * throughput, not latency. */
#define BATCH 256
#define RING 4          /* batches in flight */
#define PC_AHEAD 2
#define STACK_AHEAD 3
#define THREAD_MIN_RECORDS 16384

struct batch {
	size_t first, count;      /* records */
	uint32_t len[BATCH], hash[BATCH];
	uint32_t off[BATCH];      /* into ids */
	uint32_t ids[BATCH * 256];
	int state;                /* BATCH_* */
};
enum { BATCH_EMPTY, BATCH_FULL, BATCH_FAILED };

static int translate(struct adder *a, struct batch *b)
{
	const struct leaksnap_snapshot *snap = a->snap;
	uint32_t off = 0;
	for (size_t i = 0; i < b->count; i++) {
		if (i + PC_AHEAD < b->count)
			pc_prefetch(a->d, leaksnap_snapshot_record(snap, b->first + i + PC_AHEAD));
		const struct leaksnap_snapshot_record *rec = leaksnap_snapshot_record(snap,
										      b->first + i);
		uint32_t n = rec->frame_count > 256 ? 256 : rec->frame_count, *ids = b->ids + off;
		for (uint32_t f = 0; f < n; f++)
			if ((ids[f] = pc_frame(a, rec->frames[f])) == NONE)
				return -1;
		b->len[i] = n;
		b->off[i] = off;
		b->hash[i] = lsd_seq_hash(ids, n, rec->zygote);
		off += n;
	}
	return 0;
}

/* Room was reserved for every record to be a new stack. */
static int intern(struct leaksnap_diff *d, const struct leaksnap_snapshot *snap, size_t si,
		  const struct batch *b)
{
	size_t stride = 2 * d->n;
	for (size_t i = 0; i < b->count; i++) {
		if (i + STACK_AHEAD < b->count)
			lsd_seqtab_prefetch(&d->stacks, b->hash[i + STACK_AHEAD]);
		const struct leaksnap_snapshot_record *rec = leaksnap_snapshot_record(snap,
										      b->first + i);
		uint32_t sid;
		bool added;
		if (lsd_seqtab_intern_hashed(&d->stacks, b->ids + b->off[i], b->len[i], rec->zygote,
					 b->hash[i], &sid, &added) != 0)
			return -1;
		if (added) {
			if (kit_grow((void **)&d->acc, &d->acc_cap, ((size_t)sid + 1) * stride,
				     sizeof(*d->acc)) != 0)
				return -1;
			memset(d->acc + (size_t)sid * stride, 0, stride * sizeof(*d->acc));
			if (d->uacc) {
				if (kit_grow((void **)&d->uacc, &d->uacc_cap,
					     ((size_t)sid + 1) * stride, sizeof(*d->uacc)) != 0)
					return -1;
				memset(d->uacc + (size_t)sid * stride, 0,
				       stride * sizeof(*d->uacc));
			}
			if (d->sacc) {
				if (kit_grow((void **)&d->sacc, &d->sacc_cap,
					     ((size_t)sid + 1) * 2 * stride, sizeof(*d->sacc)) != 0)
					return -1;
				memset(d->sacc + (size_t)sid * 2 * stride, 0,
				       2 * stride * sizeof(*d->sacc));
			}
		}
		uint64_t bytes = sat_mul(rec->size, rec->count), count = rec->count;
		uint64_t ubytes = sat_mul(rec->size, rec->unreachable), ucount = rec->unreachable;
		if (d->sacc) {
			/* sampled: the sampled blocks aside, the estimates compared */
			uint64_t *sa = d->sacc + (size_t)sid * 2 * stride + si;
			sa[0] = sat_add(sa[0], bytes);
			sa[d->n] = sat_add(sa[d->n], count);
			sa[2 * d->n] = sat_add(sa[2 * d->n], ubytes);
			sa[3 * d->n] = sat_add(sa[3 * d->n], ucount);
			leaksnap_snapshot_record_estimate(snap, rec, &bytes, &count, &ubytes, &ucount);
		}
		uint64_t *acc = d->acc + (size_t)sid * stride + si;
		acc[0] = sat_add(acc[0], bytes);
		acc[d->n] = sat_add(acc[d->n], count);
		if (rec->unreachable && d->uacc) {
			uint64_t *u = d->uacc + (size_t)sid * stride + si;
			u[0] = sat_add(u[0], ubytes);
			u[d->n] = sat_add(u[d->n], ucount);
		}
		uint64_t *tot = rec->zygote ? d->zyg[si] : d->app[si];
		tot[0] = sat_add(tot[0], bytes);
		tot[1] = sat_add(tot[1], count);
	}
	return 0;
}

/* The translating thread: fills the ring in order until done, stopped, or
 * out of memory (that batch is marked failed). */
struct pipe {
	struct adder *a;
	struct batch *ring;
	size_t nrec;
	bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *translator(void *arg)
{
	struct pipe *p = arg;
	for (size_t k = 0; k * BATCH < p->nrec; k++) {
		struct batch *b = &p->ring[k % RING];
		pthread_mutex_lock(&p->mu);
		while (b->state != BATCH_EMPTY && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop)
			break;
		b->first = k * BATCH;
		b->count = p->nrec - b->first < BATCH ? p->nrec - b->first : BATCH;
		int rc = translate(p->a, b);
		pthread_mutex_lock(&p->mu);
		b->state = rc ? BATCH_FAILED : BATCH_FULL;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (rc)
			break;
	}
	return NULL;
}

/* All records of the snapshot being added.  -1: out of memory. */
static int add_records(struct adder *a, size_t si, size_t nrec)
{
	struct leaksnap_diff *d = a->d;
	bool threaded = d->o.jobs > 1 && nrec >= THREAD_MIN_RECORDS;
	struct pipe p = {a, NULL, nrec, false, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
	p.ring = malloc((threaded ? RING : 1) * sizeof(*p.ring));
	if (!p.ring)
		return -1;
	int rc = 0;
	pthread_t tid;
	if (threaded) {
		for (size_t i = 0; i < RING; i++)
			p.ring[i].state = BATCH_EMPTY;
		threaded = pthread_create(&tid, NULL, translator, &p) == 0;
	}
	if (!threaded) {
		for (size_t first = 0; first < nrec && rc == 0; first += BATCH) {
			p.ring->first = first;
			p.ring->count = nrec - first < BATCH ? nrec - first : BATCH;
			rc = translate(a, p.ring) || intern(d, a->snap, si, p.ring) ? -1 : 0;
		}
		free(p.ring);
		return rc;
	}
	for (size_t k = 0; k * BATCH < nrec && rc == 0; k++) {
		struct batch *b = &p.ring[k % RING];
		pthread_mutex_lock(&p.mu);
		while (b->state == BATCH_EMPTY)
			pthread_cond_wait(&p.cv, &p.mu);
		int state = b->state;
		pthread_mutex_unlock(&p.mu);
		rc = state == BATCH_FAILED || intern(d, a->snap, si, b) ? -1 : 0;
		pthread_mutex_lock(&p.mu);
		b->state = BATCH_EMPTY;
		p.stop = rc != 0;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	pthread_join(tid, NULL);
	free(p.ring);
	return rc;
}

int leaksnap_diff_add_snapshot(struct leaksnap_diff *d, const struct leaksnap_snapshot *snap,
			       const struct leaksnap_maps *maps, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	const char *src = leaksnap_snapshot_source(snap);
	if (d->ranked || d->added >= d->n)
		return kit_error(err, LEAKSNAP_ERR_USAGE, src,
				 "more snapshots than the %zu the diff was made for", d->n);
	size_t si = d->added;
	struct leaksnap_diff_snapshot *ds = &d->snaps[si];
	ds->pointer_size = leaksnap_snapshot_pointer_size(snap);
	if (si > 0 && ds->pointer_size != d->snaps[0].pointer_size)
		return kit_error(err, LEAKSNAP_ERR_USAGE, src,
				 "%u-byte pointers, but %s has %u-byte pointers: a 32-bit and a "
				 "64-bit process cannot be compared",
				 ds->pointer_size, d->snaps[0].file, d->snaps[0].pointer_size);
	uint64_t interval = leaksnap_snapshot_sample_interval(snap);
	if (si == 0)
		d->sample_interval = interval;
	else if (interval != d->sample_interval && (!interval || !d->sample_interval))
		return kit_error(err, LEAKSNAP_ERR_USAGE, src,
				 "%s, but %s %s: sampled and unsampled snapshots cannot be compared",
				 interval ? "a sampled snapshot" : "not sampled", d->snaps[0].file,
				 interval ? "is not sampled" : "is a sampled snapshot");
	else if (interval != d->sample_interval)
		return kit_error(err, LEAKSNAP_ERR_USAGE, src,
				 "sampled every %llu bytes, but %s every %llu: snapshots sampled at "
				 "two intervals cannot be compared",
				 (unsigned long long)interval, d->snaps[0].file,
				 (unsigned long long)d->sample_interval);
	if (d->o.resolver && leaksnap_snapshot_pointer_size_known(snap))
		leaksnap_symbolizer_set_pointer_size(leaksnap_resolver_symbolizer(d->o.resolver),
					    ds->pointer_size);
	ds->file = d->files[si] = strdup(src);
	if (!ds->file)
		goto nomem;
	const char *exe = leaksnap_snapshot_meta_get(snap, "exe");
	if (exe && !(ds->exe = d->exes[si] = strdup(exe)))
		goto nomem;
	const char *trigger = leaksnap_snapshot_meta_get(snap, "trigger");
	ds->exit_dump = trigger && strcmp(trigger, "exit") == 0;
	ds->pid = leaksnap_snapshot_pid(snap);
	ds->backtrace_size = leaksnap_snapshot_backtrace_size(snap);
	ds->has_time = leaksnap_snapshot_time_ns(snap, &ds->time_ns);
	ds->total_memory = leaksnap_snapshot_total_memory(snap);
	ds->allocation_count = leaksnap_snapshot_allocation_count(snap);
	ds->has_maps = maps != NULL;
	enum leaksnap_snapshot_format fmt = leaksnap_snapshot_format(snap);
	ds->android = fmt == LEAKSNAP_SNAPSHOT_FORMAT_ANDROID_TEXT ||
		      fmt == LEAKSNAP_SNAPSHOT_FORMAT_DDMS_NHGT;
	for (size_t i = 0; maps && !ds->android && i < leaksnap_maps_module_count(maps); i++)
		ds->android = android_path(leaksnap_maps_module(maps, i)->path);
	lsd_order_note(d, si, snap, maps);

	struct adder a = {d, snap, maps, NULL, maps ? leaksnap_maps_module_count(maps) : 0};
	a.mod_of = malloc((a.nmods ? a.nmods : 1) * sizeof(*a.mod_of));
	if (!a.mod_of)
		goto nomem;
	memset(a.mod_of, 0xff, (a.nmods ? a.nmods : 1) * sizeof(*a.mod_of));
	/* the PC cache starts empty for every snapshot (other maps) */
	if (d->pcs)
		for (size_t i = 0; i <= d->pc_mask; i++)
			d->pcs[i].frame = NONE;
	else if (pc_cache_grow(d) != 0)
		goto nomem_a;
	d->pc_count = 0;

	size_t stride = 2 * d->n, nrec = leaksnap_snapshot_record_count(snap), words = 0;
	for (size_t r = 0; r < nrec; r++) {
		uint32_t nf = leaksnap_snapshot_record(snap, r)->frame_count;
		words += nf > 256 ? 256 : nf;
	}
	/* The unreachable sums exist from the first snapshot that has them
	 * on, zero for the stacks interned before. */
	ds->has_reachability = leaksnap_snapshot_has_reachability(snap);
	if (ds->has_reachability && !d->uacc) {
		size_t have = d->stacks.count * stride;
		if (kit_grow((void **)&d->uacc, &d->uacc_cap, have + 1, sizeof(*d->uacc)) != 0)
			goto nomem_a;
		memset(d->uacc, 0, have * sizeof(*d->uacc));
	}
	if (d->sample_interval && !d->sacc &&
	    kit_grow((void **)&d->sacc, &d->sacc_cap, 1, sizeof(*d->sacc)) != 0)
		goto nomem_a;
	/* every record may be a new stack: room for all, reserved once */
	if ((d->sacc && kit_grow((void **)&d->sacc, &d->sacc_cap,
				 (d->stacks.count + nrec) * 2 * stride, sizeof(*d->sacc)) != 0) ||
	    (d->uacc && kit_grow((void **)&d->uacc, &d->uacc_cap,
				 (d->stacks.count + nrec) * stride, sizeof(*d->uacc)) != 0) ||
	    lsd_seqtab_reserve(&d->stacks, nrec, words) != 0 ||
	    kit_grow((void **)&d->acc, &d->acc_cap, (d->stacks.count + nrec) * stride,
		     sizeof(*d->acc)) != 0 ||
	    add_records(&a, si, nrec) != 0)
		goto nomem_a;
	free(a.mod_of);
	d->added++;
	return d->added == d->n ? lsd_order_snapshots(d, err) : 0;
nomem_a:
	free(a.mod_of);
nomem:
	return kit_error(err, LEAKSNAP_ERR_NOMEM, src, "out of memory");
}

