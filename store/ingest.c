/* leaksnap store: a snapshot into rows.  Its content hash first (a dump
 * stored before adds nothing), then each PC normalized to (module
 * identity, rel_pc) and hashed into a frame id, each record's frame ids
 * into a stack id, and the frames the store does not know yet symbolized
 * once, through the caller's resolver. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kit_dumpname.h"
#include "kit_table.h"
#include "store_internal.h"

/* The content hash ---------------------------------------------------------- */

/* Two 64-bit lanes over 64-bit words: 128 bits, no byte at a time. */
struct chash {
	uint64_t a, b;
	uint64_t n;
};

static void ch_word(struct chash *h, uint64_t w)
{
	h->a = (h->a ^ w) * 0x9e3779b97f4a7c15ULL;
	h->a = (h->a << 31) | (h->a >> 33);
	h->b = (h->b ^ (w + h->n)) * 0xc2b2ae3d27d4eb4fULL;
	h->b = (h->b << 27) | (h->b >> 37);
	h->n++;
}

static void ch_bytes(struct chash *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	ch_word(h, n);
	for (; n >= 8; n -= 8, c += 8)
		ch_word(h, kit_load_le(c, 8));
	if (n)
		ch_word(h, kit_load_le(c, (unsigned)n));
}

void leaksnap_store_content_hash(const struct leaksnap_snapshot *snap,
				 char hex[LEAKSNAP_STORE_HASH_HEX])
{
	struct chash h = {0x6c65616b736e6170ULL, 0x73746f7265763031ULL, 0};
	uint64_t t = 0;
	bool has_time = leaksnap_snapshot_time_ns(snap, &t);
	uint64_t head[] = {(uint64_t)leaksnap_snapshot_format(snap),
			   leaksnap_snapshot_pointer_size(snap),
			   (uint64_t)leaksnap_snapshot_pid(snap),
			   has_time,
			   t,
			   leaksnap_snapshot_total_memory(snap),
			   leaksnap_snapshot_has_reachability(snap),
			   leaksnap_snapshot_unreachable_bytes(snap),
			   leaksnap_snapshot_unreachable_count(snap)};
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		ch_word(&h, head[i]);
	size_t n = leaksnap_snapshot_record_count(snap);
	ch_word(&h, n);
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(snap, i);
		ch_word(&h, r->size);
		ch_word(&h, r->count);
		ch_word(&h, r->unreachable);
		ch_word(&h, (uint64_t)r->frame_count << 1 | r->zygote);
		for (uint32_t f = 0; f < r->frame_count; f++)
			ch_word(&h, r->frames[f]);
	}
	size_t m = leaksnap_snapshot_meta_count(snap);
	ch_word(&h, m);
	for (size_t i = 0; i < m; i++) {
		const struct leaksnap_snapshot_meta *x = leaksnap_snapshot_meta(snap, i);
		ch_bytes(&h, x->key, strlen(x->key));
		ch_bytes(&h, x->value, strlen(x->value));
	}
	size_t len = 0;
	const char *maps = leaksnap_snapshot_maps(snap, &len, NULL, NULL);
	ch_bytes(&h, maps ? maps : "", maps ? len : 0);
	uint64_t a = kit_mix64(h.a ^ h.n), b = kit_mix64(h.b ^ kit_mix64(h.a));
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		hex[i] = digits[(a >> (60 - 4 * i)) & 15];
		hex[16 + i] = digits[(b >> (60 - 4 * i)) & 15];
	}
	hex[32] = '\0';
}

static uint64_t hash_id(const char *hex)
{
	return strtoull((char[17]){hex[0], hex[1], hex[2], hex[3], hex[4], hex[5], hex[6], hex[7],
				   hex[8], hex[9], hex[10], hex[11], hex[12], hex[13], hex[14],
				   hex[15], 0},
			NULL, 16);
}

/* The run ---------------------------------------------------------------------- */

static void to_hex(const uint8_t *id, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * n] = '\0';
}

static const char *meta_or_empty(const struct leaksnap_snapshot *snap, const char *key)
{
	const char *v = leaksnap_snapshot_meta_get(snap, key);
	return v ? v : "";
}

