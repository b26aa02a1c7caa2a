/* storegen: fill a store with many runs fast, through the store's own
 * writing interface (store/store.h) rather than through dumps, for the
 * history benchmark (bench/store_ch.sh).
 *
 *   storegen --db DB [--builds N] [--runs N] [--records N] [--snapshots N]
 *            [--grow-all] [--seed S]
 *
 * DB is a SQLite file or a clickhouse:// URL (a new store: the runs are
 * written, not checked against what is there).  The default shape is a
 * CI's: 100 builds x 10 runs (labels build, test -- one of 10 -- and
 * device -- one of 3), each run 3 snapshots (2 when the run's number
 * says so) of 10,000 records, one per stack.  Stacks are call paths of a
 * program of 8 modules of 4,000 functions: main, then frames drawn so
 * that outer frames are shared by many stacks and inner ones branch
 * (a tree of call paths), then one of a few allocation call sites, then
 * malloc or operator new.  Each build moves the app's modules (their
 * offsets change every build, the system's every 10: new frames, new
 * stacks; the same function names), and 3% of the stacks grow from one
 * snapshot to the next (2% in every build, 1% changing every 5 builds;
 * the others keep their bytes, or lose some).
 * --grow-all: every stack grows (history's unfriendly case: a growth
 * row per record).  Frames are symbolized (function, file, line) as a
 * symbolizer would.  Prints the rows written and the time taken. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store.h"

#define MODULES 8
#define FUNCS 4000
#define DEPTH 12
#define APP_MODULES 3      /* the first ones: the app's, changing every build */
#define SITES 64           /* allocation call sites */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "storegen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static struct opts {
	const char *db;
	unsigned builds, runs, records, snapshots;
	bool grow_all;
	uint64_t seed;
} o = {NULL, 100, 10, 10000, 3, false, 1};

/* A frame: (module, function) in a build.  Its id, offset and names. */
static uint64_t module_epoch(unsigned m, unsigned build)
{
	return m < APP_MODULES ? build : build / 10;
}

static uint64_t frame_id(unsigned m, unsigned f, unsigned build)
{
	return mix(o.seed ^ mix(((uint64_t)m << 48) ^ ((uint64_t)module_epoch(m, build) << 20) ^ f)) | 1;
}

static uint64_t rel_pc(unsigned m, unsigned f, unsigned build)
{
	return 0x10000 + (uint64_t)f * 0x140 + (mix(f ^ (uint64_t)m << 32) & 0xf8) +
	       module_epoch(m, build) * 0x40;
}

/* The function at depth @d (0: outermost) of stack @k: outer frames are
 * shared by many stacks, inner ones by fewer (a tree of call paths). */
static void frame_at(unsigned k, unsigned d, unsigned *m, unsigned *f)
{
	if (d == 0) {
		*m = 0;
		*f = 0; /* main */
		return;
	}
	unsigned shift = d < 9 ? 2 * (9 - d) : 0;
	uint64_t h = mix(o.seed * 1315423911u + d * 0x1000193u + (k >> shift));
	*m = (unsigned)(h % MODULES);
	*f = 1 + (unsigned)((h >> 8) % (FUNCS - 1 - SITES - 2));
}

/* Stack @k of a build: its frames innermost first (@m, @f), its depth. */
static unsigned stack_of(unsigned k, unsigned *m, unsigned *f)
{
	unsigned n = 0;
	/* malloc or operator new (libc, module 7), an allocation call site */
	m[n] = MODULES - 1;
	f[n++] = FUNCS - 1 - (k & 1);
	m[n] = MODULES - 1;
	f[n++] = FUNCS - 3 - (unsigned)(mix(k ^ 77) % SITES);
	unsigned depth = DEPTH - (unsigned)(mix(k) % 4);
	for (unsigned d = depth; d-- > 0;) {
		frame_at(k, d, &m[n], &f[n]);
		n++;
	}
	return n;
}

static int cmp_stack(const void *a, const void *b)
{
	int64_t x = (int64_t)((const struct leaksnap_store_stack *)a)->id;
	int64_t y = (int64_t)((const struct leaksnap_store_stack *)b)->id;
	return x < y ? -1 : x > y;
}

