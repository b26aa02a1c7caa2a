/* leakdiff --db DB (--run ID | --where KEY=VALUE...): the snapshots of a run
 * kept by 'leaksnap store', diffed as if they were its dump files.
 *
 * Nothing of the diff is done here: each stored snapshot is made into a
 * LEAKSNAP dump in memory (libsnapshot reads it as it reads a file) and
 * added to the diff like any other, and the diff symbolizes its frames
 * from the store's symbols (leaksnap_diff_options.symbols), which were
 * made when the frames were stored.  What the store does not keep is made
 * up: the PCs (each module is given a place of its own, so that a PC is
 * that place plus the frame's offset in the module, and the diff finds
 * that offset again), and the frame slots of a record (one more than the
 * longest stack: no stack reads as cut).  A sampled snapshot's dump says
 * its interval (sample_interval=), as the hook's did: the diff estimates
 * from it, and refuses a run of two intervals, as with the files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <leaksnap/diff.h>

#include "cli.h"
#include "diff_store.h"
#include "kit.h"
#include "kit_table.h"
#include "store.h"

#define PAGE 0x1000ull
#define NONE_MODULE SIZE_MAX

/* A stored frame: its module (index into modules, NONE_MODULE: none), its
 * offset, its symbols (strings owned). */
struct sframe {
	size_t module;
	uint64_t rel_pc;
	struct leaksnap_sym_frame *sym;
	size_t nsym;
};

struct smodule {
	char *path, *build_id; /* build_id: hex, "" none */
	uint64_t size;         /* past its largest offset, in pages */
	uint64_t base;
};

struct sstack {
	uint32_t n;
	struct sframe *frames[]; /* innermost first */
};

struct srecord {
	uint64_t stack_id, size, count, unreachable;
	bool zygote;
};

struct ssnap {
	struct leaksnap_store_snapshot s;
	char *source;
	struct srecord *recs;
	size_t nrecs, caprecs;
};

struct diff_store {
	const char *db;
	struct leaksnap_store *st;
	uint64_t run_id;
	int64_t pid;
	char *start, *exe, *cmdline;
	struct ssnap *snaps;
	size_t nsnaps, capsnaps;
	struct smodule *mods;
	size_t nmods, capmods;
	struct smodule **order; /* the modules by (path, build ID): their places' order */
	struct kit_table frames;  /* frame id -> struct sframe * */
	struct kit_table stacks;  /* stack id -> struct sstack * */
	struct kit_table answers; /* (module + 1, rel_pc) -> struct sframe * */
	unsigned slots;           /* frame slots per record */
	uint64_t raw_top;         /* the largest PC in no module */
	struct ssnap *cur;        /* the snapshot whose records are read */
	bool nomem;
};

static int nomem(const char *db)
{
	return cli_fail(db, "out of memory");
}

/* Choosing the run ----------------------------------------------------------------- */

struct choose {
	struct diff_store *ds;
	uint64_t want;            /* --run's id; with want_set */
	bool want_set;
	const struct leaksnap_store_label *where;
	size_t nwhere;
	size_t matched;
	bool nomem;
};

static int on_run(void *arg, const struct leaksnap_store_run *run)
{
	struct choose *c = arg;
	if (c->want_set && run->id != c->want)
		return 0;
	for (size_t i = 0; i < c->nwhere; i++) {
		size_t k = 0;
		while (k < run->label_count && strcmp(run->labels[k].key, c->where[i].key) != 0)
			k++;
		if (k == run->label_count || strcmp(run->labels[k].value, c->where[i].value) != 0)
			return 0;
	}
	/* runs come oldest first: the last match is the newest */
	struct diff_store *ds = c->ds;
	free(ds->start);
	free(ds->exe);
	free(ds->cmdline);
	ds->run_id = run->id;
	ds->pid = run->pid;
	ds->start = strdup(run->start);
	ds->exe = strdup(run->exe);
	ds->cmdline = strdup(run->cmdline);
	c->matched++;
	if (!ds->start || !ds->exe || !ds->cmdline) {
		c->nomem = true;
		return 1;
	}
	return 0;
}

