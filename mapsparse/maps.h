/* leaksnap: /proc/<pid>/maps parsing and PC -> module lookup.
 *
 * Turns maps text into a sorted array of mappings, groups consecutive
 * mappings of the same file into modules (as libdwfl's maps reader does),
 * and maps a PC to (mapping, module, rel_pc) in O(log n), where
 * rel_pc = pc - start + offset is a FILE OFFSET in the mapped object.
 * Turning it into an ELF virtual address is the symbolizer's job; this
 * module knows nothing about ELF.
 *
 * Error and ownership conventions: see <leaksnap/snapshot.h>.
 */
#ifndef LEAKSNAP_MAPS_H
#define LEAKSNAP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <leaksnap/snapshot.h> /* struct leaksnap_snapshot (unloaded libraries, build IDs) */

#ifdef __cplusplus
extern "C" {
#endif

#define LEAKSNAP_MAPS_NONE ((size_t)-1)

/* One line of a maps file. */
struct leaksnap_maps_mapping {
	uint64_t start;          /* first address */
	uint64_t end;            /* one past the last address */
	uint64_t offset;         /* file offset of @start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	char perms[5];           /* "r-xp", NUL-terminated */
	bool deleted;            /* path carried " (deleted)", removed from @path */
	const char *path;        /* NULL for a line without a path; borrowed */
	size_t module;           /* index of its module, or LEAKSNAP_MAPS_NONE */
	unsigned long line;      /* 1-based line in the parsed text (0: unloaded) */
	bool unloaded;           /* gone before the snapshot (leaksnap_maps_add_unloaded) */
};

/* Consecutive mappings of one file (same path, device and inode). */
struct leaksnap_maps_module {
	const char *path;        /* borrowed */
	uint64_t start;          /* lowest start of its mappings */
	uint64_t end;            /* highest end of its mappings */
	size_t first_mapping;    /* index of its first mapping */
	size_t mapping_count;
};

/* Where a PC lands. */
struct leaksnap_maps_location {
	const struct leaksnap_maps_mapping *mapping; /* NULL: no mapping covers the PC */
	const struct leaksnap_maps_module *module;   /* NULL: unmapped, or no path */
	uint64_t rel_pc;                    /* pc - start + offset (if mapping) */
};

struct leaksnap_maps;

/* Parse @len bytes of maps text at @text.  Lines are numbered from
 * @first_line and bytes from @first_offset in error messages, so text
 * embedded in a larger file is reported where it really is; @source names
 * the file.  Accepts an empty text (no mappings).  A malformed line,
 * addresses out of order or overlapping are errors naming the line.
 * Returns a new object to release with leaksnap_maps_free(), or NULL with @err
 * filled.  @text is copied. */
LEAKSNAP_API struct leaksnap_maps *leaksnap_maps_parse(const char *text, size_t len,
						       const char *source, unsigned long first_line,
						       uint64_t first_offset,
						       struct leaksnap_error *err);

/* Add to @maps the mappings of libraries unloaded before it was read: @len
 * bytes of maps lines at @text (the hook's "unloaded=" metadata values,
 * oldest first; the latest 4,096 are taken).  Each line's addresses that
 * no later line and no mapping of @maps covers are added, marked
 * unloaded -- and, for code, those that only mappings of @maps that are
 * not code cover (return addresses lie in code: those were mapped there
 * since, and give way).  Lines without a path are skipped.  So the frames
 * of blocks a dlclose()d library allocated still land in it.  Once per
 * @maps.  *@shadowed (may be NULL) counts the unloaded code lines that lie
 * partly under code of another file loaded since: a frame there is said to
 * be in that file, whichever it ran in.  Returns how many mappings were
 * added, or -1 with @err filled (a malformed line: its line number in
 * @text). */
LEAKSNAP_API long leaksnap_maps_add_unloaded(struct leaksnap_maps *maps, const char *text,
					     size_t len, const char *source, size_t *shadowed,
					     struct leaksnap_error *err);

/* leaksnap_maps_add_unloaded() with the "unloaded=" metadata lines of @snap, whose
 * maps @maps are (line numbers in errors count those lines). */
LEAKSNAP_API long leaksnap_maps_add_snapshot_unloaded(struct leaksnap_maps *maps,
						      const struct leaksnap_snapshot *snap,
						      size_t *shadowed, struct leaksnap_error *err);

/* The build ID @snap's metadata records for module @mm of @maps: a
 * module of unloaded mappings by its "unloaded_build_id=" line (path and
 * inode), any other by its "build_id=" line.  As leaksnap_snapshot_build_id(). */
LEAKSNAP_API size_t leaksnap_maps_module_build_id(const struct leaksnap_maps *maps,
						  const struct leaksnap_maps_module *mm,
						  const struct leaksnap_snapshot *snap,
						  uint8_t *out, size_t cap);

/* Release @maps. NULL-safe. */
LEAKSNAP_API void leaksnap_maps_free(struct leaksnap_maps *maps);

LEAKSNAP_API size_t leaksnap_maps_mapping_count(const struct leaksnap_maps *maps);
LEAKSNAP_API const struct leaksnap_maps_mapping *leaksnap_maps_mapping(
	const struct leaksnap_maps *maps, size_t index);
LEAKSNAP_API size_t leaksnap_maps_module_count(const struct leaksnap_maps *maps);
LEAKSNAP_API const struct leaksnap_maps_module *leaksnap_maps_module(
	const struct leaksnap_maps *maps, size_t index);

/* The mapping covering @pc, or NULL.  O(log n). */
LEAKSNAP_API const struct leaksnap_maps_mapping *leaksnap_maps_lookup(
	const struct leaksnap_maps *maps, uint64_t pc);

/* Fill @out for @pc (mapping, module, rel_pc).  Returns true when a mapping
 * covers @pc.  @maps may be NULL (nothing is mapped). */
LEAKSNAP_API bool leaksnap_maps_locate(const struct leaksnap_maps *maps, uint64_t pc,
			      struct leaksnap_maps_location *out);

/* Whether a mapping's @path names a file, whose offsets mean the same
 * code in every process that maps it: not a named anonymous mapping
 * ("[anon:dalvik-jit-code-cache]", "[stack]"), a memfd ("/memfd:jit-cache
 * (deleted)"), a device ("/dev/ashmem/...", "/dev/kgsl-3d0"), shared
 * memory ("/SYSV00000000 (deleted)", "/anon_hugepage (deleted)",
 * "/dmabuf:..."), or a /proc or /sys file.  A deleted file is still a
 * file.  NULL: false. */
LEAKSNAP_API bool leaksnap_maps_path_is_file(const char *path);
/* Whether offsets in a mapping of @path mean the same code in every
 * process: a file's (leaksnap_maps_path_is_file), or the kernel's own code pages
 * ("[vdso]", "[vsyscall]", "[vectors]", "[sigpage]", where signal
 * handlers return through).  NULL: false. */
LEAKSNAP_API bool leaksnap_maps_path_is_shared_code(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* LEAKSNAP_MAPS_H */
