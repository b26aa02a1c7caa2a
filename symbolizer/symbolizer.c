/* leaksnap symbolizer: files, symbol tables, lookups. */
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "sym_internal.h"

static char *debuginfo_path = NULL; /* libdwfl's default search path */

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sym_find_debuginfo, /* (debuginfod.c: the servers only when asked) */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct leaksnap_symbolizer *leaksnap_symbolizer_new(const struct leaksnap_sym_options *opts,
						    struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct leaksnap_sym_options known;
	if (kit_opts(&known, sizeof(known), opts, "leaksnap_sym_options", err) != 0)
		return NULL;
	struct leaksnap_symbolizer *sym = calloc(1, sizeof(*sym));
	if (!sym) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, "", "out of memory");
		return NULL;
	}
	sym->opts = known;
	elf_version(EV_CURRENT);
	return sym;
}

static void file_free(struct leaksnap_sym_file *f)
{
	sym_pool_free(f); /* first: its threads use the units and the Dwarf */
	sym_dwarf_free_units(f);
	free(f->syms);
	free(f->sections);
	if (f->own_elf) {
		dwarf_end(f->dbg);
		elf_end(f->own_elf);
		close(f->own_fd);
		free(f->own_debug_path);
	}
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->build_id);
	free(f->debug_given);
	free(f->path);
	free(f);
}

void leaksnap_symbolizer_set_pointer_size(struct leaksnap_symbolizer *sym, unsigned pointer_size)
{
	sym->pointer_size = pointer_size == 4 || pointer_size == 8 ? pointer_size : 0;
}

void leaksnap_symbolizer_free(struct leaksnap_symbolizer *sym)
{
	if (!sym)
		return;
	for (struct leaksnap_sym_file *f = sym->files; f; f = f->next)
		sym_pool_free(f); /* its threads stop before anything goes */
	sym_apk_free(sym);
	sym_locate_free(sym);
	for (struct leaksnap_sym_file *f = sym->files, *next; f; f = next) {
		next = f->next;
		file_free(f);
	}
	for (size_t i = 0; i < sym->owned_count; i++)
		free(sym->owned[i]);
	free(sym->owned);
	kit_table_free(&sym->paths, false);    /* values are in sym->owned */
	kit_table_free(&sym->demangled, false);
	kit_table_free(&sym->origins, true);
	free(sym->frames);
	sym_debuginfod_end(sym);
	free(sym);
}

static int keep_string(struct leaksnap_symbolizer *sym, char *s)
{
	if (sym->owned_count == sym->owned_cap) {
		size_t n = sym->owned_cap ? sym->owned_cap * 2 : 64;
		char **p = realloc(sym->owned, n * sizeof(*p));
		if (!p)
			return -1;
		sym->owned = p;
		sym->owned_cap = n;
	}
	sym->owned[sym->owned_count++] = s;
	return 0;
}

/* Rewrite libiberty's spelling of what has no source name into LLVM's, in
 * place (never longer): "{lambda(int)#1}" -> "'lambda'(int)", "#2" ->
 * "'lambda0'", "{unnamed type#1}" -> "'unnamed'", and clone suffixes
 * " [clone .a] [clone .b]" -> " (.a.b)". */
