/* leaksnap diff: normalizing stacks, grouping records, ranking growth.
 *
 * diff_add_snapshot() turns each PC into a frame (module, offset) through
 * the snapshot's maps -- a per-snapshot cache keeps that to one maps
 * lookup per distinct PC -- and each record's frames into an interned
 * stack whose bytes and count are summed per snapshot.  The snapshot
 * itself is not kept.  diff_rank() then unifies modules (a build ID
 * names one module whatever its path; a module without one joins the
 * only build of its path), groups the stacks, and scores the groups.
 * The arithmetic of the score is in docs/diff.md. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

#define NONE UINT32_MAX
#define MAX_BUILD_ID 64
#define MAX_ITEMS (UINT32_MAX / 4) /* frames, stacks, groups, modules */
#define UNKNOWN_NAME 0x80000000u   /* function keys: an unnamed frame */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static int64_t sat_delta(uint64_t to, uint64_t from)
{
	if (to >= from)
		return to - from > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(to - from);
	return from - to > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(from - to);
}

/* Sequences of u32, interned: stacks (frame ids) and group keys. ------------ */

struct seq {
	size_t off;
	uint32_t len;  /* length | salt << 31 */
	uint32_t hash;
};
#define SEQ_LEN(s) ((s)->len & 0x7fffffffu)
#define SEQ_SALT(s) ((s)->len >> 31)

struct seqtab {
	uint32_t *pool;
	size_t pool_len, pool_cap;
	struct seq *ents;
	size_t count, cap;
	uint64_t *slots; /* hash << 32 | entry id; SLOT_EMPTY: empty */
	size_t mask;
};
#define SLOT_EMPTY UINT64_MAX
#define SLOT_ID(v) ((uint32_t)(v))

static void seqtab_free(struct seqtab *t)
{
	free(t->pool);
	free(t->ents);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static uint32_t seq_hash(const uint32_t *v, uint32_t n, uint32_t salt)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ salt ^ ((uint64_t)n << 40);
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ v[i]) * 0x100000001b3ULL + (h >> 29);
	return (uint32_t)mix(h);
}

static int seqtab_rehash_to(struct seqtab *t, size_t n)
{
	uint64_t *s = malloc(n * sizeof(*s));
	if (!s)
		return -1;
	lsp_huge_hint(s, n * sizeof(*s));
	memset(s, 0xff, n * sizeof(*s));
	for (size_t i = 0; i < t->count; i++) {
		size_t k = t->ents[i].hash & (n - 1);
		while (s[k] != SLOT_EMPTY)
			k = (k + 1) & (n - 1);
		s[k] = (uint64_t)t->ents[i].hash << 32 | i;
	}
	free(t->slots);
	t->slots = s;
	t->mask = n - 1;
	return 0;
}

static int seqtab_rehash(struct seqtab *t)
{
	return seqtab_rehash_to(t, t->slots ? (t->mask + 1) * 2 : 1024);
}

/* Room for @more entries of @words u32 in all, without rehashing.  Memory
 * reserved but not yet used is not touched. */
static int seqtab_reserve(struct seqtab *t, size_t more, size_t words)
{
	size_t n = t->slots ? t->mask + 1 : 1024;
	while (n < 2 * (t->count + more) + 2) {
		if (n > SIZE_MAX / 4 / sizeof(*t->slots))
			return -1;
		n *= 2;
	}
	if ((!t->slots || n != t->mask + 1) && seqtab_rehash_to(t, n) != 0)
		return -1;
	if (lsp_grow((void **)&t->ents, &t->cap, t->count + more, sizeof(*t->ents)) != 0 ||
	    lsp_grow((void **)&t->pool, &t->pool_cap, t->pool_len + words, sizeof(*t->pool)) != 0)
		return -1;
	return 0;
}

/* The id of @v[0..n) (with @salt, 0 or 1, which distinguishes otherwise
 * equal sequences), added when new (*@added).  -1: out of memory or too
 * many. */
static int seqtab_intern_hashed(struct seqtab *t, const uint32_t *v, uint32_t n,
				uint32_t salt, uint32_t h, uint32_t *id, bool *added)
{
	if ((t->count + 1) * 2 > (t->slots ? t->mask + 1 : 0) && seqtab_rehash(t) != 0)
		return -1;
	size_t k = h & t->mask;
	for (uint64_t e; (e = t->slots[k]) != SLOT_EMPTY; k = (k + 1) & t->mask) {
		if (e >> 32 != h)
			continue;
		const struct seq *s = &t->ents[SLOT_ID(e)];
		if (s->len == (n | salt << 31) && !memcmp(t->pool + s->off, v, n * sizeof(*v))) {
			*id = SLOT_ID(e);
			*added = false;
			return 0;
		}
	}
	if (t->count >= MAX_ITEMS || n > 0x7fffffffu ||
	    lsp_grow((void **)&t->ents, &t->cap, t->count + 1, sizeof(*t->ents)) != 0 ||
	    /* (+ 1: the pool exists even if every sequence is empty, as
	     * pool + offset is computed for each) */
	    lsp_grow((void **)&t->pool, &t->pool_cap, t->pool_len + n + 1, sizeof(*t->pool)) != 0)
		return -1;
	if (n)
		memcpy(t->pool + t->pool_len, v, n * sizeof(*v));
	t->ents[t->count] = (struct seq){t->pool_len, n | salt << 31, h};
	t->pool_len += n;
	t->slots[k] = (uint64_t)h << 32 | t->count;
	*id = (uint32_t)t->count++;
	*added = true;
	return 0;
}

static int seqtab_intern(struct seqtab *t, const uint32_t *v, uint32_t n, uint32_t salt,
			 uint32_t *id, bool *added)
{
	return seqtab_intern_hashed(t, v, n, salt, seq_hash(v, n, salt), id, added);
}

/* Prefetch the slot where the sequence of hash @h is looked for. */
static void seqtab_prefetch(const struct seqtab *t, uint32_t h)
{
	if (t->slots)
		__builtin_prefetch(&t->slots[h & t->mask]);
}

/* Model ----------------------------------------------------------------------- */

struct dmodule {
	char *path;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
	uint32_t hash;
	uint32_t canon;           /* the module it is one with */
	int wrapper;              /* -1 unknown, else whether it is a wrapper library */
	const struct sym_module *last_sym; /* the last symbols module it gave */
	struct sym_mapping *maps;  /* its mappings in the first snapshot that had it */
	size_t nmaps;              /* (for a debug-only symbol file's layout) */
};

struct dframe {
	uint32_t module;          /* NONE: no module, addr is the raw PC */
	uint32_t canon;           /* the frame it is one with (rank) */
	uint64_t addr;            /* rel_pc or raw PC */
	uint64_t pc;              /* as captured, latest snapshot */
};

/* What ranking learns about a canonical frame. */
struct frame_info {
	struct diff_frame view;
	struct sym_frame *sym_owned;
	uint32_t site_level;      /* first level outside wrappers; NONE: all wrappers */
	uint32_t supp;            /* first matching suppression, NONE: none */
	uint8_t have;             /* HAVE_* */
};
#define HAVE_SYMBOLS 1u
#define HAVE_SITE 2u
#define HAVE_SUPP 4u

struct pc_slot {
	uint64_t pc;
	uint32_t frame;           /* NONE: empty */
};

/* A group that grew: a suspect or a stopped cache. */
struct cand {
	uint32_t group;
	enum diff_trend trend;
	double score;
	int64_t bytes_delta, count_delta;
};

