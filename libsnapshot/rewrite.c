/* leaksnap: path prefix rewriting for the writers (--rewrite-prefix). */
#include <string.h>

#include "write_internal.h"

int lsp_rewrite_check(const struct leaksnap_snapshot_save_opts *opts, const char *source,
		      struct leaksnap_error *err)
{
	for (size_t i = 0; i < opts->rewrite_count; i++) {
		struct leaksnap_snapshot_rewrite *r = &opts->rewrites[i];
		if (r->old_prefix == NULL || r->old_prefix[0] == '\0' || r->new_prefix == NULL)
			return kit_error(err, LEAKSNAP_ERR_USAGE, source,
					 "a rewrite rule needs a non-empty old prefix");
		if (strpbrk(r->old_prefix, "\r\n") || strpbrk(r->new_prefix, "\r\n"))
			return kit_error(err, LEAKSNAP_ERR_USAGE, source,
					 "a rewrite prefix cannot hold a line break");
		/* a maps path never starts with a blank: the parser skips them */
		if (r->new_prefix[0] == ' ' || r->new_prefix[0] == '\t')
			return kit_error(err, LEAKSNAP_ERR_USAGE, source,
					 "the new prefix '%s' starts with a blank: no maps path "
					 "can", r->new_prefix);
		r->matched = 0;
	}
	return 0;
}

struct leaksnap_snapshot_rewrite *lsp_rewrite_match(const struct leaksnap_snapshot_save_opts *opts,
					   const char *path, size_t len, bool count)
{
	for (size_t i = 0; i < opts->rewrite_count; i++) {
		struct leaksnap_snapshot_rewrite *r = &opts->rewrites[i];
		size_t n = strlen(r->old_prefix);
		if (n <= len && memcmp(path, r->old_prefix, n) == 0) {
			if (count)
				r->matched++;
			return r;
		}
	}
	return NULL;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Where the path of the maps line [@p, @end) starts: after the five fields
 * (range, perms, offset, dev, inode) and the padding; @end when it has
 * none.  The line's grammar is mapsparse's business: here it is only
 * split on blanks. */
const char *lsp_maps_line_path(const char *p, const char *end)
{
	while (p < end && blank(*p))
		p++;
	for (int field = 0; field < 5 && p < end; field++) {
		while (p < end && !blank(*p))
			p++;
		while (p < end && blank(*p))
			p++;
	}
	return p;
}

static int emit(struct lsp_out *o, uint64_t *size, const char *p, size_t n)
{
	*size += n;
	return o ? lsp_out_put(o, p, n) : 0;
}

int lsp_rewrite_maps(const struct leaksnap_snapshot *s,
		     const struct leaksnap_snapshot_save_opts *opts, struct lsp_out *o,
		     uint64_t *size, struct leaksnap_error *err)
{
	*size = 0;
	if (s->maps == NULL)
		return 0;
	const char *p = s->maps, *end = s->maps + s->maps_len;
	unsigned long line = 1; /* of the maps text */
	if (opts->rewrite_count == 0)
		return emit(o, size, p, s->maps_len);
	for (; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end, *next = nl ? nl + 1 : end;
		const char *text_end = stop > p && stop[-1] == '\r' ? stop - 1 : stop;
		const char *path = lsp_maps_line_path(p, text_end);
		struct leaksnap_snapshot_rewrite *r =
			lsp_rewrite_match(opts, path, (size_t)(text_end - path), o == NULL);
		if (r == NULL) {
			if (emit(o, size, p, (size_t)(next - p)))
				return -1;
		} else {
			size_t old = strlen(r->old_prefix), neu = strlen(r->new_prefix);
			const char *rest = path + old;
			if (o == NULL && neu == 0 &&
			    (rest == text_end || *rest == ' ' || *rest == '\t'))
				return kit_error(err, LEAKSNAP_ERR_USAGE, s->source,
						 "rewriting '%s' would leave the path of "
						 "maps line %lu empty or starting with a blank",
						 r->old_prefix, line);
			if (emit(o, size, p, (size_t)(path - p)) ||
			    emit(o, size, r->new_prefix, neu) ||
			    emit(o, size, path + old, (size_t)(next - path - old)))
				return -1;
		}
		p = next;
	}
	return 0;
}