static void llvm_spelling(char *d)
{
	char *w = d;
	const char *r = d;
	while (*r) {
		if (strncmp(r, "{lambda(", 8) == 0) {
			/* the parameter list, parentheses balanced, then #N} */
			const char *p = r + 7;
			int depth = 0;
			do {
				depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
				p++;
			} while (*p && depth > 0);
			unsigned long nr = 0;
			const char *q = p;
			if (*q == '#')
				for (q++; *q >= '0' && *q <= '9'; q++)
					nr = nr * 10 + (unsigned long)(*q - '0');
			if (depth == 0 && *p == '#' && *q == '}' && nr >= 1) {
				/* the parameters move first: the new prefix may be
				 * longer than "{lambda" (the whole is shorter) */
				char pre[32];
				int np = snprintf(pre, sizeof(pre),
						  nr == 1 ? "'lambda'" : "'lambda%lu'", nr - 2);
				size_t params = (size_t)(p - (r + 7));
				memmove(w + np, r + 7, params);
				memcpy(w, pre, (size_t)np);
				w += (size_t)np + params;
				r = q + 1;
				continue;
			}
		} else if (strncmp(r, "{unnamed type#", 14) == 0) {
			const char *q = r + 14;
			unsigned long nr = 0;
			for (; *q >= '0' && *q <= '9'; q++)
				nr = nr * 10 + (unsigned long)(*q - '0');
			if (*q == '}' && nr >= 1) {
				char pre[32];
				int np = snprintf(pre, sizeof(pre),
						  nr == 1 ? "'unnamed'" : "'unnamed%lu'", nr - 2);
				memcpy(w, pre, (size_t)np);
				w += np;
				r = q + 1;
				continue;
			}
		} else if (strncmp(r, " [clone ", 8) == 0) {
			/* the suffixes first (each lands behind where it is read),
			 * then " (" over what has been read */
			char *dst = w + 2;
			while (strncmp(r, " [clone ", 8) == 0) {
				r += 8;
				const char *e = strchr(r, ']');
				if (!e)
					e = r + strlen(r);
				memmove(dst, r, (size_t)(e - r));
				dst += e - r;
				r = *e ? e + 1 : e;
			}
			w[0] = ' ';
			w[1] = '(';
			*dst++ = ')';
			w = dst;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

static const char *demangle_new(struct leaksnap_symbolizer *sym, const char *name);

/* Demangled names are remembered by the address of the raw name (names
 * live in the files' string tables, which stay mapped): thousands of
 * inlined instances and symbol lookups share a few hundred names. */
const char *sym_demangle(struct leaksnap_symbolizer *sym, const char *name)
{
	if (!sym->opts.demangle || !name)
		return name;
	/* Itanium C++ (_Z), Rust v0 (_R); Rust legacy names are _ZN...E too */
	if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return name;
	void **slot = kit_table_slot(&sym->demangled, kit_key(name), 0);
	if (!slot)
		return demangle_new(sym, name); /* no room to remember: still right */
	if (!*slot)
		*slot = (void *)(uintptr_t)demangle_new(sym, name);
	return *slot;
}

static const char *demangle_new(struct leaksnap_symbolizer *sym, const char *name)
{
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d)
		return name;
	if (sym->opts.llvm_names)
		llvm_spelling(d);
	const char *suffix = strstr(name, ".llvm.");
	if (sym->opts.llvm_names && suffix && !strstr(d, suffix)) {
		/* libiberty drops the suffix of a Rust symbol (".llvm.NNN");
		 * llvm-symbolizer shows it as " (.llvm.NNN)" */
		char *t;
		if (asprintf(&t, "%s (%s)", d, suffix) >= 0) {
			free(d);
			d = t;
		}
	}
	if (keep_string(sym, d) != 0) {
		free(d);
		return name;
	}
	return d;
}

const char *sym_source_path(struct leaksnap_symbolizer *sym, const struct sym_cu *cu,
			    const char *path)
{
	if (!path || path[0] == '/' || !cu->comp_dir || !cu->comp_dir[0])
		return path;
	/* Before DWARF 5, libdw has already put comp_dir in front of the
	 * files of directory 0. */
	size_t cl = strlen(cu->comp_dir);
	if (cu->version < 5 && strncmp(path, cu->comp_dir, cl) == 0 && path[cl] == '/')
		return path;
	void **slot = kit_table_slot(&sym->paths, kit_key(cu), kit_key(path));
	if (!slot)
		return path;
	if (*slot)
		return *slot;
	char *j;
	if (asprintf(&j, "%s/%s", cu->comp_dir, path) < 0)
		return path;
	if (keep_string(sym, j) != 0) {
		free(j);
		return path;
	}
	*slot = j;
	return j;
}

/* Opening --------------------------------------------------------------------- */

static int read_build_id(struct leaksnap_sym_file *f)
{
	const void *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(f->mod, (const unsigned char **)&bits, &vaddr);
	if (len <= 0)
		return 0;
	f->build_id = malloc((size_t)len);
	if (!f->build_id)
		return -1;
	memcpy(f->build_id, bits, (size_t)len);
	f->build_id_len = (size_t)len;
	return 0;
}

/* A file cut short (a partial copy, an interrupted pull) still opens:
 * refuse it when its section headers or sections end past its size. */
static int check_extent(Elf *elf, const GElf_Ehdr *eh, uint64_t size, const char *path,
			struct leaksnap_error *err)
{
	size_t shnum = 0;
	if (elf_getshdrnum(elf, &shnum) != 0 || shnum < eh->e_shnum)
		shnum = eh->e_shnum; /* libelf reports none when they are out of reach */
	uint64_t end = eh->e_shoff + (uint64_t)shnum * eh->e_shentsize;
	if (eh->e_shoff && (eh->e_shoff > size || end > size))
		return kit_error_at(
			err, LEAKSNAP_ERR_FORMAT, path, eh->e_shoff,
			"truncated ELF file: section headers end at %llu, the file has %llu "
			"bytes",
			(unsigned long long)end, (unsigned long long)size);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return kit_error(err, LEAKSNAP_ERR_FORMAT, path,
					 "corrupt section header: %s", elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return kit_error_at(
				err, LEAKSNAP_ERR_FORMAT, path, sh.sh_offset,
				"truncated ELF file: section %zu (%llu bytes) ends past the "
				"end of the file (%llu bytes)",
				elf_ndxscn(scn), (unsigned long long)sh.sh_size,
				(unsigned long long)size);
	}
	return 0;
}

struct leaksnap_sym_file *leaksnap_symbolizer_open(struct leaksnap_symbolizer *sym,
						   const char *path, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	for (struct leaksnap_sym_file *f = sym->files; f; f = f->next)
		if (strcmp(f->path, path) == 0)
			return f;
	struct leaksnap_sym_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
		return NULL;
	}
	f->sym = sym;
	/* (O_NONBLOCK: a FIFO is refused below instead of waiting for a writer) */
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (f->fd < 0) {
		kit_error_errno(err, path, errno);
		goto fail;
	}
	struct stat st;
	if (fstat(f->fd, &st) != 0) {
		kit_error_errno(err, path, errno);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		kit_error(err, LEAKSNAP_ERR_USAGE, path, "not a regular file");
		goto fail;
	}
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		unsigned char magic[4];
		bool elf = pread(f->fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
			   memcmp(magic, ELFMAG, SELFMAG) == 0;
		if (elf && st.st_size < (off_t)sizeof(Elf64_Ehdr))
			kit_error(err, LEAKSNAP_ERR_FORMAT, path,
				  "truncated ELF file: %lld bytes, less than its header",
				  (long long)st.st_size);
		else if (elf)
			kit_error(err, LEAKSNAP_ERR_FORMAT, path,
				  "corrupt ELF file: its identification bytes are invalid");
		else
			kit_error(err, LEAKSNAP_ERR_FORMAT, path, "not an ELF file");
		goto fail;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(f->elf, &eh)) {
		kit_error(err, LEAKSNAP_ERR_FORMAT, path, "corrupt ELF header: %s", elf_errmsg(-1));
		goto fail;
	}
	if (check_extent(f->elf, &eh, (uint64_t)st.st_size, path, err) != 0)
		goto fail;
	f->machine = eh.e_machine;
	f->address_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->dwfl) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, path, "%s", dwfl_errmsg(-1));
		goto fail;
	}
	/* libdwfl gets its own descriptor: it closes what it is given */
	int dfd = dup(f->fd);
	if (dfd < 0) {
		kit_error_errno(err, path, errno);
		goto fail;
	}
	/* The file is mapped whole (ELF_C_READ_MMAP): this descriptor is no
	 * longer needed (libdwfl keeps its own), one fewer a module. */
	if (elf_cntl(f->elf, ELF_C_FDREAD) == 0) {
		close(f->fd);
		f->fd = -1;
	}
	dwfl_report_begin(f->dwfl);
	/* base 0, no p_vaddr added: module addresses are the file's own */
	f->mod = dwfl_report_elf(f->dwfl, path, path, dfd, 0, false);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		close(dfd);
		kit_error(err, LEAKSNAP_ERR_FORMAT, path, "cannot read the ELF file: %s",
			  dwfl_errmsg(-1));
		goto fail;
	}
	if (read_build_id(f) != 0) {
		kit_error(err, LEAKSNAP_ERR_NOMEM, path, "out of memory");
		goto fail;
	}
	void **userdata = NULL;
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = f; /* for sym_find_debuginfo */
	if (!sym_open_debug_inflated(f))
		f->dbg = dwfl_module_getdwarf(f->mod, &f->bias);
	if (f->dbg && !f->own_elf) {
		const char *debugfile = NULL;
		dwfl_module_info(f->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
		f->debug_path = debugfile ? debugfile : f->path;
	}
	f->next = sym->files;
	sym->files = f;
	return f;
fail:
	file_free(f);
	return NULL;
}

