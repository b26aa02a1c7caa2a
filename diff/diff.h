/* leaksnap: comparing heap snapshots and ranking suspected leaks.
 *
 * A diff takes two or more snapshots of one program, oldest first, and
 * answers "what grew, from where, and is it a leak?".  Every frame is
 * normalized to (module identity, offset in the module's file): the
 * identity is the module's build ID when the snapshot records one, else
 * its path, so load addresses and pids do not matter; a frame no mapping
 * covers keeps its raw PC.  Records are grouped (by whole stack, by the
 * allocation site, by function names, or by the site's module), each
 * group gets its bytes and count in every snapshot, and the groups that
 * grew are ranked by a score that favours steady growth (docs/diff.md).
 *
 * Nothing here prints; strings returned belong to the diff (or, for
 * symbolized frames, to the resolver given in the options, which must
 * outlive the diff) and live until leaksnap_diff_free().
 *
 *   struct leaksnap_diff *d = leaksnap_diff_new(&opts, nsnapshots, &err);
 *   for each snapshot, oldest first (one run's are put in capture order):
 *           leaksnap_diff_add_snapshot(d, snap, maps, &err);   (snap may be closed after)
 *   leaksnap_diff_rank(d, &err);
 *   leaksnap_diff_suspect_count(d), leaksnap_diff_suspect(d, i), ...
 *   leaksnap_diff_free(d);
 */
#ifndef LEAKSNAP_DIFF_H
#define LEAKSNAP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/maps.h>       /* struct leaksnap_maps */
#include <leaksnap/snapshot.h>   /* struct leaksnap_snapshot, struct leaksnap_error, LEAKSNAP_API */
#include <leaksnap/resolve.h>    /* struct leaksnap_resolver */
#include <leaksnap/symbolizer.h> /* struct leaksnap_sym_frame, struct leaksnap_sym_module */

