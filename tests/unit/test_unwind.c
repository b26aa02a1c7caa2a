/* Unit tests for hook/unwind_*.c: frame-pointer, CFI and libgcc walks.
 *
 * Built without frame pointers (as Debian builds libraries) and with
 * -rdynamic, so dladdr1() finds the size of every function below; the
 * same file must pass when built with -fno-omit-frame-pointer.  Each walk
 * is checked against the functions it must pass through, and the CFI walk
 * frame for frame against libgcc's _Unwind_Backtrace, taken from the same
 * call site.
 *
 * Two call chains lead to the capture:
 *  - cfi_f1 .. cfi_f8: plain -O2 functions.  Without frame pointers they
 *    have no frame records, so only CFI can walk them.  cfi_f5 calls alloca
 *    (CFA relative to the frame pointer) and cfi_f6 also has an
 *    over-aligned local (GCC x86-64: CFA = *(rbp - N), a DRAP frame).
 *  - fp_f1 .. fp_f8: each takes __builtin_frame_address(0), which makes
 *    GCC and clang give it a frame record whatever -f[no-]omit-frame-pointer
 *    says, so unwind_fp() is tested the same way in both builds. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr1, pthread_getattr_np */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "unwind.h"

/* No inlining, cloning or other interprocedural change of the chain
 * functions: each must be a real frame with its own symbol. */
#if defined(__clang__)
#define CHAIN_FN __attribute__((noinline, used))
#else
#define CHAIN_FN __attribute__((noipa, used))
#endif

#define MAX_PCS 300
#define CANARY ((uintptr_t)0x5a5a5a5a)

/* Walkers; M_CFI_COLD flushes the rule cache first. */
enum method { M_FP, M_CFI, M_CFI_FALLBACK, M_CFI_COLD, M_GCC, M_COUNT };
#define ALL_METHODS ((1u << M_COUNT) - 1)
#define CFI_METHODS                                                  \
	(1u << M_CFI | 1u << M_CFI_FALLBACK | 1u << M_CFI_COLD | \
	 1u << M_GCC)

static const char *const method_names[M_COUNT] = {
	"unwind_fp", "unwind_cfi", "unwind_cfi+fp", "unwind_cfi(cold)",
	"unwind_gcc"
};

/* One capture: every method in @methods walks the same stack, from the
 * same registers, so their results can be compared frame for frame. */
struct capture {
	unsigned int methods;
	int max;
	uintptr_t hi;	/* top of the calling thread's stack */
	bool corrupt;	/* pass a stack range with hi = lo */
	int repeat;	/* timing: walk this many times */
	int stress;	/* then this many CFI walks, compared with libgcc's */
	int mismatches;
	int n[M_COUNT];
	uintptr_t pcs[M_COUNT][MAX_PCS];
};

/* Written after every call so that no call is a tail call. */
static volatile int sink;
static void *volatile sink_ptr;

static uintptr_t stack_top(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
	assert_int_equal(pthread_attr_getstack(&attr, &addr, &size), 0);
	pthread_attr_destroy(&attr);
	return (uintptr_t)addr + size;
}

