/* leaksnap store: opening a store on its engine, and the interface every
 * engine implements, checked once here (a run begun before a put, one run
 * at a time). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

struct leaksnap_store {
	struct sto_backend *b;
	bool in_run;
};

enum leaksnap_store_engine leaksnap_store_engine_of(const char *target)
{
	return strncasecmp(target, "clickhouse://", 13) == 0 ? LEAKSNAP_STORE_CLICKHOUSE
							      : LEAKSNAP_STORE_SQLITE;
}

struct leaksnap_store *leaksnap_store_open(const char *target,
					   const struct leaksnap_store_open_opts *opts,
					   struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_store_open_opts o;
	if (kit_opts(&o, sizeof(o), opts, "leaksnap_store_open_opts", err) != 0)
		return NULL;
	if (!*target) {
		kit_error(err, LEAKSNAP_ERR_USAGE, target, "no store named");
		return NULL;
	}
	if (leaksnap_store_engine_of(target) == LEAKSNAP_STORE_CLICKHOUSE) {
		kit_error(err, LEAKSNAP_ERR_USAGE, target,
			  "ClickHouse stores are not supported by this build yet");
		return NULL;
	}
	struct leaksnap_store *s = calloc(1, sizeof(*s));
	if (!s) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, target, "out of memory");
		return NULL;
	}
	s->b = sto_sqlite_open(target, &o, err);
	if (!s->b) {
		free(s);
		return NULL;
	}
	return s;
}

void leaksnap_store_close(struct leaksnap_store *s)
{
	if (!s)
		return;
	s->b->ops->close(s->b);
	free(s);
}

enum leaksnap_store_engine leaksnap_store_engine(const struct leaksnap_store *s)
{
	return s->b->engine;
}

unsigned leaksnap_store_schema_version(const struct leaksnap_store *s)
{
	return s->b->version;
}

static int no_run(struct leaksnap_store *s, bool want, struct leaksnap_error *err)
{
	if (s->in_run == want)
		return 0;
	return kit_error(err, LEAKSNAP_ERR_USAGE, s->b->name,
			 want ? "no run begun" : "a run is already begun");
}

int leaksnap_store_run_begin(struct leaksnap_store *s, const struct leaksnap_store_run *run,
			     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (no_run(s, false, err))
		return -1;
	uint64_t ingest_id = 0;
	if (getrandom(&ingest_id, sizeof(ingest_id), 0) != (ssize_t)sizeof(ingest_id)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ingest_id = kit_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
				      (uint64_t)getpid() << 17);
	}
	if (s->b->ops->run_begin(s->b, run, ingest_id, err)) {
		s->b->ops->run_abort(s->b);
		return -1;
	}
	s->in_run = true;
	return 0;
}

int leaksnap_store_run_commit(struct leaksnap_store *s, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (no_run(s, true, err))
		return -1;
	s->in_run = false;
	return s->b->ops->run_commit(s->b, err);
}

void leaksnap_store_run_abort(struct leaksnap_store *s)
{
	if (!s || !s->in_run)
		return;
	s->in_run = false;
	s->b->ops->run_abort(s->b);
}

int leaksnap_store_has_snapshot(struct leaksnap_store *s, uint64_t id, bool *has,
				struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->has_snapshot(s->b, id, has, err);
}

int leaksnap_store_frames_known(struct leaksnap_store *s, const uint64_t *ids, size_t n,
				bool *known, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->frames_known(s->b, ids, n, known, err);
}

int leaksnap_store_put_snapshot(struct leaksnap_store *s, const struct leaksnap_store_snapshot *snap,
				struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_snapshot(s->b, snap, err);
}

int leaksnap_store_put_stacks(struct leaksnap_store *s, const struct leaksnap_store_stack *v,
			      size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_stacks(s->b, v, n, err);
}

int leaksnap_store_put_frames(struct leaksnap_store *s, const struct leaksnap_store_frame *v,
			      size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_frames(s->b, v, n, err);
}

int leaksnap_store_put_records(struct leaksnap_store *s, const struct leaksnap_store_record *v,
			       size_t n, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return no_run(s, true, err) ? -1 : s->b->ops->put_records(s->b, v, n, err);
}

int leaksnap_store_runs(struct leaksnap_store *s, leaksnap_store_run_fn fn, void *arg,
			struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->runs(s->b, fn, arg, err);
}

int leaksnap_store_snapshots(struct leaksnap_store *s, uint64_t run_id,
			     leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->snapshots(s->b, run_id, fn, arg, err);
}

int leaksnap_store_records(struct leaksnap_store *s, uint64_t snapshot_id,
			   leaksnap_store_record_fn fn, void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->records(s->b, snapshot_id, fn, arg, err);
}

int leaksnap_store_stack(struct leaksnap_store *s, uint64_t id, leaksnap_store_stack_fn fn,
			 void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->stack(s->b, id, fn, arg, err);
}

int leaksnap_store_frame(struct leaksnap_store *s, uint64_t id, leaksnap_store_frame_fn fn,
			 void *arg, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	return s->b->ops->frame(s->b, id, fn, arg, err);
}

int leaksnap_store_row_count(struct leaksnap_store *s, const char *table, uint64_t *n,
			     struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	const struct sto_table *t = sto_table_named(table);
	if (!t)
		return kit_error(err, LEAKSNAP_ERR_USAGE, s->b->name, "no table '%s' in the schema",
				 table);
	return s->b->ops->row_count(s->b, t, n, err);
}
