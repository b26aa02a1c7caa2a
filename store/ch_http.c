/* leaksnap store: the ClickHouse backend's HTTP requests (ch_http.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch_http.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct ch_http *h = arg;
	size_t n = size * nmemb;
	h->got += n;
	if (h->status == 0)
		curl_easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &h->status);
	if (n > h->max - h->resp.n) {
		h->toobig = true;
		return 0;
	}
	chbuf_bytes(&h->resp, p, n);
	if (h->resp.nomem)
		return 0;
	if (!h->parse || h->status != 200)
		return n;
	const char *at = h->resp.p, *end = h->resp.p + h->resp.n;
	int rc = h->parse(h->ctx, &at, end);
	size_t used = (size_t)(at - h->resp.p);
	memmove(h->resp.p, at, h->resp.n - used);
	h->resp.n -= used;
	if (rc) {
		h->stopped = rc;
		return 0;
	}
	return n;
}

int ch_http_init(struct ch_http *h, const struct ch_target *t, struct leaksnap_error *err)
{
	memset(h, 0, sizeof(*h));
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK || !(h->c = curl_easy_init()))
		return kit_error(err, LEAKSNAP_ERR_NOMEM, t->name, "cannot start libcurl");
	/* (no "Expect: 100-continue": the body follows its headers at once) */
	h->headers = curl_slist_append(NULL, "Expect:");
	if (!h->headers)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, t->name, "out of memory");
	curl_easy_setopt(h->c, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(h->c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h->c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->c, CURLOPT_CONNECTTIMEOUT, CH_CONNECT_SECONDS);
	/* a server that stops answering, or drips: an error, not a hang */
	h->max = CH_ANSWER_MAX;
	h->stall = CH_STALL_SECONDS;
	const char *e = getenv("LEAKSNAP_CH_MAX_ANSWER");
	if (e && *e) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(e, &end, 10);
		if (*end || errno || v == 0 || v > SIZE_MAX / 2 || *e == '-')
			return kit_error(err, LEAKSNAP_ERR_USAGE, t->name,
					 "LEAKSNAP_CH_MAX_ANSWER: not a number of bytes: '%s'", e);
		h->max = (size_t)v;
	}
	e = getenv("LEAKSNAP_CH_STALL");
	if (e && *e) {
		char *end;
		errno = 0;
		long v = strtol(e, &end, 10);
		if (*end || errno || v <= 0 || v > 86400)
			return kit_error(err, LEAKSNAP_ERR_USAGE, t->name,
					 "LEAKSNAP_CH_STALL: not a number of seconds (1 to 86400): '%s'", e);
		h->stall = v;
	}
	curl_easy_setopt(h->c, CURLOPT_LOW_SPEED_LIMIT, CH_SLOW_BYTES);
	curl_easy_setopt(h->c, CURLOPT_LOW_SPEED_TIME, h->stall);
	curl_easy_setopt(h->c, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h->c, CURLOPT_PROTOCOLS_STR, "http");
	/* (the proxy of the environment is not the store's way to its server) */
	curl_easy_setopt(h->c, CURLOPT_PROXY, "");
	if (t->url.user) {
		curl_easy_setopt(h->c, CURLOPT_USERNAME, t->url.user);
		curl_easy_setopt(h->c, CURLOPT_PASSWORD, t->url.password);
	}
	return 0;
}

void ch_http_free(struct ch_http *h)
{
	if (h->c)
		curl_easy_cleanup(h->c);
	curl_slist_free_all(h->headers);
	chbuf_free(&h->resp);
	memset(h, 0, sizeof(*h));
}

/* The request failed: why, in the store's terms. */
static int fail(struct ch_http *h, const struct ch_target *t, CURLcode rc, const char *what,
		struct leaksnap_error *err)
{
	if (h->toobig)
		return kit_error(err, LEAKSNAP_ERR_IO, t->name,
				 "the server's answer is larger than %zu bytes (LEAKSNAP_CH_MAX_ANSWER)",
				 h->max);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && h->status && h->status != 200)) {
		long os = 0;
		curl_easy_getinfo(h->c, CURLINFO_OS_ERRNO, &os);
		switch (rc) {
		case CURLE_COULDNT_CONNECT:
			return kit_error(err, LEAKSNAP_ERR_IO, t->name, "cannot reach the server: %s",
					 os ? strerror((int)os) : h->errbuf);
		case CURLE_COULDNT_RESOLVE_HOST:
			return kit_error(err, LEAKSNAP_ERR_IO, t->name,
					 "cannot reach the server: no such host '%s'", t->url.host);
		case CURLE_OPERATION_TIMEDOUT: {
			curl_off_t connected = 0; /* (microseconds; 0: not connected) */
			curl_easy_getinfo(h->c, CURLINFO_CONNECT_TIME_T, &connected);
			if (h->got || connected > 0)
				return kit_error(err, LEAKSNAP_ERR_IO, t->name,
						 "the server stopped answering (under %ld bytes a second "
						 "for %ld s)", CH_SLOW_BYTES, h->stall);
			return kit_error(err, LEAKSNAP_ERR_IO, t->name,
					 "cannot reach the server: timed out");
		}
		case CURLE_OUT_OF_MEMORY:
			return kit_error(err, LEAKSNAP_ERR_NOMEM, t->name, "out of memory");
		case CURLE_WRITE_ERROR:
			if (h->resp.nomem)
				return kit_error(err, LEAKSNAP_ERR_NOMEM, t->name, "out of memory");
			break;
		default: break;
		}
		return kit_error(err, LEAKSNAP_ERR_IO, t->name, "%s: %s", what,
				 *h->errbuf ? h->errbuf : curl_easy_strerror(rc));
	}
	char text[200];
	int code = ch_error_text(h->resp.p, h->resp.n, text, sizeof(text));
	switch (code) {
	case CH_UNKNOWN_DATABASE:
		return kit_error(err, LEAKSNAP_ERR_IO, t->name, "no database '%s' on the server",
				 t->url.database);
	case CH_READONLY:
		return kit_error(err, LEAKSNAP_ERR_IO, t->name,
				 "read-only: cannot write the store (%s)", text);
	case 192: case 193: case 194: case 195: case 516:
		return kit_error(err, LEAKSNAP_ERR_IO, t->name, "cannot log in: %s", text);
	case 0:
		return kit_error(err, LEAKSNAP_ERR_IO, t->name,
				 "%s: not a ClickHouse server's answer (HTTP %ld)", what, h->status);
	default:
		return kit_error(err, LEAKSNAP_ERR_IO, t->name, "%s: %s", what, text);
	}
}