const uint8_t *leaksnap_sym_file_build_id(const struct leaksnap_sym_file *file, size_t *len)
{
	*len = file->build_id_len;
	return file->build_id;
}

const char *leaksnap_sym_file_debug_path(const struct leaksnap_sym_file *file)
{
	return file->dbg ? file->debug_path : NULL;
}

unsigned leaksnap_sym_file_machine(const struct leaksnap_sym_file *file)
{
	return file->machine;
}

unsigned leaksnap_sym_file_address_size(const struct leaksnap_sym_file *file)
{
	return file->address_size;
}

bool leaksnap_sym_file_offset_to_vaddr(const struct leaksnap_sym_file *file, uint64_t offset,
				       uint64_t *vaddr)
{
	size_t n;
	if (elf_getphdrnum(file->elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(file->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (offset >= ph.p_offset && offset - ph.p_offset < ph.p_filesz) {
			*vaddr = offset - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

bool sym_file_has_layout(const struct leaksnap_sym_file *f)
{
	/* A debug-only file (objcopy --only-keep-debug, a dbgsym package)
	 * keeps the program headers, and where the code segment starts at
	 * file offset 0 (ld's -z noseparate-code, the arm64 default) some of
	 * it -- the ELF header and the notes -- so the segments alone do not
	 * tell.  Its code sections do: they are SHT_NOBITS there. */
	bool code = false, code_bits = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
		    sh.sh_size == 0)
			continue;
		code = true;
		code_bits |= sh.sh_type != SHT_NOBITS;
	}
	if (code && !code_bits)
		return false;
	size_t n;
	if (elf_getphdrnum(f->elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz)
			return true;
	}
	return false;
}

bool sym_file_has_symbols(const struct leaksnap_sym_file *f)
{
	if (f->dbg)
		return true;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_entsize &&
		    sh.sh_size / sh.sh_entsize > 1)
			return true;
	}
	return false;
}

int sym_elf_section(Elf *elf, const char *const *names, unsigned flags, Elf_Scn **found)
{
	if (found)
		*found = NULL;
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name)
							  : NULL;
		if (!name || ((flags & SYM_SCN_DATA) && sh.sh_type == SHT_NOBITS))
			continue;
		for (const char *const *n = names; *n; n++) {
			bool match = flags & SYM_SCN_PREFIX ? strncmp(name, *n, strlen(*n)) == 0
							    : strcmp(name, *n) == 0;
			if (!match)
				continue;
			if (found)
				*found = scn;
			return 1;
		}
	}
	return 0;
}

