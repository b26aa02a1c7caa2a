/* leaksnap symbolizer: addresses in ELF files to functions, source lines and
 * inline chains, in-process with elfutils libdw/libelf.
 *
 * A `struct leaksnap_symbolizer` keeps every file it opened and what it learned from
 * it: each compile unit is indexed once, on the first address that falls in
 * it (its functions and inlined calls as nested address ranges, searched by
 * binary search), and a sorted symbol table answers where there is no
 * DWARF.  It knows nothing about dumps: callers hand it a file and an
 * address.
 *
 * Addresses given to leaksnap_sym_file_lookup() are ELF virtual addresses of the file
 * (what `nm` shows, what addr2line takes); leaksnap_sym_file_offset_to_vaddr()
 * converts the file offsets that maps give.
 *
 * Not thread-safe: use one symbolizer per thread.  (With opts.jobs > 1 it
 * starts threads of its own, which index units in the background after a
 * hint -- leaksnap_sym_file_prefetch -- and are joined by leaksnap_symbolizer_free; answers
 * are the same.)  Errors follow the library's rule: a status and a filled
 * `struct leaksnap_error`, never a message printed.
 */
#ifndef LEAKSNAP_SYMBOLIZER_H
#define LEAKSNAP_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct leaksnap_symbolizer;
struct leaksnap_sym_file;

struct leaksnap_sym_options {
	size_t sz;              /* sizeof(struct leaksnap_sym_options): LEAKSNAP_OPTS */
	bool demangle;          /* C++ and Rust names through libiberty */
	/* Where module files are looked for, in order (leaksnap_symbolizer_module);
	 * the strings must live as long as the symbolizer */
	const char *const *symbol_dirs;
	size_t symbol_dir_count;
	bool no_host_paths;     /* do not try a module's own path on this host */
	bool llvm_names;        /* name frames as llvm-symbolizer does: the
				 * outermost by the symbol table where it has a
				 * symbol ("f.isra.0", not DWARF's "f"), and
				 * lambdas, unnamed types and clones spelled
				 * "'lambda'(int)", "f() (.isra.0)", not
				 * "{lambda(int)#1}", "f() [clone .isra.0]";
				 * otherwise as GNU addr2line does */
	bool symbol_extent;     /* a symbol-table name only for an address
				 * inside the symbol's size (one of size 0
				 * still names what follows it), not GNU
				 * addr2line's nearest symbol below whatever
				 * its size: code past the end of every
				 * symbol (a local function stripped from
				 * .dynsym) is then left unnamed rather than
				 * named after its neighbour */
	unsigned jobs;          /* threads that may index compile units at
				 * once, the caller's included, after a
				 * leaksnap_sym_file_prefetch hint; 0 or 1: the
				 * caller's thread alone */
	bool debuginfod;        /* ask the debuginfod servers DEBUGINFOD_URLS
				 * names (libdebuginfod, elfutils' client) for
				 * what is not here, by build ID: the debug file
				 * of a file with no DWARF that none was found
				 * for on this host, and a module's file when
				 * no candidate is the dump's build.  The
				 * client reads its settings from the
				 * environment: DEBUGINFOD_URLS, _TIMEOUT,
				 * _CACHE_PATH (files are kept in its cache).
				 * false: no server is asked, no network is
				 * used (nor by libdwfl's own fallback).
				 * Either way, what the client fetched before
				 * is used from its cache (checked by build
				 * ID) */
};

/* One frame of an address's answer.  Strings belong to the symbolizer and
 * live as long as it does. */
struct leaksnap_sym_frame {
	const char *function;   /* NULL: unknown */
	const char *file;       /* NULL: unknown */
	uint32_t line;          /* 0: unknown */
	uint32_t column;        /* 0: unknown */
	uint32_t discriminator;
	bool inlined;           /* inlined into the next frame of the answer */
	bool from_symtab;       /* no DWARF: function is a symbol table name */
	bool has_start;         /* start_address is known (not for inlined frames) */
	uint64_t start_address; /* the function's first address */
	uint64_t symbol_offset; /* from_symtab: address - symbol value */
	const char *start_file; /* the function's declaration, NULL: unknown */
	uint32_t start_line;
};