static void capture_init(struct capture *c, unsigned int methods, int max)
{
	memset(c, 0, sizeof(*c));
	c->methods = methods;
	c->max = max;
	c->hi = stack_top();
	for (int m = 0; m < M_COUNT; m++)
		for (int i = 0; i < MAX_PCS; i++)
			c->pcs[m][i] = CANARY;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Time spent in cold walks, without the flushes before them. */
static double cold_walk_ns;

static int walk(enum method m, const struct unwind_regs *regs,
		const struct unwind_stack *stk, uintptr_t *pcs, int max)
{
	double t0;
	int n;

	switch (m) {
	case M_FP:
		return unwind_fp(regs, stk, pcs, max);
	case M_CFI:
		return unwind_cfi(regs, stk, pcs, max, false);
	case M_CFI_FALLBACK:
		return unwind_cfi(regs, stk, pcs, max, true);
	case M_CFI_COLD:
		unwind_cfi_flush();
		t0 = now_ns();
		n = unwind_cfi(regs, stk, pcs, max, false);
		cold_walk_ns += now_ns() - t0;
		return n;
	default:
		return unwind_gcc(unwind_regs_ra(regs), pcs, max);
	}
}

/* The hook's entry function stand-in: its registers describe itself. */
int capture_entry(struct capture *c);
CHAIN_FN int capture_entry(struct capture *c)
{
	struct unwind_regs regs;
	struct unwind_stack stk;
	uintptr_t pcs[MAX_PCS];
	const int ref = M_GCC;

	UNWIND_REGS_HERE(&regs);
	stk.lo = regs.sp;
	stk.hi = c->corrupt ? regs.sp : c->hi;
	for (int m = 0; m < M_COUNT; m++) {
		if (!(c->methods & 1u << m))
			continue;
		for (int i = 0; i < (c->repeat > 0 ? c->repeat : 1); i++)
			c->n[m] = walk((enum method)m, &regs, &stk, c->pcs[m],
				       c->max);
	}
	for (int i = 0; i < c->stress; i++) {
		int n = walk(i % 2 ? M_CFI : M_CFI_FALLBACK, &regs, &stk, pcs,
			     c->max);

		if (n != c->n[ref] ||
		    memcmp(pcs, c->pcs[ref], (size_t)n * sizeof(pcs[0])) != 0)
			c->mismatches++;
	}
	sink++;
	return c->n[M_CFI];
}

/* Reads @n bytes at @p, so that the compiler must really build them. */
void touch(const char *p, size_t n);
CHAIN_FN void touch(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sink += p[i];
}

#define CHAIN_LINK(name, next, body)            \
	int name(struct capture *c);            \
	CHAIN_FN int name(struct capture *c)    \
	{                                       \
		int r;                          \
		body;                           \
		r = next(c);                    \
		sink++;                         \
		return r + 1;                   \
	}

CHAIN_LINK(cfi_f8, capture_entry, )
CHAIN_LINK(cfi_f7, cfi_f8, )
CHAIN_LINK(cfi_f6, cfi_f7, {
	_Alignas(64) char big[64];
	char *p = __builtin_alloca((size_t)(c->max & 15) + 1);

	memset(big, c->max, sizeof(big));
	p[0] = 1;
	touch(big, sizeof(big));
	touch(p, 1);
})
CHAIN_LINK(cfi_f5, cfi_f6, {
	char *p = __builtin_alloca((size_t)(c->max & 31) + 8);

	p[0] = 1;
	sink_ptr = p;
})
CHAIN_LINK(cfi_f4, cfi_f5, )
CHAIN_LINK(cfi_f3, cfi_f4, {
	volatile char pad[300];

	pad[c->max % 300] = 1;
	(void)pad;
})
CHAIN_LINK(cfi_f2, cfi_f3, )
CHAIN_LINK(cfi_f1, cfi_f2, )

CHAIN_LINK(fp_f8, capture_entry, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f7, fp_f8, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f6, fp_f7, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f5, fp_f6, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f4, fp_f5, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f3, fp_f4, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f2, fp_f3, sink_ptr = __builtin_frame_address(0))
CHAIN_LINK(fp_f1, fp_f2, sink_ptr = __builtin_frame_address(0))

typedef int chain_fn(struct capture *c);

static chain_fn *const cfi_chain[8] = { cfi_f8, cfi_f7, cfi_f6, cfi_f5,
					cfi_f4, cfi_f3, cfi_f2, cfi_f1 };
static chain_fn *const fp_chain[8] = { fp_f8, fp_f7, fp_f6, fp_f5,
				       fp_f4, fp_f3, fp_f2, fp_f1 };

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* [lo, hi) of the function at @fn, from its dynamic symbol. */
static void func_range(const void *fn, uintptr_t *lo, uintptr_t *hi)
{
	Dl_info info;
	void *symp = NULL;
	const ElfW(Sym) *sym;

	assert_true(dladdr1(fn, &info, &symp, RTLD_DL_SYMENT));
	sym = symp;
	assert_non_null(sym);
	assert_true(info.dli_saddr == fn);
	assert_true(sym->st_size > 0);
	*lo = (uintptr_t)info.dli_saddr;
	*hi = *lo + sym->st_size;
}

/* Whether return address @pc is a call site in @fn (the call ends before
 * @pc, so pc - 1 is inside). */
static bool in_func(uintptr_t pc, const void *fn)
{
	uintptr_t lo, hi;

	func_range(fn, &lo, &hi);
	return pc - 1 >= lo && pc - 1 < hi;
}

static const char *sym_name(uintptr_t pc)
{
	Dl_info info;

	if (dladdr((void *)(pc - 1), &info) && info.dli_sname)
		return info.dli_sname;
	return "?";
}

/* Whether @pc is in the module whose path contains @lib. */
static bool in_lib(uintptr_t pc, const char *lib)
{
	Dl_info info;

	return dladdr((void *)(pc - 1), &info) && info.dli_fname &&
	       strstr(info.dli_fname, lib) != NULL;
}

static void assert_in_func(const struct capture *c, int m, int i,
			   const void *fn, const char *what)
{
	uintptr_t pc = c->pcs[m][i];

	if (i >= c->n[m])
		fail_msg("%s: %d frames, none at %d (%s)", method_names[m],
			 c->n[m], i, what);
	if (!in_func(pc, fn))
		fail_msg("%s: pcs[%d] = %#lx is in %s, not in %s",
			 method_names[m], i, (unsigned long)pc, sym_name(pc),
			 what);
}

/* pcs[0..7] must be the chain, innermost first, and pcs[8] in @caller. */
static void assert_chain(const struct capture *c, int m,
			 chain_fn *const chain[8], const void *caller,
			 const char *caller_name)
{
	for (int i = 0; i < 8; i++) {
		char what[32];

		snprintf(what, sizeof(what), "chain link %d", 8 - i);
		assert_in_func(c, m, i, (const void *)chain[i], what);
	}
	assert_in_func(c, m, 8, caller, caller_name);
}

/* Method @a found exactly the frames method @b found. */
static void assert_same_pcs(const struct capture *c, int a, int b)
{
	for (int i = 0; i < c->n[a] && i < c->n[b]; i++) {
		if (c->pcs[a][i] != c->pcs[b][i])
			fail_msg("frame %d: %s %#lx (%s) != %s %#lx (%s)", i,
				 method_names[a], (unsigned long)c->pcs[a][i],
				 sym_name(c->pcs[a][i]), method_names[b],
				 (unsigned long)c->pcs[b][i],
				 sym_name(c->pcs[b][i]));
	}
	if (c->n[a] != c->n[b])
		fail_msg("%s: %d frames, %s: %d", method_names[a], c->n[a],
			 method_names[b], c->n[b]);
}

/* All CFI walks agree with libgcc's. */
static void assert_cfi_as_gcc(const struct capture *c)
{
	assert_same_pcs(c, M_CFI, M_GCC);
	assert_same_pcs(c, M_CFI_FALLBACK, M_GCC);
	assert_same_pcs(c, M_CFI_COLD, M_GCC);
}

static int index_of_func(const struct capture *c, int m, const void *fn)
{
	for (int i = 0; i < c->n[m]; i++)
		if (in_func(c->pcs[m][i], fn))
			return i;
	return -1;
}

/* The main thread's walk ends in _start, whose RA column is undefined. */
static void assert_ends_in_start(const struct capture *c, int m)
{
	assert_true(c->n[m] > 0 && c->n[m] < c->max);
	assert_string_equal(sym_name(c->pcs[m][c->n[m] - 1]), "_start");
}

int main(void);

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

/* The plain chain: no frame records without frame pointers. */
void test_cfi_chain(void **state);
void test_cfi_chain(void **state)
{
	struct capture *c = malloc(sizeof(*c));

	(void)state;
	assert_non_null(c);
	capture_init(c, CFI_METHODS, 64);
	cfi_f1(c);
	sink++;
	for (int m = M_CFI; m <= M_GCC; m++) {
		assert_chain(c, m, cfi_chain, (const void *)test_cfi_chain,
			     "test_cfi_chain");
		assert_true(index_of_func(c, m, (const void *)main) > 8);
		assert_ends_in_start(c, m);
	}
	assert_cfi_as_gcc(c);
	free(c);
}

/* The frame-record chain, by every method.  unwind_fp() is exact through
 * the chain and into its caller; beyond, this file's own frames may have
 * no record (-fomit-frame-pointer) and Debian's libraries have none, so
 * where it stops is not asserted, but what it found must be the truth. */
void test_fp_chain(void **state);
void test_fp_chain(void **state)
{
	struct capture *c = malloc(sizeof(*c));

	(void)state;
	assert_non_null(c);
	capture_init(c, ALL_METHODS, 64);
	fp_f1(c);
	sink++;
	for (int m = 0; m < M_COUNT; m++)
		assert_chain(c, m, fp_chain, (const void *)test_fp_chain,
			     "test_fp_chain");
	for (int m = M_CFI; m <= M_GCC; m++)
		assert_ends_in_start(c, m);
	assert_cfi_as_gcc(c);
	assert_true(c->n[M_FP] >= 9 && c->n[M_FP] <= 64);
	for (int i = 0; i < 9; i++)
		assert_int_equal(c->pcs[M_FP][i], c->pcs[M_GCC][i]);
	free(c);
}

/* libc is built without frame pointers: only the CFI gets through qsort
 * back to its caller.  ASan intercepts qsort (GCC's even sorts in its
 * own runtime): then only the match with libgcc's walk is checked. */
#if defined(__SANITIZE_ADDRESS__)
#define QSORT_INTERCEPTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QSORT_INTERCEPTED 1
#endif
#endif
#ifndef QSORT_INTERCEPTED
#define QSORT_INTERCEPTED 0
#endif

static struct capture qsort_capture;
static int qsort_calls;

int qsort_compare(const void *a, const void *b);
CHAIN_FN int qsort_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (qsort_calls++ == 0)
		capture_entry(&qsort_capture);
	sink++;
	return (x > y) - (x < y);
}