uint64_t leaksnap_sym_file_call_site(const struct leaksnap_sym_file *file, uint64_t pc)
{
	if (file->machine == EM_ARM)
		pc &= ~(uint64_t)1;
	return pc ? pc - 1 : 0;
}

/* Symbol table ---------------------------------------------------------------- */

static bool mapping_symbol(const char *name)
{
	/* ARM and AArch64 mapping symbols: $a, $t, $d, $x, optionally ".N" */
	return name[0] == '$' && strchr("atdx", name[1]) && name[1] &&
	       (name[2] == '\0' || name[2] == '.');
}

/* By address, then size, then place in the table: of several symbols at
 * one address the last one names it -- the largest, then the one listed
 * last -- which is llvm-symbolizer's choice between aliases. */
static int cmp_symbol(const void *a, const void *b)
{
	const struct sym_symbol *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The file's own symbol table (.symtab, else .dynsym), not its debug
 * file's: that is what llvm-symbolizer and GNU addr2line name code by. */
static Elf_Scn *symbol_section(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *dyn = NULL;
	GElf_Shdr dynsh;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr h;
		if (!gelf_getshdr(scn, &h))
			continue;
		if (h.sh_type == SHT_SYMTAB) {
			*sh = h;
			return scn;
		}
		if (h.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dynsh = h;
		}
	}
	if (dyn)
		*sh = dynsh;
	return dyn;
}

