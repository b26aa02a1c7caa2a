/* Uses the hook's API the way existing callers do (seed 000's
 * memorydumper): get_malloc_leak_info / free_malloc_leak_info, plus
 * leaksnap_dump() and the capture toggle signal.
 *   apiuser DUMP_PATH
 * Prints what it checked; exits 1 on the first mismatch. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leakhook.h"

typedef void (*get_info_fn)(uint8_t **, size_t *, size_t *, size_t *, size_t *);
typedef void (*free_info_fn)(uint8_t *);
typedef int (*dump_fn)(const char *);

static void *keep[16];
static volatile int sink;

#define FAIL(...) do { printf(__VA_ARGS__); printf("\n"); exit(1); } while (0)

__attribute__((noinline)) static void api_leak(size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		keep[i] = malloc(size);
		sink++;
	}
}

/* Count of live allocations of @size in the leak info, or -1. */
static long find(get_info_fn get, free_info_fn release, size_t size, size_t *total_out)
{
	uint8_t *info;
	size_t overall, info_size, total, frames;
	get(&info, &overall, &info_size, &total, &frames);
	if (info_size != sizeof(size_t) * (2 + frames) || frames != 16)
		FAIL("info_size %zu, backtrace_size %zu", info_size, frames);
	if (overall % info_size)
		FAIL("overall_size %zu not a multiple of %zu", overall, info_size);
	long count = 0;
	size_t sum = 0;
	for (size_t off = 0; off < overall; off += info_size) {
		const size_t *rec = (const size_t *)(const void *)(info + off);
		size_t sz = rec[0] & ~((size_t)1 << 31);
		sum += sz * rec[1];
		if (sz == size) {
			if (!rec[2])
				FAIL("record of %zu bytes has no frames", size);
			count += (long)rec[1];
		}
	}
	if (sum != total)
		FAIL("total_memory %zu != sum of records %zu", total, sum);
	*total_out = total;
	release(info);
	return count;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	get_info_fn get = (get_info_fn)dlsym(RTLD_DEFAULT, "get_malloc_leak_info");
	free_info_fn release = (free_info_fn)dlsym(RTLD_DEFAULT, "free_malloc_leak_info");
	dump_fn dump = (dump_fn)dlsym(RTLD_DEFAULT, "leaksnap_dump");
	if (!get || !release || !dump)
		FAIL("hook API not found (not run under the hook?)");
	size_t total;

	api_leak(1201, 3);
	long n = find(get, release, 1201, &total);
	if (n != 3)
		FAIL("1201-byte blocks: %ld, expected 3", n);
	printf("get_malloc_leak_info: 3 x 1201 found\n");

	free(keep[0]);
	n = find(get, release, 1201, &total);
	if (n != 2)
		FAIL("after free: %ld, expected 2", n);
	printf("after free: 2 x 1201\n");

	/* Capture off: new blocks are not recorded, frees still are. */
	raise(LEAKSNAP_HOOK_SIG_TOGGLE);
	api_leak(1202, 1); /* keep[0]: untracked, kept */
	free(keep[1]);     /* a block tracked before: its free still counts */
	n = find(get, release, 1202, &total);
	if (n != 0)
		FAIL("capture off: 1202 recorded %ld times", n);
	n = find(get, release, 1201, &total);
	if (n != 1)
		FAIL("capture off: free not honoured, %ld x 1201 left, expected 1", n);
	raise(LEAKSNAP_HOOK_SIG_TOGGLE);
	api_leak(1203, 1);
	n = find(get, release, 1203, &total);
	if (n != 1)
		FAIL("capture on again: 1203 recorded %ld times", n);
	printf("toggle: off then on\n");

	if (dump(argv[1]) != 0)
		FAIL("leaksnap_dump(%s): %s", argv[1], strerror(errno));
	errno = 0;
	if (dump(argv[1]) != -1 || errno != EEXIST)
		FAIL("second leaksnap_dump(%s): not EEXIST", argv[1]);
	if (dump(NULL) != 0 || dump(NULL) != 0)
		FAIL("leaksnap_dump(NULL): %s", strerror(errno));
	printf("leaksnap_dump: path, EEXIST, two numbered\n");
	return 0;
}
