/* leaksnap export: building and writing a pprof profile (profile.proto through
 * protobuf-c, gzip through zlib).
 *
 * A protobuf message is the concatenation of its fields, and a repeated
 * field may be written one element at a time, so the profile is written in
 * pieces: each sample, as it is added, is packed by protobuf-c as a Sample
 * message and written as one element of Profile.sample (its field key and
 * length in front); at the end every mapping, location and function the
 * same way, then a Profile message holding only the header fields, then
 * the string table.  A million-record snapshot thus never becomes a
 * million Sample messages in memory.  Readers take the fields in any
 * order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <leaksnap/export.h>

#include "internal.h"
#include "profile.pb-c.h"

/* Field numbers of Profile (export/profile.proto). */
enum {
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
};

#define MAX_SAMPLE_TYPES 8
#define OUT_CHUNK 65536

struct str {
	char *s;
	size_t len;
};

struct loc {
	uint64_t key, mapping, address;
	size_t first_line, nlines;
};

struct line {
	uint64_t function;
	int64_t line, column;
};

struct func {
	int64_t name, system_name, filename, start_line;
};

struct map {
	uint64_t start, limit, offset;
	int64_t filename, build_id;
	bool symbolized;
};

/* An open-addressing table of indexes (value + 1; 0 = empty slot). */
struct index {
	size_t *slots;
	size_t mask;
};

struct leaksnap_export_pprof {
	FILE *out;
	z_stream z;
	gz_header gz_head;
	bool z_ready;
	unsigned char *zout;
	char error[160];

	struct str *strs;
	size_t nstrs, capstrs;
	struct index str_index;

	Perftools__Profiles__ValueType types[MAX_SAMPLE_TYPES];
	size_t ntypes;
	Perftools__Profiles__ValueType period_type;
	int64_t period, default_type, time_ns, duration_ns;
	int64_t main_file; /* its mappings are written first (0: none) */
	int64_t *comments;
	size_t ncomments;

	struct map *maps;
	size_t nmaps, capmaps;
	struct loc *locs;
	size_t nlocs, caplocs;
	/* keyed locations: open addressing on the key, the key kept in the
	 * slot (one cache line a lookup); id 0 = empty slot */
	struct loc_slot {
		uint64_t key, id;
	} *loc_slots;
	size_t loc_mask, nkeyed;
	uint64_t no_frames; /* the location of stacks without frames, 0: none yet */
	struct line *lines;
	size_t nlines, caplines;
	struct func *funcs;
	size_t nfuncs, capfuncs;
	struct index func_index;

	/* scratch for packing */
	uint8_t *buf;
	size_t capbuf;
	uint64_t *ids;
	int64_t *vals;
	size_t capids, capvals;
	uint64_t samples;
};

static int fail_nomem(struct leaksnap_export_pprof *p)
{
	if (!p->error[0])
		snprintf(p->error, sizeof(p->error), "out of memory");
	return -1;
}

static int fail_errno(struct leaksnap_export_pprof *p, int e)
{
	if (!p->error[0])
		snprintf(p->error, sizeof(p->error), "%s", strerror(e ? e : EIO));
	return -1;
}

int leaksnap_export_pprof_error(const struct leaksnap_export_pprof *p, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (!p->error[0])
		return kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	return kit_error(err, LEAKSNAP_ERR_IO, NULL, "%s", p->error);
}

/* The index table: slots hold value + 1.  @hash_of(p, value) rehashes. */
typedef uint64_t (*hash_fn)(const struct leaksnap_export_pprof *p, size_t value);

