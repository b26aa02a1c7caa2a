/* leaksnap kit: the names of the files the hook writes (leakhook.h):
 * PREFIX.PID.N.dump (N zero-padded to four digits, or not as older hooks
 * wrote it), PREFIX.PID.exit.dump and PREFIX.PID.crash.dump.  One reader
 * for every part that lists or orders them (leakdiff, leaksnap record). */
#ifndef LEAKSNAP_KIT_DUMPNAME_H
#define LEAKSNAP_KIT_DUMPNAME_H

#include <stddef.h>
#include <stdint.h>

/* leakhook.h's own (tests/unit/test_dumpname.c checks that they agree):
 * the kit includes no stage's header. */
#define KIT_DUMP_SUFFIX ".dump"
#define KIT_DUMP_EXIT_TAG "exit"
#define KIT_DUMP_CRASH_TAG "crash"

enum kit_dump_kind { KIT_DUMP_OTHER, KIT_DUMP_NUMBERED, KIT_DUMP_EXIT, KIT_DUMP_CRASH };

struct kit_dump_name {
	size_t prefix_len; /* the bytes of @name before ".PID." */
	uint64_t pid;
	uint64_t num;      /* N (KIT_DUMP_NUMBERED; 1 or more), else 0 */
};

/* Read @name (a file name, no directory) as one of the hook's dump names.
 * KIT_DUMP_OTHER when it is none (no ".dump" end, PID or N not decimal
 * digits or past 64 bits, N = 0).  The prefix may be empty (LEAKSNAP_OUT
 * a directory: "DIR/.PID.N.dump"). */
enum kit_dump_kind kit_dump_name(const char *name, struct kit_dump_name *out);

#endif
