/* leaksnap symbolizer: the DWARF index.
 *
 * libdw caches line tables and abbreviations but not the tree of functions
 * and inlined calls, and walking a unit's DIEs for every address is what
 * makes eu-addr2line slow.  So each unit is walked once, on the first
 * address that falls in it: every subprogram and inlined subroutine with
 * code becomes a node, and its address ranges go into its parent's group
 * of ranges, sorted.  An address then descends the groups by binary search
 * to the deepest node that covers it.  The unit table itself is built from
 * each unit's own DW_AT_low_pc/high_pc/ranges (clang writes no
 * .debug_aranges).
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

static int cmp_range(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1; /* the wider first */
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Sorted keys with a summary: every 16th key, searched first, so that a
 * search touches one small array that stays in the cache and a single
 * block of the large one. */
#define SUM_SHIFT 4

static size_t sum_count(size_t n)
{
	return (n + (1u << SUM_SHIFT) - 1) >> SUM_SHIFT;
}

/* Fill sum[] for key[0..n) (compared as key >> shift). */
static void sum_build(const uint64_t *key, size_t n, uint64_t *sum, unsigned shift)
{
	for (size_t j = 0; j < sum_count(n); j++)
		sum[j] = key[j << SUM_SHIFT] >> shift;
}

/* The index of the last key with key >> shift <= @addr, or SIZE_MAX. */
static size_t sum_search(const uint64_t *key, size_t n, const uint64_t *sum, unsigned shift,
			 uint64_t addr)
{
	size_t lo = 0, hi = sum_count(n);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sum[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return SIZE_MAX;
	/* in the block of summary key lo - 1, whose first key is <= addr */
	size_t b = (lo - 1) << SUM_SHIFT;
	lo = b + 1;
	hi = n - b > (1u << SUM_SHIFT) ? b + (1u << SUM_SHIFT) : n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key[mid] >> shift <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/* Units ---------------------------------------------------------------------- */

int sym_dwarf_load_units(struct leaksnap_sym_file *f, struct leaksnap_error *err)
{
	if (f->cus_loaded)
		return 0;
	f->cus_loaded = true;
	size_t cu_cap = 0, range_cap = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	int rc;
	while ((rc = dwarf_get_units(f->dbg, cu, &cu, &version, &unit_type, &cudie, &subdie)) ==
	       0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_split_compile)
			continue; /* type and partial units hold no code of their own */
		Dwarf_Die tree = cudie;
		if (unit_type == DW_UT_skeleton && dwarf_tag(&subdie) == DW_TAG_compile_unit)
			tree = subdie;
		if (unit_type != DW_UT_compile)
			f->split_units = true;
		if (kit_grow((void **)&f->cus, &cu_cap, f->cu_count + 1, sizeof(*f->cus)) != 0)
			goto nomem;
		struct sym_cu *c = &f->cus[f->cu_count];
		memset(c, 0, sizeof(*c));
		c->cudie = cudie;
		c->treedie = tree;
		c->tree_dbg = dwarf_cu_getdwarf(tree.cu);
		c->offset = dwarf_dieoffset(&cudie);
		c->version = version;
		Dwarf_Attribute a;
		if (dwarf_attr(&cudie, DW_AT_comp_dir, &a))
			c->comp_dir = dwarf_formstring(&a);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (kit_grow((void **)&f->cu_ranges, &range_cap, f->cu_range_count + 1,
				 sizeof(*f->cu_ranges)) != 0)
				goto nomem;
			f->cu_ranges[f->cu_range_count++] =
				(struct sym_range){lo, hi, (uint32_t)f->cu_count};
		}
		f->cu_count++;
		if (f->cu_count >= SYM_NONE)
			break;
	}
	if (rc < 0)
		kit_error(err, LEAKSNAP_ERR_FORMAT, f->debug_path, "corrupt DWARF unit headers: %s",
			  dwarf_errmsg(-1));
	/* (the units read before an error still answer) */
	if (f->cu_range_count > 1) /* (cu_ranges is NULL when there are none) */
		qsort(f->cu_ranges, f->cu_range_count, sizeof(*f->cu_ranges), cmp_range);
	f->cu_maxhi = malloc((f->cu_range_count ? f->cu_range_count : 1) * sizeof(uint64_t));
	if (!f->cu_maxhi)
		goto nomem;
	uint64_t m = 0;
	for (size_t i = 0; i < f->cu_range_count; i++) {
		if (f->cu_ranges[i].hi > m)
			m = f->cu_ranges[i].hi;
		f->cu_maxhi[i] = m;
	}
	f->cus_sorted = true;
	for (size_t i = 1; i < f->cu_count; i++)
		if (f->cus[i - 1].offset >= f->cus[i].offset)
			f->cus_sorted = false;
	return rc < 0 ? -1 : 0;
nomem:
	/* no unit answers: the symbol table does */
	f->cu_count = f->cu_range_count = 0;
	return kit_error(err, LEAKSNAP_ERR_NOMEM, f->path, "out of memory");
}

