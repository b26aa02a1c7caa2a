/* leaksnap diff: creating and freeing a diff, and its simple accessors.
 * The stages of a diff are in the other files of diff/ (diff_internal.h
 * lists them). */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"

static const char *const by_names[] = {"stack", "site", "function", "module"};
static const char *const trend_names[] = {"grew", "steady", "growing", "stopped"};

const char *leaksnap_diff_by_name(enum leaksnap_diff_by by)
{
	return (unsigned)by < 4 ? by_names[by] : "?";
}

const char *leaksnap_diff_trend_name(enum leaksnap_diff_trend t)
{
	return (unsigned)t < 4 ? trend_names[t] : "?";
}

struct leaksnap_diff *leaksnap_diff_new(const struct leaksnap_diff_options *opts, size_t nsnapshots,
		      struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	if (nsnapshots < 2 || nsnapshots > LEAKSNAP_DIFF_MAX_SNAPSHOTS) {
		kit_error(err, LEAKSNAP_ERR_USAGE, "diff",
			  "a diff needs 2 to %d snapshots, got %zu", LEAKSNAP_DIFF_MAX_SNAPSHOTS,
			  nsnapshots);
		return NULL;
	}
	struct leaksnap_diff_options known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_diff_options", err) != 0)
		return NULL;
	if ((unsigned)known.by > LEAKSNAP_DIFF_BY_MODULE) {
		kit_error(err, LEAKSNAP_ERR_USAGE, "diff", "unknown grouping %d", (int)known.by);
		return NULL;
	}
	struct leaksnap_diff *d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	d->o = known;
	d->n = nsnapshots;
	d->snaps = calloc(nsnapshots, sizeof(*d->snaps));
	d->files = calloc(nsnapshots, sizeof(*d->files));
	d->exes = calloc(nsnapshots, sizeof(*d->exes));
	d->zyg = calloc(nsnapshots, sizeof(*d->zyg));
	d->app = calloc(nsnapshots, sizeof(*d->app));
	d->bases = calloc(nsnapshots, sizeof(*d->bases));
	if (!d->snaps || !d->files || !d->exes || !d->zyg || !d->app || !d->bases)
		goto nomem;
	return d;
nomem:
	leaksnap_diff_free(d);
	kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	return NULL;
}

/* The group views made on access, and the array of them. */
static void free_views(struct group_priv **views, size_t n)
{
	for (size_t i = 0; views && i < n; i++)
		if (views[i]) {
			free(views[i]->frames);
			free(views[i]);
		}
	free(views);
}

void leaksnap_diff_free(struct leaksnap_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n && d->files; i++)
		free(d->files[i]);
	free(d->files);
	for (size_t i = 0; i < d->n && d->exes; i++)
		free(d->exes[i]);
	free(d->exes);
	free(d->snaps);
	free(d->zyg);
	free(d->app);
	free(d->bases);
	for (size_t i = 0; i < d->mod_count; i++) {
		free(d->mods[i].path);
		free(d->mods[i].maps);
	}
	free(d->mods);
	free(d->mod_slots);
	free(d->info);
	free(d->frames);
	free(d->frame_slots);
	lsd_seqtab_free(&d->stacks);
	free(d->pcs);
	free(d->group_of);
	lsd_seqtab_free(&d->keys);
	if (d->gacc != d->acc)
		free(d->gacc);
	free(d->acc);
	if (d->guacc != d->uacc)
		free(d->guacc);
	free(d->uacc);
	if (d->gsacc != d->sacc)
		free(d->gsacc);
	free(d->sacc);
	free(d->rep);
	free(d->nstacks);
	lsd_seqtab_free(&d->names);
	kit_table_free(&d->views, false); /* (the views are freed below) */
	free_views(d->pub_suspects, d->nsuspects);
	free_views(d->pub_stopped, d->nstopped);
	free_views(d->pub_unreach, d->nunreach);
	free(d->suspects);
	free(d->stopped);
	free(d->unreach);
	for (size_t i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->symmods);
	free(d);
}

/* Accessors ---------------------------------------------------------------------- */

size_t leaksnap_diff_snapshot_count(const struct leaksnap_diff *d) { return d->n; }
const struct leaksnap_diff_snapshot *leaksnap_diff_snapshot(const struct leaksnap_diff *d, size_t i)
{
	return i < d->added ? &d->snaps[i] : NULL;
}
bool leaksnap_diff_zygote_included(const struct leaksnap_diff *d) { return d->include_zygote; }
uint64_t leaksnap_diff_sample_interval(const struct leaksnap_diff *d) { return d->sample_interval; }
int64_t leaksnap_diff_suspects_bytes(const struct leaksnap_diff *d) { return d->suspect_bytes; }
int64_t leaksnap_diff_suspects_count(const struct leaksnap_diff *d) { return d->suspect_count; }
uint64_t leaksnap_diff_suppressed_records(const struct leaksnap_diff *d) { return d->suppressed; }
size_t leaksnap_diff_warning_count(const struct leaksnap_diff *d) { return d->nwarnings; }
const char *leaksnap_diff_warning(const struct leaksnap_diff *d, size_t i)
{
	return i < d->nwarnings ? d->warnings[i] : NULL;
}
size_t leaksnap_diff_symbol_module_count(const struct leaksnap_diff *d) { return d->nsymmods; }
const struct leaksnap_sym_module *leaksnap_diff_symbol_module(const struct leaksnap_diff *d,
							      size_t i)
{
	return i < d->nsymmods ? d->symmods[i] : NULL;
}
