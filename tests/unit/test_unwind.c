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
		return unwind_gcc(((const uintptr_t *)regs->fp)[1], pcs, max);
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
	}
	s->regs.pc = 0x1800; /* no module: no CFI */
	s->regs.sp = (uintptr_t)&s->w[0];
	s->regs.fp = (uintptr_t)&s->w[rec[0]];
	s->stk.lo = (uintptr_t)&s->w[0];
	s->stk.hi = (uintptr_t)&s->w[SYN_WORDS];
}

static void syn_expect(struct syn_stack *s, int want)
{
	uintptr_t pcs[SYN_WORDS];
	int n;

	n = unwind_fp(&s->regs, &s->stk, pcs, SYN_WORDS);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++)
		assert_int_equal(pcs[i], SYN_RA(i));
	n = unwind_cfi(&s->regs, &s->stk, pcs, SYN_WORDS, true);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++)
		assert_int_equal(pcs[i], SYN_RA(i));
	assert_int_equal(unwind_cfi(&s->regs, &s->stk, pcs, SYN_WORDS, false),
			 0);
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfi_chain),
		cmocka_unit_test(test_fp_chain),
		cmocka_unit_test(test_qsort),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_threads_flush),
		cmocka_unit_test(test_max_bounds),
		cmocka_unit_test(test_corrupt_range),
		cmocka_unit_test(test_fp_synthetic),
		cmocka_unit_test(test_strip_pac),
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_timing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
