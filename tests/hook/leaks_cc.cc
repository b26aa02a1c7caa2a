// C++ leak program for the hook tests: new, new[], aligned new.
//   1012 x2  new char[1012]            cxx_leak_array
//   1013 x1  new Blob (1013 bytes)     cxx_leak_object
//   1024 x1  new (align 64) char[1014] cxx_leak_aligned (libstdc++ rounds the
//            size up to the alignment for aligned_alloc)
// Vectors, strings and maps that are destroyed do not appear.
#include <cstdio>
#include <map>
#include <new>
#include <string>
#include <vector>

struct Blob {
	char bytes[1013];
};

void *cxx_keep[8]; // global: the compiler cannot drop the leaks
static int nkeep;
static volatile int sink;

__attribute__((noinline)) void cxx_leak_array()
{
	for (int i = 0; i < 2; i++) {
		cxx_keep[nkeep++] = new char[1012];
		sink++;
	}
}

__attribute__((noinline)) void cxx_leak_object()
{
	cxx_keep[nkeep++] = new Blob();
	sink++;
}

__attribute__((noinline)) void cxx_leak_aligned()
{
	cxx_keep[nkeep++] = new (std::align_val_t(64)) char[1014];
	sink++;
}

__attribute__((noinline)) void cxx_churn()
{
	for (int i = 0; i < 1000; i++) {
		std::vector<int> v;
		for (int k = 0; k < 500; k++)
			v.push_back(k);
		std::map<int, std::string> m;
		m[i] = std::string(2000, 'x');
		sink += (int)v.size() + (int)m.size();
	}
}

int main()
{
	cxx_leak_array();
	cxx_leak_object();
	cxx_leak_aligned();
	cxx_churn();
	std::printf("done\n");
	return 0;
}
