/* Unit tests for symbolizer/: opening files, offsets to addresses, lookups
 * of this test program's own functions (it is built with -g), module
 * location and build-ID checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/maps.h>
#include <leaksnap/symbolizer.h>

static char self[4096];

/* The main program's load bias. */
static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1; /* the first object is the main program */
}

static uintptr_t load_bias(void)
{
	uintptr_t b = 0;
	dl_iterate_phdr(bias_cb, &b);
	return b;
}

static int target_line; /* the line of the call in caller_of_probe */
static uintptr_t probe_ret;

__attribute__((noinline)) int symtest_probe(int x)
{
	probe_ret = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int symtest_caller(int x)
{
	target_line = __LINE__ + 1;
	int r = symtest_probe(x);
	__asm__ volatile("" ::: "memory");
	return r * 2;
}

static struct leaksnap_symbolizer *new_sym(const struct leaksnap_sym_options *o)
{
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_symbolizer *s = leaksnap_symbolizer_new(o, &err);
	assert_non_null(s);
	return s;
}

static void test_open_errors(void **state)
{
	(void)state;
	struct leaksnap_symbolizer *s = new_sym(NULL);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	assert_null(leaksnap_symbolizer_open(s, "/nonexistent/leaksnap-test", &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_IO);
	assert_string_equal(err.source, "/nonexistent/leaksnap-test");

	char path[] = "/tmp/leaksnap-symtest.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	leaksnap_error_clear(&err);
	assert_null(leaksnap_symbolizer_open(s, path, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.text, "not an ELF file");
	unlink(path);
	leaksnap_symbolizer_free(s);
}

static void test_lookup_self(void **state)
{
	(void)state;
	symtest_caller(1);
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .demangle = true);
	struct leaksnap_symbolizer *s = new_sym(&o);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(s, self, &err);
	assert_non_null(f);
	assert_non_null(leaksnap_sym_file_debug_path(f));
	assert_int_equal(leaksnap_sym_file_address_size(f), sizeof(void *));
	assert_true(leaksnap_symbolizer_open(s, self, &err) == f); /* opened once */

	/* a function's first address: the function, in this file */
	uint64_t va = (uintptr_t)&symtest_probe - load_bias();
	struct leaksnap_sym_result r;
	assert_int_equal(leaksnap_sym_file_lookup(f, va, &r, &err), 0);
	assert_true(r.frame_count >= 1);
	const struct leaksnap_sym_frame *last = &r.frames[r.frame_count - 1];
	assert_string_equal(last->function, "symtest_probe");
	assert_non_null(strstr(last->file, "test_symbolizer.c"));
	assert_true(last->has_start);
	assert_int_equal(last->start_address, va);

	/* a return address, looked up at its call instruction: the call's line */
	uint64_t ret = probe_ret - load_bias();
	assert_int_equal(leaksnap_sym_file_lookup(f, leaksnap_sym_file_call_site(f, ret), &r, &err),
			 0);
	assert_true(r.frame_count >= 1);
	assert_string_equal(r.frames[r.frame_count - 1].function, "symtest_caller");
	assert_int_equal(r.frames[0].line, target_line);

	/* nothing at address 0 */
	assert_int_equal(leaksnap_sym_file_lookup(f, 0, &r, &err), 0);
	assert_int_equal(r.frame_count, 0);
	leaksnap_symbolizer_free(s);
}

/* maps' rel_pc (file offset) of a PC, converted by the symbolizer, gives
 * the same address as the load bias does. */
static void test_offset_to_vaddr(void **state)
{
	(void)state;
	FILE *fp = fopen("/proc/self/maps", "r");
	assert_non_null(fp);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_maps *m = leaksnap_maps_parse(text, n, "/proc/self/maps", 1, 0, &err);
	assert_non_null(m);
	struct leaksnap_maps_location loc;
	uintptr_t pc = (uintptr_t)&symtest_caller + 3;
	assert_true(leaksnap_maps_locate(m, pc, &loc));
	assert_non_null(loc.module);

	struct leaksnap_sym_options o = {.sz = sizeof(struct leaksnap_sym_options)};
	struct leaksnap_symbolizer *s = new_sym(&o);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(s, self, &err);
	assert_non_null(f);
	uint64_t va;
	assert_true(leaksnap_sym_file_offset_to_vaddr(f, loc.rel_pc, &va));
	assert_int_equal(va, pc - load_bias());
	assert_false(leaksnap_sym_file_offset_to_vaddr(f, UINT64_MAX / 2, &va));
	leaksnap_maps_free(m);
	leaksnap_symbolizer_free(s);
}

static void test_modules(void **state)
{
	(void)state;
	struct leaksnap_sym_options o = {.sz = sizeof(struct leaksnap_sym_options)};
	struct leaksnap_symbolizer *s = new_sym(&o);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(s, self, &err);
	assert_non_null(f);
	size_t len;
	const uint8_t *fid = leaksnap_sym_file_build_id(f, &len);
	assert_non_null(fid);
	assert_true(len >= 8 && len <= 64);
	uint8_t id[64], other[64]; /* copies: they outlive this symbolizer */
	memcpy(id, fid, len);
	memcpy(other, fid, len);
	other[0] ^= 0xff;

	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, self, id, len, &err);
	assert_non_null(m);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
	assert_string_equal(m->file_path, self);
	assert_true(m->file == f);

	const struct leaksnap_sym_module *bad = leaksnap_symbolizer_module(s, self, other, len,
									   &err);
	assert_non_null(bad);
	assert_int_equal(bad->status, LEAKSNAP_SYM_BUILD_ID_MISMATCH);
	assert_null(bad->file);
	struct leaksnap_sym_result r;
	assert_int_equal(leaksnap_sym_module_lookup(bad, 0x1000, true, &r, &err), 0);
	assert_int_equal(r.frame_count, 0);

	const struct leaksnap_sym_module *none = leaksnap_symbolizer_module(
		s, "/nonexistent/libx.so", NULL, 0, &err);
	assert_non_null(none);
	assert_int_equal(none->status, LEAKSNAP_SYM_BUILD_ID_MISSING);

	const struct leaksnap_sym_module *unv = leaksnap_symbolizer_module(s, self, NULL, 0, &err);
	assert_int_equal(unv->status, LEAKSNAP_SYM_BUILD_ID_UNVERIFIED);
	assert_true(leaksnap_symbolizer_module(s, self, id, len, &err) == m); /* remembered */

	assert_string_equal(leaksnap_sym_build_id_status_name(LEAKSNAP_SYM_BUILD_ID_MATCH),
			    "match");
	assert_string_equal(leaksnap_sym_build_id_status_name(LEAKSNAP_SYM_BUILD_ID_UNVERIFIED),
			    "unverified");
	assert_string_equal(leaksnap_sym_build_id_status_name(LEAKSNAP_SYM_BUILD_ID_MISMATCH),
			    "mismatch");
	assert_string_equal(leaksnap_sym_build_id_status_name(LEAKSNAP_SYM_BUILD_ID_MISSING),
			    "missing");
	leaksnap_symbolizer_free(s);

	/* no host paths: the module's own path is not a candidate */
	LEAKSNAP_OPTS(leaksnap_sym_options, nohost, .no_host_paths = true);
	s = new_sym(&nohost);
	m = leaksnap_symbolizer_module(s, self, id, len, &err);
	assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MISSING);
	leaksnap_symbolizer_free(s);
}

