/* Cross-architecture symbolizer fixture, built by build.sh (beside it) for
 * arm64, 32-bit ARM in Thumb and in ARM state, x86 and x86-64, with no C
 * library.  The built files are committed: the test reads them, it never
 * runs a cross compiler.  The LINE markers name lines the test looks for;
 * editing this file means rebuilding every fixture. */

#if defined(__arm__) && defined(__thumb__)
#define OTHER_ISA __attribute__((noinline, target("arm")))
#elif defined(__arm__)
#define OTHER_ISA __attribute__((noinline, target("thumb")))
#else
#define OTHER_ISA __attribute__((noinline))
#endif

int cross_entry(const int *v, int n) __attribute__((visibility("default")));

/* Its address is loaded from a literal pool in position-independent ARM
 * code: more data inside the code. */
int cross_calls;

static inline int scale(int x)
{
	return x * 3 + (x >> 2); /* LINE scale */
}

__attribute__((noinline)) int cross_helper(int x) /* LINE cross_helper */
{
	return x ^ (x >> 5) ^ 0x55;
}

/* A switch dense enough for a jump table (data inside the code on ARM). */
__attribute__((noinline)) int cross_table(int k, int x) /* LINE cross_table */
{
	switch (k) {
	case 0: return x * 5;
	case 1: return x + 9;
	case 2: return x - 3;
	case 3: return x << 4;
	case 4: return x | 6;
	case 5: return x & 77;
	case 6: return ~x;
	default: return x;
	}
}

/* On 32-bit ARM, in the other instruction set: ARM code in the Thumb build,
 * Thumb code in the ARM build. */
OTHER_ISA int cross_other(int x) /* LINE cross_other */
{
	return cross_helper(x + 1) + 1; /* LINE other_call */
}

int cross_entry(const int *v, int n) /* LINE cross_entry */
{
	int s = 0;
	cross_calls++;
	for (int i = 0; i < n; i++)
		s += scale(v[i]); /* LINE scale_call */
	int r = cross_helper(s); /* LINE helper_call */
	r += cross_table(s & 7, r); /* LINE table_call */
	return r + cross_other(s) + s; /* LINE other_from_entry */
}