/* "build=4711 test=login" into @buf (for messages). */
static void where_text(const struct leaksnap_store_label *where, size_t n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		int k = snprintf(buf + len, size - len, "%s%s=%s", i ? " " : "", where[i].key,
				 where[i].value);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

/* Reading the run --------------------------------------------------------------------- */

static int on_snapshot(void *arg, const struct leaksnap_store_snapshot *s)
{
	struct diff_store *ds = arg;
	if (kit_grow((void **)&ds->snaps, &ds->capsnaps, ds->nsnaps + 1, sizeof(*ds->snaps))) {
		ds->nomem = true;
		return 1;
	}
	struct ssnap *x = &ds->snaps[ds->nsnaps];
	memset(x, 0, sizeof(*x));
	x->s = *s;
	if (!(x->source = strdup(s->source))) {
		ds->nomem = true;
		return 1;
	}
	x->s.source = x->source;
	ds->nsnaps++;
	return 0;
}

static int on_record(void *arg, const struct leaksnap_store_record *r)
{
	struct diff_store *ds = arg;
	struct ssnap *x = ds->cur;
	void **slot = kit_table_slot(&ds->stacks, r->stack_id, 0);
	if (!slot || kit_grow((void **)&x->recs, &x->caprecs, x->nrecs + 1, sizeof(*x->recs))) {
		ds->nomem = true;
		return 1;
	}
	x->recs[x->nrecs++] = (struct srecord){r->stack_id, r->size, r->count, r->unreachable,
					       r->zygote};
	return 0;
}

/* The module of @path and @build_id (its index), added if new. */
static size_t module_of(struct diff_store *ds, const char *path, const char *build_id)
{
	for (size_t i = 0; i < ds->nmods; i++)
		if (strcmp(ds->mods[i].path, path) == 0 &&
		    strcasecmp(ds->mods[i].build_id, build_id) == 0)
			return i;
	if (kit_grow((void **)&ds->mods, &ds->capmods, ds->nmods + 1, sizeof(*ds->mods)))
		return NONE_MODULE;
	struct smodule *m = &ds->mods[ds->nmods];
	*m = (struct smodule){strdup(path), strdup(build_id), 0, 0};
	if (!m->path || !m->build_id) {
		free(m->path);
		free(m->build_id);
		return NONE_MODULE;
	}
	return ds->nmods++;
}

static void sframe_free(struct sframe *f)
{
	for (size_t i = 0; f && i < f->nsym; i++) {
		free((char *)(uintptr_t)f->sym[i].function);
		free((char *)(uintptr_t)f->sym[i].file);
	}
	if (f)
		free(f->sym);
	free(f);
}

static int on_frame(void *arg, const struct leaksnap_store_frame *fr)
{
	struct diff_store *ds = arg;
	void **slot = kit_table_find(&ds->frames, fr->id, 0);
	if (!slot || *slot)
		return 0;
	struct sframe *f = calloc(1, sizeof(*f));
	if (!f)
		goto nomem;
	f->module = NONE_MODULE;
	f->rel_pc = fr->rel_pc;
	if (*fr->module && (f->module = module_of(ds, fr->module, fr->build_id)) == NONE_MODULE)
		goto nomem;
	if (fr->symbol_count && !(f->sym = calloc(fr->symbol_count, sizeof(*f->sym))))
		goto nomem;
	for (size_t i = 0; i < fr->symbol_count; i++) {
		const struct leaksnap_store_symbol *s = &fr->symbols[i];
		f->sym[i] = (struct leaksnap_sym_frame){.line = s->line, .column = s->column,
							.inlined = s->inlined};
		f->nsym = i + 1;
		if ((*s->function && !(f->sym[i].function = strdup(s->function))) ||
		    (*s->file && !(f->sym[i].file = strdup(s->file))))
			goto nomem;
	}
	*slot = f;
	if (f->module == NONE_MODULE) {
		if (f->rel_pc > ds->raw_top)
			ds->raw_top = f->rel_pc;
	} else {
		struct smodule *m = &ds->mods[f->module];
		uint64_t end = (f->rel_pc / PAGE + 1) * PAGE;
		m->size = end > m->size ? end : m->size;
		void **a = kit_table_slot(&ds->answers, f->module + 1, f->rel_pc);
		if (!a)
			goto nomem;
		*a = f;
	}
	return 0;
nomem:
	sframe_free(f);
	ds->nomem = true;
	return 1;
}

/* Modules (pointers to) by path, then build ID. */
static int module_cmp(const void *a, const void *b)
{
	const struct smodule *x = *(const struct smodule *const *)a;
	const struct smodule *y = *(const struct smodule *const *)b;
	int c = strcmp(x->path, y->path);
	return c ? c : strcasecmp(x->build_id, y->build_id);
}

/* The ids of table @t whose values are not there yet, into *@ids. */
static size_t missing(const struct kit_table *t, uint64_t **ids)
{
	size_t n = 0;
	*ids = malloc((t->count ? t->count : 1) * sizeof(**ids));
	for (size_t i = 0; *ids && t->e && i <= t->mask; i++)
		if (t->e[i].used && !t->e[i].v)
			(*ids)[n++] = t->e[i].a;
	return n;
}

static int on_stack(void *arg, const struct leaksnap_store_stack *st)
{
	struct diff_store *ds = arg;
	void **slot = kit_table_find(&ds->stacks, st->id, 0);
	if (!slot || *slot)
		return 0;
	struct sstack *x = malloc(sizeof(*x) + st->frame_count * sizeof(x->frames[0]));
	if (!x) {
		ds->nomem = true;
		return 1;
	}
	x->n = st->frame_count;
	for (uint32_t i = 0; i < st->frame_count; i++) {
		/* (the frames themselves come next, by id) */
		void **f = kit_table_slot(&ds->frames, st->frames[i], 0);
		if (!f) {
			free(x);
			ds->nomem = true;
			return 1;
		}
		x->frames[i] = (struct sframe *)(uintptr_t)st->frames[i]; /* an id for now */
	}
	*slot = x;
	if (st->frame_count + 1 > ds->slots)
		ds->slots = st->frame_count + 1;
	return 0;
}

/* Every record's stack and every stack's frames, read at once; then each
 * module's place. */
static int read_stacks(struct diff_store *ds)
{
	struct leaksnap_error err;
	uint64_t *ids;
	size_t n = missing(&ds->stacks, &ids);
	if (!ids)
		return nomem(ds->db);
	int rc = n ? leaksnap_store_stacks(ds->st, ids, n, on_stack, ds, &err) : 0;
	free(ids);
	if (ds->nomem)
		return nomem(ds->db);
	if (rc)
		return cli_fail_error(&err);
	n = missing(&ds->stacks, &ids);
	free(ids);
	if (n)
		return cli_fail(ds->db, "a record's stack is not in the store: not a complete store");
	n = missing(&ds->frames, &ids);
	if (!ids)
		return nomem(ds->db);
	rc = n ? leaksnap_store_frames(ds->st, ids, n, on_frame, ds, &err) : 0;
	free(ids);
	if (ds->nomem)
		return nomem(ds->db);
	if (rc)
		return cli_fail_error(&err);
	n = missing(&ds->frames, &ids);
	free(ids);
	if (n)
		return cli_fail(ds->db, "a stack's frame is not in the store: not a complete store");
	/* the stacks' frame ids become their frames */
	for (size_t i = 0; ds->stacks.e && i <= ds->stacks.mask; i++) {
		struct sstack *x = ds->stacks.e[i].used ? ds->stacks.e[i].v : NULL;
		for (uint32_t k = 0; x && k < x->n; k++)
			x->frames[k] = *kit_table_find(&ds->frames, (uint64_t)(uintptr_t)x->frames[k], 0);
	}
	/* the modules' places: above every PC in no module, a gap between,
	 * in the order of (path, build ID), not of the frames' arrival (which
	 * is the engine's: the PCs given out are the same on every engine) */
	struct smodule **order = ds->order = malloc((ds->nmods ? ds->nmods : 1) * sizeof(*order));
	if (!order)
		return nomem(ds->db);
	for (size_t i = 0; i < ds->nmods; i++)
		order[i] = &ds->mods[i];
	if (ds->nmods > 1)
		qsort(order, ds->nmods, sizeof(*order), module_cmp);
	uint64_t at = 0x7f0000000000ull;
	if (ds->raw_top >= at)
		at = (ds->raw_top / PAGE + 1) * PAGE + 0x100000;
	for (size_t i = 0; i < ds->nmods; i++) {
		order[i]->base = at;
		at += order[i]->size + 0x100000;
	}
	if (ds->slots > 256)
		return cli_fail(ds->db, "a stored stack has more than 255 frames: not a stack a dump holds");
	ds->slots = ds->slots ? ds->slots : 1;
	return 0;
}

int diff_store_open(struct diff_store **out, const char *db, const char *run,
		    const struct leaksnap_store_label *where, size_t nwhere)
{
	*out = NULL;
	struct diff_store *ds = calloc(1, sizeof(*ds));
	if (!ds)
		return nomem(db);
	ds->db = db;
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_store_open_opts, so, .no_create = true);
	if (!(ds->st = leaksnap_store_open(db, &so, &err))) {
		cli_fail_error(&err);
		goto fail;
	}
	struct choose c = {ds, 0, run != NULL, where, nwhere, 0, false};
	if (run) {
		char *end;
		size_t len = strlen(run);
		if (len > 2 && run[0] == '0' && (run[1] == 'x' || run[1] == 'X'))
			run += 2, len -= 2;
		c.want = strtoull(run, &end, 16);
		if (!len || len > 16 || *end || strspn(run, "0123456789abcdefABCDEF") != len) {
			cli_usage_error("diff", "--run needs a run's id, 16 hex digits as 'leaksnap "
				       "history --by run' prints it, not '%s'", run);
			goto fail;
		}
	}
	if (leaksnap_store_runs(ds->st, on_run, &c, &err) != 0 && !c.nomem) {
		cli_fail_error(&err);
		goto fail;
	}
	if (c.nomem) {
		nomem(db);
		goto fail;
	}
	char wt[512];
	where_text(where, nwhere, wt, sizeof(wt));
	if (!c.matched) {
		if (run)
			cli_fail(db, "no run %016llx in the store", (unsigned long long)c.want);
		else
			cli_fail(db, "no run with %s in the store", wt);
		goto fail;
	}
	if (c.matched > 1) /* (only --where matches several) */
		cli_warn(db, "%zu runs with %s: comparing the newest, run %016llx (--run ID chooses "
			 "another)", c.matched, wt, (unsigned long long)ds->run_id);
	if (leaksnap_store_snapshots(ds->st, ds->run_id, on_snapshot, ds, &err) != 0 &&
	    !ds->nomem) {
		cli_fail_error(&err);
		goto fail;
	}
	if (ds->nomem) {
		nomem(db);
		goto fail;
	}
	if (ds->nsnaps < 2) {
		cli_fail(db, "run %016llx has %zu snapshot%s: leakdiff compares two or more",
			 (unsigned long long)ds->run_id, ds->nsnaps, ds->nsnaps == 1 ? "" : "s");
		goto fail;
	}
	if (ds->nsnaps > LEAKSNAP_DIFF_MAX_SNAPSHOTS) {
		cli_fail(db, "run %016llx has %zu snapshots: leakdiff compares at most %d",
			 (unsigned long long)ds->run_id, ds->nsnaps, LEAKSNAP_DIFF_MAX_SNAPSHOTS);
		goto fail;
	}
	for (size_t i = 0; i < ds->nsnaps; i++) {
		ds->cur = &ds->snaps[i];
		int rc = leaksnap_store_records(ds->st, ds->cur->s.id, on_record, ds, &err);
		if (ds->nomem) {
			nomem(db);
			goto fail;
		}
		if (rc) {
			cli_fail_error(&err);
			goto fail;
		}
	}
	if (read_stacks(ds))
		goto fail;
	*out = ds;
	return 0;
fail:
	diff_store_free(ds);
	return -1;
}

