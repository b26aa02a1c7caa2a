/* Test program for shortened names and cut stacks (tests/t-report.sh): three
 * snapshots (leaksnap_dump through dlsym), each round leaking
 *   through std::map<std::string, std::vector<int>>::operator[]  (a node)
 *   in (anonymous namespace)::Pool<Item>::grow(...)               (new Item)
 *   in a lambda, main::{lambda(int)#1}, through std::function
 *   at the bottom of deep(), 30 calls down: more frames than a dump
 *   recorded with LEAKSNAP_FRAMES=16 keeps, so its stack is cut
 * Built with -O0 so that the templates' functions are frames of their own. */
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {
struct Item {
	char bytes[1000];
};

template <class T> struct Pool {
	std::vector<T *> items;
	__attribute__((noinline)) void grow(const std::map<std::string, std::vector<int>> &sizes,
					    int n)
	{
		items.push_back(new T());
		(void)sizes;
		(void)n;
	}
};
} // namespace

static std::map<std::string, std::vector<int>> table;
static Pool<Item> pool;
static void *kept[64];
static int nkept;

__attribute__((noinline)) void deep(int n)
{
	if (n == 0) {
		kept[nkept++] = malloc(700);
		return;
	}
	deep(n - 1);
	__asm__ volatile("");
}

int main()
{
	int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (!dump) {
		fprintf(stderr, "names: not run under the leaksnap hook\n");
		return 1;
	}
	std::function<void(int)> leak = [](int n) { kept[nkept++] = malloc(300 + n); };
	for (int round = 1; round <= 3; round++) {
		table["key " + std::to_string(round)].push_back(round);
		pool.grow(table, round);
		leak(round);
		deep(30);
		if (dump(NULL) != 0)
			return 1;
	}
	return 0;
}
