/* Unit tests for resolve/: a snapshot of this test program's own frames
 * (a text dump with its real maps) resolved to its functions and lines;
 * answers cached per (module, rel_pc); a frame in no module; a module
 * whose file is corrupt reported once through the warn callback; the
 * options' size check; the by-parts API diff uses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/maps.h>
#include <leaksnap/resolve.h>
#include <leaksnap/snapshot.h>

static int target_line; /* the line of the call in resolvetest_caller */
static uintptr_t probe_ret;

__attribute__((noinline)) int resolvetest_probe(int x)
{
	probe_ret = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int resolvetest_caller(int x)
{
	target_line = __LINE__ + 1;
	int r = resolvetest_probe(x);
	__asm__ volatile("" ::: "memory");
	return r * 2;
}

/* A text dump of one record whose frames are @pcs, with @maps as its
 * maps: the heap-dump text an Android device writes. */
static char *text_dump(const uint64_t *pcs, size_t n, const char *maps)
{
	size_t cap = 4096 + strlen(maps);
	char *t = malloc(cap);
	assert_non_null(t);
	int len = snprintf(
		t, cap,
		"Android Native Heap Dump v1.2\n\nTotal memory: 64\nAllocation records: 1\n"
		"Backtrace size: %zu\n\nz 0  sz       64  num    1  bt",
		n);
	for (size_t i = 0; i < n; i++)
		len += snprintf(t + len, cap - (size_t)len, " %016" PRIx64, pcs[i]);
	snprintf(t + len, cap - (size_t)len, "\nMAPS\n%sEND\n", maps);
	return t;
}

static char *self_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char *text = NULL;
	size_t cap = 0, len = 0;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			text = realloc(text, cap);
			assert_non_null(text);
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	fclose(f);
	assert_non_null(text);
	text[len] = '\0';
	return text;
}

struct input {
	char *text;
	struct leaksnap_snapshot *snap;
	struct leaksnap_maps *maps;
};

static void input_open(struct input *in, const uint64_t *pcs, size_t n, const char *maps)
{
	in->text = text_dump(pcs, n, maps);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	in->snap = leaksnap_snapshot_open_memory(in->text, strlen(in->text), "dump.txt", NULL,
						 &err);
	if (!in->snap)
		fail_msg("%s: %s", err.source, err.text);
	size_t mlen;
	unsigned long line;
	uint64_t off;
	const char *m = leaksnap_snapshot_maps(in->snap, &mlen, &line, &off);
	in->maps = leaksnap_maps_parse(m, mlen, "dump.txt", line, off, &err);
	if (!in->maps)
		fail_msg("%s: %s", err.source, err.text);
}

static void input_close(struct input *in)
{
	leaksnap_maps_free(in->maps);
	leaksnap_snapshot_close(in->snap);
	free(in->text);
}

struct problems {
	int count;
	char last[600];
};

static void note_problem(void *arg, const struct leaksnap_error *e)
{
	struct problems *p = arg;
	p->count++;
	leaksnap_error_format(e, p->last, sizeof(p->last));
}

static struct leaksnap_resolver *new_resolver(struct problems *p)
{
	LEAKSNAP_OPTS(leaksnap_resolver_opts, o, .return_addresses = true, .warn = note_problem,
		      .warn_arg = p);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	struct leaksnap_resolver *r = leaksnap_resolver_new(&o, &err);
	assert_non_null(r);
	return r;
}

static void test_resolve_own_frames(void **state)
{
	(void)state;
	resolvetest_caller(1);
	char *maps = self_maps();
	uint64_t pcs[] = {probe_ret, 0x10};
	struct input in;
	input_open(&in, pcs, 2, maps);
	struct problems p = {0};
	struct leaksnap_resolver *r = new_resolver(&p);

	struct leaksnap_maps_location loc;
	assert_true(leaksnap_maps_locate(in.maps, probe_ret, &loc));
	assert_non_null(loc.module);
	struct leaksnap_resolved res;
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	assert_int_equal(leaksnap_resolve_pc(r, in.snap, in.maps, &loc, &res, &err), 0);
	assert_non_null(res.module);
	assert_string_equal(res.module->path, loc.module->path);
	assert_non_null(res.module->file);
	assert_true(res.frame_count >= 1);
	/* a return address is answered at its call: the caller's line */
	const struct leaksnap_sym_frame *outer = &res.frames[res.frame_count - 1];
	assert_string_equal(outer->function, "resolvetest_caller");
	assert_non_null(strstr(res.frames[0].file, "test_resolve.c"));
	assert_int_equal(res.frames[0].line, target_line);

	/* the same frame again: the same answer, not looked up again */
	struct leaksnap_resolved again;
	assert_int_equal(leaksnap_resolve_pc(r, in.snap, in.maps, &loc, &again, &err), 0);
	assert_ptr_equal(again.frames, res.frames);
	assert_int_equal(again.frame_count, res.frame_count);
	assert_int_equal(leaksnap_resolver_address_count(r), 1);
	assert_int_equal(leaksnap_resolver_module_count(r), 1);
	assert_ptr_equal(leaksnap_resolver_module(r, 0), res.module);
	assert_null(leaksnap_resolver_module(r, 1));

	/* a PC in no mapping: no module, no frames, no problem */
	assert_false(leaksnap_maps_locate(in.maps, 0x10, &loc) && loc.module);
	memset(&loc, 0, sizeof(loc));
	assert_int_equal(leaksnap_resolve_pc(r, in.snap, in.maps, &loc, &res, &err), 0);
	assert_null(res.module);
	assert_int_equal(res.frame_count, 0);
	assert_int_equal(p.count, 0);
	assert_false(leaksnap_resolver_failed(r));
	assert_int_equal(err.code, LEAKSNAP_OK);

	leaksnap_resolver_free(r);
	input_close(&in);
	free(maps);
}

