/* leaksnap symbolizer: private declarations shared by the files of symbolizer/. */
#ifndef LEAKSNAP_SYM_INTERNAL_H
#define LEAKSNAP_SYM_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <stdatomic.h>

#include "kit.h"
#include "kit_table.h"
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

/* A unit's indexing state (struct sym_pool's, under its lock). */
enum sym_cu_state {
	SYM_CU_IDLE,            /* not asked for */
	SYM_CU_QUEUED,          /* hinted: waiting for a thread */
	SYM_CU_CLAIMED,         /* being indexed */
	SYM_CU_DONE,            /* indexed (or broken) */
};

struct sym_cu {
	Dwarf_Die cudie;        /* the unit whose lines answer (skeleton or full) */
	Dwarf_Die treedie;      /* the unit whose DIEs hold the functions */
	Dwarf *tree_dbg;
	Dwarf_Off offset;         /* of cudie, in .debug_info */
	const char *comp_dir;     /* NULL: none */
	Dwarf_Half version;
	/* Written by the thread that indexes the unit, then only read; the
	 * caller's thread reads them once it has seen state DONE (ready). */
	bool broken;
	struct leaksnap_error *error; /* why it is broken, until reported */
	struct sym_node *nodes;
	size_t node_count;
	struct sym_range *ranges; /* grouped by parent, each group sorted by lo;
				   * NULL when flat (seg_*) */
	uint32_t top, ntop;       /* the top-level group */
	uint64_t *seg_addr;       /* flat: segment starts, sorted, then a summary */
	uint32_t *seg_node;       /* the deepest node from there, or SYM_NONE */
	size_t seg_count;
	Dwarf_Lines *lines;       /* the line table, sorted by address (libdw) */
	uint64_t *line_addr;      /* its rows' addresses << 1 | ends-sequence,
				   * then a summary (dwarf_index.c) */
	size_t line_count;
	Dwarf_Files *files;       /* its file table (libdw), or NULL */
	size_t file_count;
	unsigned char state;      /* enum sym_cu_state */
	bool ready;               /* the caller's thread's own: indexed, and seen so */
};

struct sym_symbol {
	uint64_t value, size;
	const char *name;
	const char *file;       /* a local symbol's STT_FILE, or NULL */
	uint32_t index;         /* in the symbol table */
	uint32_t shndx;         /* its section */
};

struct sym_section {
	uint64_t addr, size;
	uint32_t index;
};

struct leaksnap_sym_file {
	struct leaksnap_symbolizer *sym;
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
	bool split_units;            /* it has skeleton or split units */
	bool cus_sorted;             /* cus are in offset order */
	Elf *own_elf;                /* the debug file, when opened here (own_*) */
	int own_fd;
	char *own_debug_path;
	bool load_failed;            /* a hint met load_error: the next lookup says it */
	struct leaksnap_error load_error;
	struct sym_pool *pool;       /* threads indexing units, or NULL */
	bool no_pool;                /* threads are not used for this file */
	struct sym_cu *cus;
	size_t cu_count;
	struct sym_range *cu_ranges; /* sorted by lo */
	uint64_t *cu_maxhi;          /* running maximum of hi */
	size_t cu_range_count;
	/* allocated sections, in section table order */
	bool sections_loaded;
	struct sym_section *sections;
	size_t section_count;
	/* symbol table, sorted by value */
	bool syms_loaded;
	struct sym_symbol *syms;
	size_t sym_count;
	/* a debug file was handed to libdwfl (sym_find_debuginfo), and its
	 * path when known */
	bool debug_handed;
	char *debug_given;
	bool from_debuginfod;        /* it came from a debuginfod server */
	const char *debuginfod_error; /* why the servers gave nothing (static text) */
	struct leaksnap_sym_file *next;
};

struct sym_dir_index;
struct sym_module_entry;

/* What the inlined instances of one abstract origin share. */
struct sym_origin {
	const char *name, *decl_file;
	uint32_t decl_line;
	bool linkage;
};

struct sym_pool;

struct leaksnap_symbolizer {
	struct leaksnap_sym_options opts;
	unsigned pointer_size;    /* 4, 8; 0: modules of any ELF class */
	struct leaksnap_sym_file *files;
	struct leaksnap_sym_frame *frames; /* the last answer */
	size_t frame_cap;
	char **owned;             /* strings made here (demangled names, paths) */
	size_t owned_count, owned_cap;
	struct kit_table origins;   /* (unit, origin DIE) -> struct sym_origin * */
	struct kit_table demangled; /* (raw name, NULL) -> demangled name */
	struct kit_table paths;     /* (unit, relative path) -> joined path */
	struct sym_dir_index *dirs;       /* one per opts.symbol_dirs (locate.c) */
	struct sym_module_entry *modules; /* located modules (locate.c) */
	struct sym_apk *apks;             /* APKs met (apk.c) */
	struct debuginfod_client *debuginfod; /* begun on first use (debuginfod.c) */
	bool debuginfod_off;              /* no server to ask */
};

/* dwarf_index.c */
int sym_dwarf_load_units(struct leaksnap_sym_file *f, struct leaksnap_error *err);
/* The unit covering @addr, or NULL. */
struct sym_cu *sym_dwarf_find_unit(struct leaksnap_sym_file *f, uint64_t addr);
/* Index @cu from @cudie and @treedie, its DIEs in the Dwarf of the
 * calling thread (any thread: it touches nothing but @cu and that Dwarf).
 * Stops early, as broken, when *@cancel becomes true (may be NULL).  On
 * failure, @cu is broken and @err filled. */
