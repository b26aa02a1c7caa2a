/* leaksnap attach: the target's ELF files, read with libelf through its
 * root (/proc/PID/root), and where their symbols are in its memory. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/maps.h>

#include "attach_internal.h"
#include "kit.h"

static Elf *elf_open(const char *path, int *fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	Elf *e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL) {
		close(*fd);
		errno = EIO;
	}
	return e;
}

int attach_elf_facts(const char *path, struct attach_elf_facts *f)
{
	memset(f, 0, sizeof(*f));
	int fd;
	Elf *e = elf_open(path, &fd);
	if (e == NULL)
		return -1;
	int rc = 1;
	GElf_Ehdr eh;
	size_t n;
	if (elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh) && elf_getphdrnum(e, &n) == 0) {
		f->cls = eh.e_ident[EI_CLASS];
		f->machine = eh.e_machine;
		f->type = eh.e_type;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				f->interp = true;
		}
		rc = 0;
	}
	elf_end(e);
	close(fd);
	return rc;
}

/* The load bias of a file mapped with offset @offset at @start: the
 * PT_LOAD segment holding that offset says which address it has. */
static int load_bias(Elf *e, uint64_t start, uint64_t offset, uint64_t *bias)
{
	size_t n;
	if (elf_getphdrnum(e, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
		uint64_t seg_off = ph.p_offset & ~(align - 1);
		if (offset < seg_off || offset >= ph.p_offset + ph.p_filesz)
			continue;
		/* start maps @offset, which is vaddr p_vaddr + (offset - p_offset) */
		*bias = start - (ph.p_vaddr + offset - ph.p_offset);
		return 0;
	}
	return -1;
}

/* The value of @name in the symbol table @scn: 0 found (the default
 * version first), 1 not. */
static int find_in(Elf *e, Elf_Scn *scn, Elf_Scn *versym_scn, const char *name, uint64_t *value)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (gelf_getshdr(scn, &sh) == NULL || d == NULL || sh.sh_entsize == 0)
		return 1;
	Elf_Data *vd = versym_scn ? elf_getdata(versym_scn, NULL) : NULL;
	size_t count = sh.sh_size / sh.sh_entsize;
	bool found = false;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (gelf_getsym(d, (int)i, &sym) == NULL || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		const char *s = elf_strptr(e, sh.sh_link, sym.st_name);
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		GElf_Versym v = 0;
		if (vd)
			gelf_getversym(vd, (int)i, &v);
		if (!found || !(v & 0x8000)) { /* a hidden (non-default) version gives way */
			*value = sym.st_value;
			found = true;
			if (!(v & 0x8000))
				break;
		}
	}
	return found ? 0 : 1;
}

int attach_elf_symbol(const char *path, uint64_t start, uint64_t offset, const char *name,
		      uint64_t *addr)
{
	int fd;
	Elf *e = elf_open(path, &fd);
	if (e == NULL)
		return -1;
	int rc = 1;
	uint64_t bias, value = 0;
	if (elf_kind(e) == ELF_K_ELF && load_bias(e, start, offset, &bias) == 0) {
		Elf_Scn *dynsym = NULL, *symtab = NULL, *versym = NULL;
		for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) == NULL)
				continue;
			if (sh.sh_type == SHT_DYNSYM)
				dynsym = scn;
			else if (sh.sh_type == SHT_SYMTAB)
				symtab = scn;
			else if (sh.sh_type == SHT_GNU_versym)
				versym = scn;
		}
		if ((dynsym && find_in(e, dynsym, versym, name, &value) == 0) ||
		    (symtab && find_in(e, symtab, NULL, name, &value) == 0)) {
			*addr = bias + value;
			rc = 0;
		}
	}
	elf_end(e);
	close(fd);
	return rc;
}

int attach_module_symbol(const struct attach_proc *p, const char *module, const char *name,
			 uint64_t *addr, struct leaksnap_error *err)
{
	struct leaksnap_error perr = {0};
	struct leaksnap_maps *maps = leaksnap_maps_parse(p->maps, p->maps_len, p->subject, 1, 0, &perr);
	if (maps == NULL)
		return kit_error(err, perr.code, p->subject, "its maps: %s", perr.text);
	int rc = 1;
	for (size_t i = 0; i < leaksnap_maps_module_count(maps) && rc == 1; i++) {
		const struct leaksnap_maps_module *m = leaksnap_maps_module(maps, i);
		const char *base = m->path ? strrchr(m->path, '/') : NULL;
		if (base == NULL || strcmp(base + 1, module) != 0)
			continue;
		/* the mapping of the lowest file offset */
		const struct leaksnap_maps_mapping *low = NULL;
		for (size_t j = 0; j < m->mapping_count; j++) {
			const struct leaksnap_maps_mapping *mm =
				leaksnap_maps_mapping(maps, m->first_mapping + j);
			if (low == NULL || mm->offset < low->offset)
				low = mm;
		}
		if (low == NULL || low->deleted)
			continue;
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s%s", p->root, m->path);
		int r = attach_elf_symbol(path, low->start, low->offset, name, addr);
		if (r < 0)
			rc = kit_error(err, LEAKSNAP_ERR_IO, p->subject, "cannot read %s: %s",
				       m->path, strerror(errno));
		else
			rc = r;
	}
	leaksnap_maps_free(maps);
	return rc;
}