/* The unit whose DIE is at @offset, or NULL. */
static struct sym_cu *unit_at_offset(struct leaksnap_sym_file *f, Dwarf_Off offset)
{
	if (!f->cus_sorted) {
		for (size_t i = 0; i < f->cu_count; i++)
			if (f->cus[i].offset == offset)
				return &f->cus[i];
		return NULL;
	}
	size_t lo = 0, hi = f->cu_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->cus[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->cu_count && f->cus[lo].offset == offset ? &f->cus[lo] : NULL;
}

/* Index of the last range with lo <= addr in a sorted array, or SIZE_MAX. */
static size_t last_at_or_below(const struct sym_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

struct sym_cu *sym_dwarf_find_unit(struct leaksnap_sym_file *f, uint64_t addr)
{
	size_t i = last_at_or_below(f->cu_ranges, f->cu_range_count, addr);
	/* Units may overlap (bad or unusual DWARF): the running maximum of hi
	 * bounds how far back a covering range can start. */
	for (; i != SIZE_MAX && f->cu_maxhi[i] > addr; i--)
		if (addr < f->cu_ranges[i].hi)
			return &f->cus[f->cu_ranges[i].node];
	return NULL;
}

/* The tree of a unit ---------------------------------------------------------- */

struct walk {
	struct sym_cu *cu;
	size_t node_cap;
	struct sym_range *tmp;  /* (lo, hi, node) with the parent in a side array */
	uint32_t *tmp_parent;
	size_t tmp_count, tmp_cap, tmp_parent_cap;
};

static bool descend_into(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return true;
	default:
		return false;
	}
}

/* Add @die as a node under @parent if it has code.  Returns the node, or
 * SYM_NONE (no code), or SYM_NONE - 1 (out of memory). */
static uint32_t add_node(struct walk *w, Dwarf_Die *die, int tag, uint32_t parent)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t id = SYM_NONE;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		struct sym_cu *cu = w->cu;
		if (id == SYM_NONE) {
			if (cu->node_count >= SYM_NONE - 2 ||
			    kit_grow((void **)&cu->nodes, &w->node_cap, cu->node_count + 1,
				 sizeof(*cu->nodes)) != 0)
				return SYM_NONE - 1;
			id = (uint32_t)cu->node_count++;
			struct sym_node *n = &cu->nodes[id];
			memset(n, 0, sizeof(*n));
			n->die = dwarf_dieoffset(die);
			n->parent = parent;
			n->inlined = tag == DW_TAG_inlined_subroutine;
		}
		if (kit_grow((void **)&w->tmp, &w->tmp_cap, w->tmp_count + 1, sizeof(*w->tmp)) !=
			    0 ||
		    kit_grow((void **)&w->tmp_parent, &w->tmp_parent_cap, w->tmp_count + 1,
			     sizeof(*w->tmp_parent)) != 0)
			return SYM_NONE - 1;
		w->tmp[w->tmp_count] = (struct sym_range){lo, hi, id};
		w->tmp_parent[w->tmp_count++] = parent;
	}
	return id;
}