size_t diff_store_count(const struct diff_store *ds)
{
	return ds->nsnaps;
}

void diff_store_free(struct diff_store *ds)
{
	if (!ds)
		return;
	for (size_t i = 0; i < ds->nsnaps; i++) {
		free(ds->snaps[i].source);
		free(ds->snaps[i].recs);
	}
	free(ds->snaps);
	for (size_t i = 0; ds->frames.e && i <= ds->frames.mask; i++)
		if (ds->frames.e[i].used)
			sframe_free(ds->frames.e[i].v);
	kit_table_free(&ds->frames, false);
	kit_table_free(&ds->stacks, true);
	kit_table_free(&ds->answers, false);
	for (size_t i = 0; i < ds->nmods; i++) {
		free(ds->mods[i].path);
		free(ds->mods[i].build_id);
	}
	free(ds->mods);
	free(ds->order);
	free(ds->start);
	free(ds->exe);
	free(ds->cmdline);
	leaksnap_store_close(ds->st);
	free(ds);
}

/* A snapshot as a dump ------------------------------------------------------------------ */

struct buf {
	char *p;
	size_t len, cap;
	bool nomem;
};

static void put(struct buf *b, const void *data, size_t n)
{
	if (b->nomem || kit_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->nomem = true;
		return;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* @v as @width bytes, little-endian, at @p; returns the end. */
static uint8_t *le(uint8_t *p, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + width;
}

static void put_u64(struct buf *b, uint64_t v, unsigned width)
{
	uint8_t x[8];
	put(b, x, (size_t)(le(x, v, width) - x));
}

static void put_text(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_text(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->nomem = true;
		return;
	}
	put(b, s, (size_t)n);
	free(s);
}

/* Snapshot @x as a LEAKSNAP v1 dump (little-endian, 8-byte pointers) at
 * @b: its records with the stored stacks at the modules' places, those
 * places as maps, the run's metadata and each module's build ID. */
static void dump_of(const struct diff_store *ds, const struct ssnap *x, struct buf *b)
{
	struct buf recs = {0}, maps = {0}, meta = {0};
	size_t info = 8 * (2 + (size_t)ds->slots);
	uint8_t *p = x->nrecs ? malloc(x->nrecs * info) : NULL;
	recs = (struct buf){(char *)p, x->nrecs * info, x->nrecs * info, x->nrecs && !p};
	for (size_t i = 0; p && i < x->nrecs; i++) {
		const struct srecord *r = &x->recs[i];
		const struct sstack *st = *kit_table_find(&ds->stacks, r->stack_id, 0);
		p = le(p, r->size | (r->zygote ? (uint64_t)1 << 31 : 0), 8);
		p = le(p, r->count, 8);
		for (uint32_t k = 0; k < ds->slots; k++) {
			const struct sframe *f = k < st->n ? st->frames[k] : NULL;
			p = le(p, !f ? 0 : f->module == NONE_MODULE
				? f->rel_pc : ds->mods[f->module].base + f->rel_pc, 8);
		}
	}
	for (size_t i = 0; i < ds->nmods; i++) {
		const struct smodule *m = ds->order[i];
		put_text(&maps, "%llx-%llx r-xp 00000000 00:00 0 %s\n", (unsigned long long)m->base,
			 (unsigned long long)(m->base + m->size), m->path);
	}
	if (*ds->exe)
		put_text(&meta, "exe=%s\n", ds->exe);
	if (*ds->cmdline)
		put_text(&meta, "cmdline=%s\n", ds->cmdline);
	if (*ds->start)
		put_text(&meta, "process_start=%s\n", ds->start);
	if (x->s.sample_interval) /* (the diff's estimates, and its refusal to mix) */
		put_text(&meta, "sample_interval=%llu\n", (unsigned long long)x->s.sample_interval);
	for (size_t i = 0; i < ds->nmods; i++)
		if (*ds->order[i]->build_id)
			put_text(&meta, "build_id=%s %s\n", ds->order[i]->build_id, ds->order[i]->path);
	if (x->s.has_reachability)
		for (size_t i = 0; i < x->nrecs; i++)
			put_u64(&meta, x->recs[i].unreachable, 4);
	struct leaksnap_snapshot_header h = {
		.version = 1,
		.pointer_size = 8,
		.flags = x->s.has_reachability ? LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY : 0,
		.backtrace_size = ds->slots,
		.pid = ds->pid > 0 && ds->pid <= UINT32_MAX ? (uint32_t)ds->pid : 0,
		.meta_size = (uint32_t)(meta.len - (x->s.has_reachability ? 4 * x->nrecs : 0)),
		.time_ns = x->s.time_ns,
		.total_memory = x->s.total_bytes,
		.info_size = 8 * (2 + (uint64_t)ds->slots),
		.records_size = recs.len,
		.maps_size = maps.len,
	};
	uint8_t head[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
	leaksnap_snapshot_header_encode(&h, head);
	put(b, head, sizeof(head));
	put(b, recs.p, recs.len);
	put(b, maps.p, maps.len);
	put(b, meta.p, meta.len);
	b->nomem |= recs.nomem || maps.nomem || meta.nomem;
	free(recs.p);
	free(maps.p);
	free(meta.p);
}

int diff_store_add(struct diff_store *ds, struct leaksnap_diff *d, size_t i)
{
	const struct ssnap *x = &ds->snaps[i];
	struct buf b = {0};
	dump_of(ds, x, &b);
	if (b.nomem) {
		free(b.p);
		return nomem(ds->db);
	}
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, oo, .keep_duplicates = true);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(b.p, b.len, x->source, &oo,
								    &err);
	free(b.p);
	if (!s)
		return cli_fail_error(&err);
	struct leaksnap_maps *maps = NULL;
	int rc = cli_snapshot_maps(s, NULL, &maps);
	if (rc == 0 && leaksnap_diff_add_snapshot(d, s, maps, &err) != 0)
		rc = cli_fail_error(&err);
	leaksnap_maps_free(maps);
	leaksnap_snapshot_close(s);
	return rc;
}

/* Symbols ------------------------------------------------------------------------------- */

int diff_store_symbols(void *arg, const char *path, const uint8_t *build_id, size_t build_id_len,
		       uint64_t rel_pc, struct leaksnap_resolved *out, struct leaksnap_error *err)
{
	(void)err;
	struct diff_store *ds = arg;
	char hex[2 * 64 + 1];
	for (size_t i = 0; i < build_id_len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
	hex[2 * (build_id_len < 64 ? build_id_len : 64)] = '\0';
	*out = (struct leaksnap_resolved){NULL, NULL, 0};
	for (size_t m = 0; m < ds->nmods; m++)
		if (strcmp(ds->mods[m].path, path) == 0 &&
		    strcasecmp(ds->mods[m].build_id, hex) == 0) {
			void **slot = kit_table_find(&ds->answers, m + 1, rel_pc);
			const struct sframe *f = slot ? *slot : NULL;
			if (f) {
				out->frames = f->sym;
				out->frame_count = f->nsym;
			}
			break;
		}
	return 0;
}