static int load_symbols(struct leaksnap_sym_file *f)
{
	if (f->syms_loaded)
		return 0;
	f->syms_loaded = true;
	GElf_Shdr sh;
	Elf_Scn *scn = symbol_section(f->elf, &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !sh.sh_entsize)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	if (n > data->d_size / gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT))
		n = data->d_size / gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!n)
		return 0;
	f->syms = malloc(n * sizeof(*f->syms));
	if (!f->syms)
		return -1;
	const char *file = NULL; /* the STT_FILE the local symbols that follow belong to */
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			continue;
		const char *name = elf_strptr(f->elf, sh.sh_link, s.st_name);
		int type = GELF_ST_TYPE(s.st_info);
		if (name && type == STT_FILE) {
			file = name; /* "" too: GNU addr2line then prints ":?" */
			continue;
		}
		if (!name || !*name || s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS)
			continue;
		/* GNU addr2line names an address by function and untyped
		 * symbols only; llvm-symbolizer by data objects as well */
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE &&
		    !(type == STT_OBJECT && f->sym->opts.llvm_names))
			continue;
		if (mapping_symbol(name))
			continue;
		GElf_Addr value = s.st_value;
		if (f->machine == EM_ARM && type == STT_FUNC)
			value &= ~(GElf_Addr)1; /* the Thumb bit */
		f->syms[f->sym_count++] = (struct sym_symbol){
			value, s.st_size, name, GELF_ST_BIND(s.st_info) == STB_LOCAL ? file : NULL,
			(uint32_t)i, s.st_shndx};
	}
	qsort(f->syms, f->sym_count, sizeof(*f->syms), cmp_symbol);
	return 0;
}

/* The file's allocated sections, in the order of the section table. */
static int load_sections(struct leaksnap_sym_file *f)
{
	f->sections_loaded = true;
	size_t n = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));)
		n++;
	f->sections = malloc((n ? n : 1) * sizeof(*f->sections));
	if (!f->sections)
		return -1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
		GElf_Shdr h;
		if (gelf_getshdr(scn, &h) && (h.sh_flags & SHF_ALLOC))
			f->sections[f->section_count++] = (struct sym_section){
				h.sh_addr, h.sh_size, (uint32_t)elf_ndxscn(scn)};
	}
	return 0;
}

/* The index of the allocated section holding @addr, or SHN_UNDEF. */
static uint32_t section_of(struct leaksnap_sym_file *f, uint64_t addr)
{
	if (!f->sections_loaded && load_sections(f) != 0)
		f->section_count = 0;
	for (size_t i = 0; i < f->section_count; i++) {
		const struct sym_section *h = &f->sections[i];
		if (addr >= h->addr && addr - h->addr < h->size)
			return h->index;
	}
	if (!f->sections) { /* (out of memory: as it was) */
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(f->elf, scn));) {
			GElf_Shdr h;
			if (gelf_getshdr(scn, &h) && (h.sh_flags & SHF_ALLOC) &&
			    addr >= h.sh_addr && addr - h.sh_addr < h.sh_size)
				return (uint32_t)elf_ndxscn(scn);
		}
	}
	return SHN_UNDEF;
}

/* How far below the nearest symbol find_symbol() looks for one that
 * covers the address (symbol_extent). */
#define SYMBOL_COVER_STEPS 16