#define WALK_MAX_DEPTH 512

/* The addresses of the unit's line table in a compact array, searched
 * instead of libdw's rows (dwarf_getsrc_die binary-searches the large row
 * structs and takes a lock on every call).  Each entry is the row's
 * address shifted left by one, with bit 0 set when the row ends a
 * sequence.  The rows stay in libdw's order (by address): the row that
 * answers an address is the last one at or below it, unless that row ends
 * a sequence -- exactly what dwarf_getsrc_die decides. */
static int index_lines(struct sym_cu *cu, Dwarf_Die *cudie)
{
	size_t n;
	int rc = dwarf_getsrclines(cudie, &cu->lines, &n);
	/* the file table, for DW_AT_decl_file and DW_AT_call_file, kept:
	 * another thread may read it, never this Dwarf */
	if (dwarf_getsrcfiles(cudie, &cu->files, &cu->file_count) != 0) {
		cu->files = NULL;
		cu->file_count = 0;
	}
	if (rc != 0 || n == 0) {
		cu->lines = NULL;
		return 0; /* no line table: answers have no line */
	}
	cu->line_addr = malloc((n + sum_count(n)) * sizeof(*cu->line_addr));
	if (!cu->line_addr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(cu->lines, i);
		Dwarf_Addr a = 0;
		bool end = true;
		if (l) {
			dwarf_lineaddr(l, &a);
			dwarf_lineendsequence(l, &end);
		}
		cu->line_addr[i] = (uint64_t)a << 1 | end;
	}
	sum_build(cu->line_addr, n, cu->line_addr + n, 1);
	cu->line_count = n;
	return 0;
}

Dwarf_Line *sym_dwarf_find_line(const struct sym_cu *cu, uint64_t addr)
{
	if (addr >> 63 || cu->line_count == 0) /* (line_addr may be NULL then) */
		return NULL;
	size_t i = sum_search(cu->line_addr, cu->line_count, cu->line_addr + cu->line_count, 1,
			      addr);
	if (i == SIZE_MAX || (cu->line_addr[i] & 1))
		return NULL;
	return dwarf_onesrcline(cu->lines, i);
}

/* The flat form of a unit's groups: the deepest node at each address, as
 * segments [seg_addr[i], seg_addr[i + 1]) of node seg_node[i] (SYM_NONE:
 * none).  When no two ranges of a group overlap, the range of a group
 * covering an address is the only one that does, and the deepest node is
 * found by descending through those; so each range of a group, clipped to
 * its parent's range, stands for its node where none of its node's kids'
 * ranges does -- exactly what sym_dwarf_find_node's descent answers. */
struct flat {
	const struct sym_cu *cu;
	uint64_t *addr;
	uint32_t *node;
	size_t count, cap;
	bool full;
};

static void flat_emit(struct flat *fl, uint64_t at, uint32_t node)
{
	if (fl->count && fl->node[fl->count - 1] == node)
		return; /* the segment goes on */
	if (fl->count && fl->addr[fl->count - 1] == at) {
		fl->node[fl->count - 1] = node; /* (an empty segment: replaced) */
		if (fl->count > 1 && fl->node[fl->count - 2] == node)
			fl->count--;
		return;
	}
	if (fl->count == fl->cap) {
		fl->full = true; /* (only when a range crosses its parent's) */
		return;
	}
	fl->addr[fl->count] = at;
	fl->node[fl->count++] = node;
}

/* Segments for [lo, hi) where @owner (SYM_NONE: nothing) stands unless a
 * range of the group r[0..n) does. */
