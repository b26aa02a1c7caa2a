/* leaksnap hook: a dump's metadata, the key=value lines after its maps
 * (docs/format.md): the process, the trigger, the hook's state, the build
 * IDs of the loaded modules and of those unloaded since.  Called by the
 * dump writer (dump.c); like it, never calls malloc. */
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "hook_internal.h"
#include "procbuf.h"
#include "sample.h"
#include "unloaded.h"

/* Metadata --------------------------------------------------------------------- */

static const char *abi_name(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__i386__)
	return "x86";
#elif defined(__aarch64__)
	return "arm64";
#elif defined(__arm__)
	return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
	return "riscv64";
#else
	return "unknown";
#endif
}

static const char *const trigger_names[] = {
	[HOOK_TRIGGER_EXIT] = "exit",
	[HOOK_TRIGGER_SIGNAL] = "signal",
	[HOOK_TRIGGER_API] = "api",
	[HOOK_TRIGGER_INTERVAL] = "interval",
	[HOOK_TRIGGER_CRASH] = LEAKSNAP_HOOK_CRASH_TAG,
	[HOOK_TRIGGER_CONTROL] = "control",
};

/* The line of @maps whose mapping contains @addr: its start, its end
 * (@eol) and the mapping's end (@hi); NULL if none. */
static const char *maps_line_of(const struct buf *maps, uintptr_t addr, const char **eol,
				uintptr_t *hi)
{
	const char *p = maps->p, *end = maps->p + maps->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end, *s;
		uintptr_t lo = maps_line_hex(p, e, &s);
		*hi = s < e && *s == '-' ? maps_line_hex(s + 1, e, NULL) : 0;
		if (addr >= lo && addr < *hi) {
			*eol = e;
			return p;
		}
		p = e + 1;
	}
	return NULL;
}

/* The path maps gives for the mapping containing @addr (the name the
 * symbolizer will see), or NULL. */
static const char *maps_path_of(const struct buf *maps, uintptr_t addr, size_t *len)
{
	const char *eol;
	uintptr_t hi;
	const char *line = maps_line_of(maps, addr, &eol, &hi);
	const char *path = line ? maps_line_field(line, eol, 5) : NULL;
	if (!path || path >= eol)
		return NULL;
	*len = (size_t)(eol - path);
	return path;
}

/* Whether [@addr, @addr + @len) lies in one readable mapping of @maps. */
static bool maps_readable(const struct buf *maps, uintptr_t addr, size_t len)
{
	const char *eol;
	uintptr_t hi;
	const char *line = maps_line_of(maps, addr, &eol, &hi);
	const char *perms = line ? maps_line_field(line, eol, 1) : NULL;
	return perms && perms < eol && *perms == 'r' && len <= hi - addr;
}

/* Whether the program headers and the notes of @info are all in readable
 * mappings of @maps: a dump written in a signal handler (dump_thread.c)
 * may have interrupted dlclose() between its unmapping of a library and
 * its taking it off the loader's list, whose lock the handler then takes
 * again on the same thread (it is recursive). */
static bool module_readable(const struct dl_phdr_info *info, const struct buf *maps)
{
	if (!maps_readable(maps, (uintptr_t)info->dlpi_phdr,
			   (size_t)info->dlpi_phnum * sizeof(ElfW(Phdr))))
		return false;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE && ph->p_memsz &&
		    !maps_readable(maps, info->dlpi_addr + ph->p_vaddr, ph->p_memsz))
			return false;
	}
	return true;
}

struct build_id_ctx {
	struct buf *meta;
	const struct buf *maps;
};

unsigned module_build_id(const struct dl_phdr_info *info, uintptr_t *first_load,
			 const uint8_t **id)
{
	bool have_load = false;
	*first_load = 0;
	for (unsigned i = 0; i < info->dlpi_phnum && !have_load; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			*first_load = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			have_load = true;
		}
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			size_t name_sz = (nh->n_namesz + 3) & ~3u, desc_sz = (nh->n_descsz + 3) & ~3u;
			const uint8_t *name = p + sizeof(*nh), *desc = name + name_sz;
			if (desc + desc_sz > end || desc_sz < nh->n_descsz)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz > 0 && nh->n_descsz <= 64) {
				*id = desc;
				return nh->n_descsz;
			}
			p = desc + desc_sz;
		}
	}
	return 0;
}

static int add_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_ctx *ctx = data;
	(void)size;
	uintptr_t first_load;
	const uint8_t *id;
	if (!module_readable(info, ctx->maps))
		return 0;
	unsigned len = module_build_id(info, &first_load, &id);
	if (!len)
		return 0;
	size_t plen = 0;
	const char *path = first_load ? maps_path_of(ctx->maps, first_load, &plen) : NULL;
	if (!path) {
		path = info->dlpi_name;
		plen = path ? strlen(path) : 0;
	}
	if (!plen)
		return 0;
	buf_add(ctx->meta, "build_id=", 9);
	for (unsigned k = 0; k < len; k++)
		buf_printf(ctx->meta, "%02x", id[k]);
	buf_add(ctx->meta, " ", 1);
	buf_add_clean(ctx->meta, path, plen);
	buf_add(ctx->meta, "\n", 1);
	return 0;
}

