/* leaksnap fuzz harnesses: shared declarations.
 *
 * Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput.  It is built
 * twice: with clang -fsanitize=fuzzer (make fuzz) to search for inputs, and
 * with replay.c's main() (make check, normal and SANITIZE=1 builds) to run
 * the committed corpus tests/fuzz/corpus/<name>/ as a plain program.
 *
 * A harness aborts (a finding) when the library breaks one of its promises
 * on an input: a failed call must leave a filled error record, and what a
 * successful call returns must be self-consistent. */
#ifndef LEAKSNAP_FUZZ_H
#define LEAKSNAP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <leaksnap/snapshot.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the failed condition (a finding), sanitizer or not. */
#define FUZZ_CHECK(cond)                                                        \
	do {                                                                    \
		if (!(cond))                                                    \
			fuzz_fail(__FILE__, __LINE__, #cond);                   \
	} while (0)

_Noreturn void fuzz_fail(const char *file, int line, const char *what);

/* Fill @err with a stale error, as a caller reusing its record would have
 * it: every entry point must clear the record before using it. */
void fuzz_stale_error(struct leaksnap_error *err);

/* A call failed: its error record must say, in one line, what is wrong
 * with this input (not a stale error). */
void fuzz_check_error(const struct leaksnap_error *err);

/* Open @size bytes at @data as a snapshot with @opts; on success check the
 * model's invariants and run what the tools run on it (top records, maps
 * parsing and lookups, build IDs, a diff of it against itself); on failure
 * check the error record. */
void fuzz_snapshot(const uint8_t *data, size_t size,
		   const struct leaksnap_snapshot_open_opts *opts);

#endif
