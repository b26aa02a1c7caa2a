/* leaksnap store: what the ClickHouse backend's files share (clickhouse.c
 * opens a store and writes it, ch_read.c reads it). */
#ifndef LEAKSNAP_CH_INTERNAL_H
#define LEAKSNAP_CH_INTERNAL_H

#include <pthread.h>

#include "ch_http.h"
#include "kit_table.h"
#include "store_internal.h"

/* A body is sent once it holds this many bytes. */
#define CH_BODY_BYTES (16u << 20)
/* A body this big is sent before its keys turn back. */
#define CH_SORTED_BYTES (1u << 20)
/* Bodies waiting for the senders at most (then the writer waits). */
#define CH_QUEUE 2
/* Bodies sent at once, each on a connection and a thread of its own (the
 * server writes each on one core). */
#define CH_SENDERS 2
/* Bodies kept for reuse at most. */
#define CH_POOL 6

struct job {
	int table;
	struct chbuf body;
};

struct sender {
	pthread_t thread[CH_SENDERS];
	struct ch_http h[CH_SENDERS];
	size_t started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job q[CH_QUEUE];
	size_t head, n;
	size_t busy;               /* bodies being sent */
	/* bodies sent, kept to be filled again (their pages are there: a new
	 * 16 MiB body would be page faults all along) */
	struct chbuf pool[CH_POOL];
	size_t npool;
	bool quit, failed;
	struct leaksnap_error err;
};

struct worker {
	struct ch *c;
	size_t i;
};

struct ch {
	struct sto_backend base;
	struct ch_target t;
	struct ch_http h;          /* the caller's connection */
	struct sender snd;
	struct worker workers[CH_SENDERS];
	char *insert[STO_TABLE_COUNT]; /* each table's INSERT ... FORMAT ... */
	struct chbuf buf[STO_TABLE_COUNT];
	uint64_t last_key[STO_TABLE_COUNT];
	bool in_run, run_stored;
	uint64_t run_id, ingest_id, snapshots;
	uint64_t *snaps;           /* the snapshots put in this run */
	size_t nsnaps, capsnaps;
	struct kit_table frames_put; /* frame ids sent by this process */
};

/* The tables sent as RowBinary (numbers alone), the others TabSeparated. */
static inline bool ch_binary(int table)
{
	return table == STO_STACKS || table == STO_RECORDS || table == STO_GROWTH;
}

/* Rows of complete ingests. */
#define COMPLETE "ingest_id IN (SELECT ingest_id FROM ingests)"

/* The rows of the run so far sent and written (clickhouse.c). */
int ch_sync_rows(struct ch *c, struct leaksnap_error *err);
/* Run the SELECT @sql (reading @ids as the table ids when not NULL) and
 * give each row of its TabSeparated answer to @row with exactly @nf
 * fields: 0, -1 (@err filled), or what @row returned to stop. */
int ch_select_tsv(struct ch *c, const char *sql, const uint64_t *ids, size_t nids, int nf,
		  int (*row)(struct ch *c, char **f, void *ctx), void *ctx,
		  struct leaksnap_error *err);
/* The one number @sql answers. */
int ch_query_u64(struct ch *c, const char *sql, const uint64_t *ids, size_t nids, uint64_t *v,
		 struct leaksnap_error *err);
/* A value the store cannot hold: -1 with @err filled. */
int ch_bad_value(struct ch *c, struct leaksnap_error *err);

/* The reads (ch_read.c), as struct sto_ops has them. */
int ch_runs(struct sto_backend *b, leaksnap_store_run_fn fn, void *arg,
	    struct leaksnap_error *err);
int ch_snapshots(struct sto_backend *b, uint64_t run_id, bool with_current,
		 leaksnap_store_snapshot_fn fn, void *arg, struct leaksnap_error *err);
int ch_records(struct sto_backend *b, uint64_t snapshot_id, leaksnap_store_record_fn fn,
	       void *arg, struct leaksnap_error *err);
int ch_stacks(struct sto_backend *b, const uint64_t *ids, size_t n, leaksnap_store_stack_fn fn,
	      void *arg, struct leaksnap_error *err);
int ch_frames(struct sto_backend *b, const uint64_t *ids, size_t n, leaksnap_store_frame_fn fn,
	      void *arg, struct leaksnap_error *err);
int ch_growth(struct sto_backend *b, leaksnap_store_growth_fn fn, void *arg,
	      struct leaksnap_error *err);
int ch_row_count(struct sto_backend *b, const struct sto_table *t, uint64_t *n,
		 struct leaksnap_error *err);

#endif