/* This program's mappings, from /proc/self/maps; *@exec_only: only its
 * executable one(s). */
static size_t self_mappings(struct leaksnap_sym_mapping *out, size_t cap, bool exec_only)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	assert_non_null(fp);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_maps *m = leaksnap_maps_parse(text, n, "/proc/self/maps", 1, 0, &err);
	assert_non_null(m);
	size_t k = 0;
	for (size_t i = 0; i < leaksnap_maps_mapping_count(m); i++) {
		const struct leaksnap_maps_mapping *x = leaksnap_maps_mapping(m, i);
		if (!x->path || strcmp(x->path, self) != 0 || k == cap ||
		    (exec_only && x->perms[2] != 'x'))
			continue;
		out[k++] = (struct leaksnap_sym_mapping){x->start, x->end, x->offset,
							 x->perms[2] == 'x'};
	}
	leaksnap_maps_free(m);
	return k;
}

/* A debug-only copy of this program, as DIR/.build-id/xx/rest.debug. */
static void make_debug_only(char *dir, size_t cap, const uint8_t *id, size_t len)
{
	char tmpl[] = "/tmp/test_symbolizer.XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	snprintf(dir, cap, "%s", tmpl);
	char path[4096], cmd[16384];
	int n = snprintf(path, sizeof(path), "%s/.build-id/%02x", dir, id[0]);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	n += snprintf(path + n, sizeof(path) - (size_t)n, "/");
	for (size_t i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", id[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
	snprintf(cmd, sizeof(cmd), "objcopy --only-keep-debug '%s' '%s'", self, path);
	assert_int_equal(system(cmd), 0);
}

/* A module found only as a debug-only file (the module's own path is not
 * on this host): no layout until the maps give it, then exact answers;
 * from the mapping at offset 0 or the executable mapping alone; maps that
 * fit no segment are an error, said once. */
static void test_debug_only(void **state)
{
	(void)state;
	if (system("objcopy --version >/dev/null 2>&1") != 0)
		skip();
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_sym_options plain = {.sz = sizeof(struct leaksnap_sym_options)};
	struct leaksnap_symbolizer *s = new_sym(&plain);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(s, self, &err);
	assert_non_null(f);
	size_t len;
	const uint8_t *fid = leaksnap_sym_file_build_id(f, &len);
	assert_non_null(fid);
	uint8_t id[64];
	memcpy(id, fid, len);
	const struct leaksnap_sym_module *own = leaksnap_symbolizer_module(s, self, id, len, &err);
	assert_int_equal(own->layout, LEAKSNAP_SYM_LAYOUT_FILE);
	struct leaksnap_sym_mapping maps[32];
	size_t nmaps = self_mappings(maps, 32, false);
	assert_true(nmaps >= 2);
	assert_int_equal(leaksnap_sym_module_set_mappings(s, own, maps, nmaps, &err), 0);
	assert_int_equal(own->layout, LEAKSNAP_SYM_LAYOUT_FILE); /* its own layout: kept */
	leaksnap_symbolizer_free(s);

	char dir[4096];
	make_debug_only(dir, sizeof(dir), id, len);
	const char *dirs[] = {dir};
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .symbol_dirs = dirs, .symbol_dir_count = 1,
		      .no_host_paths = true);
	/* the rel_pc of the call in symtest_caller, from the maps */
	symtest_caller(1);
	uint64_t rel_pc = 0;
	for (size_t i = 0; i < nmaps; i++)
		if (probe_ret >= maps[i].start && probe_ret < maps[i].end)
			rel_pc = probe_ret - maps[i].start + maps[i].offset;
	assert_true(rel_pc != 0);
	for (int pass = 0; pass < 2; pass++) {
		s = new_sym(&o);
		const char *device = "/system/bin/test_symbolizer"; /* not on this host */
		const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, device, id, len,
										 &err);
		assert_non_null(m);
		assert_int_equal(m->status, LEAKSNAP_SYM_BUILD_ID_MATCH);
		assert_non_null(m->file);
		assert_non_null(strstr(m->file_path, "/.build-id/"));
		assert_int_equal(m->layout, LEAKSNAP_SYM_LAYOUT_NONE);
		assert_null(leaksnap_sym_layout_name(m->layout));
		struct leaksnap_sym_result r;
		assert_int_equal(leaksnap_sym_module_lookup(m, rel_pc, true, &r, &err), 0);
		assert_int_equal(r.frame_count, 0); /* no layout, no answer */
		size_t n = pass ? self_mappings(maps, 32, true) : self_mappings(maps, 32, false);
		assert_int_equal(leaksnap_sym_module_set_mappings(s, m, maps, n, &err), 0);
		assert_int_equal(m->layout, LEAKSNAP_SYM_LAYOUT_MAPS);
		assert_string_equal(leaksnap_sym_layout_name(m->layout), "maps");
		assert_int_equal(leaksnap_sym_module_lookup(m, rel_pc, true, &r, &err), 0);
		assert_true(r.frame_count >= 1);
		assert_string_equal(r.frames[r.frame_count - 1].function, "symtest_caller");
		assert_int_equal(r.frames[r.frame_count - 1].line, (uint32_t)target_line);
		leaksnap_symbolizer_free(s);
	}

	/* a non-executable mapping, not at offset 0: fits nothing */
	s = new_sym(&o);
	const struct leaksnap_sym_module *m = leaksnap_symbolizer_module(s, "/system/bin/x", id,
									 len, &err);
	struct leaksnap_sym_mapping bad = {0x7f0000001000, 0x7f0000002000, 0x1000, false};
	assert_int_equal(leaksnap_sym_module_set_mappings(s, m, &bad, 1, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_FORMAT);
	assert_string_equal(err.source, m->file_path);
	assert_int_equal(m->layout, LEAKSNAP_SYM_LAYOUT_NONE);
	assert_int_equal(leaksnap_sym_module_set_mappings(s, m, &bad, 1, &err), 0); /* said once */
	/* a module of another symbolizer is refused, and left as it was */
	struct leaksnap_symbolizer *other = new_sym(&o);
	const struct leaksnap_sym_module *m2 = leaksnap_symbolizer_module(other, "/system/bin/x",
									  id, len, &err);
	assert_int_equal(leaksnap_sym_module_set_mappings(s, m2, maps, 1, &err), -1);
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.text, "not a module of this symbolizer");
	assert_int_equal(m2->layout, LEAKSNAP_SYM_LAYOUT_NONE);
	leaksnap_symbolizer_free(other);
	leaksnap_symbolizer_free(s);

	assert_string_equal(leaksnap_sym_layout_name(LEAKSNAP_SYM_LAYOUT_FILE), "file");
	assert_string_equal(leaksnap_sym_layout_name(LEAKSNAP_SYM_LAYOUT_HOST), "host");
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The executable segment of this program (file addresses). */
static int text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uint64_t *range = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			range[0] = ph->p_vaddr;
			range[1] = ph->p_vaddr + ph->p_memsz;
		}
	}
	return 1;
}