/* "process_start=BOOT_ID TICKS": the boot and the clock tick after it the
 * process started at (field 22 of /proc/self/stat), which together tell
 * one run of a pid from any other (readers put one run's dumps in capture
 * order by it).  Nothing when either cannot be read. */
static void add_process_start(struct buf *meta)
{
	struct buf st = {0}, boot = {0};
	if (read_proc("stat", &st) && buf_read_file("/proc/sys/kernel/random/boot_id", &boot) &&
	    !st.failed && !boot.failed) {
		/* after the command's ")" (it may hold spaces and parentheses):
		 * field 3, the state; the start time is 19 fields further */
		const char *p = NULL, *e = st.p + st.len;
		for (const char *q = st.p; q < e; q++)
			if (*q == ')')
				p = q + 1;
		for (int field = 2; p && field < 22 && p < e; field++) {
			while (p < e && *p == ' ')
				p++;
			if (field < 21)
				while (p < e && *p != ' ')
					p++;
		}
		const char *t = p;
		while (p && p < e && *p >= '0' && *p <= '9')
			p++;
		size_t blen = boot.len;
		while (blen && (boot.p[blen - 1] == '\n' || boot.p[blen - 1] == ' '))
			blen--;
		if (t && p > t && blen) {
			buf_add(meta, "process_start=", 14);
			buf_add_clean(meta, boot.p, blen);
			buf_add(meta, " ", 1);
			buf_add(meta, t, (size_t)(p - t));
			buf_add(meta, "\n", 1);
		}
	}
	buf_free(&st);
	buf_free(&boot);
}

void dump_build_meta(struct buf *meta, const struct buf *maps, enum hook_trigger trigger,
		     int crash_signal, size_t clamped)
{
	buf_printf(meta, "abi=%s\n", abi_name());
	struct buf tmp = {0};
	if (read_proc("cmdline", &tmp)) {
		while (tmp.len && tmp.p[tmp.len - 1] == '\0')
			tmp.len--;
		for (size_t i = 0; i < tmp.len; i++)
			if (tmp.p[i] == '\0')
				tmp.p[i] = ' ';
		buf_add(meta, "cmdline=", 8);
		buf_add_clean(meta, tmp.p, tmp.len);
		buf_add(meta, "\n", 1);
	}
	buf_free(&tmp);
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe));
	if (n < 0) /* (a zombie main thread's: see read_proc) */
		n = readlink("/proc/thread-self/exe", exe, sizeof(exe));
	if (n > 0 && (size_t)n < sizeof(exe)) {
		buf_add(meta, "exe=", 4);
		buf_add_clean(meta, exe, (size_t)n);
		buf_add(meta, "\n", 1);
	}
	add_process_start(meta);
	buf_printf(meta, "unwinder=%s\n", hook_cfg.unwinder_name);
	buf_printf(meta, "trigger=%s\n", trigger_names[trigger]);
	if (trigger == HOOK_TRIGGER_CRASH)
		buf_printf(meta, "crash_signal=%d\n", crash_signal);
	/* (sampled collection does not look for double frees: a free learns
	 * only whether its block was sampled) */
	if (!hook_cfg.sample)
		buf_printf(meta, "invalid_frees=%lu\n",
			   (unsigned long)atomic_load(&hook_invalid_frees));
	buf_printf(meta, "capture=%s\n", atomic_load(&hook_capture_on) ? "on" : "off");
	if (clamped)
		buf_printf(meta, "clamped_sizes=%zu\n", clamped);
	if (hook_cfg.sample) {
		buf_printf(meta, "sample_interval=%llu\n", (unsigned long long)hook_cfg.sample);
		size_t counters;
		unsigned long locked, unsampled;
		sample_filter_stats(&counters, &locked, &unsampled);
		buf_printf(meta, "sample_filter=%zu %lu %lu\n", counters, locked, unsampled);
	}
	control_meta(meta);
#ifdef HOOK_INAPP
	inapp_meta(meta);
#endif
	struct build_id_ctx ctx = {meta, maps};
	dl_iterate_phdr(add_build_id, &ctx);
	unloaded_meta(meta);
}

void dump_fp_meta(struct buf *meta, const struct table_snapshot *snap)
{
	if (hook_cfg.unwind != HOOK_UNWIND_FP || !UNWIND_FP_RECORDS || !snap->info_size)
		return;
	size_t frames = snap->info_size / sizeof(uintptr_t) - 2, shallow = 0;
	for (size_t i = 0; i < snap->record_count; i++) {
		const uintptr_t *r =
			(const uintptr_t *)(const void *)(snap->records + i * snap->info_size);
		size_t depth = 0;
		while (depth < frames && r[2 + depth])
			depth++;
		shallow += depth <= FP_SHALLOW_DEPTH;
	}
	buf_printf(meta, "fp_shallow=%zu/%zu\n", shallow, snap->record_count);
	if (snap->record_count >= FP_SHALLOW_MIN && shallow * 2 > snap->record_count)
		buf_printf(meta, "frame_pointers=missing\n");
}
