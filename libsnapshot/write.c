/* leaksnap: writing LEAKSNAP v1 files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kit_format.h"
#include "write_internal.h"

static int put_field(struct lsp_out *o, uint64_t v, unsigned width, bool be)
{
	uint8_t b[8];
	if (be)
		kit_store_be(b, width, v);
	else
		kit_store_le(b, width, v);
	return lsp_out_put(o, b, width);
}

/* The part of metadata value @v that is a module path, or NULL. */
static const char *meta_path(const char *key, const char *v)
{
	if (strcmp(key, "exe") == 0)
		return v;
	if (strcmp(key, "build_id") == 0) {
		const char *sp = strchr(v, ' ');
		return sp ? sp + 1 : NULL;
	}
	if (strcmp(key, "unloaded_build_id") == 0) { /* HEX INODE PATH */
		const char *sp = strchr(v, ' ');
		sp = sp ? strchr(sp + 1, ' ') : NULL;
		return sp ? sp + 1 : NULL;
	}
	if (strcmp(key, "unloaded") == 0) { /* a maps line */
		const char *end = v + strlen(v), *path = lsp_maps_line_path(v, end);
		return path < end ? path : NULL;
	}
	return NULL;
}

/* Metadata text as written: the snapshot's lines (module paths rewritten
 * by @opts), plus where it came from. */
static int meta_text(const struct leaksnap_snapshot *s,
		     const struct leaksnap_snapshot_save_opts *opts, char **text, size_t *len,
		     struct leaksnap_error *err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (f == NULL)
		return kit_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
	for (size_t i = 0; i < s->nmeta; i++) {
		const char *k = s->meta[i].key, *v = s->meta[i].value;
		if (strchr(k, '\n') || strchr(k, '=') || strchr(v, '\n')) {
			fclose(f);
			free(buf);
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "metadata key '%s' cannot be written as one line", k);
		}
		const char *path = meta_path(k, v);
		const struct leaksnap_snapshot_rewrite *r =
			path ? lsp_rewrite_match(opts, path, strlen(path), true) : NULL;
		if (r)
			fprintf(f, "%s=%.*s%s%s\n", k, (int)(path - v), v, r->new_prefix,
				path + strlen(r->old_prefix));
		else
			fprintf(f, "%s=%s\n", k, v);
	}
	if (s->format != LEAKSNAP_SNAPSHOT_FORMAT_LEAKSNAP &&
	    leaksnap_snapshot_meta_get(s, "source_format") == NULL)
		fprintf(f, "source_format=%s%s%s\n", leaksnap_snapshot_format_name(s->format),
			s->version[0] ? " " : "", s->version);
	if (fclose(f) != 0) {
		free(buf);
		return kit_error(err, LEAKSNAP_ERR_NOMEM, s->source, "out of memory");
	}
	*text = buf;
	*len = size;
	return 0;
}

static int write_body(const struct leaksnap_snapshot *s, struct lsp_out *o, unsigned ptr,
		      const struct leaksnap_snapshot_save_opts *opts, uint64_t maps_size,
		      const char *meta, size_t meta_len, struct leaksnap_error *err)
{
	bool be = opts->big_endian;
	unsigned bt = s->backtrace_size ? s->backtrace_size : 1;
	struct leaksnap_snapshot_header h = {
		.version = LEAKSNAP_VERSION,
		.pointer_size = (uint8_t)ptr,
		.flags = (uint8_t)((be ? LEAKSNAP_SNAPSHOT_FLAG_BIG_ENDIAN : 0) |
				   (s->has_reach ? LEAKSNAP_SNAPSHOT_FLAG_REACHABILITY : 0)),
		.backtrace_size = bt,
		.pid = s->pid > 0 && s->pid <= UINT32_MAX ? (uint32_t)s->pid : 0,
		.meta_size = (uint32_t)meta_len,
		.time_ns = s->has_time ? s->time_ns : 0,
		.total_memory = s->records_bytes,
		.info_size = (uint64_t)ptr * (2 + bt),
		.maps_size = maps_size,
	};
	h.records_size = h.info_size * s->nrecords;
	uint8_t hdr[LEAKSNAP_SNAPSHOT_HEADER_SIZE];
	leaksnap_snapshot_header_encode(&h, hdr);
	if (lsp_out_put(o, hdr, sizeof(hdr)))
		return -1;
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct leaksnap_snapshot_record *r = &s->records[i];
		uint64_t size = r->size | (r->zygote ? LSP_ZYGOTE_BIT : 0);
		if (put_field(o, size, ptr, be) || put_field(o, r->count, ptr, be))
			return -1;
		for (unsigned f = 0; f < bt; f++)
			if (put_field(o, f < r->frame_count ? r->frames[f] : 0, ptr, be))
				return -1;
	}
	if (lsp_rewrite_maps(s, opts, o, &maps_size, err))
		return -1;
	if (lsp_out_put(o, meta, meta_len))
		return -1;
	for (size_t i = 0; s->has_reach && i < s->nrecords; i++)
		if (put_field(o, s->records[i].unreachable, 4, be))
			return -1;
	return 0;
}