/* A module whose file here is not ELF: said once, through the callback,
 * whatever the number of its frames; its frames have no answers. */
static void test_resolve_bad_module_said_once(void **state)
{
	(void)state;
	char dir[] = "/tmp/leaksnap-resolvetest.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[4200];
	snprintf(path, sizeof(path), "%s/libbroken.so", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("\x7f" "ELF but nothing more", f);
	fclose(f);
	char maps[8400];
	snprintf(maps, sizeof(maps),
		 "7f0000000000-7f0000001000 r-xp 00000000 fd:01 1234 %s\n", path);
	uint64_t pcs[] = {0x7f0000000100, 0x7f0000000200};
	struct input in;
	input_open(&in, pcs, 2, maps);
	struct problems p = {0};
	struct leaksnap_resolver *r = new_resolver(&p);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	for (size_t i = 0; i < 2; i++) {
		struct leaksnap_maps_location loc;
		assert_true(leaksnap_maps_locate(in.maps, pcs[i], &loc));
		struct leaksnap_resolved res;
		assert_int_equal(leaksnap_resolve_pc(r, in.snap, in.maps, &loc, &res, &err), 0);
		assert_non_null(res.module);
		assert_null(res.module->file);
		assert_int_equal(res.frame_count, 0);
	}
	assert_int_equal(p.count, 1);
	assert_non_null(strstr(p.last, path));
	assert_true(leaksnap_resolver_failed(r));
	assert_int_equal(leaksnap_resolver_module_count(r), 1);

	/* the callback can be exchanged: the old one comes back */
	leaksnap_resolve_warn_fn old = NULL;
	void *old_arg = NULL;
	leaksnap_resolver_set_warn(r, NULL, NULL, &old, &old_arg);
	assert_ptr_equal(old, note_problem);
	assert_ptr_equal(old_arg, &p);

	leaksnap_resolver_free(r);
	input_close(&in);
	unlink(path);
	rmdir(dir);
}

/* The by-parts API: a module by path (no build ID, no mappings) and a
 * frame of it, each answered once. */
static void test_resolve_by_parts(void **state)
{
	(void)state;
	resolvetest_caller(2);
	char *maps = self_maps();
	uint64_t pcs[] = {probe_ret};
	struct input in;
	input_open(&in, pcs, 1, maps);
	struct leaksnap_maps_location loc;
	assert_true(leaksnap_maps_locate(in.maps, probe_ret, &loc));
	struct problems p = {0};
	struct leaksnap_resolver *r = new_resolver(&p);
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	uint64_t rel = loc.rel_pc;
	const struct leaksnap_sym_module *m = leaksnap_resolve_module(r, loc.module->path, NULL, 0,
								      NULL, 0, &rel, &err);
	assert_non_null(m);
	assert_int_equal(rel, loc.rel_pc);
	struct leaksnap_resolved res;
	assert_int_equal(leaksnap_resolve_frame(r, m, rel, &res, &err), 0);
	assert_ptr_equal(res.module, m);
	assert_true(res.frame_count >= 1);
	assert_string_equal(res.frames[res.frame_count - 1].function, "resolvetest_caller");
	/* no module: nothing */
	assert_int_equal(leaksnap_resolve_frame(r, NULL, rel, &res, &err), 0);
	assert_null(res.module);
	assert_int_equal(res.frame_count, 0);
	assert_non_null(leaksnap_resolver_symbolizer(r));
	leaksnap_resolver_free(r);
	input_close(&in);
	free(maps);
}

/* Options of a size this library does not know are refused; NULL options
 * are the defaults. */
static void test_resolver_opts(void **state)
{
	(void)state;
	struct leaksnap_resolver_opts o = {.sz = 3};
	struct leaksnap_error err;
	leaksnap_error_clear(&err);
	err.code = LEAKSNAP_ERR_IO; /* a record used before: cleared, not kept */
	assert_null(leaksnap_resolver_new(&o, &err));
	assert_int_equal(err.code, LEAKSNAP_ERR_USAGE);
	assert_string_equal(err.source, "leaksnap_resolver_opts");
	assert_string_equal(err.text, "unknown size 3 (not built against this library?)");
	leaksnap_error_clear(&err);
	struct leaksnap_resolver *r = leaksnap_resolver_new(NULL, &err);
	assert_non_null(r);
	assert_false(leaksnap_resolver_failed(r));
	leaksnap_resolver_free(r);
	leaksnap_resolver_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_own_frames),
		cmocka_unit_test(test_resolve_bad_module_said_once),
		cmocka_unit_test(test_resolve_by_parts),
		cmocka_unit_test(test_resolver_opts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
