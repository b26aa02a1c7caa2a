// C++ exceptions under LEAKSNAP_UNWIND=instrument (t-instrument.sh): built
// with -finstrument-functions and frame pointers.
//   3101 x1  after an exception thrown in throw3 (catcher -> throw1 ->
//            throw2 -> throw3) was caught in catcher: allocated by
//            after_catch, called from catcher
//   3102 x1  in a destructor run while that exception unwound throw2
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

void *instrxx_keep[4];
static volatile int sink;

#define FN __attribute__((noinline))

struct guard {
	FN ~guard()
	{
		instrxx_keep[1] = malloc(3102);
		sink++;
	}
};

FN void throw3() { throw std::runtime_error("x"); }
FN void throw2()
{
	guard g;
	throw3();
	sink++;
}
FN void throw1()
{
	throw2();
	sink++;
}
FN void after_catch()
{
	instrxx_keep[0] = malloc(3101);
	sink++;
}
FN void catcher()
{
	try {
		throw1();
	} catch (const std::exception &) {
		sink++;
	}
	after_catch();
	sink++;
}

int main()
{
	catcher();
	std::printf("done\n");
	return 0;
}