int sym_dwarf_index_unit(struct leaksnap_sym_file *f, struct sym_cu *cu, Dwarf_Die *cudie,
			 Dwarf_Die *treedie, const _Atomic bool *cancel,
			 struct leaksnap_error *err);
/* The deepest node of @cu covering @addr, or SYM_NONE. */
uint32_t sym_dwarf_find_node(const struct sym_cu *cu, uint64_t addr);
/* The line table row for @addr in @cu, or NULL. */
Dwarf_Line *sym_dwarf_find_line(const struct sym_cu *cu, uint64_t addr);
void sym_dwarf_resolve_node(struct leaksnap_sym_file *f, struct sym_cu *cu, struct sym_node *n);
void sym_dwarf_free_units(struct leaksnap_sym_file *f);

/* workers.c */
/* Make @cu ready to answer from the caller's thread: index it here, or
 * wait for the thread indexing it.  -1 with @err filled when it is broken
 * (said once: afterwards it is ready, and broken). */
int sym_unit_ready(struct leaksnap_sym_file *f, struct sym_cu *cu, struct leaksnap_error *err);
/* Queue the units of @vaddrs (in that order) for background threads. */
void sym_pool_hint(struct leaksnap_sym_file *f, const uint64_t *vaddrs, size_t count);
/* Stop and join the threads, close their Dwarfs. */
void sym_pool_free(struct leaksnap_sym_file *f);
/* With threads allowed, open @f's DWARF from its compressed debug file
 * (found by build ID), inflating its sections on several threads first:
 * f->dbg, f->bias and f->own_* set.  false: leave it to libdwfl. */
bool sym_open_debug_inflated(struct leaksnap_sym_file *f);

/* locate.c */
void sym_locate_free(struct leaksnap_symbolizer *sym);
/* leaksnap_symbolizer_module with one more candidate file tried last (@extra, may
 * be NULL; when used, the module's file_path is @extra_name, or the
 * module's own name when that is NULL). */
const struct leaksnap_sym_module *sym_module_locate(struct leaksnap_symbolizer *sym,
						    const char *path, const void *build_id,
						    size_t build_id_len, const char *extra,
						    const char *extra_name,
						    struct leaksnap_error *err);
/* A module with no file, for @path. */
const struct leaksnap_sym_module *sym_module_missing(struct leaksnap_symbolizer *sym,
						     const char *path,
						     enum leaksnap_sym_build_id_status status,
						     struct leaksnap_error *err);

/* debuginfod.c */
/* libdwfl's find_debuginfo callback: the module's userdata is its struct
 * leaksnap_sym_file. */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
		       const char *file_name, const char *debuglink, GElf_Word crc,
		       char **debuginfo_file_name);
/* Ask the debuginfod servers (opts.debuginfod) for the @executable or the
 * debug file of build ID @id: a descriptor and its path in the client's
 * cache (*@path, the caller's to free), or -1 with *@why set (static
 * text) when a server was asked and gave nothing, NULL when none was.
 * With no server to ask, the client's cache alone is looked in. */
int sym_debuginfod_fetch(struct leaksnap_symbolizer *sym, bool executable, const uint8_t *id,
			 size_t len, char **path, const char **why);
void sym_debuginfod_end(struct leaksnap_symbolizer *sym);

/* apk.c */
struct sym_apk;
bool sym_is_apk(const char *path);
void sym_apk_free(struct leaksnap_symbolizer *sym);

/* symbolizer.c */
/* Where an address is: its unit (NULL: none, or broken), deepest node and
 * line table row. */
struct sym_loc {
	struct sym_cu *cu;
	uint32_t node;
	Dwarf_Line *line;
};
/* The place of @vaddr in @cu (ready, not broken; or NULL). */
void sym_file_locate_in(struct leaksnap_sym_file *f, struct sym_cu *cu, uint64_t vaddr,
			struct sym_loc *loc);
/* leaksnap_sym_file_lookup's answer for @vaddr, found at @loc. */
int sym_file_answer(struct leaksnap_sym_file *f, uint64_t vaddr, const struct sym_loc *loc,
		    struct leaksnap_sym_result *out, struct leaksnap_error *err);
/* The file's loadable segments have their contents (not a debug-only file,
 * whose program headers keep addresses but not file offsets). */
bool sym_file_has_layout(const struct leaksnap_sym_file *f);
/* The file names functions: it has DWARF or a .symtab (not only .dynsym). */
bool sym_file_has_symbols(const struct leaksnap_sym_file *f);
/* The first section of @elf (may be NULL) named one of @names (a NULL-ended
 * list), in *@found when that is not NULL: 1; no such section: 0; the
 * section names cannot be read: -1.  The one scan of section names for
 * every file of symbolizer/ that looks for a section by name. */
#define SYM_SCN_PREFIX 1u /* @names are prefixes: ".debug_" */
#define SYM_SCN_DATA 2u   /* only a section with contents (not SHT_NOBITS) */
int sym_elf_section(Elf *elf, const char *const *names, unsigned flags, Elf_Scn **found);
/* A unit's source path as llvm-symbolizer and GNU addr2line spell it:
 * relative paths are prefixed with the unit's DW_AT_comp_dir. */
const char *sym_source_path(struct leaksnap_symbolizer *sym, const struct sym_cu *cu,
			    const char *path);
/* @name demangled when asked and possible (the copy belongs to @sym). */
const char *sym_demangle(struct leaksnap_symbolizer *sym, const char *name);

#endif
