/* leaksnap diff: the snapshots of one run, in capture order.
 *
 * A shell glob gives m.123.1.dump, m.123.10.dump, m.123.11.dump,
 * m.123.2.dump ...: compared in that order, every series is scrambled.
 * So once the last snapshot is added, the snapshots of one run -- one
 * process from its start to its end -- are put in the order they were
 * taken, by capture time, then by dump number; those of other runs, and
 * those whose run cannot be told, keep the places they were given in.
 *
 * A run is told by the pid, the program (exe=) and the process's start:
 * the hook's dumps say it (process_start=BOOT_ID TICKS); for a dump that
 * does not (another producer's, an older hook's), the address the program
 * is loaded at stands in for it (its first mapping in the snapshot's maps;
 * address-space randomization moves it from run to run).  A snapshot with
 * no pid or no capture time belongs to no run. */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "kit_dumpname.h"
#include "kit_hash.h"

/* Noting each snapshot ----------------------------------------------------------- */

void lsd_order_note(struct leaksnap_diff *d, size_t si, const struct leaksnap_snapshot *snap,
		   const struct leaksnap_maps *maps)
{
	struct leaksnap_diff_snapshot *ds = &d->snaps[si];
	const char *trigger = leaksnap_snapshot_meta_get(snap, "trigger");
	/* the hook's names, with the snapshot's own pid */
	const char *slash = strrchr(ds->file, '/');
	struct kit_dump_name dn;
	enum kit_dump_kind kind = kit_dump_name(slash ? slash + 1 : ds->file, &dn);
	if (ds->pid < 0 || dn.pid != (uint64_t)ds->pid)
		kind = KIT_DUMP_OTHER;
	ds->seq = kind == KIT_DUMP_NUMBERED ? dn.num : 0;
	ds->crash_dump = (trigger && strcmp(trigger, "crash") == 0) || kind == KIT_DUMP_CRASH;
	ds->ends_run = ds->exit_dump || ds->crash_dump || kind == KIT_DUMP_EXIT;
	/* The process's start, when the dump says it (a key of its own: the
	 * top bit set, never a load address the low 63 bits could hold) */
	const char *start = leaksnap_snapshot_meta_get(snap, "process_start");
	if (start && *start) {
		d->bases[si] = kit_fnv1a(KIT_FNV1A_START, start, strlen(start)) | 1ULL << 63;
		return;
	}
	/* else where the program is loaded: its module's lowest address, else
	 * the first mapping's (in /proc/PID/maps order, the program's). */
	uint64_t base = 0;
	for (size_t i = 0; maps && i < leaksnap_maps_module_count(maps); i++) {
		const struct leaksnap_maps_module *m = leaksnap_maps_module(maps, i);
		if (ds->exe && m->path && strcmp(m->path, ds->exe) == 0) {
			base = m->start;
			break;
		}
	}
	for (size_t i = 0; maps && !base && i < leaksnap_maps_mapping_count(maps); i++) {
		const struct leaksnap_maps_mapping *m = leaksnap_maps_mapping(maps, i);
		if (!m->unloaded)
			base = m->start;
	}
	d->bases[si] = base;
}

/* Runs ------------------------------------------------------------------------------ */

static bool in_a_run(const struct leaksnap_diff_snapshot *s)
{
	return s->pid >= 0 && s->has_time;
}

static bool same_run(const struct leaksnap_diff *d, size_t a, size_t b)
{
	const struct leaksnap_diff_snapshot *x = &d->snaps[a], *y = &d->snaps[b];
	return in_a_run(x) && in_a_run(y) && x->pid == y->pid && d->bases[a] == d->bases[b] &&
	       (x->exe ? y->exe && strcmp(x->exe, y->exe) == 0 : !y->exe);
}

/* Capture order within a run: time, then, when both have one, dump
 * number (a dump that ends the run after every number), then the order
 * given. */
static int cmp_capture(const struct leaksnap_diff_snapshot *x,
		       const struct leaksnap_diff_snapshot *y)
{
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	uint64_t sx = x->ends_run ? UINT64_MAX : x->seq, sy = y->ends_run ? UINT64_MAX : y->seq;
	if (sx && sy && sx != sy)
		return sx < sy ? -1 : 1;
	return x->given < y->given ? -1 : x->given > y->given;
}

/* The stack sums of stack row @row (bytes[n], then counts[n]) put in the
 * new order @perm (new index -> old), through @tmp (2n). */
