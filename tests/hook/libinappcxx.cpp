// A C++ plug-in a C program dlopen()s with RTLD_LOCAL (the in-app tests):
// its C++ runtime is then in no global scope, as an Android app's
// libc++_shared.so is.  Leaks through new[], new, aligned new and nothrow
// new; what it deletes is gone.
#include <cstddef>
#include <new>

struct Blob {
	char bytes[7002];
};

void *cxxplug_keep[8];
static volatile int sink;

extern "C" __attribute__((noinline)) void cxxplug_leak_array()
{
	cxxplug_keep[0] = new char[7001];
	sink++;
}

extern "C" __attribute__((noinline)) void cxxplug_leak_object()
{
	cxxplug_keep[1] = new Blob();
	sink++;
}

extern "C" __attribute__((noinline)) void cxxplug_leak_aligned()
{
	cxxplug_keep[2] = new (std::align_val_t(64)) char[7040];
	sink++;
}

extern "C" __attribute__((noinline)) void cxxplug_leak_nothrow()
{
	cxxplug_keep[3] = new (std::nothrow) char[7006];
	sink++;
}

extern "C" __attribute__((noinline)) void cxxplug_churn()
{
	for (int i = 0; i < 100; i++) {
		Blob *b = new Blob();
		char *a = new char[7005];
		sink += b->bytes[0] + a[0];
		delete[] a;
		delete b;
	}
}
