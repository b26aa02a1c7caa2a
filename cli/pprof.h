/* leaksnap CLI: the two pprof profiles (export/'s leaksnap_export_pprof_*)
 * as files: `leaksnap convert --to pprof` and `leakdiff --pprof`.  They
 * open and publish the file, resolve the frames and print the errors. */
#ifndef LEAKSNAP_CLI_PPROF_H
#define LEAKSNAP_CLI_PPROF_H

#include <stdbool.h>
#include <stddef.h>

#include <leaksnap/diff.h>
#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>

/* Options of `convert --to pprof`. */
struct pprof_convert_opts {
	const char *const *dirs; /* --symbols trees */
	size_t ndirs;
	bool no_symbols, no_adjust;
	struct leaksnap_snapshot_rewrite *rewrites; /* --rewrite-prefix, applied to file names */
	size_t rewrite_count;
};
/* Write @s (with its parsed @maps, NULL: none) as a profile at @path,
 * never replacing a file ("-": standard output).  0, or -1 after saying
 * why (a symbol file that could not be read too: the profile is written
 * then, its frames unsymbolized). */
int cli_pprof_snapshot(const struct leaksnap_snapshot *s, const struct leaksnap_maps *maps,
		       const char *path, const struct pprof_convert_opts *o);

/* Write the suspects' growth of the ranked @d as a profile at @path (an
 * existing regular file is replaced only if it is a growth profile
 * leaksnap wrote; "-": standard output); @adjust: the frames were looked
 * up at pc - 1.  0, or -1 after saying why. */
int cli_pprof_diff(struct leaksnap_diff *d, const char *path, bool adjust);

#endif