/* Check that every value fits the record format before creating anything. */
static int check_fits(const struct leaksnap_snapshot *s, unsigned ptr, struct leaksnap_error *err)
{
	uint64_t max = ptr == 8 ? UINT64_MAX : UINT32_MAX;
	for (size_t i = 0; i < s->nrecords; i++) {
		const struct leaksnap_snapshot_record *r = &s->records[i];
		if (r->unreachable > UINT32_MAX)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "record %zu: %llu unreachable allocations do not fit the "
					 "reachability section's 32-bit counts",
					 i + 1, (unsigned long long)r->unreachable);
		if (r->size & LSP_ZYGOTE_BIT)
			return kit_error(
				err, LEAKSNAP_ERR_FORMAT, s->source,
				"record %zu: size %llu needs bit 31 of the size field, which "
				"the format keeps for the zygote flag (sizes of 2 GiB or more "
				"cannot be written)",
				i + 1, (unsigned long long)r->size);
		if (r->size > max || r->count > max)
			return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
					 "record %zu (size %llu, count %llu) does not fit "
					 "%u-byte record fields",
					 i + 1, (unsigned long long)r->size,
					 (unsigned long long)r->count, ptr);
		for (uint32_t f = 0; f < r->frame_count; f++)
			if (r->frames[f] > max)
				return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source,
						 "frame 0x%llx does not fit %u-byte pointers",
						 (unsigned long long)r->frames[f], ptr);
	}
	if (s->backtrace_size > LSP_MAX_FRAMES)
		return kit_error(err, LEAKSNAP_ERR_FORMAT, s->source, "backtrace size %u > %u",
				 s->backtrace_size, LSP_MAX_FRAMES);
	return 0;
}

int leaksnap_snapshot_save(const struct leaksnap_snapshot *s, const char *path,
		  const struct leaksnap_snapshot_save_opts *opts, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_snapshot_save_opts known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_snapshot_save_opts", err) != 0)
		return -1;
	opts = &known;
	unsigned ptr = opts->pointer_size ? opts->pointer_size : s->pointer_size;
	if (ptr != 4 && ptr != 8)
		return kit_error(err, LEAKSNAP_ERR_USAGE, path, "pointer size must be 4 or 8");
	uint64_t maps_size;
	if (check_fits(s, ptr, err) || lsp_rewrite_check(opts, path, err) ||
	    lsp_rewrite_maps(s, opts, NULL, &maps_size, err))
		return -1;
	char *meta = NULL;
	size_t meta_len = 0;
	if (meta_text(s, opts, &meta, &meta_len, err))
		return -1;
	if (meta_len > UINT32_MAX) {
		free(meta);
		return kit_error(err, LEAKSNAP_ERR_LIMIT, path, "metadata larger than 4 GiB");
	}
	struct lsp_out o;
	int ret = lsp_out_open(&o, path, err);
	if (ret == 0)
		ret = lsp_out_close(&o, write_body(s, &o, ptr, opts, maps_size, meta, meta_len,
						   err) == 0);
	free(meta);
	return ret;
}