void test_qsort(void **state);
void test_qsort(void **state)
{
	const struct capture *c = &qsort_capture;
	int v[] = { 5, 3, 9, 1, 7, 2, 8 };

	(void)state;
	capture_init(&qsort_capture, CFI_METHODS, 64);
	qsort_calls = 0;
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), qsort_compare);
	sink++;
	assert_int_equal(v[0], 1);
	assert_int_equal(v[6], 9);

	for (int m = M_CFI; m <= M_GCC; m++) {
		int caller = index_of_func(c, m, (const void *)test_qsort);

		assert_in_func(c, m, 0, (const void *)qsort_compare,
			       "qsort_compare");
		assert_true(caller >= 2);
		for (int i = 1; i < caller && !QSORT_INTERCEPTED; i++)
			if (!in_lib(c->pcs[m][i], "libc.so."))
				fail_msg("pcs[%d] = %#lx (%s) is not in libc",
					 i, (unsigned long)c->pcs[m][i],
					 sym_name(c->pcs[m][i]));
		assert_true(index_of_func(c, m, (const void *)main) > caller);
		assert_ends_in_start(c, m);
	}
	assert_cfi_as_gcc(c);
}

/* A thread: its own stack bounds; the walk ends in libc's thread start. */
static atomic_int stress_done;

void *thread_main(void *p);
CHAIN_FN void *thread_main(void *p)
{
	struct capture *c = p;

	c->hi = stack_top();
	cfi_f1(c);
	sink++;
	if (c->stress)
		atomic_fetch_add(&stress_done, 1);
	return NULL;
}

void test_thread(void **state);
void test_thread(void **state)
{
	struct capture *c = malloc(sizeof(*c));
	pthread_t th;

	(void)state;
	assert_non_null(c);
	capture_init(c, CFI_METHODS, 64);
	assert_int_equal(pthread_create(&th, NULL, thread_main, c), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	for (int m = M_CFI; m <= M_GCC; m++) {
		assert_chain(c, m, cfi_chain, (const void *)thread_main,
			     "thread_main");
		/* start_thread, then clone3 whose RA is undefined. */
		assert_true(c->n[m] >= 10 && c->n[m] < c->max);
		for (int i = 9; i < c->n[m]; i++)
			assert_true(in_lib(c->pcs[m][i], "libc.so."));
	}
	assert_cfi_as_gcc(c);
	free(c);
}

/* Four threads walk while the cache is flushed under them: every walk must
 * still be exact. */
void test_threads_flush(void **state);
void test_threads_flush(void **state)
{
	struct capture *c = calloc(4, sizeof(*c));
	pthread_t th[4];

	(void)state;
	assert_non_null(c);
	atomic_store(&stress_done, 0);
	for (int i = 0; i < 4; i++) {
		capture_init(&c[i], 1u << M_CFI | 1u << M_GCC, 64);
		c[i].stress = 20000;
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &c[i]),
				 0);
	}
	/* Flush for as long as any thread walks (bounded all the same). */
	for (int i = 0; atomic_load(&stress_done) < 4 && i < 1000000; i++)
		unwind_cfi_flush();
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(c[i].mismatches, 0);
		assert_chain(&c[i], M_CFI, cfi_chain, (const void *)thread_main,
			     "thread_main");
		assert_same_pcs(&c[i], M_CFI, M_GCC);
	}
	free(c);
}

/* ------------------------------------------------------------------------
 * The trace cache: cached walks against uncached ones
 *
 * unwind_cfi() reuses the end of the thread's previous walk when a frame
 * and the stack words read from it outward are unchanged.  Its result must
 * be the full walk's in every case.  A walk with a max above the trace
 * cache's limit (256 frames) neither uses nor updates the cache: that is
 * the reference each cached walk is compared with, and, frame for frame,
 * libgcc's walk.
 *
 * The call chains change from capture to capture while keeping frame sizes
 * where they were: siblings with identical frames called from the same
 * call site (so only a return address tells them apart), recursion of
 * varying depth, alloca frames of varying size, over-aligned (DRAP) frames
 * and frame-record functions, under a varying max and fp_fallback.
 * ------------------------------------------------------------------------ */

#define UNCACHED_MAX MAX_PCS /* > 256: walks without the trace cache */
#define PLAN_MAX 10

enum plan_op {
	OP_SIB_A,
	OP_SIB_B,
	OP_SIB_C,
	OP_REC,
	OP_ALLOCA,
	OP_ALIGNED,
	OP_FP,
	OP_COUNT,
	OP_BUSY = OP_COUNT /* test_memo_branching only: never picked at random */
};

/* One thread's run of captures along changing chains. */
struct tcase {
	int op[PLAN_MAX], arg[PLAN_MAX], nplan, pos;
	int max;
	bool fp_fallback;
	bool with_gcc;
	int rounds; /* for tcase_thread() */
	uint64_t rng;
	uintptr_t hi;
	/* (not on the capture's stack: a frame of over 4 KiB loses arm64's
	 * frame pointer, see unwind_cfi.c) */
	uintptr_t ref[MAX_PCS + 1], got[MAX_PCS + 1];
	unsigned long walks, failures;
	char first_failure[200];
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rng_next(s) % n);
}

static void tcase_fail(struct tcase *t, const char *what, int n, int want,
		       int frame)
{
	if (t->failures++ == 0)
		snprintf(t->first_failure, sizeof(t->first_failure),
			 "walk %lu: %s: %d frames, want %d; first difference "
			 "at frame %d (max %d, fp_fallback %d, %d ops)",
			 t->walks, what, n, want, frame, t->max,
			 (int)t->fp_fallback, t->nplan);
}

/* Index of the first difference of two walks, or -1. */
static int walk_diff(const uintptr_t *a, int na, const uintptr_t *b, int nb)
{
	for (int i = 0; i < na && i < nb; i++)
		if (a[i] != b[i])
			return i;
	return na == nb ? -1 : (na < nb ? na : nb);
}

/* The leaf: an uncached walk, then two cached ones (the first follows
 * another chain's walk, the second this one's), from the same registers. */