static void flat_group(struct flat *fl, const struct sym_range *r, uint32_t n, uint64_t lo,
		       uint64_t hi, uint32_t owner, unsigned depth)
{
	uint64_t pos = lo;
	/* the first range ending after lo (ranges are sorted, disjoint) */
	uint32_t a = 0, b = n;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (r[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (uint32_t i = a; i < n && r[i].lo < hi; i++) {
		uint64_t s = r[i].lo > lo ? r[i].lo : lo, e = r[i].hi < hi ? r[i].hi : hi;
		if (pos < s)
			flat_emit(fl, pos, owner);
		const struct sym_node *k = &fl->cu->nodes[r[i].node];
		if (depth + 1 < WALK_MAX_DEPTH) {
			flat_group(fl, fl->cu->ranges + k->kids, k->nkids, s, e, r[i].node,
				   depth + 1);
		} else {
			flat_emit(fl, s, r[i].node);
		}
		pos = e;
	}
	if (pos < hi)
		flat_emit(fl, pos, owner);
}

static int flatten(struct sym_cu *cu, size_t range_count)
{
	struct flat fl = {.cu = cu, .cap = 2 * range_count + 2};
	fl.addr = malloc(fl.cap * sizeof(*fl.addr));
	fl.node = malloc(fl.cap * sizeof(*fl.node));
	if (!fl.addr || !fl.node) {
		free(fl.addr);
		free(fl.node);
		return -1;
	}
	flat_group(&fl, cu->ranges + cu->top, cu->ntop, 0, UINT64_MAX, SYM_NONE, 0);
	if (fl.full) {
		free(fl.addr);
		free(fl.node);
		return -1;
	}
	/* (the last segment, to UINT64_MAX, is SYM_NONE) */
	uint64_t *a = realloc(fl.addr, (fl.count + sum_count(fl.count)) * sizeof(*a));
	uint32_t *nd = realloc(fl.node, fl.count * sizeof(*nd));
	if (a)
		fl.addr = a;
	if (nd)
		fl.node = nd;
	if (!a && fl.cap < fl.count + sum_count(fl.count)) {
		free(fl.addr);
		free(fl.node);
		return -1;
	}
	sum_build(fl.addr, fl.count, fl.addr + fl.count, 0);
	cu->seg_addr = fl.addr;
	cu->seg_node = fl.node;
	cu->seg_count = fl.count;
	return 0;
}

int sym_dwarf_index_unit(struct leaksnap_sym_file *f, struct sym_cu *cu, Dwarf_Die *cudie,
			 Dwarf_Die *treedie, const _Atomic bool *cancel,
			 struct leaksnap_error *err)
{
	cu->top = cu->ntop = 0;
	struct walk w = {.cu = cu};
	/* Iterative walk: the DIE at each level and the node enclosing it. */
	Dwarf_Die stack[WALK_MAX_DEPTH];
	uint32_t encl[WALK_MAX_DEPTH];
	int depth = 0;
	unsigned steps = 0;
	if (dwarf_child(treedie, &stack[0]) != 0)
		goto done; /* an empty unit */
	encl[0] = SYM_NONE;
	for (;;) {
		if (cancel && ++steps % 4096 == 0 &&
		    atomic_load_explicit(cancel, memory_order_relaxed)) {
			cu->broken = true;
			goto fail;
		}
		Dwarf_Die *die = &stack[depth];
		int tag = dwarf_tag(die);
		uint32_t node = SYM_NONE;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			node = add_node(&w, die, tag, encl[depth]);
			if (node == SYM_NONE - 1)
				goto nomem;
		}
		if (descend_into(tag) && dwarf_haschildren(die) && depth + 1 < WALK_MAX_DEPTH &&
		    dwarf_child(die, &stack[depth + 1]) == 0) {
			encl[depth + 1] = node != SYM_NONE ? node : encl[depth];
			depth++;
			continue;
		}
		/* next sibling here, or of the nearest ancestor that has one */
		for (;;) {
			int r = dwarf_siblingof(&stack[depth], &stack[depth]);
			if (r == 0)
				break;
			if (r < 0) {
				cu->broken = true;
				kit_error(err, LEAKSNAP_ERR_FORMAT, f->debug_path,
					  "corrupt DWARF in the unit at offset 0x%llx: %s",
					  (unsigned long long)dwarf_dieoffset(treedie),
					  dwarf_errmsg(-1));
				goto fail;
			}
			if (depth == 0)
				goto done;
			depth--;
		}
	}
done:
	if (index_lines(cu, cudie) != 0)
		goto nomem;
	/* Group the ranges by parent with a counting sort (group 0 is the top
	 * level, node i is group i + 1), then sort each group by address --
	 * a group is usually in address order already, as the DIEs were. */
	size_t groups = cu->node_count + 1;
	size_t *start = calloc(groups + 1, sizeof(*start));
	cu->ranges = malloc((w.tmp_count ? w.tmp_count : 1) * sizeof(*cu->ranges));
	if (!start || !cu->ranges) {
		free(start);
		goto nomem;
	}
	for (size_t i = 0; i < w.tmp_count; i++)
		start[(w.tmp_parent[i] == SYM_NONE ? 0 : (size_t)w.tmp_parent[i] + 1) + 1]++;
	for (size_t i = 0; i < groups; i++)
		start[i + 1] += start[i];
	for (size_t i = 0; i < groups; i++) {
		uint32_t first = (uint32_t)start[i], n = (uint32_t)(start[i + 1] - start[i]);
		if (i == 0) {
			cu->top = first;
			cu->ntop = n;
		} else {
			cu->nodes[i - 1].kids = first;
			cu->nodes[i - 1].nkids = n;
		}
	}
	for (size_t i = 0; i < w.tmp_count; i++) {
		size_t grp = w.tmp_parent[i] == SYM_NONE ? 0 : (size_t)w.tmp_parent[i] + 1;
		cu->ranges[start[grp]++] = w.tmp[i];
	}
	free(start);
	bool overlap = false;
	for (size_t i = 0; i < groups; i++) {
		struct sym_range *r = cu->ranges + (i ? cu->nodes[i - 1].kids : cu->top);
		size_t n = i ? cu->nodes[i - 1].nkids : cu->ntop;
		for (size_t k = 1; k < n; k++)
			if (cmp_range(&r[k - 1], &r[k]) > 0) {
				qsort(r, n, sizeof(*r), cmp_range);
				break;
			}
		for (size_t k = 1; k < n && !overlap; k++)
			overlap = r[k].lo < r[k - 1].hi;
	}
	free(w.tmp);
	free(w.tmp_parent);
	/* Well-formed units (no two ranges of a group overlap) are searched
	 * flat: what the groups answer, computed once for every address. */
	if (!overlap && flatten(cu, w.tmp_count) == 0) {
		free(cu->ranges);
		cu->ranges = NULL;
	}
	return 0;
nomem:
	cu->broken = true;
	kit_error(err, LEAKSNAP_ERR_NOMEM, f->path, "out of memory");
fail:
	free(w.tmp);
	free(w.tmp_parent);
	free(cu->nodes);
	cu->nodes = NULL;
	cu->node_count = 0;
	return -1;
}

/* The range of a group covering @addr: the one starting last at or below
 * it, or a few before that when ranges overlap (they should not). */
static uint32_t group_find(const struct sym_range *r, uint32_t n, uint64_t addr)
{
	size_t i = last_at_or_below(r, n, addr);
	for (unsigned back = 0; i != SIZE_MAX && back < 8; i--, back++)
		if (addr < r[i].hi)
			return r[i].node;
	return SYM_NONE;
}

uint32_t sym_dwarf_find_node(const struct sym_cu *cu, uint64_t addr)
{
	if (!cu->nodes)
		return SYM_NONE;
	if (cu->seg_addr) {
		size_t i = sum_search(cu->seg_addr, cu->seg_count, cu->seg_addr + cu->seg_count, 0,
				      addr);
		return i == SIZE_MAX ? SYM_NONE : cu->seg_node[i];
	}
	uint32_t node = group_find(cu->ranges + cu->top, cu->ntop, addr);
	for (unsigned guard = 0; node != SYM_NONE && guard < WALK_MAX_DEPTH; guard++) {
		const struct sym_node *n = &cu->nodes[node];
		uint32_t kid = group_find(cu->ranges + n->kids, n->nkids, addr);
		if (kid == SYM_NONE)
			break;
		node = kid;
	}
	return node;
}

/* Names ----------------------------------------------------------------------- */

static const char *die_string(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	if (!dwarf_attr_integrate(die, name, &a))
		return NULL;
	return dwarf_formstring(&a);
}

/* DW_AT_decl_file, from the DIE or its origin, looked up in the file table
 * of the unit the attribute is in: the table kept when that unit was
 * indexed (perhaps by another thread, from its own Dwarf: this one's would
 * read the whole line table again), else this Dwarf's.  (dwarf_decl_file
 * asserts when that unit's files were never loaded, as happens with split
 * DWARF.) */
static const char *decl_file(struct leaksnap_sym_file *f, struct sym_cu *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t n;
	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &a) || dwarf_formudata(&a, &idx) != 0 ||
	    !dwarf_cu_die(a.cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	struct sym_cu *owner = NULL;
	if (a.cu == cu->cudie.cu)
		owner = cu;
	else if (dwarf_cu_getdwarf(a.cu) == f->dbg) /* (not a .dwo's or a dwz file's) */
		owner = unit_at_offset(f, dwarf_dieoffset(&cudie));
	if (owner && owner->ready) {
		files = owner->files;
		n = owner->file_count;
	} else if (dwarf_getsrcfiles(&cudie, &files, &n) != 0) {
		return NULL; /* (a unit not indexed, or not yet seen so by this thread) */
	}
	return idx < n ? dwarf_filesrc(files, idx, NULL, NULL) : NULL;
}

/* The attributes of a node's own DIE that naming it reads, found in one
 * pass over them (each the first of its name, as dwarf_attr finds it). */
enum {
	NA_NAME, NA_LINKAGE, NA_MIPS_LINKAGE, NA_DECL_FILE, NA_ORIGIN, NA_LOW_PC,
	NA_CALL_FILE, NA_CALL_LINE, NA_CALL_COLUMN, NA_DISCRIMINATOR, NA_COUNT
};
struct node_attrs {
	Dwarf_Attribute at[NA_COUNT];
	bool has[NA_COUNT];
};

static int collect_attr(Dwarf_Attribute *a, void *arg)
{
	struct node_attrs *na = arg;
	int k;
	switch (dwarf_whatattr(a)) {
	case DW_AT_name: k = NA_NAME; break;
	case DW_AT_linkage_name: k = NA_LINKAGE; break;
	case DW_AT_MIPS_linkage_name: k = NA_MIPS_LINKAGE; break;
	case DW_AT_decl_file: k = NA_DECL_FILE; break;
	case DW_AT_abstract_origin: k = NA_ORIGIN; break;
	case DW_AT_low_pc: k = NA_LOW_PC; break;
	case DW_AT_call_file: k = NA_CALL_FILE; break;
	case DW_AT_call_line: k = NA_CALL_LINE; break;
	case DW_AT_call_column: k = NA_CALL_COLUMN; break;
	case 0x2136: k = NA_DISCRIMINATOR; break; /* DW_AT_GNU_discriminator */
	default: return DWARF_CB_OK;
	}
	if (!na->has[k]) {
		na->has[k] = true;
		na->at[k] = *a;
	}
	return DWARF_CB_OK;
}

/* A collected attribute's value, when a constant that fits 32 bits; else 0. */
static uint32_t attr_udata(struct node_attrs *na, int k)
{
	Dwarf_Word v;
	if (!na->has[k] || dwarf_formudata(&na->at[k], &v) != 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

void sym_dwarf_resolve_node(struct leaksnap_sym_file *f, struct sym_cu *cu, struct sym_node *n)
{
	if (n->resolved)
		return;
	n->resolved = true;
	Dwarf_Die die;
	if (!dwarf_offdie(cu->tree_dbg, n->die, &die))
		return;
	struct node_attrs na;
	memset(na.has, 0, sizeof(na.has));
	dwarf_getattrs(&die, collect_attr, &na, 0); /* (what it found before an error counts) */
	/* An instance that names nothing itself takes its name and
	 * declaration from its abstract origin: resolved once per origin. */
	Dwarf_Die origin;
	void **slot = NULL;
	/* (an inlined instance names nothing itself; an out-of-line one may) */
	if ((n->inlined || (!na.has[NA_NAME] && !na.has[NA_LINKAGE] && !na.has[NA_MIPS_LINKAGE] &&
			    !na.has[NA_DECL_FILE])) &&
	    na.has[NA_ORIGIN] && dwarf_formref_die(&na.at[NA_ORIGIN], &origin))
		slot = kit_table_slot(&f->sym->origins, kit_key(cu), kit_key(origin.addr));
	const struct sym_origin *o = slot ? *slot : NULL;
	if (o) {
		n->name = o->name;
		n->linkage = o->linkage;
		n->decl_file = o->decl_file;
		n->decl_line = o->decl_line;
	} else {
		const char *linkage = die_string(&die, DW_AT_linkage_name);
		if (!linkage)
			linkage = die_string(&die, DW_AT_MIPS_linkage_name);
		n->linkage = linkage != NULL;
		if (linkage)
			n->name = sym_demangle(f->sym, linkage);
		else
			n->name = die_string(&die, DW_AT_name);
		n->decl_file = sym_source_path(f->sym, cu, decl_file(f, cu, &die));
		int line;
		if (dwarf_decl_line(&die, &line) == 0 && line > 0)
			n->decl_line = (uint32_t)line;
		struct sym_origin *no = slot ? malloc(sizeof(*no)) : NULL;
		if (no) {
			*no = (struct sym_origin){n->name, n->decl_file, n->decl_line, n->linkage};
			*slot = no;
		}
	}
	/* llvm-symbolizer's StartAddress: DW_AT_low_pc, when there is one
	 * (as dwarf_lowpc reads it) */
	Dwarf_Addr lo;
	if (na.has[NA_LOW_PC] && dwarf_formaddr(&na.at[NA_LOW_PC], &lo) == 0) {
		n->start = lo;
		n->has_start = true;
	}
	if (n->inlined) {
		Dwarf_Word idx;
		if (na.has[NA_CALL_FILE] && dwarf_formudata(&na.at[NA_CALL_FILE], &idx) == 0 &&
		    idx < cu->file_count)
			n->call_file = sym_source_path(f->sym, cu,
						       dwarf_filesrc(cu->files, idx, NULL, NULL));
		n->call_line = attr_udata(&na, NA_CALL_LINE);
		n->call_column = attr_udata(&na, NA_CALL_COLUMN);
		n->call_discriminator = attr_udata(&na, NA_DISCRIMINATOR);
	}
}

void sym_dwarf_free_units(struct leaksnap_sym_file *f)
{
	for (size_t i = 0; i < f->cu_count; i++) {
		free(f->cus[i].nodes);
		free(f->cus[i].ranges);
		free(f->cus[i].line_addr);
		free(f->cus[i].seg_addr);
		free(f->cus[i].seg_node);
		free(f->cus[i].error);
	}
	free(f->cus);
	free(f->cu_ranges);
	free(f->cu_maxhi);
	f->cus = NULL;
	f->cu_ranges = NULL;
	f->cu_maxhi = NULL;
	f->cu_count = f->cu_range_count = 0;
}