static void permute_row(uint64_t *row, size_t n, const size_t *perm, uint64_t *tmp)
{
	for (size_t i = 0; i < n; i++) {
		tmp[i] = row[perm[i]];
		tmp[n + i] = row[n + perm[i]];
	}
	memcpy(row, tmp, 2 * n * sizeof(*row));
}

/* Everything kept per snapshot, put in the order @perm. */
static int permute(struct leaksnap_diff *d, const size_t *perm)
{
	size_t n = d->n;
	struct leaksnap_diff_snapshot *snaps = malloc(n * sizeof(*snaps));
	char **files = malloc(n * sizeof(*files)), **exes = malloc(n * sizeof(*exes));
	uint64_t(*zyg)[2] = malloc(n * sizeof(*zyg)), (*app)[2] = malloc(n * sizeof(*app));
	uint64_t *bases = malloc(n * sizeof(*bases)), *tmp = malloc(2 * n * sizeof(*tmp));
	int rc = -1;
	if (!snaps || !files || !exes || !zyg || !app || !bases || !tmp)
		goto out;
	for (size_t i = 0; i < n; i++) {
		snaps[i] = d->snaps[perm[i]];
		files[i] = d->files[perm[i]];
		exes[i] = d->exes[perm[i]];
		memcpy(zyg[i], d->zyg[perm[i]], sizeof(*zyg));
		memcpy(app[i], d->app[perm[i]], sizeof(*app));
		bases[i] = d->bases[perm[i]];
	}
	memcpy(d->snaps, snaps, n * sizeof(*snaps));
	memcpy(d->files, files, n * sizeof(*files));
	memcpy(d->exes, exes, n * sizeof(*exes));
	memcpy(d->zyg, zyg, n * sizeof(*zyg));
	memcpy(d->app, app, n * sizeof(*app));
	memcpy(d->bases, bases, n * sizeof(*bases));
	for (size_t s = 0; s < d->stacks.count; s++) {
		permute_row(d->acc + s * 2 * n, n, perm, tmp);
		if (d->uacc)
			permute_row(d->uacc + s * 2 * n, n, perm, tmp);
		if (d->sacc) {
			permute_row(d->sacc + s * 4 * n, n, perm, tmp);
			permute_row(d->sacc + s * 4 * n + 2 * n, n, perm, tmp);
		}
	}
	rc = 0;
out:
	free(snaps);
	free(files);
	free(exes);
	free(zyg);
	free(app);
	free(bases);
	free(tmp);
	return rc;
}

/* Each snapshot's run, as the index of the run's first snapshot. */
static void set_runs(struct leaksnap_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		d->snaps[i].run = in_a_run(&d->snaps[i]) ? i : SIZE_MAX;
		for (size_t j = 0; j < i && d->snaps[i].run == i; j++)
			if (d->snaps[j].run == j && same_run(d, i, j))
				d->snaps[i].run = j;
	}
}

int lsd_order_snapshots(struct leaksnap_diff *d, struct leaksnap_error *err)
{
	size_t n = d->n;
	for (size_t i = 0; i < n; i++)
		d->snaps[i].given = i;
	set_runs(d);
	if (d->o.keep_order)
		return 0;
	/* Within each run, its members sorted into the places it holds. */
	size_t *perm = malloc(n * sizeof(*perm)), *members = malloc(n * sizeof(*members));
	if (!perm || !members) {
		free(perm);
		free(members);
		return kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory");
	}
	bool moved = false;
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	for (size_t r = 0; r < n; r++) {
		if (d->snaps[r].run != r)
			continue;
		size_t k = 0;
		for (size_t i = r; i < n; i++)
			if (d->snaps[i].run == r)
				members[k++] = i;
		/* an insertion sort (at most 1024 of them) through the run's
		 * places: perm[members[a]] is the snapshot that goes there */
		for (size_t a = 0; a < k; a++) {
			size_t v = members[a], b = a;
			while (b > 0 && cmp_capture(&d->snaps[perm[members[b - 1]]], &d->snaps[v]) > 0) {
				perm[members[b]] = perm[members[b - 1]];
				b--;
			}
			perm[members[b]] = v;
		}
		for (size_t a = 0; a < k; a++)
			moved |= perm[members[a]] != members[a];
	}
	int rc = moved ? permute(d, perm) : 0;
	free(perm);
	free(members);
	/* (each run keeps its places, so its first one, the run's number) */
	return rc ? kit_error(err, LEAKSNAP_ERR_NOMEM, "diff", "out of memory") : 0;
}