static const struct sym_symbol *find_symbol(struct leaksnap_sym_file *f, uint64_t addr)
{
	if (load_symbols(f) != 0 || !f->sym_count)
		return NULL;
	size_t lo = 0, hi = f->sym_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym_symbol *s = &f->syms[lo - 1];
	/* llvm-symbolizer holds a symbol to its size; GNU addr2line takes
	 * the nearest one below in the section of the address, whatever its
	 * size */
	if (f->sym->opts.llvm_names) {
		if (s->size && addr - s->value >= s->size)
			return NULL;
	} else if (s->shndx != section_of(f, addr)) {
		return NULL;
	} else if (f->sym->opts.symbol_extent && s->size && addr - s->value >= s->size) {
		/* a symbol a little further down may still cover it (a
		 * function with a smaller symbol inside it) */
		for (size_t i = lo - 1, steps = 0; i-- > 0 && steps < SYMBOL_COVER_STEPS; steps++) {
			const struct sym_symbol *c = &f->syms[i];
			if (c->size && addr - c->value < c->size && c->shndx == s->shndx)
				return c;
		}
		return NULL;
	}
	return s;
}

/* Lookups --------------------------------------------------------------------- */

static struct leaksnap_sym_frame *new_frame(struct leaksnap_symbolizer *sym, size_t *count)
{
	if (*count == sym->frame_cap) {
		size_t n = sym->frame_cap ? sym->frame_cap * 2 : 16;
		struct leaksnap_sym_frame *p = realloc(sym->frames, n * sizeof(*p));
		if (!p)
			return NULL;
		sym->frames = p;
		sym->frame_cap = n;
	}
	struct leaksnap_sym_frame *fr = &sym->frames[(*count)++];
	memset(fr, 0, sizeof(*fr));
	return fr;
}

void sym_file_locate_in(struct leaksnap_sym_file *f, struct sym_cu *cu, uint64_t vaddr,
			struct sym_loc *loc)
{
	loc->cu = cu;
	loc->node = SYM_NONE;
	loc->line = NULL;
	if (cu) {
		uint64_t a = vaddr - f->bias;
		loc->node = sym_dwarf_find_node(cu, a);
		loc->line = sym_dwarf_find_line(cu, a);
	}
}

/* Where @vaddr is in the DWARF (its unit ready, or no unit). */
static int locate(struct leaksnap_sym_file *f, uint64_t vaddr, struct sym_loc *loc,
		  struct leaksnap_error *err)
{
	struct sym_cu *cu = NULL;
	if (f->load_failed) { /* met by a hint, said here */
		f->load_failed = false;
		if (err && !err->code)
			*err = f->load_error;
		return -1;
	}
	if (f->dbg) {
		if (sym_dwarf_load_units(f, err) != 0)
			return -1;
		cu = sym_dwarf_find_unit(f, vaddr - f->bias);
	}
	if (cu && !cu->ready && sym_unit_ready(f, cu, err) != 0)
		return -1;
	if (cu && cu->broken)
		cu = NULL; /* said when first met: the symbol table answers */
	sym_file_locate_in(f, cu, vaddr, loc);
	return 0;
}

int leaksnap_sym_file_lookup(struct leaksnap_sym_file *f, uint64_t vaddr,
			     struct leaksnap_sym_result *out, struct leaksnap_error *err)
{
	leaksnap_error_clear(err);
	struct sym_loc loc;
	out->frames = NULL;
	out->frame_count = 0;
	if (locate(f, vaddr, &loc, err) != 0)
		return -1;
	return sym_file_answer(f, vaddr, &loc, out, err);
}