/* An answer as one string, every field of every frame. */
static char *answer_text(const struct leaksnap_sym_result *r)
{
	char *t = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&t, &len);
	assert_non_null(fp);
	for (size_t i = 0; i < r->frame_count; i++) {
		const struct leaksnap_sym_frame *f = &r->frames[i];
		fprintf(fp, "%s|%s|%u|%u|%u|%d%d%d|%llx|%llx|%s|%u\n",
			f->function ? f->function : "-", f->file ? f->file : "-", f->line,
			f->column, f->discriminator, f->inlined, f->from_symtab, f->has_start,
			(unsigned long long)f->start_address, (unsigned long long)f->symbol_offset,
			f->start_file ? f->start_file : "-", f->start_line);
	}
	fclose(fp);
	return t;
}

struct expect {
	char **want;
	size_t next, count;
	struct leaksnap_sym_file *f;       /* when set: look others up meanwhile */
	const uint64_t *addrs;
};

static void check_answer(void *ctx, size_t index, const struct leaksnap_sym_result *r,
			 const struct leaksnap_error *err)
{
	struct expect *e = ctx;
	assert_null(err);
	assert_int_equal(index, e->next); /* in order */
	assert_true(index < e->count);
	e->next++;
	char *t = answer_text(r);
	assert_string_equal(t, e->want[index]);
	free(t);
	if (e->f && index % 97 == 0) {
		/* a lookup from the callback, in a unit perhaps not done yet */
		size_t other = (index * 7 + 4001) % e->count;
		struct leaksnap_sym_result o;
		struct leaksnap_error oerr;
		leaksnap_error_clear(&oerr);
		assert_int_equal(leaksnap_sym_file_lookup(e->f, e->addrs[other], &o, &oerr), 0);
		t = answer_text(&o);
		assert_string_equal(t, e->want[other]);
		free(t);
	}
}