int trace_capture(struct tcase *t);
CHAIN_FN int trace_capture(struct tcase *t)
{
	struct unwind_regs regs;
	struct unwind_stack stk;
	uintptr_t *ref = t->ref, *got = t->got;
	int nref, n, d;

	UNWIND_REGS_HERE(&regs);
	stk.lo = regs.sp;
	stk.hi = t->hi;
	nref = unwind_cfi(&regs, &stk, ref, UNCACHED_MAX, t->fp_fallback);
	if (nref > t->max)
		nref = t->max;
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i <= t->max; i++)
			got[i] = CANARY;
		n = unwind_cfi(&regs, &stk, got, t->max, t->fp_fallback);
		d = walk_diff(got, n, ref, nref);
		if (d >= 0)
			tcase_fail(t, k ? "cached walk (again)" : "cached walk",
				   n, nref, d);
		else if (got[n] != CANARY)
			tcase_fail(t, "write past the frames", n, nref, n);
		t->walks++;
	}
	if (t->with_gcc) {
		n = unwind_gcc(unwind_regs_ra(&regs), got, t->max);
		d = walk_diff(got, n, ref, nref);
		if (d >= 0)
			tcase_fail(t, "libgcc's walk", n, nref, d);
	}
	sink++;
	return nref;
}

/* Go on along the plan: the next op's function, or the capture.  (Each
 * function below has its one call site here.) */
#define PLAN_NEXT(t)                                                  \
	((t)->pos < (t)->nplan ? plan_ops[(t)->op[(t)->pos++]](t) : \
				 trace_capture(t))

typedef int plan_fn(struct tcase *t);
static plan_fn *const plan_ops[OP_COUNT + 1];

/* Three siblings, the same frame each (distinct code all the same, so that
 * no compiler folds them into one). */
#define PLAN_SIBLING(name, k)                  \
	int name(struct tcase *t);             \
	CHAIN_FN int name(struct tcase *t)     \
	{                                      \
		int r = PLAN_NEXT(t);          \
		sink += k;                     \
		return r + 1;                  \
	}
PLAN_SIBLING(plan_sib_a, 1)
PLAN_SIBLING(plan_sib_b, 2)
PLAN_SIBLING(plan_sib_c, 3)

int plan_rec_n(struct tcase *t, int depth);
CHAIN_FN int plan_rec_n(struct tcase *t, int depth)
{
	int r = depth > 0 ? plan_rec_n(t, depth - 1) : PLAN_NEXT(t);

	sink++;
	return r + 1;
}

int plan_rec(struct tcase *t);
CHAIN_FN int plan_rec(struct tcase *t)
{
	int r = plan_rec_n(t, t->arg[t->pos - 1] % 7);

	sink++;
	return r + 1;
}

int plan_alloca(struct tcase *t);
CHAIN_FN int plan_alloca(struct tcase *t)
{
	char *p = __builtin_alloca((size_t)(t->arg[t->pos - 1] % 200) + 1);
	int r;

	p[0] = 1;
	sink_ptr = p;
	r = PLAN_NEXT(t);
	sink += p[0];
	return r + 1;
}

int plan_aligned(struct tcase *t);
CHAIN_FN int plan_aligned(struct tcase *t)
{
	_Alignas(64) char big[64];
	char *p = __builtin_alloca((size_t)(t->arg[t->pos - 1] % 40) + 1);
	int r;

	memset(big, t->pos, sizeof(big));
	p[0] = 1;
	touch(big, sizeof(big));
	r = PLAN_NEXT(t);
	touch(p, 1);
	return r + 1;
}

int plan_fp(struct tcase *t);
CHAIN_FN int plan_fp(struct tcase *t)
{
	int r;

	sink_ptr = __builtin_frame_address(0); /* a frame record */
	r = PLAN_NEXT(t);
	sink++;
	return r + 1;
}

/* Values that change from walk to walk, live across the call: every
 * callee-saved register (x86-64 rbp too, without frame pointers) holds
 * one, saved in this frame or the next, where the walk reads it. */
int plan_busy(struct tcase *t);
CHAIN_FN int plan_busy(struct tcase *t)
{
	unsigned long a = t->walks + (unsigned long)t->arg[t->pos - 1];
	unsigned long b = a * 3, c = a ^ 0x55, d = a + 7, e = a << 2;
	unsigned long g = a * a, h = a - 9;
	int r = PLAN_NEXT(t);

	sink += (int)(a + b + c + d + e + g + h);
	return r + 1;
}

static plan_fn *const plan_ops[OP_COUNT + 1] = {
	plan_sib_a, plan_sib_b, plan_sib_c, plan_rec,
	plan_alloca, plan_aligned, plan_fp, plan_busy,
};

/* The next plan: mostly the last one with one change (a sibling for
 * another, another depth or alloca size, one op more or less at the inner
 * end), sometimes a new one; max and fp_fallback change now and then. */
static void plan_mutate(struct tcase *t)
{
	static const int maxes[] = { 1, 3, 8, 16, 16, 40, 64, 64, 256 };
	unsigned int what = rng_below(&t->rng, 16);
	int i = t->nplan > 0 ? (int)rng_below(&t->rng, (unsigned)t->nplan) : 0;

	if (what < 5 && t->nplan > 0) {
		if (t->op[i] <= OP_SIB_C)
			t->op[i] = (int)rng_below(&t->rng, 3);
		else
			t->arg[i] = (int)rng_below(&t->rng, 1000);
	} else if (what < 8 && t->nplan < PLAN_MAX) {
		t->op[t->nplan] = (int)rng_below(&t->rng, OP_COUNT);
		t->arg[t->nplan++] = (int)rng_below(&t->rng, 1000);
	} else if (what < 11 && t->nplan > 0) {
		t->nplan--;
	} else if (what < 12) {
		t->nplan = (int)rng_below(&t->rng, PLAN_MAX + 1);
		for (int k = 0; k < t->nplan; k++) {
			t->op[k] = (int)rng_below(&t->rng, OP_COUNT);
			t->arg[k] = (int)rng_below(&t->rng, 1000);
		}
	} else if (what < 14) {
		t->max = maxes[rng_below(&t->rng, sizeof(maxes) /
							  sizeof(maxes[0]))];
	} else if (what < 15) {
		t->fp_fallback = !t->fp_fallback;
	} /* else: the same chain again */
}

static void tcase_init(struct tcase *t, uint64_t seed, bool with_gcc)
{
	memset(t, 0, sizeof(*t));
	t->rng = seed;
	t->max = 64;
	t->with_gcc = with_gcc;
}

/* @rounds captures, each along the plan from here. */
int tcase_run(struct tcase *t, int rounds);
CHAIN_FN int tcase_run(struct tcase *t, int rounds)
{
	int r = 0;

	t->hi = stack_top();
	for (int i = 0; i < rounds; i++) {
		plan_mutate(t);
		t->pos = 0;
		r += PLAN_NEXT(t);
	}
	sink++;
	return r;
}