/* A group as the API shows it, made on first access. */
struct group_priv {
	struct diff_group pub;
	const struct diff_frame **frames;
};

struct diff {
	struct diff_options o;
	size_t n;                 /* snapshots expected */
	size_t added;
	struct diff_snapshot *snaps;
	char **files;             /* snaps[i].file, owned */
	uint64_t (*zyg)[2];       /* per snapshot: zygote bytes, count */
	uint64_t (*app)[2];       /* per snapshot: app bytes, count */

	struct dmodule *mods;
	size_t mod_count, mod_cap;
	uint32_t *mod_slots;      /* open addressing over mods */
	size_t mod_mask;

	struct dframe *frames;
	size_t frame_count, frame_cap;
	uint32_t *frame_slots;
	size_t frame_mask;

	struct seqtab stacks;     /* frame ids; salt 1 = zygote */
	uint64_t *acc;            /* per stack: bytes[n], then counts[n] */
	size_t acc_cap;           /* in u64 */

	struct pc_slot *pcs;      /* this snapshot's PC -> frame */
	size_t pc_mask, pc_count;

	bool ranked;
	bool include_zygote;
	struct frame_info *info;  /* per frame (canonical ones used) */
	uint32_t *group_of;       /* per stack, NONE: not compared */
	struct seqtab keys;       /* group keys (not used when groups are stacks) */
	uint64_t *gacc;           /* per group: bytes[n], counts[n]; may be acc */
	uint32_t *rep;            /* per group: its largest stack */
	uint32_t *nstacks;        /* per group: its stacks */
	size_t group_count;
	struct seqtab names;      /* function names, as bytes in u32 */
	struct cand *suspects, *stopped;
	size_t nsuspects, nstopped;
	size_t suspects_ordered, stopped_ordered; /* leading entries in rank order */
	struct group_priv **pub_suspects, **pub_stopped; /* made on access */
	int64_t suspect_bytes, suspect_count;
	uint64_t suppressed;

	char **warnings;
	size_t nwarnings, warn_cap;
	const struct sym_module **symmods;
	size_t nsymmods, symmod_cap;
};

static const char *const by_names[] = {"stack", "site", "function", "module"};
static const char *const trend_names[] = {"grew", "steady", "growing", "stopped"};

const char *diff_by_name(enum diff_by by)
{
	return (unsigned)by < 4 ? by_names[by] : "?";
}

const char *diff_trend_name(enum diff_trend t)
{
	return (unsigned)t < 4 ? trend_names[t] : "?";
}

struct diff *diff_new(const struct diff_options *opts, size_t nsnapshots,
		      struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (nsnapshots < 2 || nsnapshots > DIFF_MAX_SNAPSHOTS) {
		lsp_error(err, LEAKSNAP_ERR_USAGE, "diff",
			  "a diff needs 2 to %d snapshots, got %zu", DIFF_MAX_SNAPSHOTS, nsnapshots);
		return NULL;
	}
	if (opts && (unsigned)opts->by > DIFF_BY_MODULE) {
		lsp_error(err, LEAKSNAP_ERR_USAGE, "diff", "unknown grouping %d", (int)opts->by);
		return NULL;
	}
	struct diff *d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	if (opts)
		d->o = *opts;
	d->n = nsnapshots;
	d->snaps = calloc(nsnapshots, sizeof(*d->snaps));
	d->files = calloc(nsnapshots, sizeof(*d->files));
	d->zyg = calloc(nsnapshots, sizeof(*d->zyg));
	d->app = calloc(nsnapshots, sizeof(*d->app));
	if (!d->snaps || !d->files || !d->zyg || !d->app)
		goto nomem;
	return d;
nomem:
	diff_free(d);
	lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	return NULL;
}

void diff_free(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n && d->files; i++)
		free(d->files[i]);
	free(d->files);
	free(d->snaps);
	free(d->zyg);
	free(d->app);
	for (size_t i = 0; i < d->mod_count; i++) {
		free(d->mods[i].path);
		free(d->mods[i].maps);
	}
	free(d->mods);
	free(d->mod_slots);
	if (d->info)
		for (size_t i = 0; i < d->frame_count; i++)
			free(d->info[i].sym_owned);
	free(d->info);
	free(d->frames);
	free(d->frame_slots);
	seqtab_free(&d->stacks);
	free(d->pcs);
	free(d->group_of);
	seqtab_free(&d->keys);
	if (d->gacc != d->acc)
		free(d->gacc);
	free(d->acc);
	free(d->rep);
	free(d->nstacks);
	seqtab_free(&d->names);
	for (size_t i = 0; d->pub_suspects && i < d->nsuspects; i++)
		if (d->pub_suspects[i])
			free(d->pub_suspects[i]->frames);
	for (size_t i = 0; d->pub_stopped && i < d->nstopped; i++)
		if (d->pub_stopped[i])
			free(d->pub_stopped[i]->frames);
	for (size_t i = 0; d->pub_suspects && i < d->nsuspects; i++)
		free(d->pub_suspects[i]);
	for (size_t i = 0; d->pub_stopped && i < d->nstopped; i++)
		free(d->pub_stopped[i]);
	free(d->pub_suspects);
	free(d->pub_stopped);
	free(d->suspects);
	free(d->stopped);
	for (size_t i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->symmods);
	free(d);
}

/* Modules ---------------------------------------------------------------------- */

static uint32_t module_hash(const char *path, const uint8_t *id, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ id[i]) * 0x100000001b3ULL;
	return (uint32_t)mix(h ^ len);
}

/* Open addressing over u32 ids (modules, frames): a table of @n slots, a
 * power of two, all empty; NULL when out of memory. */
static uint32_t *slots_new(size_t n)
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

static uint32_t module_hash_of(const struct diff *d, size_t i)
{
	return d->mods[i].hash;
}

static uint32_t frame_hash(uint32_t module, uint64_t addr);
static uint32_t frame_hash_of(const struct diff *d, size_t i)
{
	return frame_hash(d->frames[i].module, d->frames[i].addr);
}

/* Double *@slots (or make it with @first slots) and put ids 0..@count back. */
static int ids_rehash(const struct diff *d, uint32_t **slots, size_t *mask, size_t first,
		      size_t count, uint32_t (*hash_of)(const struct diff *, size_t))
{
	size_t n = *slots ? (*mask + 1) * 2 : first;
	uint32_t *s = slots_new(n);
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
static uint32_t module_intern(struct diff *d, const char *path, const uint8_t *id, size_t len)
{
	if ((d->mod_count + 1) * 2 > (d->mod_slots ? d->mod_mask + 1 : 0) &&
	    ids_rehash(d, &d->mod_slots, &d->mod_mask, 256, d->mod_count, module_hash_of) != 0)
		return NONE;
	uint32_t h = module_hash(path, id, len);
	size_t k = h & d->mod_mask;
	for (uint32_t e; (e = d->mod_slots[k]) != NONE; k = (k + 1) & d->mod_mask) {
		const struct dmodule *m = &d->mods[e];
		if (m->hash == h && m->build_id_len == len && !memcmp(m->build_id, id, len) &&
		    !strcmp(m->path, path))
			return e;
	}
	if (d->mod_count >= MAX_ITEMS ||
	    lsp_grow((void **)&d->mods, &d->mod_cap, d->mod_count + 1, sizeof(*d->mods)) != 0)
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

static uint32_t frame_hash(uint32_t module, uint64_t addr)
{
	return (uint32_t)mix(addr * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)module << 17) ^ module);
}

