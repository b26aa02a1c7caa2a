// A long-running C++ "service" for tests/t-attach.sh: it answers a request
// for every line on standard input ("N": N requests) and leaks through
// libservleak.so, a library of its own.  Writes READY (argv[1]) when it
// waits for input, and DONE.N after the N-th line.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" void servleak_handle(int request);

static void touch(const std::string &path)
{
	if (FILE *f = std::fopen(path.c_str(), "w"))
		std::fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	touch(argv[1]);
	char line[64];
	int lines = 0;
	while (std::fgets(line, sizeof(line), stdin)) {
		int n = std::atoi(line);
		for (int i = 0; i < n; i++)
			servleak_handle(i);
		touch(std::string(argv[1]) + ".done." + std::to_string(++lines));
	}
	return 0;
}