static void tcase_assert(const struct tcase *t)
{
	if (t->failures)
		fail_msg("%lu of %lu walks differ; first: %s", t->failures,
			 t->walks, t->first_failure);
	assert_true(t->walks > 0);
}

/* Fixed sequences first (each case what the brief of the cache names),
 * then random chains. */
void test_trace_chains(void **state);
void test_trace_chains(void **state)
{
	static const int depths[] = { 3, 5, 4, 5, 0, 6, 6, 1, 3 };
	static const int far[] = { 0, 40, 0, 90, 5, 90, 60, 0, -50, -10, 200 };
	struct tcase *t = malloc(sizeof(*t));

	(void)state;
	assert_non_null(t);
	tcase_init(t, 0x2545f4914f6cdd1dULL, true);
	t->hi = stack_top();

	/* siblings from the same call site, under the same parent */
	for (int i = 0; i < 12; i++) {
		t->nplan = 3;
		t->op[0] = OP_FP;
		t->op[1] = i % 3;
		t->op[2] = (i / 3) % 3;
		t->max = i < 6 ? 64 : 5;
		t->pos = 0;
		PLAN_NEXT(t);
	}
	/* recursion of varying depth, shallower and deeper */
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		t->nplan = 2;
		t->op[0] = OP_REC;
		t->arg[0] = depths[i];
		t->op[1] = OP_SIB_A;
		t->max = 64;
		t->pos = 0;
		PLAN_NEXT(t);
	}
	/* far deeper than before, and back: more new frames in front of
	 * the reused ones than the trace has room for */
	for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		t->nplan = 1;
		t->op[0] = OP_SIB_A;
		t->max = far[i] < 0 ? 64 : 256;
		t->pos = 0;
		plan_rec_n(t, far[i] < 0 ? -far[i] : far[i]);
	}
	/* alloca frames of varying size, above and below a DRAP frame */
	for (int i = 0; i < 12; i++) {
		t->nplan = 4;
		t->op[0] = OP_ALLOCA;
		t->arg[0] = i * 37;
		t->op[1] = OP_ALIGNED;
		t->arg[1] = i * 11;
		t->op[2] = i % 2 ? OP_ALLOCA : OP_SIB_B;
		t->arg[2] = i * 5;
		t->op[3] = OP_SIB_C;
		t->max = 64;
		t->pos = 0;
		PLAN_NEXT(t);
	}
	/* a max that grows and shrinks over the same chain */
	for (int i = 0; i < 10; i++) {
		t->max = (int[]){ 2, 7, 64, 3, 256, 256, 12, 13, 1, 256 }[i];
		t->pos = 0;
		PLAN_NEXT(t);
	}
	tcase_assert(t);

	tcase_init(t, 0x9e3779b97f4a7c15ULL, true);
	tcase_run(t, 3000);
	tcase_assert(t);
	free(t);
}

/* Call paths that branch, as in bench/varbench.c: each walk takes one of
 * sixteen chains at random (two callers, a recursive middle, four leaves,
 * a frame that keeps changing values in callee-saved registers), 16 frames
 * (the default) and both fp_fallback: the walk memo's entries replay, miss
 * and are replaced, and each walk must equal an uncached one. */
void test_memo_branching(void **state);
void test_memo_branching(void **state)
{
	static const int leaves[] = { OP_SIB_A, OP_SIB_B, OP_SIB_C, OP_FP };
	struct tcase *t = malloc(sizeof(*t));

	(void)state;
	assert_non_null(t);
	for (int pass = 0; pass < 2; pass++) {
		tcase_init(t, 0x6a09e667f3bcc909ULL + (uint64_t)pass, false);
		t->hi = stack_top();
		for (int i = 0; i < 4000; i++) {
			unsigned int r = rng_below(&t->rng, 64);

			t->nplan = 6;
			t->op[0] = OP_BUSY;
			t->arg[0] = i;
			t->op[1] = r & 1 ? OP_SIB_A : OP_SIB_B;
			t->op[2] = OP_REC;
			t->arg[2] = 6;
			t->op[3] = OP_BUSY;
			t->arg[3] = i * 7;
			t->op[4] = leaves[(r >> 1) & 3];
			t->op[5] = (r >> 3) & 1 ? OP_BUSY : OP_SIB_C;
			t->arg[5] = i;
			/* pass 1: some walks end inside the chain */
			t->max = pass == 0 ? 16 : (int)(1 + (r >> 4) % 20);
			t->fp_fallback = pass == 0 ? (r >> 4) & 1 : true;
			t->pos = 0;
			PLAN_NEXT(t);
		}
		tcase_assert(t);
	}
	free(t);
}

void *tcase_thread(void *p);
CHAIN_FN void *tcase_thread(void *p)
{
	struct tcase *t = p;

	tcase_run(t, t->rounds);
	sink++;
	return NULL;
}