static uint32_t frame_intern(struct diff *d, uint32_t module, uint64_t addr, uint64_t pc)
{
	if ((d->frame_count + 1) * 2 > (d->frame_slots ? d->frame_mask + 1 : 0) &&
	    ids_rehash(d, &d->frame_slots, &d->frame_mask, 4096, d->frame_count, frame_hash_of) != 0)
		return NONE;
	size_t k = frame_hash(module, addr) & d->frame_mask;
	for (uint32_t e; (e = d->frame_slots[k]) != NONE; k = (k + 1) & d->frame_mask) {
		struct dframe *f = &d->frames[e];
		if (f->module == module && f->addr == addr) {
			f->pc = pc;
			return e;
		}
	}
	if (d->frame_count >= MAX_ITEMS ||
	    lsp_grow((void **)&d->frames, &d->frame_cap, d->frame_count + 1, sizeof(*d->frames)) != 0)
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
	struct diff *d;
	const struct snapshot *snap;
	const struct maps *maps;
	uint32_t *mod_of;   /* per maps module: our module, NONE: not yet */
	size_t nmods;
};

static int pc_cache_grow(struct diff *d)
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
		size_t k = mix(d->pcs[i].pc) & (n - 1);
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
static int module_keep_maps(struct dmodule *m, const struct maps *maps,
			    const struct maps_module *mm)
{
	if (m->maps || !mm->mapping_count)
		return 0;
	m->maps = malloc(mm->mapping_count * sizeof(*m->maps));
	if (!m->maps)
		return -1;
	for (size_t i = 0; i < mm->mapping_count; i++) {
		const struct maps_mapping *x = maps_mapping(maps, mm->first_mapping + i);
		m->maps[i] = (struct sym_mapping){x->start, x->end, x->offset, x->perms[2] == 'x'};
	}
	m->nmaps = mm->mapping_count;
	return 0;
}