void leaksnap_store_run_of(const struct leaksnap_snapshot *snap, const struct leaksnap_maps *maps,
			   const struct leaksnap_store_label *labels, size_t n,
			   struct leaksnap_store_run *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = leaksnap_snapshot_pid(snap);
	out->start = meta_or_empty(snap, "process_start");
	out->exe = meta_or_empty(snap, "exe");
	out->cmdline = meta_or_empty(snap, "cmdline");
	out->labels = labels;
	out->label_count = n;
	uint8_t id[64];
	size_t len = *out->exe ? leaksnap_snapshot_build_id(snap, out->exe, id, sizeof(id)) : 0;
	to_hex(id, len, out->build_id_buf);
	out->build_id = out->build_id_buf;
	/* A run: pid, start and program.  Without process_start, where the
	 * program is loaded stands in for it (as diff/order.c tells runs);
	 * without a pid, the snapshot is a run of its own. */
	uint64_t h = sto_hash_text(STO_HASH_START, "run");
	if (out->pid < 0) {
		char hex[LEAKSNAP_STORE_HASH_HEX];
		leaksnap_store_content_hash(snap, hex);
		out->id = sto_hash_text(h, hex);
		return;
	}
	h = sto_hash_u64(h, (uint64_t)out->pid);
	h = sto_hash_text(h, out->exe);
	if (*out->start) {
		out->id = sto_hash_text(h, out->start);
		return;
	}
	uint64_t base = 0;
	for (size_t i = 0; maps && i < leaksnap_maps_mapping_count(maps) && !base; i++) {
		const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(maps, i);
		if (!m->unloaded)
			base = m->start;
	}
	out->id = sto_hash_u64(h, base);
}

/* Frames and stacks --------------------------------------------------------------- */

/* A module of the maps: its identity (build ID, else path) hashed once. */
struct mod {
	uint64_t hash;
	char build_id[129];
};

/* A distinct PC of the snapshot: its frame. */
struct pcframe {
	uint64_t id;
	uint64_t rel_pc;
	const struct leaksnap_maps_module *mm; /* NULL: in no module */
	struct leaksnap_maps_location loc;
	const struct mod *mod;
	size_t record;             /* the first record that has it */
};

/* PC -> frame index, direct-mapped */
#define PC_CACHE_BITS 18
struct pccache {
	uint64_t pc;      /* the PC + 1; 0: empty */
	uint64_t id;      /* its frame's id */
};

struct ingest {
	struct pccache *cache;     /* 1 << PC_CACHE_BITS */
	const struct leaksnap_snapshot *snap;
	const struct leaksnap_maps *maps;
	struct kit_table pcs;      /* pc -> index + 1 in frames */
	struct kit_table mods;     /* maps module -> struct mod * */
	struct pcframe *frames;
	size_t nframes, cap;
	struct leaksnap_error *err;
	const char *name;
};

static int nomem(struct ingest *in)
{
	return kit_error(in->err, LEAKSNAP_ERR_NOMEM, in->name, "out of memory");
}

static const struct mod *mod_of(struct ingest *in, const struct leaksnap_maps_module *mm)
{
	void **slot = kit_table_slot(&in->mods, kit_key(mm), 0);
	if (!slot)
		return NULL;
	if (!*slot) {
		struct mod *m = malloc(sizeof(*m));
		if (!m)
			return NULL;
		uint8_t id[64];
		size_t len = leaksnap_maps_module_build_id(in->maps, mm, in->snap, id, sizeof(id));
		to_hex(id, len, m->build_id);
		m->hash = len ? sto_hash_text(sto_hash_text(STO_HASH_START, "build-id"), m->build_id)
			      : sto_hash_text(sto_hash_text(STO_HASH_START, "path"), mm->path);
		*slot = m;
	}
	return *slot;
}

/* The frame of @pc, first met in record @record: its index in
 * in->frames, or -1 when out of memory. */
static long frame_of(struct ingest *in, uint64_t pc, size_t record)
{
	void **slot = kit_table_slot(&in->pcs, pc, 0);
	if (!slot)
		return -1;
	if (*slot)
		return (long)((uintptr_t)*slot - 1);
	if (kit_grow((void **)&in->frames, &in->cap, in->nframes + 1, sizeof(*in->frames)))
		return -1;
	struct pcframe *f = &in->frames[in->nframes];
	memset(f, 0, sizeof(*f));
	f->record = record;
	if (in->maps && leaksnap_maps_locate(in->maps, pc, &f->loc) && f->loc.module) {
		f->mm = f->loc.module;
		f->mod = mod_of(in, f->mm);
		if (!f->mod)
			return -1;
		f->rel_pc = f->loc.rel_pc;
		f->id = sto_hash_u64(f->mod->hash, f->rel_pc);
	} else {
		f->rel_pc = pc;
		f->id = sto_hash_u64(sto_hash_text(STO_HASH_START, "none"), pc);
	}
	if (f->id == 0)
		f->id = 1; /* (0 means "none" to the cache) */
	*slot = (void *)(uintptr_t)(in->nframes + 1);
	return (long)in->nframes++;
}

