// The library through which tests/attach/service.cc leaks: each request
// keeps a record in a list nobody trims (the leak tests/t-attach.sh finds
// with leakdiff, at this file's line of "new Entry").
#include <cstddef>
#include <vector>

namespace servleak {

struct Entry {
	char payload[200];
};

static std::vector<Entry *> *history;

extern "C" __attribute__((visibility("default"))) void servleak_handle(int request)
{
	if (history == nullptr)
		history = new std::vector<Entry *>();
	Entry *e = new Entry;  // the leak
	e->payload[0] = static_cast<char>(request);
	history->push_back(e);
}

}  // namespace servleak
