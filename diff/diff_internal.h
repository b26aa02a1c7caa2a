/* leaksnap diff: private declarations shared by the files of diff/.
 *
 * The diff is built in stages, one file each:
 *   seqtab.c   interned u32 sequences (stacks, group keys, names)
 *   add.c      leaksnap_diff_add_snapshot: PCs to frames, records to stacks
 *   symbols.c  symbolizing frames, allocation sites, suppression matches
 *   group.c    unifying modules and frames, grouping stacks
 *   rank.c     scoring, ranking, the groups' public view
 *   stacks.c   the growing stacks one by one (folded output, profiles)
 *   order.c    the snapshots of one run in capture order
 *   diff.c     creating and freeing a diff, simple accessors
 *   match.c    suppressions and patterns
 */
#ifndef LEAKSNAP_DIFF_INTERNAL_H
#define LEAKSNAP_DIFF_INTERNAL_H

#include "diff.h"
#include "kit.h"
#include "kit_table.h"

/* match.c: suppressions as the diff applies them */
void lsd_suppressions_reset(const struct leaksnap_diff_suppressions *s);
/* index of the first pattern matching @str, or SIZE_MAX */
size_t lsd_suppressions_find(const struct leaksnap_diff_suppressions *s, const char *str);
void lsd_suppressions_hit(const struct leaksnap_diff_suppressions *s, size_t index, uint64_t n);

#define NONE UINT32_MAX
#define MAX_BUILD_ID 64
#define MAX_ITEMS (UINT32_MAX / 4) /* frames, stacks, groups, modules */
#define UNKNOWN_NAME 0x80000000u   /* function keys: an unnamed frame */


static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline int64_t sat_delta(uint64_t to, uint64_t from)
{
	if (to >= from)
		return to - from > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(to - from);
	return from - to > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(from - to);
}

/* Sequences of u32, interned: stacks (frame ids) and group keys. ------------ */

struct seq {
	size_t off;
	uint32_t len;  /* length | salt << 31 */
	uint32_t hash;
};
#define SEQ_LEN(s) ((s)->len & 0x7fffffffu)
#define SEQ_SALT(s) ((s)->len >> 31)

struct seqtab {
	uint32_t *pool;
	size_t pool_len, pool_cap;
	struct seq *ents;
	size_t count, cap;
	uint64_t *slots; /* hash << 32 | entry id; SLOT_EMPTY: empty */
	size_t mask;
};
#define SLOT_EMPTY UINT64_MAX
#define SLOT_ID(v) ((uint32_t)(v))

/* seqtab.c */
void lsd_seqtab_free(struct seqtab *t);
uint32_t lsd_seq_hash(const uint32_t *v, uint32_t n, uint32_t salt);
/* Room for @more entries of @words u32 in all, without rehashing. */
int lsd_seqtab_reserve(struct seqtab *t, size_t more, size_t words);
/* The id of @v[0..n) (with @salt, 0 or 1, which distinguishes otherwise
 * equal sequences), added when new (*@added).  -1: out of memory or too
 * many.  The _hashed form takes lsd_seq_hash(v, n, salt) as @h. */
int lsd_seqtab_intern_hashed(struct seqtab *t, const uint32_t *v, uint32_t n, uint32_t salt,
			     uint32_t h, uint32_t *id, bool *added);
int lsd_seqtab_intern(struct seqtab *t, const uint32_t *v, uint32_t n, uint32_t salt,
		      uint32_t *id, bool *added);
/* Prefetch the slot where the sequence of hash @h is looked for. */
void lsd_seqtab_prefetch(const struct seqtab *t, uint32_t h);

/* Model ----------------------------------------------------------------------- */

struct dmodule {
	char *path;
	uint8_t build_id[MAX_BUILD_ID];
	size_t build_id_len;
	uint32_t hash;
	uint32_t canon;           /* the module it is one with */
	int wrapper;              /* -1 unknown, else whether it is a wrapper library */
	const struct leaksnap_sym_module *last_sym; /* the last symbols module it gave */
	struct leaksnap_sym_mapping *maps;  /* its mappings in the first snapshot that had it */
	size_t nmaps;              /* (for a debug-only symbol file's layout) */
};

struct dframe {
	uint32_t module;          /* NONE: no module, addr is the raw PC */
	uint32_t canon;           /* the frame it is one with (rank) */
	uint64_t addr;            /* rel_pc or raw PC */
	uint64_t pc;              /* as captured, latest snapshot */
};

/* What ranking learns about a canonical frame. */
struct frame_info {
	struct leaksnap_diff_frame view;   /* its symbols belong to the resolver */
	uint32_t site_level;      /* first level outside wrappers; NONE: all wrappers */
	uint32_t supp;            /* first matching suppression, NONE: none */
	uint8_t have;             /* HAVE_* */
};
#define HAVE_SYMBOLS 1u
#define HAVE_SITE 2u
#define HAVE_SUPP 4u

struct pc_slot {
	uint64_t pc;
	uint32_t frame;           /* NONE: empty */
};

/* A group in a list: a suspect, a stopped cache or a one-off leak. */
struct cand {
	uint32_t group;
	enum leaksnap_diff_trend trend;
	double score;
	int64_t bytes_delta, count_delta;
	uint64_t unreachable;     /* bytes, last snapshot */
	bool definite;            /* unreachable > 0 */
};

/* A group as the API shows it, made on first access. */
/* A group's view: what the API shows, and what only the diff knows. */
struct group_priv {
	struct leaksnap_diff_group pub;
	const struct leaksnap_diff_frame **frames;
	uint32_t rep_stack;       /* the representative stack */
};