/* The answer for one address: frames innermost first.  frame_count = 0
 * means nothing is known about the address. */
struct leaksnap_sym_result {
	const struct leaksnap_sym_frame *frames;
	size_t frame_count;
};

/* A new symbolizer, or NULL with @err filled (out of memory). */
LEAKSNAP_API struct leaksnap_symbolizer *leaksnap_symbolizer_new(
	const struct leaksnap_sym_options *opts, struct leaksnap_error *err);
LEAKSNAP_API void leaksnap_symbolizer_free(struct leaksnap_symbolizer *sym);
/* The process's pointer size, 4 or 8 (leaksnap_snapshot_pointer_size_known), before any
 * module is looked up: a module's candidate file of the other ELF class is
 * then another build's (a 32-bit /system/lib library found by name for a
 * module of a 64-bit process), passed over like one whose build ID
 * differs.  0 (the default): any class. */
LEAKSNAP_API void leaksnap_symbolizer_set_pointer_size(struct leaksnap_symbolizer *sym,
						       unsigned pointer_size);

/* Open the ELF file at @path, with its DWARF wherever libdwfl finds it (the
 * file itself, a `.gnu_debuglink` file or /usr/lib/debug/.build-id).  Opening
 * the same path again returns the same object.  NULL with @err filled when
 * the file cannot be read or is not a usable ELF file. */
LEAKSNAP_API struct leaksnap_sym_file *leaksnap_symbolizer_open(struct leaksnap_symbolizer *sym,
								const char *path,
								struct leaksnap_error *err);

/* The file's GNU build ID (NULL with *len = 0 when it has none). */
LEAKSNAP_API const uint8_t *leaksnap_sym_file_build_id(const struct leaksnap_sym_file *file,
						       size_t *len);
/* The file DWARF was read from (the file itself or its separate debug
 * file), or NULL when it has no DWARF. */
LEAKSNAP_API const char *leaksnap_sym_file_debug_path(const struct leaksnap_sym_file *file);
/* Convert a file offset (maps' rel_pc) to a virtual address through the
 * PT_LOAD program headers.  Returns false when no loadable segment holds
 * the offset. */
LEAKSNAP_API bool leaksnap_sym_file_offset_to_vaddr(const struct leaksnap_sym_file *file,
						    uint64_t offset, uint64_t *vaddr);
/* The file's ELF machine (EM_*). */
LEAKSNAP_API unsigned leaksnap_sym_file_machine(const struct leaksnap_sym_file *file);
/* The file's address size in bytes: 4 (ELFCLASS32) or 8. */
LEAKSNAP_API unsigned leaksnap_sym_file_address_size(const struct leaksnap_sym_file *file);

/* Look up @vaddr exactly (no adjustment).  @out stays valid until the next
 * lookup through the same symbolizer.  Returns 0, or -1 with @err filled
 * when the file's debug information is corrupt at that address (the
 * symbolizer stays usable for other addresses and files). */
LEAKSNAP_API int leaksnap_sym_file_lookup(struct leaksnap_sym_file *file, uint64_t vaddr,
					  struct leaksnap_sym_result *out,
					  struct leaksnap_error *err);

/* A hint: @vaddrs (as leaksnap_sym_file_lookup takes them) are about to be looked
 * up, roughly in this order.  With opts.jobs > 1, the compile units they
 * fall in are indexed ahead, by up to jobs - 1 threads of the symbolizer's
 * own, while the caller's thread looks up (and, when it needs a unit
 * nobody has started, indexes it itself).  Never needed: answers, errors
 * and the order errors are said in do not change; without threads (jobs
 * < 2) it does nothing.  Files whose DWARF is split (.dwo) or in a dwz
 * file are indexed by the caller's thread alone. */
LEAKSNAP_API void leaksnap_sym_file_prefetch(struct leaksnap_sym_file *file, const uint64_t *vaddrs,
					     size_t count);

/* The answer to the @index'th address of a batch: @result as
 * leaksnap_sym_file_lookup gives it (valid during the call, and until the next
 * lookup); @err, when not NULL, the error leaksnap_sym_file_lookup returned (then
 * @result has no frames).  Called on the caller's thread. */