static void ingest_free(struct ingest *in)
{
	kit_table_free(&in->pcs, false);
	kit_table_free(&in->mods, true);
	free(in->frames);
	free(in->cache);
}

/* The frames not stored yet: symbolized and put. */
static int put_new_frames(struct leaksnap_store *s, struct ingest *in,
			  const struct leaksnap_store_add_opts *o, size_t *added)
{
	size_t n = in->nframes;
	uint64_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	bool *known = calloc(n ? n : 1, sizeof(*known));
	struct leaksnap_store_symbol *syms = NULL;
	size_t nsyms = 0, capsyms = 0;
	int rc = -1;
	if (!ids || !known) {
		nomem(in);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = in->frames[i].id;
	if (leaksnap_store_frames_known(s, ids, n, known, in->err))
		goto out;
	*added = 0;
	size_t unknown = 0;
	for (size_t i = 0; i < n; i++)
		unknown += !known[i];
	if (unknown && o->prefetch && o->resolve) {
		/* the frames are indexed ahead, on threads: through a record
		 * holding each (the first that did), each record once */
		size_t *recs = malloc(unknown * sizeof(*recs)), nr = 0;
		if (!recs) {
			nomem(in);
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (!known[i] && (nr == 0 || recs[nr - 1] != in->frames[i].record))
				recs[nr++] = in->frames[i].record;
		o->prefetch(o->resolve_arg, recs, nr);
		free(recs);
	}
	for (size_t i = 0; i < n; i++) {
		const struct pcframe *f = &in->frames[i];
		if (known[i])
			continue;
		struct leaksnap_resolved res = {0};
		if (o->resolve && f->mm && o->resolve(o->resolve_arg, &f->loc, &res) != 0) {
			kit_error(in->err, LEAKSNAP_ERR_IO, in->name, "symbolizing stopped");
			goto out;
		}
		nsyms = 0;
		for (size_t k = 0; k < res.frame_count; k++) {
			if (kit_grow((void **)&syms, &capsyms, nsyms + 1, sizeof(*syms))) {
				nomem(in);
				goto out;
			}
			const struct leaksnap_sym_frame *y = &res.frames[k];
			syms[nsyms++] = (struct leaksnap_store_symbol){
				y->function ? y->function : "", y->file ? y->file : "", y->line,
				y->column, y->inlined};
		}
		struct leaksnap_store_frame row = {f->id, f->mm ? f->mm->path : "",
						   f->mod ? f->mod->build_id : "", f->rel_pc, syms,
						   nsyms};
		if (leaksnap_store_put_frames(s, &row, 1, in->err))
			goto out;
		(*added)++;
	}
	rc = 0;
out:
	free(ids);
	free(known);
	free(syms);
	return rc;
}

static uint64_t dump_number(const struct leaksnap_snapshot *snap, const char *source)
{
	const char *slash = strrchr(source, '/');
	struct kit_dump_name dn;
	if (kit_dump_name(slash ? slash + 1 : source, &dn) == KIT_DUMP_NUMBERED &&
	    leaksnap_snapshot_pid(snap) >= 0 && dn.pid == (uint64_t)leaksnap_snapshot_pid(snap))
		return dn.num;
	return 0;
}

/* A record's stack, put once the records are: its id and the record
 * whose frames it is. */
struct newstack {
	uint64_t id;
	size_t record;
};

static int cmp_newstack(const void *a, const void *b)
{
	/* the order of the store's keys: the ids as SQLite's signed integers */
	int64_t x = (int64_t)((const struct newstack *)a)->id;
	int64_t y = (int64_t)((const struct newstack *)b)->id;
	return x < y ? -1 : x > y;
}

/* The id of the frame of @pc (first met in record @record) through a
 * small direct-mapped cache: stacks share most of their PCs.  0 when out
 * of memory (no frame id is 0: see frame_of). */
static uint64_t frame_id_cached(struct ingest *in, uint64_t pc, size_t record)
{
	struct pccache *c = &in->cache[(pc * 0x9e3779b97f4a7c15ULL) >> (64 - PC_CACHE_BITS)];
	if (c->pc == pc + 1)
		return c->id;
	long k = frame_of(in, pc, record);
	if (k < 0)
		return 0;
	*c = (struct pccache){pc + 1, in->frames[k].id};
	return c->id;
}

/* The id of a stack of @n frames whose ids come one by one: a multiply-
 * rotate over the ids (themselves hashes), finalized. */
static uint64_t stack_start(uint32_t n)
{
	return kit_mix64(0x737461636b000000ULL ^ n);
}

static uint64_t stack_step(uint64_t h, uint64_t frame_id)
{
	h ^= frame_id;
	h = (h << 29) | (h >> 35);
	return h * 0x9e3779b97f4a7c15ULL;
}

/* The writer ---------------------------------------------------------------------
 * Rows are written on a thread of their own while the next ones are made:
 * hashing a million records and writing them overlap.  The store's
 * connection is the writer's alone until it is joined. */

#define BATCH_ROWS 4096
#define BATCHES 4

struct batch {
	bool stacks;            /* stacks, else records */
	size_t n;
	struct leaksnap_store_record rec[BATCH_ROWS];
	struct leaksnap_store_stack st[BATCH_ROWS];
	uint64_t *ids;          /* the stacks' frame ids */
	size_t nids, capids;
};

struct writer {
	struct leaksnap_store *s;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *full[BATCHES], *empty[BATCHES];
	size_t nfull, nempty, head;
	bool done, failed;
	struct leaksnap_error err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->nfull == 0 && !w->done)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->nfull == 0)
			break;
		struct batch *b = w->full[w->head];
		w->head = (w->head + 1) % BATCHES;
		w->nfull--;
		bool failed = w->failed;
		pthread_mutex_unlock(&w->mu);
		struct leaksnap_error e;
		int rc = 0;
		if (!failed && b->stacks)
			rc = leaksnap_store_put_stacks(w->s, b->st, b->n, &e);
		else if (!failed)
			rc = leaksnap_store_put_records(w->s, b->rec, b->n, &e);
		pthread_mutex_lock(&w->mu);
		if (rc && !w->failed) {
			w->failed = true;
			w->err = e;
		}
		w->empty[w->nempty++] = b;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int writer_start(struct writer *w, struct leaksnap_store *s, struct ingest *in)
{
	memset(w, 0, sizeof(*w));
	w->s = s;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	for (size_t i = 0; i < BATCHES; i++) {
		struct batch *b = calloc(1, sizeof(*b));
		if (!b)
			return nomem(in);
		w->empty[w->nempty++] = b;
	}
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
		return kit_error(in->err, LEAKSNAP_ERR_NOMEM, in->name, "cannot start a thread");
	w->started = true;
	return 0;
}

/* An empty batch to fill (waiting for one); NULL once the writer failed. */
static struct batch *writer_batch(struct writer *w, bool stacks)
{
	pthread_mutex_lock(&w->mu);
	while (w->nempty == 0 && !w->failed)
		pthread_cond_wait(&w->cv, &w->mu);
	struct batch *b = w->failed ? NULL : w->empty[--w->nempty];
	pthread_mutex_unlock(&w->mu);
	if (b) {
		b->stacks = stacks;
		b->n = 0;
		b->nids = 0;
	}
	return b;
}

static void writer_submit(struct writer *w, struct batch *b)
{
	pthread_mutex_lock(&w->mu);
	w->full[(w->head + w->nfull) % BATCHES] = b;
	w->nfull++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* Wait for every batch to be written and end the thread: 0, or -1 with
 * the first error the writer met in @err (unless @err has one). */
static int writer_finish(struct writer *w, struct leaksnap_error *err)
{
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->done = true;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	for (size_t i = 0; i < w->nempty; i++) {
		free(w->empty[i]->ids);
		free(w->empty[i]);
	}
	w->nempty = 0;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	if (!w->failed)
		return 0;
	if (err->code == LEAKSNAP_OK)
		*err = w->err;
	return -1;
}

/* A batch of stacks to the writer, their frame lists pointed into its
 * pool now that it no longer moves. */
static void submit_stacks(struct writer *w, struct batch *b)
{
	size_t at = 0;
	for (size_t k = 0; k < b->n; k++) {
		b->st[k].frames = b->ids + at;
		at += b->st[k].frame_count;
	}
	writer_submit(w, b);
}

/* The stacks of the records, each once, in key order (appended to the
 * table, not scattered through it). */
static int put_stacks(struct writer *w, struct ingest *in, struct newstack *v, size_t n,
		      size_t *nstacks)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_newstack);
	*nstacks = 0;
	struct batch *b = NULL;
	for (size_t i = 0; i < n; i++) {
		if (i && v[i].id == v[i - 1].id)
			continue;
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(in->snap,
										    v[i].record);
		if (b && (b->n == BATCH_ROWS || b->nids + r->frame_count > 8 * BATCH_ROWS)) {
			submit_stacks(w, b);
			b = NULL;
		}
		if (!b && !(b = writer_batch(w, true)))
			return -1;
		if (kit_grow((void **)&b->ids, &b->capids, b->nids + r->frame_count + 1,
			     sizeof(*b->ids))) {
			submit_stacks(w, b);
			return nomem(in);
		}
		uint64_t *ids = b->ids + b->nids;
		for (uint32_t f = 0; f < r->frame_count; f++)
			ids[f] = frame_id_cached(in, r->frames[f], v[i].record);
		b->nids += r->frame_count;
		b->st[b->n++] = (struct leaksnap_store_stack){v[i].id, NULL, r->frame_count};
		(*nstacks)++;
	}
	if (b)
		submit_stacks(w, b);
	return 0;
}

