/* leaksnap: error records, and the conventions every leaksnap library
 * header shares.  Every other public header includes this one.
 *
 *  - Functions that can fail take a caller-owned `struct leaksnap_error *`
 *    (may be NULL), return NULL or a negative value on failure and fill the
 *    error record.  The library never prints and never exits.
 *  - Objects are opaque handles with an open/close pair; close accepts NULL.
 *  - Pointers returned by accessors are borrowed: valid until the owning
 *    object is closed.
 *  - Options structs begin with their size (LEAKSNAP_OPTS).
 *  - Every public name starts with leaksnap_ (LEAKSNAP_ for constants).
 */
#ifndef LEAKSNAP_ERROR_H
#define LEAKSNAP_ERROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef LEAKSNAP_API
#define LEAKSNAP_API __attribute__((visibility("default")))
#endif

/* Options structs (every struct leaksnap_..._opts or _options) begin with
 * their own size, so that their fields can grow: a program built against
 * an older header still works with a newer library (the fields it does not
 * know stay zero), and one that sets fields an older library does not know
 * is refused (LEAKSNAP_ERR_USAGE) rather than silently ignored.  Declare
 * them with this, naming the fields to set:
 *
 *     LEAKSNAP_OPTS(leaksnap_snapshot_open_opts, o, .pointer_size = 4);
 *
 * A NULL options pointer means every field's default. */
#define LEAKSNAP_OPTS(TYPE, NAME, ...) struct TYPE NAME = {.sz = sizeof(struct TYPE), __VA_ARGS__}

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

/* X-macro: code, short description.  Produces the enum and the names. */
#define LEAKSNAP_ERRORS(X)                                   \
	X(LEAKSNAP_OK, "success")                            \
	X(LEAKSNAP_ERR_IO, "I/O error")                      \
	X(LEAKSNAP_ERR_NOMEM, "out of memory")               \
	X(LEAKSNAP_ERR_FORMAT, "malformed input")            \
	X(LEAKSNAP_ERR_VERSION, "unsupported version")       \
	X(LEAKSNAP_ERR_UNKNOWN_FORMAT, "unrecognized format") \
	X(LEAKSNAP_ERR_USAGE, "invalid argument")            \
	X(LEAKSNAP_ERR_LIMIT, "resource limit exceeded")     \
	X(LEAKSNAP_ERR_EXISTS, "file exists")                \
	X(LEAKSNAP_ERR_MAPS_FILE, "a maps file, not a snapshot")

enum leaksnap_code {
#define LEAKSNAP_X_ENUM(code, text) code,
	LEAKSNAP_ERRORS(LEAKSNAP_X_ENUM)
#undef LEAKSNAP_X_ENUM
	LEAKSNAP_ERR__COUNT
};

#define LEAKSNAP_ERROR_SOURCE_MAX 256
#define LEAKSNAP_ERROR_TEXT_MAX 256

/* Caller-owned error record.  The first error set wins; every public entry
 * point that takes one clears it first. */
struct leaksnap_error {
	int code;                              /* enum leaksnap_code */
	char source[LEAKSNAP_ERROR_SOURCE_MAX]; /* file name, "<stdin>", or "" */
	bool has_offset;                       /* offset below is meaningful */
	uint64_t offset;                       /* byte offset in source */
	unsigned long line;                    /* 1-based line, 0 = none */
	char text[LEAKSNAP_ERROR_TEXT_MAX];    /* what is wrong, lower case */
};

/* Reset @err to LEAKSNAP_OK (NULL-safe). */
LEAKSNAP_API void leaksnap_error_clear(struct leaksnap_error *err);

/* Short description of an error code ("malformed input"). Never NULL. */
LEAKSNAP_API const char *leaksnap_code_string(int code);

/* Format @err as "<source>: line N: <text>", "<source>: byte offset N: <text>"
 * or "<source>: <text>" into @buf (always NUL-terminated when @size > 0).
 * Returns @buf. */
LEAKSNAP_API char *leaksnap_error_format(const struct leaksnap_error *err,
					 char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* LEAKSNAP_ERROR_H */
