/* leaksnap: the API of the malloc hook libleakhook.so.
 *
 * The hook is loaded with LD_PRELOAD (or `leaksnap record -- CMD`), so a
 * program normally does not link against it.  To call these functions only
 * when the hook is present, look them up at run time:
 *
 *     int (*dump)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "leaksnap_dump");
 *     if (dump)
 *             dump(NULL);
 */
#ifndef LEAKSNAP_LEAKHOOK_H
#define LEAKSNAP_LEAKHOOK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a LEAKSNAP v1 dump of the live allocations now, in the calling
 * thread.  @path = NULL writes the next numbered dump,
 * LEAKSNAP_OUT.<pid>.<n>.dump; otherwise exactly @path.  The maps are
 * written beside it (@path with ".dump" replaced by ".maps", else
 * @path + ".maps").  No existing file is ever replaced.
 * Returns 0, or -1 with errno set (EEXIST: a file of that name exists). */
int leaksnap_dump(const char *path);

/* bionic's API, with its signatures and semantics: *info receives a buffer
 * of *overall_size bytes holding *overall_size / *info_size records of
 * {size_t size (bit 31 = zygote child), size_t allocations,
 *  uintptr_t pc[*backtrace_size]}; *total_memory is the live bytes.
 * Release it with free_malloc_leak_info() (free() also works).  With no
 * live allocations, *info is NULL and *overall_size 0. */
void get_malloc_leak_info(uint8_t **info, size_t *overall_size, size_t *info_size,
			  size_t *total_memory, size_t *backtrace_size);
void free_malloc_leak_info(uint8_t *info);

#ifdef __cplusplus
}
#endif

#endif