static int index_grow(struct leaksnap_export_pprof *p, struct index *ix, size_t count,
		      hash_fn hash_of)
{
	size_t cap = ix->slots ? ix->mask + 1 : 0;
	if ((count + 1) * 2 <= cap)
		return 0;
	size_t ncap = cap ? cap * 2 : 1024;
	size_t *slots = calloc(ncap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		if (!ix->slots[i])
			continue;
		size_t j = (size_t)hash_of(p, ix->slots[i] - 1) & (ncap - 1);
		while (slots[j])
			j = (j + 1) & (ncap - 1);
		slots[j] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->mask = ncap - 1;
	return 0;
}

/* Strings ----------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len)
{
	return kit_mix64(kit_fnv1a(KIT_FNV1A_START, s, len));
}

static uint64_t str_hash(const struct leaksnap_export_pprof *p, size_t i)
{
	return hash_bytes(p->strs[i].s, p->strs[i].len);
}

/* The index of @s (NULL: "") in the string table, added when new.  Text
 * that is not UTF-8 is written with U+FFFD for each bad byte (proto3
 * strings are UTF-8).  -1 when out of memory. */
static int64_t intern(struct leaksnap_export_pprof *p, const char *s)
{
	if (!s || !*s)
		return 0;
	size_t len = strlen(s);
	char *fixed = NULL;
	if (!kit_utf8_valid(s, len)) {
		if (!(fixed = kit_utf8_fixed(s, &len)))
			return fail_nomem(p);
		s = fixed;
	}
	uint64_t h = hash_bytes(s, len);
	size_t j = (size_t)h & p->str_index.mask;
	while (p->str_index.slots[j]) {
		const struct str *e = &p->strs[p->str_index.slots[j] - 1];
		if (e->len == len && memcmp(e->s, s, len) == 0) {
			free(fixed);
			return (int64_t)(p->str_index.slots[j] - 1);
		}
		j = (j + 1) & p->str_index.mask;
	}
	char *copy = fixed ? fixed : malloc(len + 1);
	if (!copy || kit_grow((void **)&p->strs, &p->capstrs, p->nstrs + 1, sizeof(*p->strs))) {
		free(copy);
		return fail_nomem(p);
	}
	if (!fixed)
		memcpy(copy, s, len + 1);
	p->strs[p->nstrs] = (struct str){copy, len};
	p->str_index.slots[j] = ++p->nstrs;
	if (index_grow(p, &p->str_index, p->nstrs, str_hash))
		return fail_nomem(p);
	return (int64_t)(p->nstrs - 1);
}

/* Setup ------------------------------------------------------------------- */

struct leaksnap_export_pprof *leaksnap_export_pprof_new(FILE *out, const char *comment,
							struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_export_pprof *p = calloc(1, sizeof(*p));
	if (!p)
		goto fail;
	p->out = out;
	p->zout = malloc(OUT_CHUNK);
	/* string_table[0] is "" */
	p->strs = calloc(16, sizeof(*p->strs));
	p->capstrs = 16;
	if (!p->zout || !p->strs || index_grow(p, &p->str_index, 0, str_hash) ||
	    index_grow(p, &p->func_index, 0, NULL))
		goto fail;
	p->strs[0].s = calloc(1, 1);
	if (!p->strs[0].s)
		goto fail;
	p->nstrs = 1;
	/* gzip: deflate with a gzip header and trailer (windowBits + 16) */
	if (deflateInit2(&p->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto fail;
	p->z_ready = true;
	/* the gzip header's comment says who wrote the file: leakdiff --pprof
	 * replaces only a growth profile of ours */
	p->gz_head.comment = (Bytef *)(uintptr_t)comment;
	p->gz_head.os = 3; /* Unix */
	if (deflateSetHeader(&p->z, &p->gz_head) != Z_OK)
		goto fail;
	p->z.next_out = p->zout;
	p->z.avail_out = OUT_CHUNK;
	return p;
fail:
	leaksnap_export_pprof_free(p);
	kit_error(err, LEAKSNAP_ERR_NOMEM, NULL, "out of memory");
	return NULL;
}

void leaksnap_export_pprof_free(struct leaksnap_export_pprof *p)
{
	if (!p)
		return;
	if (p->z_ready)
		deflateEnd(&p->z);
	free(p->zout);
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i].s);
	free(p->strs);
	free(p->str_index.slots);
	free(p->comments);
	free(p->maps);
	free(p->locs);
	free(p->loc_slots);
	free(p->lines);
	free(p->funcs);
	free(p->func_index.slots);
	free(p->buf);
	free(p->ids);
	free(p->vals);
	free(p);
}

int leaksnap_export_pprof_sample_type(struct leaksnap_export_pprof *p, const char *type,
				      const char *unit)
{
	if (p->ntypes == MAX_SAMPLE_TYPES) {
		snprintf(p->error, sizeof(p->error), "more than %d sample types", MAX_SAMPLE_TYPES);
		return -1;
	}
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt.type = intern(p, type);
	vt.unit = intern(p, unit);
	if (vt.type < 0 || vt.unit < 0)
		return -1;
	p->types[p->ntypes++] = vt;
	return 0;
}

int leaksnap_export_pprof_default_sample_type(struct leaksnap_export_pprof *p, const char *type)
{
	int64_t t = intern(p, type);
	if (t < 0)
		return -1;
	p->default_type = t;
	return 0;
}

int leaksnap_export_pprof_period(struct leaksnap_export_pprof *p, const char *type,
				 const char *unit, int64_t period)
{
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt.type = intern(p, type);
	vt.unit = intern(p, unit);
	if (vt.type < 0 || vt.unit < 0)
		return -1;
	p->period_type = vt;
	p->period = period;
	return 0;
}

void leaksnap_export_pprof_time(struct leaksnap_export_pprof *p, int64_t time_ns,
				int64_t duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

int leaksnap_export_pprof_comment(struct leaksnap_export_pprof *p, const char *text)
{
	int64_t s = intern(p, text);
	int64_t *c = s < 0 ? NULL : realloc(p->comments, (p->ncomments + 1) * sizeof(*c));
	if (!c)
		return fail_nomem(p);
	p->comments = c;
	p->comments[p->ncomments++] = s;
	return 0;
}

/* Mappings, functions, locations ----------------------------------------- */

uint64_t leaksnap_export_pprof_mapping(struct leaksnap_export_pprof *p, uint64_t start,
				       uint64_t limit, uint64_t offset, const char *file,
				       const uint8_t *build_id, size_t build_id_len,
				       bool symbolized)
{
	char hex[2 * 64 + 1] = "";
	for (size_t i = 0; build_id && i < build_id_len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
	int64_t f = intern(p, file), b = intern(p, hex);
	if (f < 0 || b < 0 ||
	    kit_grow((void **)&p->maps, &p->capmaps, p->nmaps + 1, sizeof(*p->maps))) {
		fail_nomem(p);
		return 0;
	}
	p->maps[p->nmaps++] = (struct map){start, limit, offset, f, b, symbolized};
	return p->nmaps;
}

int leaksnap_export_pprof_main_file(struct leaksnap_export_pprof *p, const char *file)
{
	int64_t f = intern(p, file);
	if (f < 0)
		return -1;
	p->main_file = f;
	return 0;
}

void leaksnap_export_pprof_mapping_cover(struct leaksnap_export_pprof *p, uint64_t id,
					 uint64_t address)
{
	if (id == 0 || id > p->nmaps)
		return;
	struct map *m = &p->maps[id - 1];
	if (address < m->start) {
		m->offset -= m->start - address;
		m->start = address;
	}
	if (address >= m->limit)
		m->limit = address + 1;
}

static uint64_t func_hash(const struct leaksnap_export_pprof *p, size_t i)
{
	const struct func *f = &p->funcs[i];
	return kit_mix64((uint64_t)f->name * 31 + (uint64_t)f->system_name * 7 +
		   (uint64_t)f->filename * 131 + (uint64_t)f->start_line);
}

/* The id of the function (added when new), 0 when out of memory. */
static uint64_t function_id(struct leaksnap_export_pprof *p, const struct leaksnap_sym_frame *fr)
{
	struct func f = {intern(p, fr->function ? fr->function : "??"), 0,
			 intern(p, fr->file), fr->start_line};
	f.system_name = f.name; /* the symbolizer keeps only the demangled name */
	if (f.name < 0 || f.filename < 0)
		return 0;
	if (kit_grow((void **)&p->funcs, &p->capfuncs, p->nfuncs + 1, sizeof(*p->funcs))) {
		fail_nomem(p);
		return 0;
	}
	p->funcs[p->nfuncs] = f; /* for func_hash */
	uint64_t h = func_hash(p, p->nfuncs);
	size_t j = (size_t)h & p->func_index.mask;
	while (p->func_index.slots[j]) {
		const struct func *e = &p->funcs[p->func_index.slots[j] - 1];
		if (e->name == f.name && e->system_name == f.system_name &&
		    e->filename == f.filename && e->start_line == f.start_line)
			return p->func_index.slots[j];
		j = (j + 1) & p->func_index.mask;
	}
	p->func_index.slots[j] = ++p->nfuncs;
	if (index_grow(p, &p->func_index, p->nfuncs, func_hash)) {
		fail_nomem(p);
		return 0;
	}
	return p->nfuncs;
}

uint64_t leaksnap_export_pprof_location_find(const struct leaksnap_export_pprof *p, uint64_t key)
{
	if (!p->loc_slots)
		return 0;
	size_t j = (size_t)kit_mix64(key) & p->loc_mask;
	while (p->loc_slots[j].id) {
		if (p->loc_slots[j].key == key)
			return p->loc_slots[j].id;
		j = (j + 1) & p->loc_mask;
	}
	return 0;
}

/* Room for one more keyed location: -1 when out of memory. */
static int loc_slots_grow(struct leaksnap_export_pprof *p, size_t count)
{
	size_t cap = p->loc_slots ? p->loc_mask + 1 : 0;
	if ((count + 1) * 2 <= cap)
		return 0;
	size_t ncap = cap ? cap * 2 : 1024;
	struct loc_slot *slots = calloc(ncap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		if (!p->loc_slots[i].id)
			continue;
		size_t j = (size_t)kit_mix64(p->loc_slots[i].key) & (ncap - 1);
		while (slots[j].id)
			j = (j + 1) & (ncap - 1);
		slots[j] = p->loc_slots[i];
	}
	free(p->loc_slots);
	p->loc_slots = slots;
	p->loc_mask = ncap - 1;
	return 0;
}

static uint64_t add_location(struct leaksnap_export_pprof *p, bool keyed, uint64_t key,
			     uint64_t mapping_id, uint64_t address,
			     const struct leaksnap_sym_frame *frames, size_t nframes)
{
	if (keyed) {
		uint64_t id = leaksnap_export_pprof_location_find(p, key);
		if (id)
			return id;
	}
	if (kit_grow((void **)&p->locs, &p->caplocs, p->nlocs + 1, sizeof(*p->locs)) ||
	    kit_grow((void **)&p->lines, &p->caplines, p->nlines + nframes, sizeof(*p->lines))) {
		fail_nomem(p);
		return 0;
	}
	size_t first = p->nlines;
	for (size_t i = 0; i < nframes; i++) {
		uint64_t f = function_id(p, &frames[i]);
		if (!f)
			return 0;
		p->lines[p->nlines++] = (struct line){f, frames[i].line, frames[i].column};
	}
	if (keyed && loc_slots_grow(p, p->nkeyed + 1)) {
		fail_nomem(p);
		return 0;
	}
	p->locs[p->nlocs++] = (struct loc){key, mapping_id, address, first, nframes};
	if (keyed) {
		size_t j = (size_t)kit_mix64(key) & p->loc_mask;
		while (p->loc_slots[j].id)
			j = (j + 1) & p->loc_mask;
		p->loc_slots[j] = (struct loc_slot){key, p->nlocs};
		p->nkeyed++;
	}
	return p->nlocs;
}

uint64_t leaksnap_export_pprof_location(struct leaksnap_export_pprof *p, uint64_t key,
					uint64_t mapping_id, uint64_t address,
					const struct leaksnap_sym_frame *frames, size_t nframes)
{
	return add_location(p, true, key, mapping_id, address, frames, nframes);
}

uint64_t leaksnap_export_pprof_no_frames(struct leaksnap_export_pprof *p)
{
	if (!p->no_frames) {
		struct leaksnap_sym_frame f = {.function = "(no frames)"};
		p->no_frames = add_location(p, false, 0, 0, 0, &f, 1);
	}
	return p->no_frames;
}

/* Writing ----------------------------------------------------------------- */

/* Compress @len bytes at @data into the output (Z_FINISH with @finish). */
static int emit(struct leaksnap_export_pprof *p, const void *data, size_t len, bool finish)
{
	if (p->error[0])
		return -1;
	p->z.next_in = (Bytef *)(uintptr_t)data; /* zlib does not write it */
	p->z.avail_in = (uInt)len;
	for (;;) {
		int zr = deflate(&p->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			snprintf(p->error, sizeof(p->error), "zlib: deflate failed");
			return -1;
		}
		if (p->z.avail_out == 0 || (finish && zr == Z_STREAM_END)) {
			size_t n = OUT_CHUNK - p->z.avail_out;
			errno = 0;
			if (n && fwrite(p->zout, 1, n, p->out) != n)
				return fail_errno(p, errno);
			p->z.next_out = p->zout;
			p->z.avail_out = OUT_CHUNK;
		}
		if (finish ? zr == Z_STREAM_END : (p->z.avail_in == 0 && p->z.avail_out != 0))
			return 0;
	}
}

static size_t put_varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

/* One length-delimited element of Profile's field @field: its key and
 * length, then @len bytes at @data. */
static int emit_field(struct leaksnap_export_pprof *p, unsigned field, const void *data, size_t len)
{
	uint8_t head[20];
	size_t n = put_varint(head, (uint64_t)field << 3 | 2); /* wire type 2 */
	n += put_varint(head + n, len);
	if (emit(p, head, n, false))
		return -1;
	return len ? emit(p, data, len, false) : 0;
}

/* @msg packed by protobuf-c as an element of field @field. */
static int emit_message(struct leaksnap_export_pprof *p, unsigned field,
			const ProtobufCMessage *msg)
{
	size_t size = protobuf_c_message_get_packed_size(msg);
	if (kit_grow((void **)&p->buf, &p->capbuf, size ? size : 1, 1))
		return fail_nomem(p);
	size_t n = protobuf_c_message_pack(msg, p->buf);
	return emit_field(p, field, p->buf, n);
}

int leaksnap_export_pprof_sample(struct leaksnap_export_pprof *p, const uint64_t *locations,
				 size_t nlocations, const int64_t *values, size_t nvalues,
				 const struct leaksnap_export_pprof_label *labels, size_t nlabels)
{
	if (nvalues != p->ntypes) {
		snprintf(p->error, sizeof(p->error), "a sample with %zu values for %zu types",
			 nvalues, p->ntypes);
		return -1;
	}
	if (kit_grow((void **)&p->ids, &p->capids, nlocations ? nlocations : 1, sizeof(*p->ids)) ||
	    kit_grow((void **)&p->vals, &p->capvals, nvalues ? nvalues : 1, sizeof(*p->vals)))
		return fail_nomem(p);
	if (nlocations)
		memcpy(p->ids, locations, nlocations * sizeof(*p->ids));
	if (nvalues)
		memcpy(p->vals, values, nvalues * sizeof(*p->vals));
	Perftools__Profiles__Label lab[4], *labp[4];
	if (nlabels > 4) {
		snprintf(p->error, sizeof(p->error), "more than 4 labels");
		return -1;
	}
	for (size_t i = 0; i < nlabels; i++) {
		lab[i] = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
		lab[i].key = intern(p, labels[i].key);
		if (labels[i].str)
			lab[i].str = intern(p, labels[i].str);
		else {
			lab[i].num = labels[i].num;
			lab[i].num_unit = intern(p, labels[i].unit);
		}
		if (lab[i].key < 0 || lab[i].str < 0 || lab[i].num_unit < 0)
			return -1;
		labp[i] = &lab[i];
	}
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	s.n_location_id = nlocations;
	s.location_id = p->ids;
	s.n_value = nvalues;
	s.value = p->vals;
	s.n_label = nlabels;
	s.label = labp;
	p->samples++;
	return emit_message(p, PROFILE_SAMPLE, &s.base);
}

int leaksnap_export_pprof_finish(struct leaksnap_export_pprof *p)
{
	if (p->error[0])
		return -1;
	/* the main program's mappings first: pprof takes the first mapping
	 * for the program the profile is of */
	for (size_t k = 0; k < 2 * p->nmaps; k++) {
		size_t i = k % p->nmaps;
		const struct map *m = &p->maps[i];
		if ((k < p->nmaps) != (p->main_file && m->filename == p->main_file))
			continue;
		Perftools__Profiles__Mapping pm = PERFTOOLS__PROFILES__MAPPING__INIT;
		pm.id = i + 1;
		pm.memory_start = m->start;
		pm.memory_limit = m->limit;
		pm.file_offset = m->offset;
		pm.filename = m->filename;
		pm.build_id = m->build_id;
		pm.has_functions = pm.has_filenames = pm.has_line_numbers =
			pm.has_inline_frames = m->symbolized;
		if (emit_message(p, PROFILE_MAPPING, &pm.base))
			return -1;
	}
	size_t maxlines = 0;
	for (size_t i = 0; i < p->nlocs; i++)
		if (p->locs[i].nlines > maxlines)
			maxlines = p->locs[i].nlines;
	Perftools__Profiles__Line *lines = calloc(maxlines ? maxlines : 1, sizeof(*lines));
	Perftools__Profiles__Line **linep = calloc(maxlines ? maxlines : 1, sizeof(*linep));
	if (!lines || !linep) {
		free(lines);
		free(linep);
		return fail_nomem(p);
	}
	int rc = 0;
	for (size_t i = 0; i < p->nlocs && rc == 0; i++) {
		const struct loc *l = &p->locs[i];
		Perftools__Profiles__Location pl = PERFTOOLS__PROFILES__LOCATION__INIT;
		pl.id = i + 1;
		pl.mapping_id = l->mapping;
		pl.address = l->address;
		for (size_t k = 0; k < l->nlines; k++) {
			const struct line *ln = &p->lines[l->first_line + k];
			lines[k] = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
			lines[k].function_id = ln->function;
			lines[k].line = ln->line;
			lines[k].column = ln->column;
			linep[k] = &lines[k];
		}
		pl.n_line = l->nlines;
		pl.line = linep;
		rc = emit_message(p, PROFILE_LOCATION, &pl.base);
	}
	free(lines);
	free(linep);
	for (size_t i = 0; i < p->nfuncs && rc == 0; i++) {
		Perftools__Profiles__Function pf = PERFTOOLS__PROFILES__FUNCTION__INIT;
		pf.id = i + 1;
		pf.name = p->funcs[i].name;
		pf.system_name = p->funcs[i].system_name;
		pf.filename = p->funcs[i].filename;
		pf.start_line = p->funcs[i].start_line;
		rc = emit_message(p, PROFILE_FUNCTION, &pf.base);
	}
	if (rc)
		return -1;
	/* the header fields: a Profile message without any repeated table */
	Perftools__Profiles__Profile h = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType *types[MAX_SAMPLE_TYPES];
	for (size_t i = 0; i < p->ntypes; i++)
		types[i] = &p->types[i];
	h.n_sample_type = p->ntypes;
	h.sample_type = types;
	h.time_nanos = p->time_ns;
	h.duration_nanos = p->duration_ns;
	if (p->period_type.type)
		h.period_type = &p->period_type;
	h.period = p->period;
	h.n_comment = p->ncomments;
	h.comment = p->comments;
	h.default_sample_type = p->default_type;
	size_t size = protobuf_c_message_get_packed_size(&h.base);
	if (kit_grow((void **)&p->buf, &p->capbuf, size ? size : 1, 1))
		return fail_nomem(p);
	size = protobuf_c_message_pack(&h.base, p->buf);
	if (emit(p, p->buf, size, false))
		return -1;
	for (size_t i = 0; i < p->nstrs; i++)
		if (emit_field(p, PROFILE_STRING_TABLE, p->strs[i].s, p->strs[i].len))
			return -1;
	if (emit(p, NULL, 0, true))
		return -1;
	errno = 0;
	if (fflush(p->out) != 0 || ferror(p->out))
		return fail_errno(p, errno);
	return 0;
}