struct leaksnap_diff {
	struct leaksnap_diff_options o;
	size_t n;                 /* snapshots expected */
	size_t added;
	struct leaksnap_diff_snapshot *snaps;
	char **files;             /* snaps[i].file, owned */
	char **exes;		  /* each snapshot's exe= (leaksnap_diff_snapshot.exe), or NULL */
	uint64_t *bases;          /* each snapshot's run key: its process start, else its
				   * load address (order.c) */
	uint64_t (*zyg)[2];       /* per snapshot: zygote bytes, count */
	uint64_t (*app)[2];       /* per snapshot: app bytes, count */

	struct dmodule *mods;
	size_t mod_count, mod_cap;
	uint32_t *mod_slots;      /* open addressing over mods */
	size_t mod_mask;

	struct dframe *frames;
	size_t frame_count, frame_cap;
	uint32_t *frame_slots;
	size_t frame_mask;

	struct seqtab stacks;     /* frame ids; salt 1 = zygote */
	uint64_t *acc;            /* per stack: bytes[n], then counts[n] */
	size_t acc_cap;           /* in u64 */
	/* per stack: unreachable bytes[n], then counts[n]; made when the first
	 * snapshot with reachability is added (NULL: none has it) */
	uint64_t *uacc;
	size_t uacc_cap;
	/* Sampled snapshots (all of one interval, @sample_interval; 0: none
	 * sampled): acc and uacc then hold the estimates, on which everything
	 * ranks, and sacc, per stack the sampled blocks' bytes[n], counts[n],
	 * unreachable bytes[n] and unreachable counts[n] as the snapshots
	 * recorded them (a stride of 4n).  NULL when not sampled. */
	uint64_t sample_interval;
	uint64_t *sacc;
	size_t sacc_cap;

	struct pc_slot *pcs;      /* this snapshot's PC -> frame */
	size_t pc_mask, pc_count;

	bool ranked;
	bool include_zygote;
	struct frame_info *info;  /* per frame (canonical ones used) */
	uint32_t *group_of;       /* per stack, NONE: not compared */
	struct seqtab keys;       /* group keys (not used when groups are stacks) */
	uint64_t *gacc;           /* per group: bytes[n], counts[n]; may be acc */
	uint64_t *guacc;          /* per group, as uacc; may be uacc; NULL with it */
	uint64_t *gsacc;          /* per group, as sacc (4n); may be sacc; NULL with it */
	uint32_t *rep;            /* per group: its largest stack */
	uint32_t *nstacks;        /* per group: its stacks */
	size_t group_count;
	struct seqtab names;      /* function names, as bytes in u32 */
	struct cand *suspects, *stopped, *unreach;
	size_t nsuspects, nstopped, nunreach, ndefinite;
	/* leading entries in rank order */
	size_t suspects_ordered, stopped_ordered, unreach_ordered;
	struct group_priv **pub_suspects, **pub_stopped, **pub_unreach; /* made on access */
	struct kit_table views;   /* &view->pub -> view, for every view made */
	int64_t suspect_bytes, suspect_count;
	uint64_t suppressed;

	char **warnings;
	size_t nwarnings, warn_cap;
	const struct leaksnap_sym_module **symmods;
	size_t nsymmods, symmod_cap;
};

/* add.c: hashing and open addressing shared with group.c */
uint32_t lsd_module_hash(const char *path, const uint8_t *id, size_t len);
uint32_t lsd_frame_hash(uint32_t module, uint64_t addr);
/* A table of @n (a power of two) empty u32 slots; NULL: out of memory. */
uint32_t *lsd_slots_new(size_t n);

/* order.c */
/* What tells snapshot @si's run and its place in it (its file, pid, exe
 * and exit_dump set). */
void lsd_order_note(struct leaksnap_diff *d, size_t si, const struct leaksnap_snapshot *snap,
		    const struct leaksnap_maps *maps);
/* Once every snapshot is added: the runs, and each run's snapshots in
 * capture order unless opts.keep_order.  -1: out of memory. */
int lsd_order_snapshots(struct leaksnap_diff *d, struct leaksnap_error *err);

/* symbols.c */
/* Symbolize canonical frame @f (once).  -1: out of memory. */
int lsd_frame_symbols(struct leaksnap_diff *d, uint32_t f, struct leaksnap_error *err);

/* The first suppression matching a level of canonical frame @f (NONE: none). */
int lsd_frame_suppression(struct leaksnap_diff *d, uint32_t f, uint32_t *supp,
			  struct leaksnap_error *err);
/* The site of stack @s: the index of its first frame outside the wrappers
 * and that frame's level, or the stack's length when all are wrappers. */
int lsd_stack_site(struct leaksnap_diff *d, uint32_t s, size_t *frame, uint32_t *level,
		   struct leaksnap_error *err);

/* group.c */
/* Which modules are one (*@merged: whether any two were made one). */
int lsd_unify_modules(struct leaksnap_diff *d, bool *merged);
/* Frames of unified modules at the same offset are one frame. */
int lsd_unify_frames(struct leaksnap_diff *d);
/* Group the compared stacks: group_of, rep, nstacks and gacc. */
int lsd_group_stacks(struct leaksnap_diff *d, bool merged, struct leaksnap_error *err);

/* rank.c: candidates in rank order, lazily (the first @need of @n) */
int lsd_cmp_suspect(const void *a, const void *b);
void lsd_order_cands(struct cand *c, size_t n, size_t *ordered, size_t need,
		     int (*cmp)(const void *, const void *));

#endif