typedef void (*leaksnap_sym_answer_fn)(void *ctx, size_t index,
				       const struct leaksnap_sym_result *result,
				       const struct leaksnap_error *err);
/* Look up @count addresses, in order, handing each answer to @fn: the same
 * answers and errors as leaksnap_sym_file_lookup on each.  With threads (opts.jobs
 * > 1) the addresses are looked up ahead, out of order, as the units they
 * are in get indexed, while other units still are. */
LEAKSNAP_API void leaksnap_sym_file_lookup_batch(struct leaksnap_sym_file *file,
						 const uint64_t *vaddrs, size_t count,
						 leaksnap_sym_answer_fn fn, void *ctx);

/* Modules ----------------------------------------------------------------
 * A module is a file as a process's maps name it ("/system/lib64/libc.so").
 * Its candidates, in order: for each symbol directory, DIR + the module
 * path (the layout of AOSP's out/target/product/NAME/symbols), then
 * DIR/.build-id/xx/rest.debug, then a file of the same name anywhere under
 * DIR; then the module path itself on this host.  When the dump gave the
 * module's build ID, a candidate with another build ID is never used. */

enum leaksnap_sym_build_id_status {
	LEAKSNAP_SYM_BUILD_ID_MATCH,      /* the file's build ID is the dump's */
	LEAKSNAP_SYM_BUILD_ID_UNVERIFIED, /* the dump or the file has no build ID */
	LEAKSNAP_SYM_BUILD_ID_MISMATCH,   /* files were found, none with the dump's build ID */
	LEAKSNAP_SYM_BUILD_ID_MISSING,    /* no file found */
};

/* Where a module's layout -- which file offset is at which address, to
 * turn maps' rel_pc into an address of the file -- comes from. */
enum leaksnap_sym_layout {
	LEAKSNAP_SYM_LAYOUT_NONE, /* unknown: no file, or a debug-only file (from
			  * `objcopy --only-keep-debug`, whose segments keep
			  * their addresses but not their file offsets)
			  * whose module's mappings were not given yet */
	LEAKSNAP_SYM_LAYOUT_FILE, /* the program headers of the file used */
	LEAKSNAP_SYM_LAYOUT_HOST, /* the file used is debug-only: the program headers
			  * of the module's own file on this host, same build */
	LEAKSNAP_SYM_LAYOUT_MAPS, /* the file used is debug-only: the mappings of the
			  * module in the process (leaksnap_sym_module_set_mappings) */
};

struct leaksnap_sym_module {
	const char *path;          /* as the maps name it */
	struct leaksnap_sym_file *file;     /* the file used; NULL: none */
	const char *file_path;     /* its path; NULL: none */
	enum leaksnap_sym_build_id_status status;
	const char *error;         /* why a candidate could not be read, or NULL */
	const char *error_file;    /* that candidate */
	enum leaksnap_sym_layout layout;    /* LEAKSNAP_SYM_LAYOUT_NONE: frames have no answer */
	/* With LEAKSNAP_SYM_BUILD_ID_MISMATCH: 32 or 64 when every candidate passed
	 * over was an ELF file of that class, the process being of the other
	 * (no build ID disagreed); else 0. */
	unsigned wrong_class;
	/* With LEAKSNAP_SYM_BUILD_ID_MISMATCH: the first candidate passed over
	 * (another build ID or ELF class); else NULL. */
	const char *rejected_path;
	/* The file used names no function: it has no DWARF, its own or a
	 * separate debug file's (none was found here, nor from debuginfod),
	 * and no .symtab -- a stripped file, with at most the exported names
	 * of .dynsym.  Its frames are mostly unknown. */
	bool no_symbols;
	/* Why debuginfod gave nothing for this module when it was asked
	 * ("not found on the servers", a connection error), or NULL: it was
	 * not asked, or it answered. */
	const char *debuginfod_error;
	/* The file used (or its debug file) came from debuginfod's cache
	 * (fetched now, or by an earlier run). */
	bool from_debuginfod;
};

/* One mapping of a module's file in a process: a line of its maps. */
struct leaksnap_sym_mapping {
	uint64_t start, end;       /* addresses [start, end) */
	uint64_t offset;           /* the file offset mapped at start */
	bool exec;                 /* mapped executable ("r-xp") */
};