/* The records, with their stacks (put after them), through the writer. */
static int put_records(struct leaksnap_store *s, struct ingest *in, uint64_t snapshot_id,
		       size_t *nstacks)
{
	size_t n = leaksnap_snapshot_record_count(in->snap);
	struct newstack *stacks = malloc((n ? n : 1) * sizeof(*stacks));
	struct writer w;
	if (!stacks)
		return nomem(in);
	int rc = writer_start(&w, s, in);
	struct batch *b = NULL;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(in->snap, i);
		uint64_t h = stack_start(r->frame_count);
		for (uint32_t f = 0; f < r->frame_count; f++) {
			uint64_t id = frame_id_cached(in, r->frames[f], i);
			if (id == 0) {
				rc = nomem(in);
				break;
			}
			h = stack_step(h, id);
		}
		h = kit_mix64(h);
		stacks[i] = (struct newstack){h, i};
		if (!b && !(b = writer_batch(&w, false))) {
			rc = -1;
			break;
		}
		b->rec[b->n++] = (struct leaksnap_store_record){snapshot_id, i, h, r->size, r->count,
								r->unreachable, r->zygote};
		if (b->n == BATCH_ROWS) {
			writer_submit(&w, b);
			b = NULL;
		}
	}
	if (b)
		writer_submit(&w, b);
	if (rc == 0)
		rc = put_stacks(&w, in, stacks, n, nstacks);
	if (writer_finish(&w, in->err))
		rc = -1;
	free(stacks);
	return rc;
}