/* The frame of @pc in the snapshot being added.  NONE: out of memory. */
static uint32_t pc_frame(struct adder *a, uint64_t pc)
{
	struct diff *d = a->d;
	size_t k = mix(pc) & d->pc_mask;
	for (; d->pcs[k].frame != NONE; k = (k + 1) & d->pc_mask)
		if (d->pcs[k].pc == pc)
			return d->pcs[k].frame;
	uint32_t module = NONE;
	uint64_t addr = pc;
	struct maps_location loc;
	if (a->maps && maps_locate(a->maps, pc, &loc) && loc.module) {
		const struct maps_module *first = maps_module(a->maps, 0);
		size_t mi = (size_t)(loc.module - first);
		if (mi >= a->nmods)
			return NONE; /* cannot happen: modules are one array */
		if (a->mod_of[mi] == NONE) {
			uint8_t id[MAX_BUILD_ID];
			size_t len = snapshot_build_id(a->snap, loc.module->path, id, sizeof(id));
			if (len > sizeof(id))
				len = 0; /* not a build ID we can compare: use the path */
			a->mod_of[mi] = module_intern(d, loc.module->path, id, len);
			if (a->mod_of[mi] == NONE || module_keep_maps(&d->mods[a->mod_of[mi]], a->maps,
								      loc.module) != 0)
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

static void pc_prefetch(const struct diff *d, const struct snapshot_record *rec)
{
	uint32_t nf = rec->frame_count > 256 ? 256 : rec->frame_count;
	for (uint32_t f = 0; f < nf; f++)
		__builtin_prefetch(&d->pcs[mix(rec->frames[f]) & d->pc_mask]);
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
	const struct snapshot *snap = a->snap;
	uint32_t off = 0;
	for (size_t i = 0; i < b->count; i++) {
		if (i + PC_AHEAD < b->count)
			pc_prefetch(a->d, snapshot_record(snap, b->first + i + PC_AHEAD));
		const struct snapshot_record *rec = snapshot_record(snap, b->first + i);
		uint32_t n = rec->frame_count > 256 ? 256 : rec->frame_count, *ids = b->ids + off;
		for (uint32_t f = 0; f < n; f++)
			if ((ids[f] = pc_frame(a, rec->frames[f])) == NONE)
				return -1;
		b->len[i] = n;
		b->off[i] = off;
		b->hash[i] = seq_hash(ids, n, rec->zygote);
		off += n;
	}
	return 0;
}

/* Room was reserved for every record to be a new stack. */
static int intern(struct diff *d, const struct snapshot *snap, size_t si, const struct batch *b)
{
	size_t stride = 2 * d->n;
	for (size_t i = 0; i < b->count; i++) {
		if (i + STACK_AHEAD < b->count)
			seqtab_prefetch(&d->stacks, b->hash[i + STACK_AHEAD]);
		const struct snapshot_record *rec = snapshot_record(snap, b->first + i);
		uint32_t sid;
		bool added;
		if (seqtab_intern_hashed(&d->stacks, b->ids + b->off[i], b->len[i], rec->zygote,
					 b->hash[i], &sid, &added) != 0)
			return -1;
		if (added) {
			if (lsp_grow((void **)&d->acc, &d->acc_cap, ((size_t)sid + 1) * stride,
				     sizeof(*d->acc)) != 0)
				return -1;
			memset(d->acc + (size_t)sid * stride, 0, stride * sizeof(*d->acc));
		}
		uint64_t bytes = sat_mul(rec->size, rec->count);
		uint64_t *acc = d->acc + (size_t)sid * stride + si;
		acc[0] = sat_add(acc[0], bytes);
		acc[d->n] = sat_add(acc[d->n], rec->count);
		uint64_t *tot = rec->zygote ? d->zyg[si] : d->app[si];
		tot[0] = sat_add(tot[0], bytes);
		tot[1] = sat_add(tot[1], rec->count);
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
	struct diff *d = a->d;
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

int diff_add_snapshot(struct diff *d, const struct snapshot *snap, const struct maps *maps,
		      struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	const char *src = snapshot_source(snap);
	if (d->ranked || d->added >= d->n)
		return lsp_error(err, LEAKSNAP_ERR_USAGE, src,
				 "more snapshots than the %zu the diff was made for", d->n);
	size_t si = d->added;
	struct diff_snapshot *ds = &d->snaps[si];
	ds->pointer_size = snapshot_pointer_size(snap);
	if (si > 0 && ds->pointer_size != d->snaps[0].pointer_size)
		return lsp_error(err, LEAKSNAP_ERR_USAGE, src,
				 "%u-byte pointers, but %s has %u-byte pointers: a 32-bit and a "
				 "64-bit process cannot be compared",
				 ds->pointer_size, d->snaps[0].file, d->snaps[0].pointer_size);
	ds->file = d->files[si] = strdup(src);
	if (!ds->file)
		goto nomem;
	ds->pid = snapshot_pid(snap);
	ds->has_time = snapshot_time_ns(snap, &ds->time_ns);
	ds->total_memory = snapshot_total_memory(snap);
	ds->allocation_count = snapshot_allocation_count(snap);
	ds->has_maps = maps != NULL;
	enum snapshot_format fmt = snapshot_format(snap);
	ds->android = fmt == SNAPSHOT_FORMAT_ANDROID_TEXT || fmt == SNAPSHOT_FORMAT_DDMS_NHGT;
	for (size_t i = 0; maps && !ds->android && i < maps_module_count(maps); i++)
		ds->android = android_path(maps_module(maps, i)->path);

	struct adder a = {d, snap, maps, NULL, maps ? maps_module_count(maps) : 0};
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

	size_t stride = 2 * d->n, nrec = snapshot_record_count(snap), words = 0;
	for (size_t r = 0; r < nrec; r++) {
		uint32_t nf = snapshot_record(snap, r)->frame_count;
		words += nf > 256 ? 256 : nf;
	}
	/* every record may be a new stack: room for all, reserved once */
	if (seqtab_reserve(&d->stacks, nrec, words) != 0 ||
	    lsp_grow((void **)&d->acc, &d->acc_cap, (d->stacks.count + nrec) * stride,
		     sizeof(*d->acc)) != 0 ||
	    add_records(&a, si, nrec) != 0)
		goto nomem_a;
	free(a.mod_of);
	d->added++;
	return 0;
nomem_a:
	free(a.mod_of);
nomem:
	return lsp_error(err, LEAKSNAP_ERR_NOMEM, src, "out of memory");
}

/* Symbols ------------------------------------------------------------------------- */

static void warn(struct diff *d, const struct leaksnap_error *e)
{
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	leaksnap_error_format(e, buf, sizeof(buf));
	for (size_t i = 0; i < d->nwarnings; i++)
		if (!strcmp(d->warnings[i], buf))
			return;
	char *w = strdup(buf);
	if (!w || lsp_grow((void **)&d->warnings, &d->warn_cap, d->nwarnings + 1,
		       sizeof(*d->warnings)) != 0) {
		free(w);
		return; /* a lost warning is better than a lost report */
	}
	d->warnings[d->nwarnings++] = w;
}

static void note_symmod(struct diff *d, struct dmodule *m, const struct sym_module *sm)
{
	if (m->last_sym == sm)
		return;
	m->last_sym = sm;
	for (size_t i = 0; i < d->nsymmods; i++)
		if (d->symmods[i] == sm)
			return;
	if (lsp_grow((void **)&d->symmods, &d->symmod_cap, d->nsymmods + 1, sizeof(*d->symmods)) != 0)
		return;
	d->symmods[d->nsymmods++] = sm;
	if (sm->error) {
		struct leaksnap_error e;
		leaksnap_error_clear(&e);
		lsp_error(&e, LEAKSNAP_ERR_FORMAT, sm->error_file, "%s", sm->error);
		warn(d, &e);
	}
}

/* Symbolize canonical frame @f (once).  -1: out of memory. */
static int frame_symbols(struct diff *d, uint32_t f, struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (fi->have & HAVE_SYMBOLS)
		return 0;
	fi->have |= HAVE_SYMBOLS;
	const struct dframe *fr = &d->frames[f];
	if (!d->o.sym || fr->module == NONE)
		return 0;
	struct dmodule *m = &d->mods[d->mods[fr->module].canon];
	uint64_t rel = fr->addr;
	struct leaksnap_error e;
	leaksnap_error_clear(&e);
	const struct sym_module *sm = symbolizer_module_at(d->o.sym, m->path,
							   m->build_id_len ? m->build_id : NULL,
							   m->build_id_len, &rel, &e);
	if (!sm)
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	if (sm->file && sm->layout == SYM_LAYOUT_NONE && !strcmp(sm->path, m->path) &&
	    sym_module_set_mappings(sm, m->maps, m->nmaps, &e) != 0) {
		if (e.code == LEAKSNAP_ERR_NOMEM)
			return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		warn(d, &e);
	}
	note_symmod(d, m, sm);
	fi->view.sym_module = sm;
	if (!sm->file)
		return 0;
	struct sym_result r;
	if (sym_module_lookup(sm, rel, d->o.adjust, &r, &e) != 0) {
		warn(d, &e);
		return 0;
	}
	if (r.frame_count) {
		fi->sym_owned = malloc(r.frame_count * sizeof(*fi->sym_owned));
		if (!fi->sym_owned)
			return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		memcpy(fi->sym_owned, r.frames, r.frame_count * sizeof(*fi->sym_owned));
		fi->view.sym = fi->sym_owned;
		fi->view.sym_count = r.frame_count;
	}
	return 0;
}

/* Allocation wrappers: the frames a site is looked for beyond. */
static const char *const wrapper_functions[] = {
	"^malloc$", "^calloc$", "^realloc$", "^reallocarray$", "^free$", "^memalign$",
	"^posix_memalign$", "^aligned_alloc$", "^valloc$", "^pvalloc$", "^strdup$",
	"^strndup$", "^__libc_*", "^je_*", "^scudo::", "^operator new", "^operator delete",
	"^std::", "^__gnu_cxx::", "^__cxxabiv1::", "^__cxa_", "^__libcpp_",
};
static const char *const wrapper_modules[] = {
	"/libc.so$", "/libc.so.*", "/libc++.so$", "/libc++.so.*", "/libc++_shared.so$",
	"/libstdc++.so$", "/libstdc++.so.*", "/libleakhook.so$", "/libc_malloc_debug.so$",
	"/libc_malloc_hooks.so$", "/ld-linux*.so*", "/ld-android.so$", "/linker$", "/linker64$",
	"/libjemalloc.so*", "/libtcmalloc*.so*", "/libscudo*.so$",
};

static bool matches_any(const char *const *pats, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (diff_pattern_match(pats[i], s))
			return true;
	return false;
}

static bool module_is_wrapper(struct diff *d, uint32_t mi)
{
	struct dmodule *m = &d->mods[mi];
	if (m->wrapper < 0)
		m->wrapper = matches_any(wrapper_modules,
					 sizeof(wrapper_modules) / sizeof(*wrapper_modules), m->path) ||
			     matches_any(d->o.skip, d->o.skip_count, m->path);
	return m->wrapper > 0;
}

static bool function_is_wrapper(const struct diff *d, const char *fn)
{
	return matches_any(wrapper_functions, sizeof(wrapper_functions) / sizeof(*wrapper_functions),
			   fn) ||
	       matches_any(d->o.skip, d->o.skip_count, fn);
}

/* The first level (innermost first) of canonical frame @f that is not an
 * allocation wrapper; NONE when all are. */
static int frame_site(struct diff *d, uint32_t f, uint32_t *level, struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (!(fi->have & HAVE_SITE)) {
		if (frame_symbols(d, f, err) != 0)
			return -1;
		fi->have |= HAVE_SITE;
		const struct dframe *fr = &d->frames[f];
		fi->site_level = NONE;
		if (fr->module == NONE || !module_is_wrapper(d, d->mods[fr->module].canon)) {
			if (fi->view.sym_count == 0)
				fi->site_level = 0;
			for (size_t l = 0; l < fi->view.sym_count; l++)
				if (!function_is_wrapper(d, fi->view.sym[l].function)) {
					fi->site_level = (uint32_t)l;
					break;
				}
		}
	}
	*level = fi->site_level;
	return 0;
}

/* The first suppression matching a level of canonical frame @f. */
static int frame_suppression(struct diff *d, uint32_t f, uint32_t *supp,
			     struct leaksnap_error *err)
{
	struct frame_info *fi = &d->info[f];
	if (!(fi->have & HAVE_SUPP)) {
		if (frame_symbols(d, f, err) != 0)
			return -1;
		fi->have |= HAVE_SUPP;
		const struct diff_suppressions *s = d->o.suppressions;
		const struct dframe *fr = &d->frames[f];
		size_t best = SIZE_MAX, k;
		for (size_t l = 0; l < fi->view.sym_count; l++) {
			const struct sym_frame *sf = &fi->view.sym[l];
			if ((k = lsd_suppressions_find(s, sf->function)) < best)
				best = k;
			if ((k = lsd_suppressions_find(s, sf->file)) < best)
				best = k;
		}
		if (fr->module != NONE &&
		    (k = lsd_suppressions_find(s, d->mods[fr->module].path)) < best)
			best = k;
		fi->supp = best == SIZE_MAX ? NONE : (uint32_t)best;
	}
	*supp = fi->supp;
	return 0;
}

/* Ranking ----------------------------------------------------------------------------- */

/* Which modules are one: the same build ID whatever the path; a module
 * without a build ID joins the single build recorded for its path.
 * Returns whether any two modules were made one. */
static int unify_modules(struct diff *d, bool *merged)
{
	*merged = false;
	size_t n = d->mod_count;
	if (n == 0)
		return 0;
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	uint32_t *byid = slots_new(cap), *bypath = slots_new(cap);
	if (!byid || !bypath) {
		free(byid);
		free(bypath);
		return -1;
	}
	/* 1: the same build ID */
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		if (!m->build_id_len)
			continue;
		size_t k = module_hash("", m->build_id, m->build_id_len) & (cap - 1);
		for (uint32_t e; (e = byid[k]) != NONE; k = (k + 1) & (cap - 1))
			if (d->mods[e].build_id_len == m->build_id_len &&
			    !memcmp(d->mods[e].build_id, m->build_id, m->build_id_len))
				break;
		if (byid[k] == NONE)
			byid[k] = (uint32_t)i;
		m->canon = byid[k];
	}
	/* 2: per path, the single build (NONE - 1: several) */
	uint32_t *build_of = malloc(cap * sizeof(*build_of));
	if (!build_of) {
		free(byid);
		free(bypath);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		size_t k = module_hash(m->path, NULL, 0) & (cap - 1);
		for (uint32_t e; (e = bypath[k]) != NONE; k = (k + 1) & (cap - 1))
			if (!strcmp(d->mods[e].path, m->path))
				break;
		if (bypath[k] == NONE) {
			bypath[k] = (uint32_t)i;
			build_of[k] = NONE;
		}
		if (m->build_id_len) {
			if (build_of[k] == NONE)
				build_of[k] = m->canon;
			else if (build_of[k] != m->canon)
				build_of[k] = NONE - 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct dmodule *m = &d->mods[i];
		if (m->build_id_len)
			continue;
		size_t k = module_hash(m->path, NULL, 0) & (cap - 1);
		while (strcmp(d->mods[bypath[k]].path, m->path))
			k = (k + 1) & (cap - 1);
		if (build_of[k] < NONE - 1)
			m->canon = build_of[k];
	}
	for (size_t i = 0; i < n; i++)
		if (d->mods[i].canon != i)
			*merged = true;
	free(byid);
	free(bypath);
	free(build_of);
	return 0;
}

/* Frames of unified modules at the same offset are one frame. */
static int unify_frames(struct diff *d)
{
	size_t cap = 16;
	while (cap < 2 * d->frame_count)
		cap *= 2;
	uint32_t *slots = slots_new(cap);
	if (!slots)
		return -1;
	for (size_t i = 0; i < d->frame_count; i++) {
		struct dframe *f = &d->frames[i];
		uint32_t cm = f->module == NONE ? NONE : d->mods[f->module].canon;
		size_t k = frame_hash(cm, f->addr) & (cap - 1);
		for (uint32_t e; (e = slots[k]) != NONE; k = (k + 1) & (cap - 1)) {
			const struct dframe *g = &d->frames[e];
			if (g->addr == f->addr && (g->module == NONE ? NONE : d->mods[g->module].canon) == cm)
				break;
		}
		if (slots[k] == NONE)
			slots[k] = (uint32_t)i;
		f->canon = slots[k];
		if (f->canon != i)
			d->frames[f->canon].pc = f->pc; /* shown as the latest capture */
	}
	free(slots);
	return 0;
}

/* The id of string @str in the names table. */
static int name_id(struct diff *d, const char *str, uint32_t *id)
{
	size_t bytes = strlen(str), words = bytes / 4 + 1;
	if (words > 0x7fffffffu)
		return -1;
	uint32_t *w = calloc(words, sizeof(*w));
	bool added;
	if (!w)
		return -1;
	memcpy(w, str, bytes);
	int rc = seqtab_intern(&d->names, w, (uint32_t)words, 0, id, &added);
	free(w);
	return rc != 0 || *id >= UNKNOWN_NAME ? -1 : 0;
}

/* Function-name ids of canonical frame @f's levels from @from outward,
 * appended to @key. */
static int append_names(struct diff *d, uint32_t f, uint32_t from, uint32_t **key,
			size_t *len, size_t *cap, struct leaksnap_error *err)
{
	if (frame_symbols(d, f, err) != 0)
		return -1;
	const struct frame_info *fi = &d->info[f];
	size_t levels = fi->view.sym_count;
	for (size_t l = from; l < levels || (levels == 0 && l == from); l++) {
		uint32_t id = UNKNOWN_NAME | f;
		const char *fn = levels ? fi->view.sym[l].function : NULL;
		if (fn && name_id(d, fn, &id) != 0)
			return -1;
		if (lsp_grow((void **)key, cap, *len + 1, sizeof(**key)) != 0)
			return -1;
		(*key)[(*len)++] = id;
	}
	return 0;
}

/* The site of stack @s: the index of its first frame outside the wrappers
 * and that frame's level, or the stack's length when all are wrappers. */
static int stack_site(struct diff *d, uint32_t s, size_t *frame, uint32_t *level,
		      struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	for (size_t i = 0; i < SEQ_LEN(st); i++) {
		uint32_t f = d->frames[ids[i]].canon;
		if (frame_site(d, f, level, err) != 0)
			return -1;
		if (*level != NONE) {
			*frame = i;
			return 0;
		}
	}
	*frame = SEQ_LEN(st);
	*level = NONE;
	return 0;
}

static int cmp_suspect(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->bytes_delta != y->bytes_delta)
		return x->bytes_delta > y->bytes_delta ? -1 : 1;
	if (x->count_delta != y->count_delta)
		return x->count_delta > y->count_delta ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int cmp_stopped(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->bytes_delta != y->bytes_delta)
		return x->bytes_delta > y->bytes_delta ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* Candidates are put in rank order lazily: the first ORDER_PREFIX by a
 * selection (all a --top report needs), the rest by a sort only when one of
 * them is asked for.  Both comparisons are total orders (the group id breaks
 * ties), so the order is the same as one full sort's. */
#define ORDER_PREFIX 64

static void heap_down(struct cand *h, size_t n, size_t i, int (*cmp)(const void *, const void *))
{
	for (;;) { /* max-heap in rank order: the root is the weakest kept */
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && cmp(&h[l], &h[m]) > 0)
			m = l;
		if (r < n && cmp(&h[r], &h[m]) > 0)
			m = r;
		if (m == i)
			return;
		struct cand t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void order_cands(struct cand *c, size_t n, size_t *ordered, size_t need,
			int (*cmp)(const void *, const void *))
{
	if (need > n)
		need = n;
	if (need <= *ordered)
		return;
	if (*ordered > 0 || need > ORDER_PREFIX || n <= ORDER_PREFIX) {
		/* everything after the prefix is ranked below it */
		qsort(c + *ordered, n - *ordered, sizeof(*c), cmp);
		*ordered = n;
		return;
	}
	/* The ORDER_PREFIX best: keep them in a heap, moved to the front. */
	size_t k = ORDER_PREFIX;
	for (size_t i = k / 2; i-- > 0;)
		heap_down(c, k, i, cmp);
	for (size_t i = k; i < n; i++) {
		if (cmp(&c[i], &c[0]) < 0) {
			struct cand t = c[0];
			c[0] = c[i];
			c[i] = t;
			heap_down(c, k, 0, cmp);
		}
	}
	qsort(c, k, sizeof(*c), cmp);
	*ordered = k;
}

/* How group @g's bytes moved (into @p's delta, trend and score fields). */
static void score_group(const struct diff *d, uint32_t g, struct diff_group *p)
{
	size_t n = d->n, last = n - 1;
	const uint64_t *b = d->gacc + (size_t)g * 2 * n, *c = b + n;
	p->bytes = b;
	p->counts = c;
	p->bytes_delta = sat_delta(b[last], b[0]);
	p->count_delta = sat_delta(c[last], c[0]);
	p->is_new = b[0] == 0 && c[0] == 0;
	p->grew = p->shrank = 0;
	for (size_t k = 1; k < n; k++) {
		if (b[k] > b[k - 1])
			p->grew++;
		else if (b[k] < b[k - 1])
			p->shrank++;
	}
	if (n == 2)
		p->trend = DIFF_TREND_GREW;
	else if (p->grew == last)
		p->trend = DIFF_TREND_STEADY;
	else if (b[last] > b[last - 1])
		p->trend = DIFF_TREND_GROWING;
	else
		p->trend = DIFF_TREND_STOPPED;
	double weight = p->grew > p->shrank ? (double)(p->grew - p->shrank) / (double)last : 0.0;
	p->score = p->bytes_delta > 0 ? (double)p->bytes_delta * weight : 0.0;
}

/* Whether stack @s is suppressed (counted in the hits).  -1: out of memory. */
static int stack_suppressed(struct diff *d, uint32_t s, bool *out, struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t supp = NONE, k;
	for (uint32_t i = 0; i < SEQ_LEN(st); i++) {
		if (frame_suppression(d, d->frames[ids[i]].canon, &k, err) != 0)
			return -1;
		if (k < supp)
			supp = k;
	}
	*out = supp != NONE;
	if (*out) {
		lsd_suppressions_hit(d->o.suppressions, supp, 1);
		d->suppressed++;
	}
	return 0;
}

/* The key of stack @s's group into *@key (length *@klen). */
static int group_key(struct diff *d, uint32_t s, uint32_t **key, size_t *key_cap, size_t *klen,
		     struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st), level = 0;
	size_t site = 0;
	*klen = 0;
	if (d->o.by != DIFF_BY_STACK && stack_site(d, s, &site, &level, err) != 0)
		return -1;
	if (lsp_grow((void **)key, key_cap, len + 1, sizeof(**key)) != 0)
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	switch (d->o.by) {
	case DIFF_BY_STACK:
		for (uint32_t i = 0; i < len; i++)
			(*key)[(*klen)++] = d->frames[ids[i]].canon;
		break;
	case DIFF_BY_SITE:
		if (len)
			(*key)[(*klen)++] = d->frames[ids[site < len ? site : 0]].canon;
		break;
	case DIFF_BY_MODULE: /* by path: two builds of a library are one library */
		if (len) {
			const struct dframe *f = &d->frames[ids[site < len ? site : 0]];
			uint32_t id = NONE;
			if (f->module != NONE &&
			    name_id(d, d->mods[d->mods[f->module].canon].path, &id) != 0)
				return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
			(*key)[(*klen)++] = id;
		}
		break;
	case DIFF_BY_FUNCTION:
		if (site == len) /* all wrappers: the whole stack */
			site = level = 0;
		for (size_t i = site; i < len; i++)
			if (append_names(d, d->frames[ids[i]].canon, i == site ? level : 0, key, klen,
					 key_cap, err) != 0)
				return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		break;
	}
	return 0;
}

/* Group the compared stacks: group_of, rep, nstacks and gacc. */
static int group_stacks(struct diff *d, bool merged, struct leaksnap_error *err)
{
	size_t nst = d->stacks.count, n = d->n, stride = 2 * n, last = n - 1;
	d->group_of = malloc((nst ? nst : 1) * sizeof(*d->group_of));
	d->rep = malloc((nst ? nst : 1) * sizeof(*d->rep));
	d->nstacks = calloc(nst ? nst : 1, sizeof(*d->nstacks));
	if (!d->group_of || !d->rep || !d->nstacks)
		return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	/* Whole stacks of unmerged modules: a group is a stack (an included
	 * zygote stack joins the app stack with the same frames). */
	bool by_stack = d->o.by == DIFF_BY_STACK && !merged;
	uint32_t *key = NULL;
	size_t key_cap = 0, klen, gacc_cap = 0;
	if (by_stack)
		d->gacc = d->acc;
	for (size_t s = 0; s < nst; s++) {
		d->group_of[s] = NONE;
		const struct seq *st = &d->stacks.ents[s];
		if (!d->include_zygote && SEQ_SALT(st))
			continue;
		if (d->o.suppressions) {
			bool supp;
			if (stack_suppressed(d, (uint32_t)s, &supp, err) != 0)
				goto fail;
			if (supp)
				continue;
		}
		uint32_t g = (uint32_t)s;
		if (by_stack) {
			if (SEQ_SALT(st)) { /* join the app stack of the same frames, if any */
				const uint32_t *ids = d->stacks.pool + st->off;
				uint32_t h = seq_hash(ids, SEQ_LEN(st), 0);
				size_t k = h & d->stacks.mask;
				for (uint64_t e; (e = d->stacks.slots[k]) != SLOT_EMPTY;
				     k = (k + 1) & d->stacks.mask) {
					const struct seq *o = &d->stacks.ents[SLOT_ID(e)];
					if (e >> 32 == h && o->len == SEQ_LEN(st) &&
					    !memcmp(d->stacks.pool + o->off, ids, SEQ_LEN(st) * sizeof(*ids))) {
						g = SLOT_ID(e);
						break;
					}
				}
			}
			if (g != s) {
				uint64_t *to = d->acc + (size_t)g * stride, *from = d->acc + s * stride;
				for (size_t i = 0; i < stride; i++) {
					to[i] = sat_add(to[i], from[i]);
					from[i] = 0;
				}
			}
			if (d->nstacks[g]++ == 0)
				d->rep[g] = g;
		} else {
			bool added;
			if (group_key(d, (uint32_t)s, &key, &key_cap, &klen, err) != 0)
				goto fail;
			if (seqtab_intern(&d->keys, key, (uint32_t)klen, 0, &g, &added) != 0)
				goto nomem;
			if (added) {
				if (lsp_grow((void **)&d->gacc, &gacc_cap, ((size_t)g + 1) * stride,
					 sizeof(*d->gacc)) != 0)
					goto nomem;
				memset(d->gacc + (size_t)g * stride, 0, stride * sizeof(*d->gacc));
				d->rep[g] = (uint32_t)s;
			}
			uint64_t *to = d->gacc + (size_t)g * stride;
			const uint64_t *from = d->acc + s * stride;
			for (size_t i = 0; i < stride; i++)
				to[i] = sat_add(to[i], from[i]);
			d->nstacks[g]++;
			if (from[last] > d->acc[(size_t)d->rep[g] * stride + last])
				d->rep[g] = (uint32_t)s;
		}
		if ((size_t)g + 1 > d->group_count)
			d->group_count = (size_t)g + 1;
		d->group_of[s] = g;
	}
	free(key);
	return 0;
nomem:
	lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
fail:
	free(key);
	return -1;
}

int diff_rank(struct diff *d, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (d->ranked)
		return 0;
	if (d->added != d->n)
		return lsp_error(err, LEAKSNAP_ERR_USAGE, "diff", "%zu of %zu snapshots added",
				 d->added, d->n);
	d->ranked = true;
	bool android = false;
	for (size_t i = 0; i < d->n; i++)
		android |= d->snaps[i].android;
	d->include_zygote = d->o.zygote == DIFF_ZYGOTE_INCLUDE ||
			    (d->o.zygote == DIFF_ZYGOTE_AUTO && !android);
	for (size_t i = 0; i < d->n; i++) {
		struct diff_snapshot *s = &d->snaps[i];
		s->bytes = d->app[i][0];
		s->count = d->app[i][1];
		if (d->include_zygote) {
			s->bytes = sat_add(s->bytes, d->zyg[i][0]);
			s->count = sat_add(s->count, d->zyg[i][1]);
		} else {
			s->left_out_bytes = d->zyg[i][0];
			s->left_out_count = d->zyg[i][1];
		}
	}
	free(d->pcs); /* the adding is over */
	d->pcs = NULL;

	bool merged;
	if (unify_modules(d, &merged) != 0 || (merged && unify_frames(d) != 0))
		goto nomem;
	d->info = calloc(d->frame_count ? d->frame_count : 1, sizeof(*d->info));
	if (!d->info)
		goto nomem;
	for (size_t i = 0; i < d->frame_count; i++) {
		const struct dframe *f = &d->frames[i];
		if (f->canon != i)
			continue;
		struct diff_frame *v = &d->info[i].view;
		v->rel_pc = f->addr;
		v->pc = f->pc;
		if (f->module != NONE) {
			const struct dmodule *m = &d->mods[d->mods[f->module].canon];
			v->module = m->path;
			v->build_id = m->build_id_len ? m->build_id : NULL;
			v->build_id_len = m->build_id_len;
		}
	}
	lsd_suppressions_reset(d->o.suppressions);
	if (group_stacks(d, merged, err) != 0)
		return -1;

	/* Score: growing groups are suspects, stopped ones caches. */
	size_t ns = 0, nc = 0;
	for (size_t g = 0; g < d->group_count; g++) {
		if (!d->nstacks[g])
			continue;
		struct diff_group p;
		score_group(d, (uint32_t)g, &p);
		if (p.bytes_delta <= 0 || (uint64_t)p.bytes_delta < d->o.min_bytes)
			continue;
		if (p.trend == DIFF_TREND_STOPPED)
			nc++;
		else
			ns++;
	}
	d->suspects = malloc((ns ? ns : 1) * sizeof(*d->suspects));
	d->stopped = malloc((nc ? nc : 1) * sizeof(*d->stopped));
	d->pub_suspects = calloc(ns ? ns : 1, sizeof(*d->pub_suspects));
	d->pub_stopped = calloc(nc ? nc : 1, sizeof(*d->pub_stopped));
	if (!d->suspects || !d->stopped || !d->pub_suspects || !d->pub_stopped)
		goto nomem;
	for (size_t g = 0; g < d->group_count; g++) {
		if (!d->nstacks[g])
			continue;
		struct diff_group p;
		score_group(d, (uint32_t)g, &p);
		if (p.bytes_delta <= 0 || (uint64_t)p.bytes_delta < d->o.min_bytes)
			continue;
		struct cand c = {(uint32_t)g, p.trend, p.score, p.bytes_delta, p.count_delta};
		if (p.trend == DIFF_TREND_STOPPED) {
			d->stopped[d->nstopped++] = c;
			continue;
		}
		d->suspects[d->nsuspects++] = c;
		if (__builtin_add_overflow(d->suspect_bytes, c.bytes_delta, &d->suspect_bytes))
			d->suspect_bytes = INT64_MAX;
		if (__builtin_add_overflow(d->suspect_count, c.count_delta, &d->suspect_count))
			d->suspect_count = INT64_MAX;
	}
	return 0;
nomem:
	return lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
}

/* The API's view of candidate @c, made once into *@slot.  NULL: out of
 * memory (or a symbol lookup failed that way). */
static const struct diff_group *materialize(struct diff *d, const struct cand *c,
					    struct group_priv **slot)
{
	if (*slot)
		return &(*slot)->pub;
	struct group_priv *gp = calloc(1, sizeof(*gp));
	if (!gp)
		return NULL;
	uint32_t g = c->group, rep = d->rep[g];
	const struct seq *st = &d->stacks.ents[rep];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st);
	gp->frames = malloc((len ? len : 1) * sizeof(*gp->frames));
	if (!gp->frames) {
		free(gp);
		return NULL;
	}
	for (uint32_t k = 0; k < len; k++)
		gp->frames[k] = &d->info[d->frames[ids[k]].canon].view;
	score_group(d, g, &gp->pub);
	gp->pub.stack_count = d->nstacks[g];
	gp->pub.frames = gp->frames;
	gp->pub.frame_count = len;
	gp->pub.site = SIZE_MAX;
	gp->pub.rep_stack = rep;
	if (d->o.by == DIFF_BY_MODULE && len) {
		struct leaksnap_error e;
		size_t site;
		uint32_t level;
		leaksnap_error_clear(&e);
		if (stack_site(d, rep, &site, &level, &e) != 0) {
			free(gp->frames);
			free(gp);
			return NULL;
		}
		gp->pub.module = gp->frames[site < len ? site : 0]->module;
	}
	*slot = gp;
	return &gp->pub;
}

int diff_symbolize_group(struct diff *d, const struct diff_group *group,
			 struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!d->ranked || !group)
		return 0;
	for (size_t i = 0; i < group->frame_count; i++) {
		uint32_t f = (uint32_t)(((const char *)group->frames[i] - (const char *)d->info) /
					sizeof(*d->info));
		if (f >= d->frame_count)
			return lsp_error(err, LEAKSNAP_ERR_USAGE, "diff", "not a group of this diff");
		if (frame_symbols(d, f, err) != 0)
			return -1;
	}
	size_t site;
	uint32_t level;
	if (stack_site(d, group->rep_stack, &site, &level, err) != 0)
		return -1;
	struct diff_group *g = (struct diff_group *)(uintptr_t)group;
	g->site = site;
	g->site_level = site < group->frame_count && level != NONE ? level : 0;
	return 0;
}

/* Accessors ---------------------------------------------------------------------- */

size_t diff_snapshot_count(const struct diff *d) { return d->n; }
const struct diff_snapshot *diff_snapshot(const struct diff *d, size_t i)
{
	return i < d->added ? &d->snaps[i] : NULL;
}
bool diff_zygote_included(const struct diff *d) { return d->include_zygote; }
size_t diff_suspect_count(const struct diff *d) { return d->nsuspects; }
const struct diff_group *diff_suspect(struct diff *d, size_t i)
{
	if (i >= d->nsuspects)
		return NULL;
	order_cands(d->suspects, d->nsuspects, &d->suspects_ordered, i + 1, cmp_suspect);
	return materialize(d, &d->suspects[i], &d->pub_suspects[i]);
}
size_t diff_stopped_count(const struct diff *d) { return d->nstopped; }
const struct diff_group *diff_stopped(struct diff *d, size_t i)
{
	if (i >= d->nstopped)
		return NULL;
	order_cands(d->stopped, d->nstopped, &d->stopped_ordered, i + 1, cmp_stopped);
	return materialize(d, &d->stopped[i], &d->pub_stopped[i]);
}
int64_t diff_suspects_bytes(const struct diff *d) { return d->suspect_bytes; }
int64_t diff_suspects_count(const struct diff *d) { return d->suspect_count; }
uint64_t diff_suppressed_records(const struct diff *d) { return d->suppressed; }
size_t diff_warning_count(const struct diff *d) { return d->nwarnings; }
const char *diff_warning(const struct diff *d, size_t i)
{
	return i < d->nwarnings ? d->warnings[i] : NULL;
}
size_t diff_symbol_module_count(const struct diff *d) { return d->nsymmods; }
const struct sym_module *diff_symbol_module(const struct diff *d, size_t i)
{
	return i < d->nsymmods ? d->symmods[i] : NULL;
}

/* Fill @frames (room for 256) with stack @s's frames, outermost first,
 * symbolized; returns their number, or -1 when out of memory. */
static int stack_frames(struct diff *d, size_t s, const struct diff_frame **frames,
			struct leaksnap_error *err)
{
	const struct seq *st = &d->stacks.ents[s];
	const uint32_t *ids = d->stacks.pool + st->off;
	uint32_t len = SEQ_LEN(st);
	for (uint32_t f = 0; f < len; f++) {
		uint32_t c = d->frames[ids[len - 1 - f]].canon;
		if (frame_symbols(d, c, err) != 0)
			return -1;
		frames[f] = &d->info[c].view;
	}
	return (int)len;
}

/* Call @fn with stack @s's frames; @frames has room for 256. */
static int emit_stack(struct diff *d, size_t s, const struct diff_frame **frames,
		      diff_stack_fn fn, void *arg, uint64_t bytes, struct leaksnap_error *err)
{
	int len = stack_frames(d, s, frames, err);
	return len < 0 ? -1 : fn(arg, frames, (size_t)len, bytes);
}

/* diff_foreach_growing_stack and its _delta form: exactly one of @fn and
 * @dfn is set. */
static int foreach_growing(struct diff *d, diff_stack_fn fn, diff_stack_delta_fn dfn, void *arg,
			   struct leaksnap_error *err);

int diff_foreach_growing_stack(struct diff *d, diff_stack_fn fn, void *arg,
			       struct leaksnap_error *err)
{
	return foreach_growing(d, fn, NULL, arg, err);
}

int diff_foreach_growing_stack_delta(struct diff *d, diff_stack_delta_fn fn, void *arg,
				     struct leaksnap_error *err)
{
	return foreach_growing(d, NULL, fn, arg, err);
}

static int foreach_growing(struct diff *d, diff_stack_fn fn, diff_stack_delta_fn dfn, void *arg,
			   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!d->ranked || d->nsuspects == 0)
		return 0;
	/* the stacks of each group, by a counting sort on group_of */
	size_t nst = d->stacks.count, stride = 2 * d->n, last = d->n - 1;
	size_t *start = calloc(d->group_count + 2, sizeof(*start));
	uint32_t *order = malloc((nst ? nst : 1) * sizeof(*order));
	const struct diff_frame **frames = malloc(256 * sizeof(*frames));
	int rc = 0;
	if (!start || !order || !frames) {
		rc = lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		goto out;
	}
	for (size_t s = 0; s < nst; s++)
		if (d->group_of[s] != NONE)
			start[d->group_of[s] + 1]++;
	for (size_t g = 0; g < d->group_count; g++)
		start[g + 1] += start[g];
	for (size_t s = 0; s < nst; s++)
		if (d->group_of[s] != NONE)
			order[start[d->group_of[s]]++] = (uint32_t)s;
	/* start[g] is now the end of group g's stacks */
	order_cands(d->suspects, d->nsuspects, &d->suspects_ordered, d->nsuspects, cmp_suspect);
	for (size_t i = 0; i < d->nsuspects && rc == 0; i++) {
		uint32_t g = d->suspects[i].group;
		size_t from = g ? start[g - 1] : 0;
		for (size_t k = from; k < start[g] && rc == 0; k++) {
			uint32_t s = order[k];
			const uint64_t *acc = d->acc + (size_t)s * stride;
			if (acc[last] <= acc[0])
				continue;
			if (fn) {
				rc = emit_stack(d, s, frames, fn, arg, acc[last] - acc[0], err);
				continue;
			}
			int len = stack_frames(d, s, frames, err);
			int64_t count = (int64_t)acc[d->n + last] - (int64_t)acc[d->n];
			rc = len < 0 ? -1 : dfn(arg, frames, (size_t)len, acc[last] - acc[0], count);
		}
	}
out:
	free(start);
	free(order);
	free(frames);
	return rc;
}

/* A growing stack kept for diff_foreach_top_growing_stack: a min-heap on
 * (bytes, then the later stack first), so the root is the weakest kept. */
struct top_stack {
	uint64_t bytes;
	uint32_t stack;
};

static bool top_weaker(const struct top_stack *a, const struct top_stack *b)
{
	return a->bytes != b->bytes ? a->bytes < b->bytes : a->stack > b->stack;
}

static void top_down(struct top_stack *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && top_weaker(&h[l], &h[m]))
			m = l;
		if (r < n && top_weaker(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct top_stack t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int cmp_top_stack(const void *a, const void *b)
{
	const struct top_stack *x = a, *y = b;
	return top_weaker(y, x) ? -1 : top_weaker(x, y) ? 1 : 0;
}

int diff_foreach_top_growing_stack(struct diff *d, size_t max, diff_stack_fn fn, void *arg,
				   uint64_t *rest_bytes, size_t *rest_stacks,
				   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (rest_bytes)
		*rest_bytes = 0;
	if (rest_stacks)
		*rest_stacks = 0;
	if (!d->ranked || d->nsuspects == 0)
		return 0;
	size_t nst = d->stacks.count, stride = 2 * d->n, last = d->n - 1, kept = 0;
	uint64_t rest = 0, nrest = 0;
	uint8_t *is_suspect = calloc(d->group_count ? d->group_count : 1, 1);
	struct top_stack *heap = malloc((max ? max : 1) * sizeof(*heap));
	const struct diff_frame **frames = malloc(256 * sizeof(*frames));
	int rc = 0;
	if (!is_suspect || !heap || !frames) {
		rc = lsp_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d->nsuspects; i++)
		is_suspect[d->suspects[i].group] = 1;
	for (size_t s = 0; s < nst; s++) {
		if (d->group_of[s] == NONE || !is_suspect[d->group_of[s]])
			continue;
		const uint64_t *acc = d->acc + s * stride;
		if (acc[last] <= acc[0])
			continue;
		struct top_stack t = {acc[last] - acc[0], (uint32_t)s};
		if (kept < max) {
			heap[kept++] = t;
			if (kept == max)
				for (size_t i = kept / 2; i-- > 0;)
					top_down(heap, kept, i);
			continue;
		}
		if (max && top_weaker(&heap[0], &t)) { /* t is kept, the weakest goes */
			struct top_stack evicted = heap[0];
			heap[0] = t;
			top_down(heap, kept, 0);
			t = evicted;
		}
		rest += t.bytes;
		nrest++;
	}
	qsort(heap, kept, sizeof(*heap), cmp_top_stack);
	for (size_t i = 0; i < kept && rc == 0; i++)
		rc = emit_stack(d, heap[i].stack, frames, fn, arg, heap[i].bytes, err);
	if (rest_bytes)
		*rest_bytes = rest;
	if (rest_stacks)
		*rest_stacks = nrest;
out:
	free(is_suspect);
	free(heap);
	free(frames);
	return rc;
}
