// Symbolizer fixture: C++ with deep inlining, templates, lambdas, clones and
// a map, built at test time by tests/t-symbolizer.sh with several compilers
// and flags.  The LINE markers name lines the test looks for.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace fx {

template <typename T> struct Acc {
	T total{};
	inline void add(T v) { total += v * 3 + 1; }
	inline T get() const { return total; }
};

static inline int mix(int a, int b) { return (a * 31) ^ (b >> 2); }

template <typename F> static int apply_all(const std::vector<int> &v, F f)
{
	int r = 0;
	for (int x : v)
		r = mix(r, f(x));
	return r;
}

__attribute__((noinline)) int deep_work(const std::vector<int> &v) // LINE deep_work
{
	Acc<long> acc;
	for (int x : v)
		acc.add(x);
	return apply_all(v, [&](int x) { return (int)(acc.get() % 97) + x; });
}

__attribute__((noinline)) std::string name_of(int i)
{
	std::map<int, std::string> m;
	for (int k = 0; k < 8; k++)
		m[k] = std::to_string(k * i);
	return m[i % 8] + "/" + m[(i + 3) % 8];
}

static __attribute__((noinline)) int clone_me(int a, int unused)
{
	(void)unused;
	return a * a + 7;
}

} // namespace fx

int main(int argc, char **argv)
{
	std::vector<int> v;
	for (int i = 0; i < argc * 100; i++)
		v.push_back(i ^ (int)(argv[0][0]));
	int r = fx::deep_work(v) + fx::clone_me(argc, 5);
	std::printf("%d %s\n", r, fx::name_of(r).c_str());
	return 0;
}