int leaksnap_store_add_snapshot(struct leaksnap_store *s, const struct leaksnap_snapshot *snap,
				const struct leaksnap_maps *maps, const char *source,
				const struct leaksnap_store_add_opts *opts,
				struct leaksnap_store_added *out, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	memset(out, 0, sizeof(*out));
	struct leaksnap_store_add_opts o;
	if (kit_opts(&o, sizeof(o), opts, "leaksnap_store_add_opts", err) != 0)
		return -1;
	struct leaksnap_store_snapshot row = {0};
	leaksnap_store_content_hash(snap, row.hash);
	row.id = hash_id(row.hash);
	out->snapshot_id = row.id;
	bool has = false;
	if (leaksnap_store_has_snapshot(s, row.id, &has, err))
		return -1;
	if (has) {
		out->duplicate = true;
		return 0;
	}
	struct leaksnap_store_run run;
	leaksnap_store_run_of(snap, maps, NULL, 0, &run);
	row.run_id = run.id;
	row.source = source;
	if (!leaksnap_snapshot_time_ns(snap, &row.time_ns))
		row.time_ns = 0;
	row.seq = dump_number(snap, source);
	row.total_bytes = leaksnap_snapshot_records_bytes(snap);
	row.allocations = leaksnap_snapshot_allocation_count(snap);
	row.record_count = leaksnap_snapshot_record_count(snap);
	row.has_reachability = leaksnap_snapshot_has_reachability(snap);
	row.unreachable_bytes = leaksnap_snapshot_unreachable_bytes(snap);
	row.unreachable_count = leaksnap_snapshot_unreachable_count(snap);
	row.sample_interval = leaksnap_snapshot_sample_interval(snap);
	leaksnap_snapshot_estimate(snap, &row.estimated_bytes, NULL, &row.estimated_unreachable_bytes,
				   NULL);
	struct ingest in = {.snap = snap, .maps = maps, .err = err, .name = source};
	int rc = -1;
	in.cache = calloc((size_t)1 << PC_CACHE_BITS, sizeof(*in.cache));
	if (!in.cache) {
		nomem(&in);
		goto out;
	}
	if (leaksnap_store_put_snapshot(s, &row, err) ||
	    put_records(s, &in, row.id, &out->stacks))
		goto out;
	if (put_new_frames(s, &in, &o, &out->new_frames))
		goto out;
	out->records = row.record_count;
	rc = 0;
out:
	ingest_free(&in);
	return rc;
}
