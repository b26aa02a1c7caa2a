/* leaksnap CLI: pprof profiles as files.  The profiles are export/'s; here
 * the file is opened and published, the snapshot's frames resolved
 * (symctx.c) and the errors printed. */
#include <stdlib.h>

#include <leaksnap/export.h>

#include "cli.h"
#include "pprof.h"

/* The export's resolve callback: symctx's frames. */
static int resolve_frames(void *arg, const struct leaksnap_maps_location *loc,
			  struct leaksnap_resolved *out)
{
	return cli_symctx_resolve(arg, loc, out) ? EXIT_ERROR : 0; /* (said) */
}

static void progress(void *arg, size_t done, size_t total)
{
	cli_symctx_progress(arg, done, total);
}

/* Every record's frames are about to be resolved. */
static void prefetch_all(struct cli_symctx *sc, const struct leaksnap_maps *maps,
			 const struct leaksnap_snapshot *s)
{
	size_t n = leaksnap_snapshot_record_count(s);
	size_t *all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; i < n; i++)
		all[i] = i;
	cli_symctx_prefetch(sc, maps, s, all, n);
	free(all);
}

int cli_pprof_snapshot(const struct leaksnap_snapshot *s, const struct leaksnap_maps *maps,
		       const char *path, const struct pprof_convert_opts *o)
{
	struct cli_outfile out;
	if (cli_outfile_open(&out, path, CLI_REPLACE_NONE))
		return -1;
	struct cli_symctx *sc = NULL;
	if (!o->no_symbols)
		sc = cli_symctx_new(s, maps, o->dirs, o->ndirs, !o->no_adjust);
	int rc = 0;
	if (!o->no_symbols && !sc) {
		cli_fail(out.path, "out of memory");
		rc = -1;
	} else {
		LEAKSNAP_OPTS(leaksnap_export_pprof_snapshot_opts, eo, .adjust = !o->no_adjust,
			      .rewrites = o->rewrites, .rewrite_count = o->rewrite_count,
			      .resolve = sc ? resolve_frames : NULL,
			      .progress = sc ? progress : NULL, .arg = sc);
		struct leaksnap_error err;
		if (sc)
			prefetch_all(sc, maps, s);
		int er = leaksnap_export_pprof_snapshot(out.f, s, maps, &eo, &err);
		cli_symctx_progress_end(sc);
		if (er == -1)
			cli_fail_output(out.path, &err);
		rc = er ? -1 : 0;
	}
	/* a symbol file that could not be read was reported: the profile is
	 * written, its frames unsymbolized, and the status says so */
	int status = sc ? cli_symctx_status(sc) : EXIT_OK;
	cli_symctx_free(sc);
	rc = cli_outfile_close(&out, rc == 0);
	return rc == 0 && status == EXIT_OK ? 0 : -1;
}

int cli_pprof_diff(struct leaksnap_diff *d, const char *path, bool adjust)
{
	struct cli_outfile out;
	if (cli_outfile_open(&out, path, CLI_REPLACE_OWN_PPROF))
		return -1;
	struct leaksnap_error err;
	int rc = leaksnap_export_pprof_diff(out.f, d, adjust, &err);
	if (rc)
		cli_fail_output(out.path, &err);
	return cli_outfile_close(&out, rc == 0);
}