/* The module named @path, located once and remembered.  @build_id (may be
 * NULL) is the build ID the dump recorded for it.  NULL only when out of
 * memory (with @err filled); a module with no usable file is returned with
 * file = NULL and its status. */
LEAKSNAP_API const struct leaksnap_sym_module *leaksnap_symbolizer_module(
	struct leaksnap_symbolizer *sym, const char *path, const uint8_t *build_id,
	size_t build_id_len, struct leaksnap_error *err);
/* The module a frame at offset *@rel_pc of the file @path (as the maps
 * name it) belongs to.  Usually leaksnap_symbolizer_module(); but when @path is an
 * APK, the library stored in it at that offset, as a module named
 * "PATH!/ENTRY" (e.g. ".../base.apk!/lib/arm64-v8a/libfoo.so") with the
 * library's own build ID, and *@rel_pc made an offset in that library.
 * The library's file is looked for as any module's (its build ID, its
 * name), then read from the APK itself.  NULL only when out of memory. */
LEAKSNAP_API const struct leaksnap_sym_module *leaksnap_symbolizer_module_at(
	struct leaksnap_symbolizer *sym, const char *path, const uint8_t *build_id,
	size_t build_id_len, uint64_t *rel_pc, struct leaksnap_error *err);
/* Look up a frame of @module: @rel_pc is the offset in the file (maps'
 * rel_pc).  With @return_address, the call instruction is looked up
 * (leaksnap_sym_file_call_site).  As leaksnap_sym_file_lookup; no frames when the module has
 * no file or no segment holds the offset. */
LEAKSNAP_API int leaksnap_sym_module_lookup(const struct leaksnap_sym_module *module,
					    uint64_t rel_pc, bool return_address,
					    struct leaksnap_sym_result *out,
					    struct leaksnap_error *err);
/* leaksnap_sym_file_prefetch for frames of @module at @rel_pcs (as leaksnap_sym_module_lookup
 * takes them, with @return_address). */
LEAKSNAP_API void leaksnap_sym_module_prefetch(const struct leaksnap_sym_module *module,
					       const uint64_t *rel_pcs, size_t count,
					       bool return_address);
/* "match", "unverified", "mismatch", "missing" */
LEAKSNAP_API const char *leaksnap_sym_build_id_status_name(
	enum leaksnap_sym_build_id_status status);
/* "file", "host", "maps"; NULL for LEAKSNAP_SYM_LAYOUT_NONE */
LEAKSNAP_API const char *leaksnap_sym_layout_name(enum leaksnap_sym_layout layout);

/* Give @module its layout from the @count mappings of its file in the
 * process the frames come from, when its file is debug-only and the
 * module's own file is not here (its layout is LEAKSNAP_SYM_LAYOUT_NONE and it has
 * a file).  The load bias is taken from the mapping at file offset 0 and
 * the file's first PT_LOAD segment, or else from an executable mapping
 * matched to an executable segment by its length and page alignment
 * (4, 16 or 64 KiB pages); the layout becomes LEAKSNAP_SYM_LAYOUT_MAPS and the
 * frames of any process of the same build are answered (the layout does
 * not depend on where the file was loaded).  Tried once per module: any
 * other call does nothing and returns 0.  Returns -1 with @err filled
 * (LEAKSNAP_ERR_FORMAT, naming the file) when the mappings fit none of the
 * file's segments; the module then keeps no layout.  @module must be one
 * @sym handed out (else LEAKSNAP_ERR_USAGE). */
LEAKSNAP_API int leaksnap_sym_module_set_mappings(struct leaksnap_symbolizer *sym,
						  const struct leaksnap_sym_module *module,
						  const struct leaksnap_sym_mapping *mappings,
						  size_t count, struct leaksnap_error *err);

/* The address to look up for return address @pc in @file: a byte of the
 * call instruction, pc - 1, after clearing the Thumb bit on 32-bit ARM. */
LEAKSNAP_API uint64_t leaksnap_sym_file_call_site(const struct leaksnap_sym_file *file,
						  uint64_t pc);

#ifdef __cplusplus
}
#endif

#endif /* LEAKSNAP_SYMBOLIZER_H */
