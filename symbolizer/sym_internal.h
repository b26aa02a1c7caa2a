/* leaksnap symbolizer: private declarations shared by the files of symbolizer/. */
#ifndef LEAKSNAP_SYM_INTERNAL_H
#define LEAKSNAP_SYM_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "internal.h"
#include "symbolizer.h"

#define SYM_NONE UINT32_MAX

/* A function or an inlined call: a node of a compile unit's tree of code
 * ranges.  Names are resolved on first use. */
struct sym_node {
	Dwarf_Off die;          /* in the unit's Dwarf (cu->tree_dbg) */
	uint32_t parent;        /* enclosing node, SYM_NONE at the top */
	uint32_t kids, nkids;   /* its children's ranges in cu->ranges */
	bool inlined;           /* DW_TAG_inlined_subroutine */
	bool resolved;
	bool linkage;           /* named by a linkage (mangled) name */
	bool has_start;
	const char *name;       /* NULL: none */
	const char *decl_file;
	uint32_t decl_line;
	uint64_t start;
	/* an inlined call: where it stands in its caller */
	const char *call_file;
	uint32_t call_line, call_column, call_discriminator;
};

struct sym_range {
	uint64_t lo, hi;        /* [lo, hi) */
	uint32_t node;          /* node (in a unit) or unit (in the file) */
};

struct sym_cu {
	Dwarf_Die cudie;        /* the unit whose lines answer (skeleton or full) */
	Dwarf_Die treedie;      /* the unit whose DIEs hold the functions */
	Dwarf *tree_dbg;
	const char *comp_dir;     /* NULL: none */
	Dwarf_Half version;
	bool indexed, broken;
	struct sym_node *nodes;
	size_t node_count;
	struct sym_range *ranges; /* grouped by parent, each group sorted by lo */
	uint32_t top, ntop;       /* the top-level group */
	Dwarf_Lines *lines;       /* the line table, sorted by address (libdw) */
	uint64_t *line_addr;      /* its rows' addresses << 1 | ends-sequence */
	size_t line_count;
};

struct sym_symbol {
	uint64_t value, size;
	const char *name;
	const char *file;       /* a local symbol's STT_FILE, or NULL */
	uint32_t index;         /* in the symbol table */
	uint32_t shndx;         /* its section */
};

struct sym_file {
	struct symbolizer *sym;
	char *path;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;                 /* the file itself (program headers, symbols) */
	int fd;
	unsigned machine;
	unsigned address_size;
	uint8_t *build_id;
	size_t build_id_len;
	/* DWARF */
	Dwarf *dbg;               /* NULL: none */
	Dwarf_Addr bias;
	const char *debug_path;
	bool cus_loaded;
	struct sym_cu *cus;
	size_t cu_count;
	struct sym_range *cu_ranges; /* sorted by lo */
	uint64_t *cu_maxhi;          /* running maximum of hi */
	size_t cu_range_count;
	/* symbol table, sorted by value */
	bool syms_loaded;
	struct sym_symbol *syms;
	size_t sym_count;
	struct sym_file *next;
};

struct sym_dir_index;
struct sym_module_entry;

/* A hash table keyed by a pair of pointers (map.c). */
struct sym_map_entry {
	const void *a, *b;
	void *v;
	bool used;
};
struct sym_map {
	struct sym_map_entry *e;
	size_t count, mask;
};
/* The value slot of (@a, @b), added (holding NULL) if new; NULL when out
 * of memory. */
void **sym_map_slot(struct sym_map *m, const void *a, const void *b);
void sym_map_free(struct sym_map *m, bool free_values);

/* What the inlined instances of one abstract origin share. */
struct sym_origin {
	const char *name, *decl_file;
	uint32_t decl_line;
	bool linkage;
};

struct sym_dir_index;
struct sym_module_entry;


struct symbolizer {
	struct sym_options opts;
	struct sym_file *files;
	struct sym_frame *frames; /* the last answer */
	size_t frame_cap;
	char **owned;             /* strings made here (demangled names, paths) */
	size_t owned_count, owned_cap;
	struct sym_map origins;   /* (unit, origin DIE) -> struct sym_origin * */
	struct sym_map demangled; /* (raw name, NULL) -> demangled name */
	struct sym_map paths;     /* (unit, relative path) -> joined path */
	struct sym_dir_index *dirs;       /* one per opts.symbol_dirs (locate.c) */
	struct sym_module_entry *modules; /* located modules (locate.c) */
	struct sym_apk *apks;             /* APKs met (apk.c) */
};

/* dwarf_index.c */
int sym_dwarf_load_units(struct sym_file *f, struct leaksnap_error *err);
/* The unit covering @addr, or NULL. */
struct sym_cu *sym_dwarf_find_unit(struct sym_file *f, uint64_t addr);
int sym_dwarf_index_unit(struct sym_file *f, struct sym_cu *cu, struct leaksnap_error *err);
/* The deepest node of @cu covering @addr, or SYM_NONE. */
uint32_t sym_dwarf_find_node(const struct sym_cu *cu, uint64_t addr);
/* The line table row for @addr in @cu, or NULL. */
Dwarf_Line *sym_dwarf_find_line(const struct sym_cu *cu, uint64_t addr);
void sym_dwarf_resolve_node(struct sym_file *f, struct sym_cu *cu, struct sym_node *n);
void sym_dwarf_free_units(struct sym_file *f);

/* locate.c */
void sym_locate_free(struct symbolizer *sym);
/* symbolizer_module with one more candidate file tried last (@extra, may
 * be NULL; when used, the module's file_path is its own name). */
const struct sym_module *sym_module_locate(struct symbolizer *sym, const char *path,
					   const void *build_id, size_t build_id_len,
					   const char *extra, struct leaksnap_error *err);
/* A module with no file, for @path. */
const struct sym_module *sym_module_missing(struct symbolizer *sym, const char *path,
					    enum sym_build_id_status status,
					    struct leaksnap_error *err);

/* apk.c */
struct sym_apk;
bool sym_is_apk(const char *path);
void sym_apk_free(struct symbolizer *sym);

/* symbolizer.c */
/* The file's loadable segments have their contents (not a debug-only file,
 * whose program headers keep addresses but not file offsets). */
bool sym_file_has_layout(const struct sym_file *f);
/* A unit's source path as llvm-symbolizer and GNU addr2line spell it:
 * relative paths are prefixed with the unit's DW_AT_comp_dir. */
const char *sym_source_path(struct symbolizer *sym, const struct sym_cu *cu, const char *path);
/* @name demangled when asked and possible (the copy belongs to @sym). */
const char *sym_demangle(struct symbolizer *sym, const char *name);

#endif
