/* stackcheck: print each record of a dump as one line for the hook tests,
 *   <size> <count> <app|zygote> <function of frame 0> <frame 1> ...
 * or with --rel each frame as <module file name>+0x<rel_pc>:<function>
 * (the same return addresses, wherever the modules were loaded),
 * sorted, with functions named from the modules' ELF symbol tables
 * (.symtab, else .dynsym; "?" where none covers the address).  Frames are
 * return addresses, so each is looked up at pc - 1.  A test helper only:
 * the real symbolizer is symbolizer/. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leaksnap/maps.h>
#include <leaksnap/snapshot.h>

struct sym {
	uint64_t lo, hi;
	const char *name;
};

struct module {
	const char *path;
	Elf *elf;
	int fd;
	struct sym *syms;
	size_t nsyms;
	GElf_Phdr *loads;
	size_t nloads;
};

static struct module mods[512];
static size_t nmods;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void load_symbols(struct module *m, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	m->syms = calloc(n ? n : 1, sizeof(*m->syms));
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(m->elf, sh->sh_link, s.st_name);
		if (!name)
			continue;
		m->syms[m->nsyms++] = (struct sym){s.st_value,
						   s.st_value + (s.st_size ? s.st_size : 1), name};
	}
	qsort(m->syms, m->nsyms, sizeof(*m->syms), sym_cmp);
}

static struct module *module_get(const char *path)
{
	for (size_t i = 0; i < nmods; i++)
		if (!strcmp(mods[i].path, path))
			return &mods[i];
	if (nmods == sizeof(mods) / sizeof(mods[0]))
		return NULL;
	struct module *m = &mods[nmods++];
	m->path = path;
	m->fd = open(path, O_RDONLY);
	if (m->fd < 0 || !(m->elf = elf_begin(m->fd, ELF_C_READ, NULL)))
		return m;
	size_t phnum = 0;
	elf_getphdrnum(m->elf, &phnum);
	m->loads = calloc(phnum ? phnum : 1, sizeof(*m->loads));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(m->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->loads[m->nloads++] = ph;
	}
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dynsh;
	while ((scn = elf_nextscn(m->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			load_symbols(m, scn, &sh);
			return m;
		}
		if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dynsh = sh;
		}
	}
	if (dyn)
		load_symbols(m, dyn, &dynsh);
	return m;
}

static const char *function_at(const char *path, uint64_t offset)
{
	struct module *m = module_get(path);
	if (!m || !m->elf)
		return "?";
	/* file offset -> virtual address through the PT_LOAD covering it */
	uint64_t addr = 0;
	bool found = false;
	for (size_t i = 0; i < m->nloads && !found; i++)
		if (offset >= m->loads[i].p_offset &&
		    offset < m->loads[i].p_offset + m->loads[i].p_filesz) {
			addr = offset - m->loads[i].p_offset + m->loads[i].p_vaddr;
			found = true;
		}
	if (!found)
		return "?";
	const char *best = "?";
	for (size_t i = 0; i < m->nsyms && m->syms[i].lo <= addr; i++)
		if (addr < m->syms[i].hi)
			best = m->syms[i].name;
	return best;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	bool rel = argc == 3 && !strcmp(argv[1], "--rel");
	if (rel) {
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: stackcheck [--rel] DUMP\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	struct leaksnap_error err;
	struct leaksnap_snapshot *s = leaksnap_snapshot_open(argv[1], NULL, &err);
	if (!s) {
		char msg[512];
		fprintf(stderr, "stackcheck: %s\n", leaksnap_error_format(&err, msg, sizeof(msg)));
		return 2;
	}
	size_t mlen = 0;
	const char *text = leaksnap_snapshot_maps(s, &mlen, NULL, NULL);
	struct leaksnap_maps *maps = leaksnap_maps_parse(text ? text : "", text ? mlen : 0, argv[1],
							 1, 0, &err);
	if (!maps) {
		fprintf(stderr, "stackcheck: bad maps\n");
		return 2;
	}
	size_t n = leaksnap_snapshot_record_count(s);
	char **lines = calloc(n ? n : 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const struct leaksnap_snapshot_record *r = leaksnap_snapshot_record(s, i);
		char *buf;
		size_t len;
		FILE *f = open_memstream(&buf, &len);
		fprintf(f, "%llu %llu %s", (unsigned long long)r->size,
			(unsigned long long)r->count, r->zygote ? "zygote" : "app");
		for (uint32_t k = 0; k < r->frame_count; k++) {
			struct leaksnap_maps_location loc;
			const char *fn = "?";
			bool found = leaksnap_maps_locate(maps, r->frames[k], &loc) && loc.module &&
				     loc.rel_pc;
			if (found)
				fn = function_at(loc.module->path, loc.rel_pc - 1);
			if (rel && found) {
				const char *base = strrchr(loc.module->path, '/');
				fprintf(f, " %s+0x%llx:%s", base ? base + 1 : loc.module->path,
					(unsigned long long)loc.rel_pc, fn);
			} else if (rel) {
				fprintf(f, " 0x%llx:?", (unsigned long long)r->frames[k]);
			} else {
				fprintf(f, " %s", fn);
			}
		}
		fclose(f);
		lines[i] = buf;
	}
	qsort(lines, n, sizeof(char *), line_cmp);
	for (size_t i = 0; i < n; i++) {
		printf("%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	for (size_t i = 0; i < nmods; i++) {
		free(mods[i].syms);
		free(mods[i].loads);
		if (mods[i].elf)
			elf_end(mods[i].elf);
		if (mods[i].fd >= 0)
			close(mods[i].fd);
	}
	leaksnap_maps_free(maps);
	leaksnap_snapshot_close(s);
	return 0;
}