#ifdef __cplusplus
extern "C" {
#endif

#define LEAKSNAP_DIFF_MAX_SNAPSHOTS 1024

/* What records are grouped by. */
enum leaksnap_diff_by {
	LEAKSNAP_DIFF_BY_STACK = 0, /* the whole normalized stack */
	LEAKSNAP_DIFF_BY_SITE,      /* the first frame outside allocation wrappers */
	LEAKSNAP_DIFF_BY_FUNCTION,  /* the stack's function names (matches across builds) */
	LEAKSNAP_DIFF_BY_MODULE,    /* the module of that first frame */
};

/* Allocations made in a zygote child (bit 31 of the size). */
enum leaksnap_diff_zygote {
	LEAKSNAP_DIFF_ZYGOTE_AUTO = 0, /* left out of Android snapshots, kept for Linux */
	LEAKSNAP_DIFF_ZYGOTE_EXCLUDE,
	LEAKSNAP_DIFF_ZYGOTE_INCLUDE,  /* folded in with the app's own allocations */
};

/* How a group's bytes moved across the snapshots. */
enum leaksnap_diff_trend {
	LEAKSNAP_DIFF_TREND_GREW = 0,   /* two snapshots: it grew */
	LEAKSNAP_DIFF_TREND_STEADY,     /* grew in every interval: a strong suspect */
	LEAKSNAP_DIFF_TREND_GROWING,    /* grew in the last interval, not in every one */
	LEAKSNAP_DIFF_TREND_STOPPED,    /* grew overall, not in the last interval: a cache */
	/* (When the last of three or more snapshots is an exit or crash dump
	 * (ends_run), the interval before it counts as the last one too: what
	 * grew until the program stopped is GROWING, not STOPPED.) */
};

struct leaksnap_diff_suppressions;

/* Symbols known before the diff, e.g. a store's (frames symbolized when
 * they were stored): the answer for the frame at @rel_pc of module @path
 * (its build ID @build_id, @build_id_len bytes; 0: none recorded).
 * @out->frames (innermost first) and @out->module (may be NULL: no symbol
 * file to name) belong to the caller and must outlive the diff; no frames:
 * nothing known.  0, or -1 with @err filled (out of memory). */
typedef int (*leaksnap_diff_symbols_fn)(void *arg, const char *path, const uint8_t *build_id,
					size_t build_id_len, uint64_t rel_pc,
					struct leaksnap_resolved *out, struct leaksnap_error *err);

/* The largest suppressions text leaksnap_diff_suppressions_parse() accepts. */
#define LEAKSNAP_DIFF_SUPPRESSIONS_MAX ((size_t)64 << 20)

struct leaksnap_diff_options {
	size_t sz;               /* sizeof(struct leaksnap_diff_options): LEAKSNAP_OPTS */
	enum leaksnap_diff_by by;
	enum leaksnap_diff_zygote zygote;
	/* Extra allocation-wrapper patterns for the site (same syntax as
	 * suppressions: '*' wildcard, '^'/'$' anchors, else a substring),
	 * matched against function names and module paths. */
	const char *const *skip;
	size_t skip_count;
	const struct leaksnap_diff_suppressions *suppressions; /* NULL: none */
	uint64_t min_bytes;      /* suspects grew by at least this many bytes */
	/* Symbolizes frames (NULL: they stay module+offset); it must outlive
	 * the diff, whose frames point into its answers.  The problems it
	 * meets while the diff resolves become the diff's warnings (a problem
	 * is said once per resolver: share one between diffs only if the
	 * first diff may have it alone). */
	struct leaksnap_resolver *resolver;
	/* Threads leaksnap_diff_add_snapshot may use: 0 or 1, none; 2 or more, a
	 * thread maps PCs to frames while the caller interns stacks (large
	 * snapshots only).  The result is the same either way. */
	unsigned jobs;
	/* Compare the snapshots in the order added.  By default, once the last
	 * one is added, the snapshots of one run (one process: the same pid,
	 * program and load address, see leaksnap_diff_snapshot.run) are put in
	 * capture order -- by capture time, then dump number, an exit or crash
	 * dump last -- in the places the run's snapshots were added at; other
	 * runs' snapshots, and those of no known run, keep their places. */
	bool keep_order;
	/* Symbolizes frames instead of @resolver when set (@resolver is then
	 * not used; added last: the options' size tells it from older callers). */
	leaksnap_diff_symbols_fn symbols;
	void *symbols_arg;
};

/* One input snapshot as the diff saw it. */
struct leaksnap_diff_snapshot {
	const char *file;
	int64_t pid;              /* -1: unknown */
	unsigned pointer_size;
	bool android;             /* Android format, or Android paths in the maps */
	bool has_maps;
	uint64_t total_memory;    /* the snapshot's own figure */
	uint64_t allocation_count;
	uint64_t bytes, count;    /* of the records compared */
	uint64_t left_out_bytes, left_out_count; /* zygote records left out */
	bool has_time;            /* the snapshot records its capture time: */
	uint64_t time_ns;         /* nanoseconds since the Unix epoch */
	/* Whether the snapshot says which blocks no pointer reached (the
	 * LEAKSNAP reachability section), and then the unreachable bytes and
	 * allocations of the records compared (after suppressions; set by
	 * leaksnap_diff_rank()). */
	bool has_reachability;
	uint64_t unreachable_bytes, unreachable_count;
	const char *exe;          /* the program that was running (the dump's
				   * exe= metadata), or NULL */
	bool exit_dump;           /* the hook's dump at exit (trigger=exit) */
	/* Its order: */
	size_t given;             /* where it was added (0: first) */
	/* The run it belongs to, as the index of the run's first snapshot
	 * (its own index when it is the first); SIZE_MAX: no run can be told
	 * (no pid or no capture time).  Snapshots of one run have the same pid,
	 * program (exe=) and load address (the program's lowest mapping, else
	 * the first one of the maps). */
	size_t run;
	uint64_t seq;             /* the N of its name PREFIX.PID.N.dump (zero-padded
				   * or not, PID its own); 0: another name */
	bool crash_dump;          /* the hook's dump at a fatal signal (trigger=crash,
				   * or named PREFIX.PID.crash.dump) */
	bool ends_run;            /* an exit or crash dump (by trigger or name) */
	unsigned backtrace_size;  /* frame slots per record: a stack that fills
				   * them may have been cut */
	/* Sampled snapshots (leaksnap_diff_sample_interval() not 0; else 0):
	 * @bytes, @count and the unreachable figures above are estimates, and
	 * these the blocks sampled of the records compared (the sums of the
	 * groups' sampled_* series; set by leaksnap_diff_rank()). */
	uint64_t sampled_bytes, sampled_count;
	uint64_t sampled_unreachable_bytes, sampled_unreachable_count;
};

/* One frame of a group's stack. */
struct leaksnap_diff_frame {
	const char *module;          /* path as the maps name it; NULL: unmapped */
	const uint8_t *build_id;     /* NULL: none recorded */
	size_t build_id_len;
	uint64_t rel_pc;             /* offset in the module's file (or the raw PC) */
	uint64_t pc;                 /* the PC as captured (latest snapshot seen) */
	/* Symbols (only when a resolver was given): */
	const struct leaksnap_sym_module *sym_module; /* NULL: not symbolized */
	const struct leaksnap_sym_frame *sym;         /* innermost first */
	size_t sym_count;
};

/* A group of records and how it changed. */
struct leaksnap_diff_group {
	const uint64_t *bytes;       /* one per snapshot */
	const uint64_t *counts;      /* one per snapshot */
	int64_t bytes_delta;         /* last - first (saturated) */
	int64_t count_delta;
	bool is_new;                 /* nothing of it in the first snapshot */
	enum leaksnap_diff_trend trend;
	unsigned grew, shrank;       /* intervals in which its bytes rose / fell */
	double score;
	size_t stack_count;          /* distinct stacks in the group */
	/* A representative stack, innermost frame first: the group's stack
	 * that grew most from the first snapshot to the last (shrank least,
	 * if none grew; of equals, the largest in the last snapshot).  Its
	 * frames are symbolized, and @site set to the index of its first
	 * frame outside the allocation wrappers
	 * (frame_count when every frame is one), by leaksnap_diff_symbolize_group();
	 * until then @site is SIZE_MAX. */
	const struct leaksnap_diff_frame *const *frames;
	size_t frame_count;
	size_t site;
	const char *module;          /* LEAKSNAP_DIFF_BY_MODULE: the site's module, or NULL */
	/* The inline level of frame @site (0: its innermost function) that is
	 * the site: inlined allocation wrappers are skipped too.  Set with
	 * @site. */
	size_t site_level;
	/* Its unreachable bytes and allocations, one per snapshot (0 for a
	 * snapshot without reachability: see leaksnap_diff_snapshot()); NULL when no
	 * snapshot has reachability. */
	const uint64_t *unreachable_bytes;
	const uint64_t *unreachable_counts;
	/* It holds unreachable bytes in the last snapshot: a definite leak. */
	bool definite;
	/* Sampled snapshots (leaksnap_diff_sample_interval() not 0): every
	 * figure above is an estimate (docs/format.md, sample_interval=), and
	 * these are the bytes and counts of the blocks sampled, one per
	 * snapshot; NULL when the snapshots were not sampled. */
	const uint64_t *sampled_bytes;
	const uint64_t *sampled_counts;
	/* The same of the unreachable blocks (NULL also when no snapshot has
	 * reachability). */
	const uint64_t *sampled_unreachable_bytes;
	const uint64_t *sampled_unreachable_counts;
};

/* Suppressions ----------------------------------------------------------- */

/* Parse an LSan-style suppressions text: one "leak:PATTERN" per line,
 * blank lines and '#' comments ignored.  A record is suppressed when any
 * frame's function, source file or module matches a pattern.  @source
 * names the text in errors (line numbers).  NULL on error. */
LEAKSNAP_API struct leaksnap_diff_suppressions *leaksnap_diff_suppressions_parse(
	const char *text, size_t len, const char *source, struct leaksnap_error *err);
LEAKSNAP_API void leaksnap_diff_suppressions_free(struct leaksnap_diff_suppressions *s);
LEAKSNAP_API size_t leaksnap_diff_suppressions_count(const struct leaksnap_diff_suppressions *s);
/* How many records of the diff the pattern at @index suppressed (after
 * leaksnap_diff_rank()), summed over snapshots. */
LEAKSNAP_API uint64_t leaksnap_diff_suppressions_hits(const struct leaksnap_diff_suppressions *s,
						      size_t index);
LEAKSNAP_API const char *leaksnap_diff_suppressions_pattern(
	const struct leaksnap_diff_suppressions *s, size_t index);

/* '*' matches any run of characters; a leading '^' anchors the pattern to
 * the start of @s and a trailing '$' to its end; otherwise it may match
 * anywhere in @s. */
LEAKSNAP_API bool leaksnap_diff_pattern_match(const char *pattern, const char *s);

/* Whether a frame is an allocation wrapper as the site (LEAKSNAP_DIFF_BY_SITE)
 * sees one, by the built-in patterns only: its module (@module, a path;
 * NULL or "": not known) is an allocator's, the C or C++ library's, the
 * loader's or the hook's, or its function (@function; NULL: not known) is
 * an allocation function, operator new/delete or the C++ library's. */
LEAKSNAP_API bool leaksnap_diff_is_wrapper(const char *function, const char *module);

/* The diff ----------------------------------------------------------------- */

struct leaksnap_diff;

/* A diff of @nsnapshots (2..LEAKSNAP_DIFF_MAX_SNAPSHOTS) snapshots.  @opts is
 * copied; the suppressions and resolver it points to must outlive the
 * diff.  NULL on error. */
LEAKSNAP_API struct leaksnap_diff *leaksnap_diff_new(const struct leaksnap_diff_options *opts,
						     size_t nsnapshots, struct leaksnap_error *err);
LEAKSNAP_API void leaksnap_diff_free(struct leaksnap_diff *d);

/* Add the next snapshot (oldest first) with its parsed maps (NULL: none,
 * frames keep their raw PCs).  Nothing of @snap or @maps is kept: both
 * may be freed afterwards.  A snapshot whose pointer size differs from
 * the first one's is refused (LEAKSNAP_ERR_USAGE), and so is one sampled at
 * another interval (or sampled when the first was not, or the reverse).  Once the last one is
 * added, the snapshots of one run are in capture order unless
 * opts.keep_order (leaksnap_diff_snapshot() then lists them so, each with
 * the place it was @given at). */
LEAKSNAP_API int leaksnap_diff_add_snapshot(struct leaksnap_diff *d,
					    const struct leaksnap_snapshot *snap,
					    const struct leaksnap_maps *maps,
					    struct leaksnap_error *err);

/* Once every snapshot is added: group, symbolize what grouping needs,
 * apply suppressions and rank. */
LEAKSNAP_API int leaksnap_diff_rank(struct leaksnap_diff *d, struct leaksnap_error *err);

LEAKSNAP_API size_t leaksnap_diff_snapshot_count(const struct leaksnap_diff *d);
LEAKSNAP_API const struct leaksnap_diff_snapshot *leaksnap_diff_snapshot(
	const struct leaksnap_diff *d, size_t index);
/* The sampling interval of the snapshots (all have the same: a diff
 * refuses to mix them), 0 when they were not sampled.  Then the bytes and
 * counts of the groups, the snapshots (bytes, count, unreachable) and the
 * growing stacks are estimates. */
LEAKSNAP_API uint64_t leaksnap_diff_sample_interval(const struct leaksnap_diff *d);
/* Whether zygote-child records were compared. */
LEAKSNAP_API bool leaksnap_diff_zygote_included(const struct leaksnap_diff *d);

/* Suspects, best first: groups that grew by at least min_bytes, still
 * growing at the last snapshot or holding unreachable bytes in it, not
 * suppressed.  Definite leaks (@definite) come first whatever their
 * score, each part in score order.  A group's view is made on first
 * access: NULL when out of memory. */
LEAKSNAP_API size_t leaksnap_diff_suspect_count(const struct leaksnap_diff *d);
LEAKSNAP_API const struct leaksnap_diff_group *leaksnap_diff_suspect(struct leaksnap_diff *d,
								     size_t rank);
/* How many of the suspects are definite leaks (they lead the ranking). */
LEAKSNAP_API size_t leaksnap_diff_definite_count(const struct leaksnap_diff *d);
/* Groups that grew overall but not in the last interval (caches) and hold
 * no unreachable bytes in the last snapshot, largest growth first. */
LEAKSNAP_API size_t leaksnap_diff_stopped_count(const struct leaksnap_diff *d);
LEAKSNAP_API const struct leaksnap_diff_group *leaksnap_diff_stopped(struct leaksnap_diff *d,
								     size_t index);
/* Groups that are not suspects (they did not grow by min_bytes) but hold
 * unreachable bytes in the last snapshot: one-off leaks, most unreachable
 * bytes first (all @definite). */
LEAKSNAP_API size_t leaksnap_diff_unreachable_count(const struct leaksnap_diff *d);
LEAKSNAP_API const struct leaksnap_diff_group *leaksnap_diff_unreachable(struct leaksnap_diff *d,
									 size_t index);
/* Sum of the suspects' bytes_delta and count_delta. */
LEAKSNAP_API int64_t leaksnap_diff_suspects_bytes(const struct leaksnap_diff *d);
LEAKSNAP_API int64_t leaksnap_diff_suspects_count(const struct leaksnap_diff *d);
/* Records and bytes (in the last snapshot) that suppressions removed. */
LEAKSNAP_API uint64_t leaksnap_diff_suppressed_records(const struct leaksnap_diff *d);

/* Symbolize the frames of @group's stack (when the diff has a resolver)
 * and find its site.  Problems with symbol files become warnings; -1 only
 * when out of memory. */
LEAKSNAP_API int leaksnap_diff_symbolize_group(struct leaksnap_diff *d,
					       const struct leaksnap_diff_group *group,
					       struct leaksnap_error *err);

/* The growing stacks of the suspects, for folded output: @fn is called
 * once per stack whose own bytes grew, suspects in rank order, with its
 * frames outermost first (symbolized) and its growth in bytes.  Stops and
 * returns @fn's value when it is not 0; -1 when out of memory. */
typedef int (*leaksnap_diff_stack_fn)(void *arg, const struct leaksnap_diff_frame *const *frames,
				      size_t n, uint64_t bytes);
LEAKSNAP_API int leaksnap_diff_foreach_growing_stack(struct leaksnap_diff *d,
						     leaksnap_diff_stack_fn fn, void *arg,
						     struct leaksnap_error *err);

/* As leaksnap_diff_foreach_growing_stack, with the stack's change in allocation
 * count between the first and the last snapshot as well (which may be
 * negative: fewer, larger blocks). */
typedef int (*leaksnap_diff_stack_delta_fn)(void *arg,
					    const struct leaksnap_diff_frame *const *frames,
					    size_t n, uint64_t bytes, int64_t count_delta);
LEAKSNAP_API int leaksnap_diff_foreach_growing_stack_delta(struct leaksnap_diff *d,
							   leaksnap_diff_stack_delta_fn fn,
							   void *arg, struct leaksnap_error *err);

/* The @max growing stacks of the suspects whose bytes grew most, largest
 * first (ties: the diff's stack order), called as for
 * leaksnap_diff_foreach_growing_stack: what a flame graph of the growth shows when
 * it cannot show everything.  Only those stacks are symbolized.
 * @rest_bytes and @rest_stacks (either may be NULL) receive the growth and
 * the number of the growing stacks left out. */
LEAKSNAP_API int leaksnap_diff_foreach_top_growing_stack(struct leaksnap_diff *d, size_t max,
							 leaksnap_diff_stack_fn fn, void *arg,
							 uint64_t *rest_bytes, size_t *rest_stacks,
							 struct leaksnap_error *err);

/* Non-fatal problems met while symbolizing (a corrupt symbol file): one
 * line each, "FILE: what is wrong". */
LEAKSNAP_API size_t leaksnap_diff_warning_count(const struct leaksnap_diff *d);
LEAKSNAP_API const char *leaksnap_diff_warning(const struct leaksnap_diff *d, size_t index);

/* The modules symbols were looked for, in the order first used. */
LEAKSNAP_API size_t leaksnap_diff_symbol_module_count(const struct leaksnap_diff *d);
LEAKSNAP_API const struct leaksnap_sym_module *leaksnap_diff_symbol_module(
	const struct leaksnap_diff *d, size_t index);

/* "stack", "site", "function", "module"; "grew", "steady", "growing",
 * "stopped". */
LEAKSNAP_API const char *leaksnap_diff_by_name(enum leaksnap_diff_by by);
LEAKSNAP_API const char *leaksnap_diff_trend_name(enum leaksnap_diff_trend trend);

#ifdef __cplusplus
}
#endif

#endif /* LEAKSNAP_DIFF_H */