/* The same in a thread of its own (its own stack, its own trace). */
void test_trace_thread(void **state);
void test_trace_thread(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	pthread_t th;

	(void)state;
	assert_non_null(t);
	tcase_init(t, 0xd1b54a32d192ed03ULL, true);
	t->rounds = 2000;
	assert_int_equal(pthread_create(&th, NULL, tcase_thread, t), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	tcase_assert(t);
	free(t);
}

/* Several threads at once, in waves (so that exited threads' trace blocks
 * are taken over by new ones), while the cache is flushed now and then. */
void test_trace_stress(void **state);
void test_trace_stress(void **state)
{
	enum { THREADS = 4, WAVES = 3 };
	struct tcase *t = calloc(THREADS, sizeof(*t));
	struct timespec pause = { 0, 200000 };
	pthread_t th[THREADS];

	(void)state;
	assert_non_null(t);
	for (int w = 0; w < WAVES; w++) {
		atomic_store(&stress_done, 0);
		for (int i = 0; i < THREADS; i++) {
			uint64_t seed = 0x853c49e6748fea9bULL *
					(uint64_t)(w * THREADS + i + 1);

			tcase_init(&t[i], seed, i == 0);
			t[i].rounds = 4000;
			assert_int_equal(pthread_create(&th[i], NULL,
							tcase_thread, &t[i]),
					 0);
		}
		for (int i = 0; i < 20; i++) {
			nanosleep(&pause, NULL);
			unwind_cfi_flush();
		}
		for (int i = 0; i < THREADS; i++) {
			assert_int_equal(pthread_join(th[i], NULL), 0);
			tcase_assert(&t[i]);
		}
	}
	free(t);
}

/* Frame records laid out by hand, returning into a mapping that is no
 * module (JIT code, say): every frame is stepped by its record, and the
 * "no module" answer is re-checked as the frames are reused.  The stack
 * words, the registers, the range and max change at random between walks;
 * each cached walk must match an uncached one. */
void test_trace_synthetic(void **state);
void test_trace_synthetic(void **state)
{
	enum { WORDS = 96, RECS = 12 };
	uintptr_t *w = calloc(WORDS, sizeof(*w));
	uintptr_t ref[MAX_PCS], got[MAX_PCS + 1];
	struct unwind_regs regs;
	struct unwind_stack stk;
	uint64_t rng = 0x5851f42d4c957f2dULL;
	int rec[RECS], max = 16, lo_word = 0, hi_word = WORDS;
	bool fb = true;
	uint8_t *jit;
	int reused_shape = 0;

	(void)state;
	assert_non_null(w);
	jit = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	assert_true(jit != MAP_FAILED);
	for (int i = 0; i < RECS; i++)
		rec[i] = 4 + 7 * i;
	for (int i = 0; i < RECS; i++) {
		w[rec[i]] = i + 1 < RECS ? (uintptr_t)&w[rec[i + 1]] : 0;
		w[rec[i] + 1] = (uintptr_t)jit + 0x100 * (uintptr_t)i + 0x40;
	}
	regs.pc = (uintptr_t)jit + 0x20;
	regs.fp = (uintptr_t)&w[rec[0]];

	for (int iter = 0; iter < 20000; iter++) {
		unsigned int what = rng_below(&rng, 20);
		int i = (int)rng_below(&rng, RECS), n, nref, d;

		if (what < 3) { /* another return address */
			w[rec[i] + 1] = (uintptr_t)jit +
					0x100 * (uintptr_t)rng_below(&rng, 256);
		} else if (what < 4) { /* one that ends the walk */
			w[rec[i] + 1] = rng_below(&rng, 2) ? 0 : 4095;
		} else if (what < 6) { /* a link to another record */
			w[rec[i]] = (uintptr_t)&w[rec[rng_below(&rng, RECS)]];
		} else if (what < 7) { /* a bad link: to itself, misaligned */
			w[rec[i]] = (uintptr_t)&w[rec[i]] +
				    (rng_below(&rng, 2) ? 4 : 0);
		} else if (what < 9) { /* restore the chain */
			w[rec[i]] = i + 1 < RECS ? (uintptr_t)&w[rec[i + 1]]
						 : 0;
			w[rec[i] + 1] = (uintptr_t)jit +
					0x100 * (uintptr_t)i + 0x40;
		} else if (what < 11) { /* another starting frame */
			regs.fp = (uintptr_t)&w[rec[rng_below(&rng, 4)]];
			regs.pc = (uintptr_t)jit + 0x20 * rng_below(&rng, 3);
		} else if (what < 12) { /* another range */
			lo_word = (int)rng_below(&rng, 5);
			hi_word = WORDS;
			if (rng_below(&rng, 4) == 0)
				hi_word = 40 + (int)rng_below(&rng, WORDS - 40);
		} else if (what < 14) {
			max = (int)(1 + rng_below(&rng, 20));
		} else if (what < 15) {
			fb = !fb;
		} else {
			reused_shape++; /* nothing changes */
		}
		regs.sp = (uintptr_t)&w[lo_word];
		stk.lo = regs.sp;
		stk.hi = (uintptr_t)&w[hi_word];

		nref = unwind_cfi(&regs, &stk, ref, UNCACHED_MAX, fb);
		if (nref > max)
			nref = max;
		for (int k = 0; k <= max; k++)
			got[k] = CANARY;
		n = unwind_cfi(&regs, &stk, got, max, fb);
		d = walk_diff(got, n, ref, nref);
		if (d >= 0)
			fail_msg("walk %d: %d frames, want %d; first "
				 "difference at %d", iter, n, nref, d);
		assert_int_equal(got[n], CANARY);
	}
	assert_true(reused_shape > 0);
	munmap(jit, 1 << 16);
	free(w);
}

/* A "no module here" answer must not outlive the module's arrival: the
 * hook does not see dlopen().  A library is loaded, unloaded, and a frame
 * at one of its functions' entry walked (no module: 0 frames, and the
 * answer is cached); once it is loaded again at the same address, the
 * walk must find its CFI.  (x86-64: at a function's entry the CFA is
 * sp + 8 and the RA is at sp.) */
void test_nomod_dlopen(void **state);
void test_nomod_dlopen(void **state)
{
#if defined(__x86_64__)
	static const char lib[] = "libz.so.1", fn[] = "zlibVersion";
	uintptr_t w[8], pcs[4];
	struct unwind_regs regs;
	struct unwind_stack stk;
	struct dl_find_object dlfo;
	uintptr_t pc, pc2;
	void *h;

	(void)state;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		print_message("(skipped: no %s)\n", lib);
		return;
	}
	pc = (uintptr_t)dlsym(h, fn);
	assert_true(pc != 0);
	dlclose(h);
	if (_dl_find_object((void *)pc, &dlfo) == 0) {
		print_message("(skipped: %s stays loaded)\n", lib);
		return;
	}

	memset(w, 0, sizeof(w));
	w[0] = 0x2000; /* the RA: in no module */
	regs.pc = pc;
	regs.sp = (uintptr_t)&w[0];
	regs.fp = 0;
	stk.lo = regs.sp;
	stk.hi = (uintptr_t)&w[8];
	for (int i = 0; i < 3; i++) /* cached, and the trace too */
		assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, false), 0);

	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	pc2 = (uintptr_t)dlsym(h, fn);
	if (pc2 != pc) {
		print_message("(skipped: %s came back elsewhere)\n", lib);
	} else {
		for (int i = 0; i < 3; i++) {
			pcs[0] = CANARY;
			assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, false),
					 1);
			assert_int_equal(pcs[0], 0x2000);
		}
	}
	/* Unloaded again (with the flush the hook's dlclose() does): the
	 * rule found above, cached and in the trace, must go. */
	dlclose(h);
	unwind_cfi_flush();
	if (_dl_find_object((void *)pc, &dlfo) != 0)
		for (int i = 0; i < 2; i++)
			assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, false),
					 0);
#else
	(void)state;
#endif
}

void test_max_bounds(void **state);
void test_max_bounds(void **state)
{
	struct capture *c = malloc(sizeof(*c));

	(void)state;
	assert_non_null(c);
	for (int k = 0; k < 2; k++) {
		chain_fn *first = k ? cfi_f1 : fp_f1;
		chain_fn *inner = k ? cfi_f8 : fp_f8;
		unsigned int methods = k ? CFI_METHODS : ALL_METHODS;

		capture_init(c, methods, 0);
		first(c);
		for (int m = 0; m < M_COUNT; m++) {
			assert_int_equal(c->n[m], 0);
			assert_int_equal(c->pcs[m][0], CANARY);
		}

		capture_init(c, methods, 1);
		first(c);
		for (int m = 0; m < M_COUNT; m++) {
			if (!(methods & 1u << m))
				continue;
			assert_int_equal(c->n[m], 1);
			assert_in_func(c, m, 0, (const void *)inner,
				       "chain link 8");
			assert_int_equal(c->pcs[m][1], CANARY);
		}

		capture_init(c, methods, 256);
		first(c);
		for (int m = 0; m < M_COUNT; m++) {
			if (!(methods & 1u << m))
				continue;
			assert_true(c->n[m] >= 9 && c->n[m] < 256);
			for (int i = c->n[m]; i < MAX_PCS; i++)
				assert_int_equal(c->pcs[m][i], CANARY);
			if (m != M_FP)
				assert_ends_in_start(c, m);
		}
		assert_cfi_as_gcc(c);
	}
	free(c);
}

