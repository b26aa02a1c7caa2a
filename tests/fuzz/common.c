/* leaksnap fuzz harnesses: checks shared by the snapshot harnesses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <leaksnap/diff.h>
#include <leaksnap/maps.h>

#include "fuzz.h"

_Noreturn void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "fuzz: %s:%d: check failed: %s\n", file, line, what);
	abort();
}

#define STALE "stale error from an earlier call"

void fuzz_stale_error(struct leaksnap_error *err)
{
	memset(err, 0, sizeof(*err));
	err->code = LEAKSNAP_ERR_IO;
	snprintf(err->source, sizeof(err->source), "stale");
	snprintf(err->text, sizeof(err->text), STALE);
}

void fuzz_check_error(const struct leaksnap_error *err)
{
	FUZZ_CHECK(strcmp(err->text, STALE) != 0);
	FUZZ_CHECK(err->code > LEAKSNAP_OK && err->code < LEAKSNAP_ERR__COUNT);
	FUZZ_CHECK(err->text[0] != '\0');
	FUZZ_CHECK(memchr(err->text, '\0', sizeof(err->text)) != NULL);
	FUZZ_CHECK(memchr(err->source, '\0', sizeof(err->source)) != NULL);
	char buf[LEAKSNAP_ERROR_SOURCE_MAX + LEAKSNAP_ERROR_TEXT_MAX + 64];
	leaksnap_error_format(err, buf, sizeof(buf));
	FUZZ_CHECK(strchr(buf, '\n') == NULL);
}

/* At most this many records get their PCs located: enough to reach every
 * path, few enough that one large input stays fast. */
#define LOCATE_RECORDS 64

static void check_maps(const struct leaksnap_snapshot *s, const struct leaksnap_maps *m)
{
	size_t nm = leaksnap_maps_mapping_count(m), nmod = leaksnap_maps_module_count(m);
	for (size_t i = 0; i < nm; i++) {
		const struct leaksnap_maps_mapping *mp = leaksnap_maps_mapping(m, i);
		FUZZ_CHECK(mp->start < mp->end);
		FUZZ_CHECK(i == 0 || leaksnap_maps_mapping(m, i - 1)->end <= mp->start);
		FUZZ_CHECK(mp->module == LEAKSNAP_MAPS_NONE || mp->module < nmod);
		FUZZ_CHECK(leaksnap_maps_lookup(m, mp->start) == mp);
		FUZZ_CHECK(leaksnap_maps_lookup(m, mp->end - 1) == mp);
	}
	uint8_t id[64];
	for (size_t i = 0; i < nmod; i++) {
		const struct leaksnap_maps_module *mod = leaksnap_maps_module(m, i);
		FUZZ_CHECK(mod->mapping_count >= 1);
		FUZZ_CHECK(mod->first_mapping + mod->mapping_count <= nm);
		FUZZ_CHECK(mod->path != NULL);
		size_t n = leaksnap_snapshot_build_id(s, mod->path, id, sizeof(id));
		FUZZ_CHECK(n <= 64);
	}
	size_t n = leaksnap_snapshot_record_count(s);
	for (size_t i = 0; i < n && i < LOCATE_RECORDS; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		for (uint32_t k = 0; k < r->frame_count; k++) {
			struct leaksnap_maps_location loc;
			bool hit = leaksnap_maps_locate(m, r->frames[k], &loc);
			FUZZ_CHECK(hit == (loc.mapping != NULL));
			if (hit)
				FUZZ_CHECK(loc.mapping->start <= r->frames[k] &&
					   r->frames[k] < loc.mapping->end);
		}
	}
}

/* The "unloaded=" metadata lines join the maps, as the CLI joins them
 * (cli/util.c); a malformed one leaves the maps as they were. */
static void add_unloaded(const struct leaksnap_snapshot *s, struct leaksnap_maps *m)
{
	size_t before = leaksnap_maps_mapping_count(m);
	struct leaksnap_error err;
	fuzz_stale_error(&err);
	long added = leaksnap_maps_add_snapshot_unloaded(m, s, NULL, &err);
	if (added < 0) {
		fuzz_check_error(&err);
		FUZZ_CHECK(leaksnap_maps_mapping_count(m) == before);
		return;
	}
	FUZZ_CHECK(err.code == LEAKSNAP_OK);
	size_t marked = 0;
	for (size_t i = 0; i < leaksnap_maps_mapping_count(m); i++)
		marked += leaksnap_maps_mapping(m, i)->unloaded;
	FUZZ_CHECK(marked == (size_t)added);
}

/* A diff of the snapshot against itself: nothing grows, but every PC is
 * turned into a frame and every record into a stack. */