static int request(struct ch_http *h, const struct ch_target *t, const char *sql,
		   const char *body, size_t len, const uint64_t *ids, size_t nids,
		   const char *what, struct leaksnap_error *err)
{
	h->resp.n = 0;
	h->resp.nomem = false;
	h->toobig = false;
	h->status = 0;
	h->stopped = 0;
	h->got = 0;
	h->errbuf[0] = '\0';
	char *q = curl_easy_escape(h->c, sql, 0);
	struct chbuf url = {0};
	struct chbuf idtext = {0};
	curl_mime *mime = NULL;
	int rc = -1;
	if (!q)
		goto nomem;
	chbuf_str(&url, t->base);
	chbuf_str(&url, "&query=");
	chbuf_str(&url, q);
	curl_free(q);
	if (ids) {
		chbuf_str(&url, "&ids_structure=id%20UInt64&ids_format=TabSeparated");
		for (size_t i = 0; i < nids; i++) {
			ch_tsv_u64(&idtext, ids[i]);
			ch_tsv_end(&idtext, true);
		}
		curl_mimepart *part;
		if (idtext.nomem || !(mime = curl_mime_init(h->c)) || !(part = curl_mime_addpart(mime)) ||
		    curl_mime_name(part, "ids") != CURLE_OK ||
		    curl_mime_filename(part, "ids.tsv") != CURLE_OK ||
		    curl_mime_data(part, idtext.p ? idtext.p : "", idtext.n) != CURLE_OK)
			goto nomem;
	}
	if (url.nomem)
		goto nomem;
	curl_easy_setopt(h->c, CURLOPT_URL, url.p);
	if (mime) {
		curl_easy_setopt(h->c, CURLOPT_MIMEPOST, mime);
	} else {
		curl_easy_setopt(h->c, CURLOPT_POST, 1L);
		curl_easy_setopt(h->c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(h->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	}
	CURLcode cc = curl_easy_perform(h->c);
	/* A connection kept alive that the server closed as it was reused
	 * (its keep-alive timeout): once more, on a new one, when nothing
	 * came back (a write sent twice is a row twice, which readers skip). */
	if ((cc == CURLE_GOT_NOTHING || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR) &&
	    h->got == 0) {
		h->errbuf[0] = '\0';
		cc = curl_easy_perform(h->c);
	}
	if (mime)
		curl_easy_setopt(h->c, CURLOPT_MIMEPOST, NULL);
	if (h->status == 0)
		curl_easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &h->status);
	if (cc == CURLE_WRITE_ERROR && h->stopped) {
		rc = h->stopped;
		goto out;
	}
	if (cc != CURLE_OK || h->status != 200) {
		fail(h, t, cc, what, err);
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	rc = kit_error(err, LEAKSNAP_ERR_NOMEM, t->name, "out of memory");
out:
	curl_mime_free(mime);
	chbuf_free(&url);
	chbuf_free(&idtext);
	return rc;
}

int ch_http_query(struct ch_http *h, const struct ch_target *t, const char *sql,
		  const char *body, size_t len, const uint64_t *ids, size_t nids,
		  const char *what, struct leaksnap_error *err)
{
	h->parse = NULL;
	return request(h, t, sql, body, len, ids, nids, what, err);
}

int ch_http_stream(struct ch_http *h, const struct ch_target *t, const char *sql,
		   const uint64_t *ids, size_t nids,
		   int (*parse)(void *ctx, const char **p, const char *end), void *ctx,
		   const char *what, struct leaksnap_error *err)
{
	h->parse = parse;
	h->ctx = ctx;
	int rc = request(h, t, sql, NULL, 0, ids, nids, what, err);
	h->parse = NULL;
	if (rc == 0 && h->resp.n)
		return kit_error(err, LEAKSNAP_ERR_IO, t->name, "%s: the answer was cut short", what);
	return rc;
}