void test_corrupt_range(void **state);
void test_corrupt_range(void **state)
{
	struct capture *c = malloc(sizeof(*c));
	uintptr_t pcs[4] = { CANARY, CANARY, CANARY, CANARY };
	struct unwind_regs regs;
	struct unwind_stack stk;

	(void)state;
	assert_non_null(c);
	capture_init(c, ALL_METHODS & ~(1u << M_GCC), 64);
	c->corrupt = true;
	fp_f1(c);
	for (int m = 0; m < M_COUNT; m++) {
		assert_int_equal(c->n[m], 0);
		assert_int_equal(c->pcs[m][0], CANARY);
	}
	free(c);

	/* hi below lo, and registers that point nowhere. */
	UNWIND_REGS_HERE(&regs);
	stk.lo = regs.sp;
	stk.hi = regs.sp - 64;
	assert_int_equal(unwind_fp(&regs, &stk, pcs, 4), 0);
	assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, true), 0);
	stk.hi = stack_top();
	regs.sp = regs.fp = 8;
	assert_int_equal(unwind_fp(&regs, &stk, pcs, 4), 0);
	assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, true), 0);
	regs.pc = 0;
	assert_int_equal(unwind_cfi(&regs, &stk, pcs, 4, true), 0);
	assert_int_equal(pcs[0], CANARY);
}

/* Frame records laid out by hand in an array: every stop condition of the
 * frame-pointer walk, and the CFI walk's fallback for PCs in no module. */
#define SYN_WORDS 64
#define SYN_RA(i) ((uintptr_t)0x2000 + 0x100 * (i)) /* never mapped */

struct syn_stack {
	uintptr_t w[SYN_WORDS];
	struct unwind_regs regs;
	struct unwind_stack stk;
	int rec[8], nrec; /* where syn_build() put the records */
};

/* Records at word offsets rec[0] < rec[1] < ...; record i links to
 * record i + 1 and returns to SYN_RA(i). */
static void syn_build(struct syn_stack *s, const int *rec, int nrec)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < nrec; i++) {
		uintptr_t *r = &s->w[rec[i]];

		r[0] = i + 1 < nrec ? (uintptr_t)&s->w[rec[i + 1]] : 0;
		r[1] = SYN_RA(i);
		s->rec[i] = rec[i];
	}
	s->nrec = nrec;
	s->regs.pc = 0x1800; /* no module: no CFI */
	s->regs.sp = (uintptr_t)&s->w[0];
	s->regs.fp = (uintptr_t)&s->w[rec[0]];
	s->stk.lo = (uintptr_t)&s->w[0];
	s->stk.hi = (uintptr_t)&s->w[SYN_WORDS];
}

/* Return addresses in this program's code, for unwind_fp(), which takes
 * (past frame 0) only those in an executable segment of a module. */
void syn_code(void);
CHAIN_FN void syn_code(void)
{
	sink++;
}
#define CODE_RA(i) ((uintptr_t)(void *)syn_code + 1 + (i))

static void syn_expect(struct syn_stack *s, int want)
{
	uintptr_t pcs[SYN_WORDS];
	int n;

	/* the CFI walk's fallback: the same records, PCs in no module */
	n = unwind_cfi(&s->regs, &s->stk, pcs, SYN_WORDS, true);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++)
		assert_int_equal(pcs[i], SYN_RA(i));
	assert_int_equal(unwind_cfi(&s->regs, &s->stk, pcs, SYN_WORDS, false),
			 0);
	/* the frame-pointer walk: the records' RAs moved into code */
	for (int i = 0; i < s->nrec; i++)
		if (s->w[s->rec[i] + 1] == SYN_RA(i))
			s->w[s->rec[i] + 1] = CODE_RA(i);
	n = unwind_fp(&s->regs, &s->stk, pcs, SYN_WORDS);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++)
		assert_int_equal(pcs[i], CODE_RA(i));
}

void test_fp_synthetic(void **state);
void test_fp_synthetic(void **state)
{
	static const int rec[] = { 2, 6, 10, 20, 40 };
	struct syn_stack s;

	(void)state;
	syn_build(&s, rec, 5);
	syn_expect(&s, 5); /* the last record links to 0 */

	syn_build(&s, rec, 5);
	s.w[rec[2] + 1] = 4095; /* RA below 4096 */
	syn_expect(&s, 2);

	syn_build(&s, rec, 5);
	s.w[rec[2]] = (uintptr_t)&s.w[rec[1]]; /* link goes down */
	syn_expect(&s, 3);

	syn_build(&s, rec, 5);
	s.w[rec[2]] = (uintptr_t)&s.w[rec[2]]; /* link to itself */
	syn_expect(&s, 3);

	syn_build(&s, rec, 5);
	s.w[rec[1]] += 4; /* misaligned next record */
	syn_expect(&s, 2);

	syn_build(&s, rec, 5);
	s.w[rec[3]] = (uintptr_t)&s.w[SYN_WORDS - 1]; /* straddles hi */
	syn_expect(&s, 4);

	syn_build(&s, rec, 5);
	s.w[rec[3]] = (uintptr_t)&s.w[SYN_WORDS]; /* at hi */
	syn_expect(&s, 4);

	syn_build(&s, rec, 5);
	s.stk.hi = (uintptr_t)&s.w[rec[2] + 1]; /* RA of record 2 outside */
	syn_expect(&s, 2);

	syn_build(&s, rec, 5);
	s.regs.fp = s.stk.lo - 2 * sizeof(uintptr_t); /* below the stack */
	syn_expect(&s, 0);
}

/* The frame-pointer walk stops at the first return address that is not
 * plausible (frame 0 excepted: the entry function's own record). */
static int syn_fp(struct syn_stack *s, uintptr_t *pcs)
{
	return unwind_fp(&s->regs, &s->stk, pcs, SYN_WORDS);
}