static void function_name(unsigned m, unsigned f, char *buf, size_t size)
{
	if (m == MODULES - 1 && f == FUNCS - 1)
		snprintf(buf, size, "malloc");
	else if (m == MODULES - 1 && f == FUNCS - 2)
		snprintf(buf, size, "operator new(unsigned long)");
	else if (m == 0 && f == 0)
		snprintf(buf, size, "main");
	else
		snprintf(buf, size, "mod%u::function_%04u(int, char const*)", m, f);
}

static struct leaksnap_store *st;
static struct leaksnap_error err;
static uint64_t n_records, n_stacks, n_frames, n_snapshots;

static void check(int rc, const char *what)
{
	if (rc != 0)
		die("%s: %s: %s", what, err.source, err.text);
}

/* The frames of build @b, each (module, function) once: put. */
static void put_frames(unsigned b)
{
	enum { BATCH = 1024 };
	static struct leaksnap_store_frame v[BATCH];
	static struct leaksnap_store_symbol sy[BATCH];
	static char names[BATCH][96], files[BATCH][64], paths[MODULES][64], bids[MODULES][41];
	for (unsigned m = 0; m < MODULES; m++) {
		snprintf(paths[m], sizeof(paths[m]), m < APP_MODULES ? "/data/app/com.example/lib/arm64/libapp%u.so"
								     : "/system/lib64/libsys%u.so",
			 m);
		snprintf(bids[m], sizeof(bids[m]), "%016" PRIx64 "%016" PRIx64 "%08x",
			 mix(m ^ module_epoch(m, b) << 8), mix(m + 99), m);
	}
	size_t n = 0;
	for (unsigned m = 0; m < MODULES; m++) {
		if (b > 0 && module_epoch(m, b) == module_epoch(m, b - 1))
			continue; /* (the same frames as the build before) */
		for (unsigned f = 0; f < FUNCS; f++) {
			function_name(m, f, names[n], sizeof(names[n]));
			snprintf(files[n], sizeof(files[n]), "src/mod%u/file%03u.cc", m, f / 16);
			sy[n] = (struct leaksnap_store_symbol){names[n], files[n], 10 + f % 500, 1 + f % 40,
							       false};
			v[n] = (struct leaksnap_store_frame){frame_id(m, f, b), paths[m], bids[m],
							     rel_pc(m, f, b), &sy[n], 1};
			if (++n == BATCH) {
				check(leaksnap_store_put_frames(st, v, n, &err), "frames");
				n_frames += n;
				n = 0;
			}
		}
	}
	check(leaksnap_store_put_frames(st, v, n, &err), "frames");
	n_frames += n;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"db", required_argument, NULL, 'D'},     {"builds", required_argument, NULL, 'b'},
		{"runs", required_argument, NULL, 'r'},   {"records", required_argument, NULL, 'n'},
		{"snapshots", required_argument, NULL, 's'}, {"grow-all", no_argument, NULL, 'g'},
		{"seed", required_argument, NULL, 'S'},   {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'D': o.db = optarg; break;
		case 'b': o.builds = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': o.runs = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'n': o.records = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': o.snapshots = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'g': o.grow_all = true; break;
		case 'S': o.seed = strtoull(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: storegen --db DB [--builds N] [--runs N] [--records N] "
					"[--snapshots N] [--grow-all] [--seed S]\n");
			return 2;
		}
	}
	if (!o.db || !o.builds || !o.runs || !o.records || o.snapshots < 2 || optind != argc)
		die("usage: storegen --db DB [--builds N] [--runs N] [--records N] [--snapshots N>=2] "
		    "[--grow-all] [--seed S]");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = leaksnap_store_open(o.db, NULL, &err);
	if (!st)
		die("%s: %s", err.source, err.text);
	struct leaksnap_store_record *rec = calloc(o.records, sizeof(*rec));
	struct leaksnap_store_stack *stk = calloc(o.records, sizeof(*stk));
	uint64_t *ids = calloc((size_t)o.records * (DEPTH + 2), sizeof(*ids));
	uint64_t *sizes = calloc(o.records, sizeof(*sizes));
	struct leaksnap_store_stack *sorted = calloc(o.records, sizeof(*sorted));
	if (!rec || !stk || !ids || !sizes || !sorted)
		die("out of memory");
	static const char *const devices[] = {"pixel7", "pixel8", "emulator"};
	for (unsigned b = 0; b < o.builds; b++) {
		/* this build's stacks */
		unsigned mm[DEPTH + 2], ff[DEPTH + 2];
		for (unsigned k = 0; k < o.records; k++) {
			unsigned n = stack_of(k, mm, ff);
			uint64_t h = 0x737461636bULL ^ n;
			for (unsigned i = 0; i < n; i++) {
				ids[(size_t)k * (DEPTH + 2) + i] = frame_id(mm[i], ff[i], b);
				h = mix(h ^ ids[(size_t)k * (DEPTH + 2) + i]);
			}
			stk[k] = (struct leaksnap_store_stack){h, ids + (size_t)k * (DEPTH + 2), n};
			sizes[k] = 16u << (mix(k * 3 + 1) % 9);
		}
		/* (put in key order, as the store's ingest does) */
		memcpy(sorted, stk, o.records * sizeof(*sorted));
		qsort(sorted, o.records, sizeof(*sorted), cmp_stack);
		for (unsigned r = 0; r < o.runs; r++) {
			char build[16], test[16];
			snprintf(build, sizeof(build), "%u", 5000 + b);
			snprintf(test, sizeof(test), "test_%02u", r);
			struct leaksnap_store_label labels[] = {
				{"build", build}, {"device", devices[(b + r) % 3]}, {"test", test}};
			uint64_t run_id = mix(o.seed ^ mix((uint64_t)b << 32 | r));
			struct leaksnap_store_run run = {.id = run_id, .pid = 1000 + r, .start = "",
							 .exe = "/data/app/com.example/app",
							 .build_id = "", .cmdline = test, .labels = labels,
							 .label_count = 3};
			check(leaksnap_store_run_begin(st, &run, &err), "run");
			if (r == 0)
				put_frames(b);
			unsigned snaps = o.snapshots - (o.snapshots > 2 && mix(run_id) % 3 == 0);
			for (unsigned s = 0; s < snaps; s++) {
				struct leaksnap_store_snapshot sn = {.run_id = run_id};
				sn.id = mix(run_id ^ (s + 1) * 0x51ed27ULL) | 1;
				snprintf(sn.hash, sizeof(sn.hash), "%016" PRIx64 "%016" PRIx64, sn.id,
					 mix(sn.id));
				char source[64];
				snprintf(source, sizeof(source), "runs/%u/%u/app.%u.%04u.dump", b, r,
					 1000 + r, s + 1);
				sn.source = source;
				sn.time_ns = 1700000000000000000ULL +
					     ((uint64_t)b * o.runs + r) * 3600000000000ULL +
					     s * 60000000000ULL;
				sn.seq = s + 1;
				for (unsigned k = 0; k < o.records; k++) {
					uint64_t h = mix(k ^ (uint64_t)b << 40 ^ (uint64_t)r << 24);
					/* 2% leak in every build, 1% more from a build on */
					bool grows = o.grow_all || mix(k * 7 + o.seed) % 100 < 2 ||
						     mix(k ^ (uint64_t)(b / 5) << 40) % 100 < 1;
					uint64_t count = 1 + h % 8;
					if (grows)
						count += (uint64_t)s * (1 + (h >> 8) % 4);
					else if (s && (h >> 16) % 5 == 0)
						count = count > 1 ? count - 1 : count;
					rec[k] = (struct leaksnap_store_record){sn.id, k, stk[k].id, sizes[k],
										count, 0, false};
					sn.total_bytes += sizes[k] * count;
					sn.allocations += count;
				}
				sn.record_count = o.records;
				check(leaksnap_store_put_snapshot(st, &sn, &err), "snapshot");
				check(leaksnap_store_put_records(st, rec, o.records, &err), "records");
				if (s == 0)
					check(leaksnap_store_put_stacks(st, sorted, o.records, &err),
					      "stacks");
				n_records += o.records;
				n_snapshots++;
			}
			n_stacks += o.records; /* (put by each run: a build's are the same) */
			check(leaksnap_store_run_commit(st, &err), "commit");
		}
	}
	leaksnap_store_close(st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("storegen: %u runs, %" PRIu64 " snapshots, %" PRIu64 " records, %" PRIu64
	       " stacks (%" PRIu64 " distinct), %" PRIu64 " frames in %.1f s (%.0f records/s)\n",
	       o.builds * o.runs, n_snapshots, n_records, n_stacks,
	       (uint64_t)o.builds * o.records, n_frames, secs, (double)n_records / secs);
	free(rec);
	free(stk);
	free(ids);
	free(sizes);
	free(sorted);
	return 0;
}