/* With threads (jobs > 1) the answers are those without, whether looked up
 * in a batch, one by one after a hint, or in batches after others; a
 * symbolizer freed while its threads still index units stops them. */
static void test_threads(void **state)
{
	(void)state;
	uint64_t range[2] = {0, 0};
	dl_iterate_phdr(text_cb, range);
	assert_true(range[1] > range[0]);
	enum { N = 6000 };
	static uint64_t addrs[N];
	for (size_t i = 0; i < N; i++)
		addrs[i] = range[0] + (i * 7919 + i / 3) % (range[1] - range[0]);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	static char *want[N];
	LEAKSNAP_OPTS(leaksnap_sym_options, o, .demangle = true);
	struct leaksnap_symbolizer *s = new_sym(&o);
	struct leaksnap_sym_file *f = leaksnap_symbolizer_open(s, self, &err);
	assert_non_null(f);
	for (size_t i = 0; i < N; i++) {
		struct leaksnap_sym_result r;
		assert_int_equal(leaksnap_sym_file_lookup(f, addrs[i], &r, &err), 0);
		want[i] = answer_text(&r);
	}
	leaksnap_symbolizer_free(s);

	for (unsigned jobs = 2; jobs <= 5; jobs += 3) {
		o.jobs = jobs;
		/* a batch */
		s = new_sym(&o);
		f = leaksnap_symbolizer_open(s, self, &err);
		struct expect e = {want, 0, N, NULL, NULL};
		leaksnap_sym_file_lookup_batch(f, addrs, N, check_answer, &e);
		assert_int_equal(e.next, N);
		leaksnap_symbolizer_free(s);
		/* a batch whose callback looks up others */
		s = new_sym(&o);
		f = leaksnap_symbolizer_open(s, self, &err);
		e = (struct expect){want, 0, N, f, addrs};
		leaksnap_sym_file_lookup_batch(f, addrs, N, check_answer, &e);
		assert_int_equal(e.next, N);
		leaksnap_symbolizer_free(s);
		/* a hint, then one by one */
		s = new_sym(&o);
		f = leaksnap_symbolizer_open(s, self, &err);
		leaksnap_sym_file_prefetch(f, addrs, N);
		for (size_t i = 0; i < N; i++) {
			struct leaksnap_sym_result r;
			assert_int_equal(leaksnap_sym_file_lookup(f, addrs[i], &r, &err), 0);
			char *t = answer_text(&r);
			assert_string_equal(t, want[i]);
			free(t);
		}
		leaksnap_symbolizer_free(s);
		/* small batches, then a large one over units already indexed */
		s = new_sym(&o);
		f = leaksnap_symbolizer_open(s, self, &err);
		e = (struct expect){want, 0, 10, NULL, NULL};
		leaksnap_sym_file_lookup_batch(f, addrs, 10, check_answer, &e);
		e = (struct expect){want + 10, 0, 490, NULL, NULL};
		leaksnap_sym_file_lookup_batch(f, addrs + 10, 490, check_answer, &e);
		e = (struct expect){want, 0, 0, NULL, NULL};
		leaksnap_sym_file_lookup_batch(f, addrs, 0, check_answer, &e);
		e = (struct expect){want + 500, 0, N - 500, NULL, NULL};
		leaksnap_sym_file_lookup_batch(f, addrs + 500, N - 500, check_answer, &e);
		assert_int_equal(e.next, N - 500);
		leaksnap_symbolizer_free(s);
		/* freed while indexing */
		s = new_sym(&o);
		f = leaksnap_symbolizer_open(s, self, &err);
		leaksnap_sym_file_prefetch(f, addrs, N);
		leaksnap_symbolizer_free(s);
	}
	for (size_t i = 0; i < N; i++)
		free(want[i]);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_lookup_self),
		cmocka_unit_test(test_offset_to_vaddr),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_debug_only),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