void test_fp_plausible(void **state);
void test_fp_plausible(void **state)
{
	static const int rec[] = { 2, 6, 10, 20, 40 };
	static uintptr_t data_word;
	struct syn_stack s;
	uintptr_t pcs[SYN_WORDS];

	(void)state;
	syn_build(&s, rec, 5);
	for (int i = 0; i < 5; i++)
		s.w[rec[i] + 1] = CODE_RA(i);
	assert_int_equal(syn_fp(&s, pcs), 5);

	s.w[rec[2] + 1] = SYN_RA(2); /* mapped nowhere */
	assert_int_equal(syn_fp(&s, pcs), 2);
	s.w[rec[2] + 1] = (uintptr_t)&data_word; /* data, not code */
	assert_int_equal(syn_fp(&s, pcs), 2);
	s.w[rec[2] + 1] = (uintptr_t)&s.w[30]; /* the stack */
	assert_int_equal(syn_fp(&s, pcs), 2);
	s.w[rec[2] + 1] = (uintptr_t)0x00007ffd0000000dULL;
	assert_int_equal(syn_fp(&s, pcs), 2);
	s.w[rec[2] + 1] = (uintptr_t)(void *)malloc; /* code elsewhere (libc) */
	assert_int_equal(syn_fp(&s, pcs), 5);
	assert_int_equal(pcs[2], (uintptr_t)(void *)malloc);

	/* frame 0 is taken wherever it returns to (JIT code, say) */
	s.w[rec[0] + 1] = SYN_RA(0);
	assert_int_equal(syn_fp(&s, pcs), 5);
	assert_int_equal(pcs[0], SYN_RA(0));

	/* the excluded range (the hook's own code) ends the walk */
	unwind_fp_exclude(CODE_RA(3), CODE_RA(4));
	assert_int_equal(syn_fp(&s, pcs), 3);
	unwind_fp_exclude(0, 0);
	assert_int_equal(syn_fp(&s, pcs), 5);
}

void test_strip_pac(void **state);
void test_strip_pac(void **state)
{
	uintptr_t plain = (uintptr_t)0x0000fedcba987654ULL;

	(void)state;
	assert_int_equal(unwind_strip_pac(plain), plain);
	assert_int_equal(unwind_strip_pac(0), 0);
#if defined(__aarch64__)
	/* Signature bits 48-54 and 56-63 of a user address go; a kernel
	 * address (bit 55 set) is left alone. */
	assert_int_equal(unwind_strip_pac(plain | (uintptr_t)0x7f << 48), plain);
	assert_int_equal(unwind_strip_pac(plain | (uintptr_t)0xff << 56), plain);
	assert_int_equal(unwind_strip_pac(plain | (uintptr_t)1 << 55 |
					  (uintptr_t)0x3 << 48),
			 plain | (uintptr_t)1 << 55 | (uintptr_t)0x3 << 48);
#else
	assert_int_equal(unwind_strip_pac(~(uintptr_t)0), ~(uintptr_t)0);
#endif
}

void test_supported(void **state);
void test_supported(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__aarch64__)
	assert_true(unwind_cfi_supported());
#else
	assert_false(unwind_cfi_supported());
#endif
}

/* Timing, printed only: a 16-frame capture by each method, warm (but for
 * the cold walk, which follows a flush of the rule cache). */
int bench_rec(struct capture *c, int depth);
CHAIN_FN int bench_rec(struct capture *c, int depth)
{
	int r;

	sink_ptr = __builtin_frame_address(0); /* a frame record */
	r = depth > 0 ? bench_rec(c, depth - 1) : capture_entry(c);
	sink++;
	return r;
}

/* Timing, printed only: 16 frame records returning into a mapping that is
 * no module (JIT code): every frame's "no module" answer is re-checked,
 * by the trace cache as by the rule cache. */
static void nomod_timing(void)
{
	enum { RECS = 16 };
	uintptr_t w[2 * RECS + 2], pcs[UNCACHED_MAX];
	struct unwind_regs regs;
	struct unwind_stack stk;
	uint8_t *jit;
	int reps = 200000, n = 0;
	double t0;

	jit = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	assert_true(jit != MAP_FAILED);
	memset(w, 0, sizeof(w));
	for (int i = 0; i < RECS; i++) {
		w[2 * i] = i + 1 < RECS ? (uintptr_t)&w[2 * i + 2] : 0;
		w[2 * i + 1] = (uintptr_t)jit + 0x100 * (uintptr_t)i + 0x40;
	}
	regs.pc = (uintptr_t)jit + 0x20;
	regs.sp = regs.fp = (uintptr_t)&w[0];
	stk.lo = regs.sp;
	stk.hi = (uintptr_t)&w[2 * RECS + 2];
	for (int k = 0; k < 2; k++) {
		int max = k ? UNCACHED_MAX : RECS;

		t0 = now_ns();
		for (int i = 0; i < reps; i++)
			n = unwind_cfi(&regs, &stk, pcs, max, true);
		print_message("unwind_cfi+fp     %2d frames %8.1f ns per "
			      "capture, in no module, %s\n",
			      n, (now_ns() - t0) / reps,
			      k ? "without the trace cache" : "warm");
	}
	munmap(jit, 1 << 16);
}

void test_timing(void **state);
void test_timing(void **state)
{
	struct capture *c = malloc(sizeof(*c));
	double flush_ns, t0;

	(void)state;
	assert_non_null(c);
	t0 = now_ns();
	for (int i = 0; i < 1000; i++)
		unwind_cfi_flush();
	flush_ns = (now_ns() - t0) / 1000;

	for (int m = 0; m < M_COUNT; m++) {
		int reps = m == M_GCC || m == M_CFI_COLD ? 2000 : 200000;
		double ns;

		capture_init(c, 1u << m, 16);
		c->repeat = reps;
		t0 = now_ns();
		if (m == M_CFI_COLD) {
			/* every frame a different PC, every one a miss */
			cold_walk_ns = 0;
			cfi_f1(c);
			ns = cold_walk_ns / reps;
		} else {
			bench_rec(c, 20); /* 16 frames with records */
			ns = (now_ns() - t0) / reps;
		}
		sink++;
		print_message("%-17s %2d frames %8.1f ns per capture\n",
			      method_names[m], c->n[m], ns);
	}
	print_message("unwind_cfi_flush           %8.1f ns\n", flush_ns);
	free(c);
	nomod_timing();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfi_chain),
		cmocka_unit_test(test_fp_chain),
		cmocka_unit_test(test_qsort),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_threads_flush),
		cmocka_unit_test(test_trace_chains),
		cmocka_unit_test(test_memo_branching),
		cmocka_unit_test(test_trace_thread),
		cmocka_unit_test(test_trace_stress),
		cmocka_unit_test(test_trace_synthetic),
		cmocka_unit_test(test_nomod_dlopen),
		cmocka_unit_test(test_max_bounds),
		cmocka_unit_test(test_corrupt_range),
		cmocka_unit_test(test_fp_synthetic),
		cmocka_unit_test(test_fp_plausible),
		cmocka_unit_test(test_strip_pac),
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_timing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