static void diff_self(const struct leaksnap_snapshot *s, const struct leaksnap_maps *m,
		      enum leaksnap_diff_by by)
{
	struct leaksnap_error err;
	LEAKSNAP_OPTS(leaksnap_diff_options, o, .by = by, .zygote = LEAKSNAP_DIFF_ZYGOTE_INCLUDE);
	fuzz_stale_error(&err);
	struct leaksnap_diff *d = leaksnap_diff_new(&o, 2, &err);
	FUZZ_CHECK(d != NULL);
	for (int i = 0; i < 2; i++)
		FUZZ_CHECK(leaksnap_diff_add_snapshot(d, s, m, &err) == 0);
	FUZZ_CHECK(leaksnap_diff_rank(d, &err) == 0);
	FUZZ_CHECK(leaksnap_diff_suspect_count(d) == 0);
	FUZZ_CHECK(leaksnap_diff_stopped_count(d) == 0);
	const struct leaksnap_diff_snapshot *ds = leaksnap_diff_snapshot(d, 1);
	FUZZ_CHECK(ds->bytes == leaksnap_snapshot_records_bytes(s));
	FUZZ_CHECK(ds->count == leaksnap_snapshot_allocation_count(s));
	leaksnap_diff_free(d);
}

void fuzz_snapshot(const uint8_t *data, size_t size, const struct leaksnap_snapshot_open_opts *opts)
{
	struct leaksnap_error err;
	fuzz_stale_error(&err);
	struct leaksnap_snapshot *s = leaksnap_snapshot_open_memory(data, size, "fuzz", opts, &err);
	if (s == NULL) {
		fuzz_check_error(&err);
		return;
	}
	FUZZ_CHECK(err.code == LEAKSNAP_OK);
	FUZZ_CHECK(leaksnap_snapshot_pointer_size(s) == 4 ||
		   leaksnap_snapshot_pointer_size(s) == 8);
	FUZZ_CHECK(leaksnap_snapshot_format_name(leaksnap_snapshot_format(s)) != NULL);

	/* The totals are the records' sums. */
	size_t n = leaksnap_snapshot_record_count(s);
	uint64_t bytes = 0, count = 0, ubytes = 0, ucount = 0;
	bool reach = leaksnap_snapshot_has_reachability(s);
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		uint64_t b;
		FUZZ_CHECK(r->count >= 1);
		/* unreachable blocks: only with the section, never more than the count */
		FUZZ_CHECK(r->unreachable <= r->count);
		FUZZ_CHECK(reach || r->unreachable == 0);
		ubytes += r->size * r->unreachable; /* <= size * count, checked below */
		ucount += r->unreachable;
		FUZZ_CHECK(r->frame_count <= 256);
		FUZZ_CHECK(r->frame_count == 0 || r->frames != NULL);
		FUZZ_CHECK(!__builtin_mul_overflow(r->size, r->count, &b));
		FUZZ_CHECK(!__builtin_add_overflow(bytes, b, &bytes));
		FUZZ_CHECK(!__builtin_add_overflow(count, r->count, &count));
	}
	FUZZ_CHECK(bytes == leaksnap_snapshot_records_bytes(s));
	FUZZ_CHECK(count == leaksnap_snapshot_allocation_count(s));
	FUZZ_CHECK(ubytes == leaksnap_snapshot_unreachable_bytes(s));
	FUZZ_CHECK(ucount == leaksnap_snapshot_unreachable_count(s));

	/* The top records, largest first. */
	size_t top[8];
	size_t nt = leaksnap_snapshot_records_top(s, 8, top);
	FUZZ_CHECK(nt == (n < 8 ? n : 8));
	for (size_t i = 0; i < nt; i++) {
		FUZZ_CHECK(top[i] < n);
		if (i > 0) {
			const struct leaksnap_snapshot_record *a = leaksnap_snapshot_record(
				s, top[i - 1]);
			const struct leaksnap_snapshot_record *b = leaksnap_snapshot_record(s,
											    top[i]);
			FUZZ_CHECK(a->size * a->count >= b->size * b->count);
		}
	}

	for (size_t i = 0; i < leaksnap_snapshot_meta_count(s); i++) {
		const struct leaksnap_snapshot_meta *mt = leaksnap_snapshot_meta(s, i);
		FUZZ_CHECK(mt->key != NULL && mt->value != NULL);
		FUZZ_CHECK(leaksnap_snapshot_meta_get(s, mt->key) != NULL);
	}
	for (size_t i = 0; i < leaksnap_snapshot_warning_count(s); i++)
		FUZZ_CHECK(leaksnap_snapshot_warning(s, i)[0] != '\0');

	/* The maps it carries, as `leaksnap show` and leakdiff parse them. */
	size_t len;
	unsigned long line;
	uint64_t off;
	const char *text = leaksnap_snapshot_maps(s, &len, &line, &off);
	struct leaksnap_maps *m = NULL;
	if (text != NULL) {
		fuzz_stale_error(&err);
		m = leaksnap_maps_parse(text, len, "fuzz", line ? line : 1, off, &err);
		if (m == NULL)
			fuzz_check_error(&err);
		else
			add_unloaded(s, m);
		if (m != NULL)
			check_maps(s, m);
	}
	diff_self(s, m, (enum leaksnap_diff_by)(size % 4));
	leaksnap_maps_free(m);
	leaksnap_snapshot_close(s);
}