int sym_file_answer(struct leaksnap_sym_file *f, uint64_t vaddr, const struct sym_loc *loc,
		    struct leaksnap_sym_result *out, struct leaksnap_error *err)
{
	struct leaksnap_symbolizer *sym = f->sym;
	size_t count = 0;
	struct sym_cu *cu = loc->cu;
	out->frames = NULL;
	out->frame_count = 0;
	if (cu) {
		uint32_t node = loc->node;
		struct leaksnap_sym_frame *fr = new_frame(sym, &count);
		if (!fr)
			goto nomem;
		Dwarf_Line *line = loc->line;
		if (line) {
			int ln = 0, col = 0;
			unsigned disc = 0;
			fr->file = sym_source_path(sym, cu, dwarf_linesrc(line, NULL, NULL));
			if (dwarf_lineno(line, &ln) == 0 && ln > 0)
				fr->line = (uint32_t)ln;
			if (dwarf_linecol(line, &col) == 0 && col > 0)
				fr->column = (uint32_t)col;
			if (dwarf_linediscriminator(line, &disc) == 0)
				fr->discriminator = disc;
		}
		uint32_t outer = SYM_NONE; /* the function the inlined ones are in */
		/* innermost first: each inlined node's call site is where its
		 * caller's frame stands */
		for (unsigned guard = 0; node != SYM_NONE && guard < 4096; guard++) {
			struct sym_node *n = &cu->nodes[node];
			sym_dwarf_resolve_node(f, cu, n);
			outer = node;
			fr->function = n->name;
			fr->start_file = n->decl_file;
			fr->start_line = n->decl_line;
			fr->has_start = n->has_start;
			fr->start_address = n->start + f->bias;
			if (!n->inlined || n->parent == SYM_NONE)
				break;
			fr->inlined = true;
			fr = new_frame(sym, &count);
			if (!fr)
				goto nomem;
			fr->file = n->call_file;
			fr->line = n->call_line;
			fr->column = n->call_column;
			fr->discriminator = n->call_discriminator;
			node = n->parent;
		}
		/* Code DWARF has no function for is named by the symbol table.
		 * With llvm_names the outermost frame always is where there is
		 * a symbol, as llvm-symbolizer does: the symbol says what the
		 * code really is (a clone like foo.isra.0). */
		if (!sym->opts.llvm_names && outer != SYM_NONE) {
			/* GNU addr2line: a function DWARF names without a
			 * linkage name (not inlined: the outermost frame, below
			 * any inlined into it) takes the name of the symbol that
			 * starts where it starts (a C++ method's qualified name,
			 * as gcc leaves it out for a lambda's std::function
			 * _M_invoke; a clone's "[clone .constprop.0]") */
			const struct sym_node *n = &cu->nodes[outer];
			const struct sym_symbol *s0 = n->linkage || n->inlined || !n->has_start
							      ? NULL
							      : find_symbol(f, vaddr);
			if (s0 && s0->value == n->start + f->bias)
				sym->frames[count - 1].function = sym_demangle(sym, s0->name);
		}
		struct leaksnap_sym_frame *last = &sym->frames[count - 1];
		const struct sym_symbol *s =
			sym->opts.llvm_names || !last->function ? find_symbol(f, vaddr) : NULL;
		if (s) {
			last->function = sym_demangle(sym, s->name);
			last->start_address = s->value;
			last->has_start = true;
		}
		if (!sym->frames[0].function && !sym->frames[0].file)
			count = 0;
	}
	if (count == 0) {
		const struct sym_symbol *s = find_symbol(f, vaddr);
		if (s) {
			struct leaksnap_sym_frame *fr = new_frame(sym, &count);
			if (!fr)
				goto nomem;
			fr->function = sym_demangle(sym, s->name);
			fr->file = s->file;
			fr->from_symtab = true;
			fr->symbol_offset = vaddr - s->value;
			fr->has_start = true;
			fr->start_address = s->value;
		}
	}
	out->frames = sym->frames;
	out->frame_count = count;
	return 0;
nomem:
	return kit_error(err, LEAKSNAP_ERR_NOMEM, f->path, "out of memory");
}

void leaksnap_sym_file_prefetch(struct leaksnap_sym_file *f, const uint64_t *vaddrs, size_t count)
{
	if (f->sym->opts.jobs < 2 || !f->dbg || f->no_pool || !count)
		return;
	if (!f->cus_loaded) {
		leaksnap_error_clear(&f->load_error);
		if (sym_dwarf_load_units(f, &f->load_error) != 0) {
			f->load_failed = true; /* the next lookup says it, as it would have */
			return;
		}
	}
	sym_pool_hint(f, vaddrs, count);
}
