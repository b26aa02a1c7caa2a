/* leaksnap store: the ClickHouse backend's HTTP requests (libcurl), each
 * a query in the URL and its data in the body; errors in the store's
 * terms, one line each. */
#ifndef LEAKSNAP_CH_HTTP_H
#define LEAKSNAP_CH_HTTP_H

#include <curl/curl.h>

#include "ch_codec.h"
#include "store_internal.h"

/* One connection (kept alive between requests); a thread's own. */
struct ch_http {
	CURL *c;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	struct chbuf resp;      /* the last answer (buffered requests) */
	/* streaming: rows parsed as they arrive */
	int (*parse)(void *ctx, const char **p, const char *end);
	void *ctx;
	int stopped;            /* what parse returned to stop */
	size_t got;             /* bytes of the answer received */
	long status;
	bool toobig;            /* the answer passed max */
	size_t max;             /* the most one answer may hold (bytes) */
	long stall;             /* seconds under CH_SLOW_BYTES a second: stalled */
};

/* The bounds of one request: an answer held whole (or a row of one read as
 * it comes) may hold CH_ANSWER_MAX bytes (LEAKSNAP_CH_MAX_ANSWER, bytes,
 * changes it); a server that sends (or takes) fewer than CH_SLOW_BYTES a
 * second for CH_STALL_SECONDS (LEAKSNAP_CH_STALL, seconds) has stopped
 * answering; CH_CONNECT_SECONDS to connect. */
#define CH_ANSWER_MAX ((size_t)1 << 30)
#define CH_SLOW_BYTES 1024L
#define CH_STALL_SECONDS 60L
#define CH_CONNECT_SECONDS 10L

/* Where a store's requests go, and what its errors name. */
struct ch_target {
	const char *name;       /* the URL as given */
	char *base;             /* http://HOST:PORT/?database=DB */
	struct ch_url url;
};

int ch_http_init(struct ch_http *h, const struct ch_target *t, struct leaksnap_error *err);
void ch_http_free(struct ch_http *h);

/* Run @sql (its data @body of @len bytes, or none), the answer in
 * h->resp.  With @ids (@nids of them) the query can read them as the
 * table ids (one column id UInt64).  0, or -1 with @err filled saying
 * @what failed. */
int ch_http_query(struct ch_http *h, const struct ch_target *t, const char *sql,
		  const char *body, size_t len, const uint64_t *ids, size_t nids,
		  const char *what, struct leaksnap_error *err);

/* As ch_http_query, the answer's bytes given to @parse as they come:
 * @parse consumes whole rows from *p (advancing it) and returns 0 for
 * more, or non-zero to stop (returned).  Bytes left at the end: the
 * answer was cut short. */
int ch_http_stream(struct ch_http *h, const struct ch_target *t, const char *sql,
		   const uint64_t *ids, size_t nids,
		   int (*parse)(void *ctx, const char **p, const char *end), void *ctx,
		   const char *what, struct leaksnap_error *err);

/* Server error codes the store tells apart. */
#define CH_UNKNOWN_TABLE 60
#define CH_UNKNOWN_DATABASE 81
#define CH_READONLY 164

#endif
