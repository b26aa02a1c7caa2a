/* Stack walk from DWARF call-frame information (.eh_frame), x86-64 and
 * aarch64, Linux glibc >= 2.35 and Android bionic.
 *
 * Runs inside malloc, on any number of threads at once: nothing here
 * allocates, locks or prints.  The only system calls are the mmap of the
 * rule cache (once), the mmap of a trace block on a thread's first walk
 * (blocks are recycled when threads exit), and on bionic dl_iterate_phdr
 * on a cache miss and on meeting a frame in no module.
 *
 * Per frame we only track what the next frame needs: the CFA (the caller's
 * stack pointer), the return address and the frame pointer (x86-64 rbp,
 * aarch64 x29).  The rule of a PC is reduced to a struct rule that says how
 * to get those three from the frame's sp and fp; rules are cached per PC in
 * a lock-free direct-mapped table, so a warm walk is a few loads per frame.
 * On top of that each thread keeps its previous walk (the trace cache): a
 * walk that reaches a frame of it, with the stack words read from there on
 * unchanged, copies the rest instead of stepping (see "The trace cache").
 *
 * Stack reads are whole aligned words inside [stk->lo, stk->hi).  The CFI
 * itself is read from the module's own mapped memory, inside the module's
 * address range; every loop over it is bounded by the record length and by
 * an explicit step count. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* _dl_find_object: else CFI_SUPPORTED quietly is 0 */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__BIONIC__)
#include <link.h>
#else
#include <dlfcn.h>
#endif

#include "unwind.h"

/* _dl_find_object (glibc 2.35) is lock-free and async-signal-safe.  Older
 * glibc only has dl_iterate_phdr, which takes the loader's lock (held
 * while dlopen allocates): there unwind_cfi_supported() is false. */
#if (defined(__x86_64__) || defined(__aarch64__)) && \
	(defined(__BIONIC__) || defined(DLFO_EH_SEGMENT_TYPE))
#define CFI_SUPPORTED 1
#else
#define CFI_SUPPORTED 0
#endif

#if CFI_SUPPORTED


#if defined(__x86_64__)
#define DW_REG_FP 6 /* rbp */
#define DW_REG_SP 7 /* rsp */
#else
#define DW_REG_FP 29 /* x29 */
#define DW_REG_SP 31 /* sp */
#endif

/* DWARF pointer encodings (DW_EH_PE_*). */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* DWARF expression opcodes of the one expression form we accept. */
#define OP_DEREF 0x06
#define OP_BREG0 0x70

/* Limits against malformed input; real CFI stays far below them. */
#define CFA_MAX_STEPS 100000 /* instructions interpreted per lookup */
#define CFA_MAX_REMEMBER 16  /* remember_state nesting (GCC uses 1-2) */
#define AUG_MAX 8	     /* augmentation string letters */

/* ------------------------------------------------------------------------
 * Reading CFI bytes
 * ------------------------------------------------------------------------ */

/* A bounded reader: a read past @end sets @bad and yields 0. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static void cur_take(struct cur *c, void *out, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		memset(out, 0, n);
		return;
	}
	memcpy(out, c->p, n);
	c->p += n;
}

static uint8_t cur_u8(struct cur *c)
{
	uint8_t v;

	cur_take(c, &v, 1);
	return v;
}

static uint16_t cur_u16(struct cur *c)
{
	uint16_t v;

	cur_take(c, &v, 2);
	return v;
}

static uint32_t cur_u32(struct cur *c)
{
	uint32_t v;

	cur_take(c, &v, 4);
	return v;
}

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v;

	cur_take(c, &v, 8);
	return v;
}

static uint64_t cur_uleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 70; shift += 7) {
		uint8_t b = cur_u8(c);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true; /* longer than any 64-bit value */
	return 0;
}

static int64_t cur_sleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 70; shift += 7) {
		uint8_t b = cur_u8(c);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if ((b & 0x40) && shift + 7 < 64)
				v |= ~(uint64_t)0 << (shift + 7);
			return (int64_t)v;
		}
	}
	c->bad = true;
	return 0;
}

/* The value of an encoded pointer, before pcrel/datarel are applied. */
static bool cur_enc_raw(struct cur *c, uint8_t enc, uint64_t *out)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR:
		*out = WORD == 8 ? cur_u64(c) : cur_u32(c);
		break;
	case PE_ULEB128:
		*out = cur_uleb(c);
		break;
	case PE_UDATA2:
		*out = cur_u16(c);
		break;
	case PE_UDATA4:
		*out = cur_u32(c);
		break;
	case PE_UDATA8:
		*out = cur_u64(c);
		break;
	case PE_SLEB128:
		*out = (uint64_t)cur_sleb(c);
		break;
	case PE_SDATA2:
		*out = (uint64_t)(int64_t)(int16_t)cur_u16(c);
		break;
	case PE_SDATA4:
		*out = (uint64_t)(int64_t)(int32_t)cur_u32(c);
		break;
	case PE_SDATA8:
		*out = cur_u64(c);
		break;
	default:
		return false;
	}
	return !c->bad;
}

/* An encoded address.  @datarel is the base of DW_EH_PE_datarel (the
 * .eh_frame_hdr start), 0 where there is none. */
static bool cur_enc_ptr(struct cur *c, uint8_t enc, uintptr_t datarel,
			uintptr_t *out)
{
	uintptr_t field = (uintptr_t)c->p;
	uint64_t v;

	if (enc == PE_OMIT || (enc & PE_INDIRECT) || !cur_enc_raw(c, enc, &v))
		return false;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		v += field;
		break;
	case PE_DATAREL:
		if (!datarel)
			return false;
		v += datarel;
		break;
	default: /* textrel, funcrel, aligned: not emitted on our targets */
		return false;
	}
	*out = (uintptr_t)v;
	return true;
}

/* ------------------------------------------------------------------------
 * CIE and FDE records
 * ------------------------------------------------------------------------ */

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_z;
	bool signal; /* 'S': an interrupted frame, its caller's pc is exact */
	struct cur insns;
};

struct fde {
	uintptr_t start, end;
	struct cur insns;
};

/* Open the CIE or FDE at @p; @body gets the bytes after the length field.
 * The whole record must lie in the module, [lo, hi). */
static bool record_open(uintptr_t p, uintptr_t lo, uintptr_t hi,
			struct cur *body)
{
	struct cur c;
	uint64_t len;

	if (p < lo || p >= hi)
		return false;
	c.p = (const uint8_t *)p;
	c.end = (const uint8_t *)hi;
	c.bad = false;
	len = cur_u32(&c);
	if (len == 0xffffffff)
		len = cur_u64(&c);
	if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p))
		return false;
	body->p = c.p;
	body->end = c.p + len;
	body->bad = false;
	return true;
}

static bool cie_parse(uintptr_t p, uintptr_t lo, uintptr_t hi, struct cie *cie)
{
	struct cur c;
	const uint8_t *aug;
	uint8_t version;
	size_t naug;

	if (!record_open(p, lo, hi, &c) || cur_u32(&c) != 0)
		return false;
	version = cur_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return false;
	aug = c.p;
	for (naug = 0; naug <= AUG_MAX && cur_u8(&c) != 0; naug++)
		;
	if (c.bad || naug > AUG_MAX)
		return false;
	if (version == 4) {
		/* address_size, segment_selector_size */
		if (cur_u8(&c) != WORD || cur_u8(&c) != 0)
			return false;
	}
	cie->code_align = cur_uleb(&c);
	cie->data_align = cur_sleb(&c);
	cie->ra_reg = version == 1 ? cur_u8(&c) : cur_uleb(&c);
	cie->fde_enc = PE_ABSPTR;
	cie->signal = false;
	cie->has_z = naug > 0 && aug[0] == 'z';
	if (cie->has_z) {
		uint64_t alen = cur_uleb(&c);
		struct cur a = { c.p, c.p, false };

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return false;
		a.end = c.p + alen;
		c.p = a.end;
		for (size_t i = 1; i < naug; i++) {
			uint64_t ignored;
			uint8_t penc;

			switch (aug[i]) {
			case 'R':
				cie->fde_enc = cur_u8(&a);
				break;
			case 'P':
				penc = cur_u8(&a);
				if ((penc & 0x70) == PE_ALIGNED ||
				    !cur_enc_raw(&a, penc, &ignored))
					return false;
				break;
			case 'L':
				cur_u8(&a);
				break;
			case 'S':
				cie->signal = true;
				break;
			case 'B': /* arm64: RA signed with key B */
			case 'G': /* arm64: MTE-tagged frame */
				break;
			default: /* its data would hide the 'R' byte */
				return false;
			}
		}
		if (a.bad)
			return false;
	} else if (naug > 0) {
		return false; /* "eh" and other pre-'z' forms */
	}
	if (c.bad)
		return false;
	cie->insns = c;
	return true;
}

/* Parse the FDE at @p and its CIE; fails unless the FDE covers @pc. */
static bool fde_parse(uintptr_t p, uintptr_t lo, uintptr_t hi, uintptr_t pc,
		      struct cie *cie, struct fde *fde)
{
	struct cur c;
	uintptr_t id_field;
	uint32_t cie_delta;
	uint64_t range;

	if (!record_open(p, lo, hi, &c))
		return false;
	id_field = (uintptr_t)c.p;
	cie_delta = cur_u32(&c);
	if (c.bad || cie_delta == 0 || cie_delta > id_field - lo)
		return false;
	if (!cie_parse(id_field - cie_delta, lo, hi, cie))
		return false;
	if (!cur_enc_ptr(&c, cie->fde_enc, 0, &fde->start) ||
	    !cur_enc_raw(&c, cie->fde_enc & 0x0f, &range))
		return false;
	if (range > UINTPTR_MAX - fde->start)
		return false;
	fde->end = fde->start + (uintptr_t)range;
	if (pc < fde->start || pc >= fde->end)
		return false;
	if (cie->has_z) {
		uint64_t alen = cur_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return false;
		c.p += alen;
	}
	fde->insns = c;
	return true;
}

/* Binary search of the .eh_frame_hdr table for the FDE that may cover
 * @pc.  Only the sorted table the linkers emit (datarel sdata4) is used: a
 * module without one counts as having no CFI. */
static uintptr_t eh_hdr_search(uintptr_t hdr, uintptr_t lo, uintptr_t hi,
			       uintptr_t pc)
{
	struct cur c;
	uint8_t ptr_enc, count_enc, table_enc;
	uintptr_t eh_frame, count;
	size_t first, end;
	int32_t v[2];

	if (hdr < lo || hdr >= hi)
		return 0;
	c.p = (const uint8_t *)hdr;
	c.end = (const uint8_t *)hi;
	c.bad = false;
	if (cur_u8(&c) != 1)
		return 0;
	ptr_enc = cur_u8(&c);
	count_enc = cur_u8(&c);
	table_enc = cur_u8(&c);
	if (c.bad || table_enc != (PE_DATAREL | PE_SDATA4))
		return 0;
	if (!cur_enc_ptr(&c, ptr_enc, hdr, &eh_frame) ||
	    !cur_enc_ptr(&c, count_enc, hdr, &count))
		return 0;
	if (count == 0 || count > (size_t)(c.end - c.p) / sizeof(v))
		return 0;

	/* The last entry starting at or below pc (at most 64 rounds). */
	first = 0;
	end = count;
	while (first < end) {
		size_t mid = first + (end - first) / 2;

		memcpy(v, c.p + mid * sizeof(v), sizeof(v));
		if (hdr + (uintptr_t)(intptr_t)v[0] <= pc)
			first = mid + 1;
		else
			end = mid;
	}
	if (first == 0)
		return 0;
	memcpy(v, c.p + (first - 1) * sizeof(v), sizeof(v));
	return hdr + (uintptr_t)(intptr_t)v[1];
}

#if defined(__BIONIC__)
struct phdr_search {
	uintptr_t pc;
	uintptr_t hdr, lo, hi;
};

static int phdr_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct phdr_search *s = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0, hdr = 0;
	bool hit = false;

	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (s->pc >= start && s->pc - start < ph->p_memsz)
				hit = true;
			if (start < lo)
				lo = start;
			if (start + ph->p_memsz > hi)
				hi = start + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = start;
		}
	}
	if (!hit)
		return 0;
	s->hdr = hdr;
	s->lo = lo;
	s->hi = hi;
	return 1;
}
#endif

/* The module containing @pc: false if there is none.  Else *@hdr gets its
 * .eh_frame_hdr (0 if it has none) and [*@lo, *@hi) its address range. */
static bool module_find(uintptr_t pc, uintptr_t *hdr, uintptr_t *lo,
			uintptr_t *hi)
{
#if defined(__BIONIC__)
	/* No lock-free lookup on bionic; its loader lock is recursive, and
	 * the rule cache keeps this off the warm path. */
	struct phdr_search s = { .pc = pc };

	if (dl_iterate_phdr(phdr_visit, &s) <= 0)
		return false;
	*lo = s.lo;
	*hi = s.hi;
	*hdr = s.hdr;
	return true;
#else
	struct dl_find_object dlfo;

	if (_dl_find_object((void *)pc, &dlfo) != 0)
		return false;
	*lo = (uintptr_t)dlfo.dlfo_map_start;
	*hi = (uintptr_t)dlfo.dlfo_map_end;
	*hdr = (uintptr_t)dlfo.dlfo_eh_frame;
	return true;
#endif
}

/* ------------------------------------------------------------------------
 * The CFA program
 * ------------------------------------------------------------------------ */

enum reg_how {
	REG_SAME,    /* unchanged from the callee (callee-saved, unspilled) */
	REG_UNDEF,   /* no value: for the RA, the end of the stack */
	REG_AT_CFA,  /* saved at CFA + off */
	REG_VAL_CFA, /* the value is CFA + off */
	REG_AT_FP,   /* saved at fp + off (DW_OP_breg<fp> off) */
	REG_OTHER,   /* anything else: not computable here */
};

enum cfa_how {
	CFA_UNSET,
	CFA_REG,      /* reg + off */
	CFA_DEREF_FP, /* *(fp + off): GCC's realigned (DRAP) frames */
	CFA_OTHER,
};

struct reg_rule {
	enum reg_how how;
	int64_t off;
};

struct row {
	enum cfa_how cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_rule ra, fp;
};

struct cfa_vm {
	const struct cie *cie;
	uintptr_t loc, target;
	struct row row;
	const struct row *init; /* after the CIE program, for DW_CFA_restore */
	struct row stack[CFA_MAX_REMEMBER];
	int depth;
	int steps;
};

static struct reg_rule *vm_reg(struct cfa_vm *vm, uint64_t reg)
{
	if (reg == vm->cie->ra_reg)
		return &vm->row.ra;
	if (reg == DW_REG_FP)
		return &vm->row.fp;
	return NULL; /* a register we do not track */
}

static void vm_set(struct cfa_vm *vm, uint64_t reg, enum reg_how how,
		   int64_t off)
{
	struct reg_rule *r = vm_reg(vm, reg);

	if (r != NULL) {
		r->how = how;
		r->off = off;
	}
}

static void vm_restore(struct cfa_vm *vm, uint64_t reg)
{
	struct reg_rule *r = vm_reg(vm, reg);

	if (r == NULL)
		return;
	if (vm->init == NULL) /* inside the CIE program itself */
		vm_set(vm, reg, REG_SAME, 0);
	else
		*r = r == &vm->row.ra ? vm->init->ra : vm->init->fp;
}

/* Factored offsets multiply in unsigned arithmetic: garbage wraps instead
 * of overflowing, and the result is range-checked later. */
static int64_t factor(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* A DWARF block "DW_OP_breg<fp> N", followed by DW_OP_deref if @deref:
 * sets *@off to N.  The block is skipped either way. */
static bool expr_breg_fp(struct cur *c, bool deref, int64_t *off)
{
	uint64_t len = cur_uleb(c);
	struct cur e = { c->p, c->p, false };

	if (c->bad || len > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return false;
	}
	e.end = c->p + len;
	c->p = e.end;
	if (cur_u8(&e) != OP_BREG0 + DW_REG_FP)
		return false;
	*off = cur_sleb(&e);
	if (deref && cur_u8(&e) != OP_DEREF)
		return false;
	return !e.bad && e.p == e.end;
}

/* Run @c until its end or until the location passes vm->target.  False on
 * malformed CFI or an opcode whose operands we cannot skip. */
static bool vm_run(struct cfa_vm *vm, struct cur *c)
{
	const struct cie *cie = vm->cie;

	while (c->p < c->end) {
		uint8_t op = cur_u8(c);
		uint64_t reg, delta = 0;
		uintptr_t loc;
		int64_t off;

		if (++vm->steps > CFA_MAX_STEPS)
			return false;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 2: /* DW_CFA_offset */
			off = factor(cur_uleb(c), cie->data_align);
			vm_set(vm, op & 0x3f, REG_AT_CFA, off);
			goto next;
		case 3: /* DW_CFA_restore */
			vm_restore(vm, op & 0x3f);
			goto next;
		default:
			break;
		}

		switch (op) {
		case 0x00: /* DW_CFA_nop */
		case 0x2d: /* aarch64 negate_ra_state: PAC is always stripped */
			break;
		case 0x01: /* DW_CFA_set_loc */
			if (!cur_enc_ptr(c, cie->fde_enc, 0, &loc))
				return false;
			if (loc > vm->target)
				return true;
			vm->loc = loc;
			break;
		case 0x02: /* DW_CFA_advance_loc1 */
			delta = cur_u8(c);
			goto advance;
		case 0x03: /* DW_CFA_advance_loc2 */
			delta = cur_u16(c);
			goto advance;
		case 0x04: /* DW_CFA_advance_loc4 */
			delta = cur_u32(c);
			goto advance;
		case 0x05: /* DW_CFA_offset_extended */
			reg = cur_uleb(c);
			off = factor(cur_uleb(c), cie->data_align);
			vm_set(vm, reg, REG_AT_CFA, off);
			break;
		case 0x06: /* DW_CFA_restore_extended */
			vm_restore(vm, cur_uleb(c));
			break;
		case 0x07: /* DW_CFA_undefined */
			vm_set(vm, cur_uleb(c), REG_UNDEF, 0);
			break;
		case 0x08: /* DW_CFA_same_value */
			vm_set(vm, cur_uleb(c), REG_SAME, 0);
			break;
		case 0x09: /* DW_CFA_register: only a copy to itself is kept */
			reg = cur_uleb(c);
			vm_set(vm, reg, cur_uleb(c) == reg ? REG_SAME : REG_OTHER,
			       0);
			break;
		case 0x0a: /* DW_CFA_remember_state */
			if (vm->depth == CFA_MAX_REMEMBER)
				return false;
			vm->stack[vm->depth++] = vm->row;
			break;
		case 0x0b: /* DW_CFA_restore_state: the CFA too, as GCC expects */
			if (vm->depth == 0)
				return false;
			vm->row = vm->stack[--vm->depth];
			break;
		case 0x0c: /* DW_CFA_def_cfa */
			vm->row.cfa_reg = cur_uleb(c);
			vm->row.cfa_off = (int64_t)cur_uleb(c);
			vm->row.cfa_how = CFA_REG;
			break;
		case 0x0d: /* DW_CFA_def_cfa_register */
			vm->row.cfa_reg = cur_uleb(c);
			if (vm->row.cfa_how != CFA_REG)
				vm->row.cfa_how = CFA_OTHER;
			break;
		case 0x0e: /* DW_CFA_def_cfa_offset */
			vm->row.cfa_off = (int64_t)cur_uleb(c);
			if (vm->row.cfa_how != CFA_REG)
				vm->row.cfa_how = CFA_OTHER;
			break;
		case 0x0f: /* DW_CFA_def_cfa_expression */
			if (expr_breg_fp(c, true, &vm->row.cfa_off))
				vm->row.cfa_how = CFA_DEREF_FP;
			else
				vm->row.cfa_how = CFA_OTHER;
			break;
		case 0x10: /* DW_CFA_expression */
			reg = cur_uleb(c);
			if (expr_breg_fp(c, false, &off))
				vm_set(vm, reg, REG_AT_FP, off);
			else
				vm_set(vm, reg, REG_OTHER, 0);
			break;
		case 0x11: /* DW_CFA_offset_extended_sf */
			reg = cur_uleb(c);
			off = factor((uint64_t)cur_sleb(c), cie->data_align);
			vm_set(vm, reg, REG_AT_CFA, off);
			break;
		case 0x12: /* DW_CFA_def_cfa_sf */
			vm->row.cfa_reg = cur_uleb(c);
			vm->row.cfa_off =
				factor((uint64_t)cur_sleb(c), cie->data_align);
			vm->row.cfa_how = CFA_REG;
			break;
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			vm->row.cfa_off =
				factor((uint64_t)cur_sleb(c), cie->data_align);
			if (vm->row.cfa_how != CFA_REG)
				vm->row.cfa_how = CFA_OTHER;
			break;
		case 0x14: /* DW_CFA_val_offset */
			reg = cur_uleb(c);
			off = factor(cur_uleb(c), cie->data_align);
			vm_set(vm, reg, REG_VAL_CFA, off);
			break;
		case 0x15: /* DW_CFA_val_offset_sf */
			reg = cur_uleb(c);
			off = factor((uint64_t)cur_sleb(c), cie->data_align);
			vm_set(vm, reg, REG_VAL_CFA, off);
			break;
		case 0x16: /* DW_CFA_val_expression */
			reg = cur_uleb(c);
			expr_breg_fp(c, false, &off); /* to skip the block */
			vm_set(vm, reg, REG_OTHER, 0);
			break;
		case 0x2e: /* DW_CFA_GNU_args_size: only landing pads care */
			cur_uleb(c);
			break;
		case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
			reg = cur_uleb(c);
			off = -factor(cur_uleb(c), cie->data_align);
			vm_set(vm, reg, REG_AT_CFA, off);
			break;
		default: /* unknown operands: cannot go on */
			return false;
		}
next:
		if (c->bad)
			return false;
		continue;
advance:
		if (c->bad)
			return false;
		if (cie->code_align && delta > UINT64_MAX / cie->code_align)
			return true;
		delta *= cie->code_align;
		if (delta > vm->target - vm->loc)
			return true; /* the row covering target is complete */
		vm->loc += (uintptr_t)delta;
	}
	return !c->bad;
}

/* ------------------------------------------------------------------------
 * Rules and their cache
 * ------------------------------------------------------------------------ */

enum rule_cfa {
	RULE_CFA_SP,	   /* CFA = sp + cfa_off */
	RULE_CFA_FP,	   /* CFA = fp + cfa_off */
	RULE_CFA_FP_DEREF, /* CFA = *(fp + cfa_off) */
	RULE_FALLBACK,	   /* no usable CFI: frame record, or stop */
	RULE_END,	   /* RA undefined: the outermost frame */
};

enum rule_fp {
	RULE_FP_SAME,	 /* the caller's fp is this frame's */
	RULE_FP_UNKNOWN, /* lost; fine until a rule needs it */
	RULE_FP_AT_CFA,	 /* saved at CFA + fp_off */
	RULE_FP_AT_FP,	 /* saved at fp + fp_off */
};

/* How to get the caller's sp (= the CFA), fp and return address from a
 * frame's sp and fp; the RA is at CFA + ra_off.  It travels packed in two
 * 32-bit words, the form it has in the cache, so that the warm path never
 * spills it to memory, and the offsets on the critical path decode in one
 * instruction:
 *   w0 = cfa_off (int32)
 *   w1 = ra_off (int16) | fp_off / WORD (10 bits, signed) << 16
 *        | cfa << 26 (3 bits) | fp << 29 (2) | signal << 31
 * A rule whose RA lies more than 32 KiB from the CFA becomes
 * RULE_FALLBACK (the walk stops or tries the frame record rather than
 * guess); an fp slot more than 4 KiB away becomes RULE_FP_UNKNOWN.
 * On x86-64 neither happens (RA at CFA-8, rbp pushed next).  On arm64,
 * GCC puts the x29/x30 pair at the bottom of a frame with large locals
 * (x29 at CFA-5024 for a 5 KiB frame): there fp is lost, and the walk
 * stops early at the first caller whose CFA needs it (never wrong). */
struct rule {
	uint32_t w0, w1;
};

#define RULE_FP_OFF_BITS 10
#define RULE_FP_OFF_MAX ((int64_t)WORD << (RULE_FP_OFF_BITS - 1))

static inline enum rule_cfa rule_cfa(struct rule r)
{
	return (enum rule_cfa)(r.w1 >> 26 & 7);
}

static inline enum rule_fp rule_fp(struct rule r)
{
	return (enum rule_fp)(r.w1 >> 29 & 3);
}

static inline bool rule_signal(struct rule r)
{
	return r.w1 >> 31;
}

static inline int32_t rule_cfa_off(struct rule r)
{
	return (int32_t)r.w0; /* gcc and clang convert modulo 2^32 */
}

static inline int32_t rule_ra_off(struct rule r)
{
	return (int16_t)r.w1;
}

static inline int32_t rule_fp_off(struct rule r)
{
	/* bits 16-25 to the top, then an arithmetic shift back down */
	return ((int32_t)(r.w1 << 6) >> (32 - RULE_FP_OFF_BITS)) * (int32_t)WORD;
}

static struct rule rule_make(enum rule_cfa cfa, int64_t cfa_off,
			     int64_t ra_off, enum rule_fp fp, int64_t fp_off,
			     bool signal)
{
	struct rule r;

	r.w0 = (uint32_t)cfa_off;
	r.w1 = ((uint32_t)ra_off & 0xffff) |
	       ((uint32_t)(fp_off / (int64_t)WORD) &
		((1u << RULE_FP_OFF_BITS) - 1)) << 16 |
	       (uint32_t)cfa << 26 | (uint32_t)fp << 29 | (uint32_t)signal << 31;
	return r;
}

static struct rule rule_special(enum rule_cfa what)
{
	return rule_make(what, 0, 0, RULE_FP_UNKNOWN, 0, false);
}

/* RULE_FALLBACK comes in two kinds.  Where a module has no usable CFI for
 * the PC, the answer holds until the module is unloaded (and the cache
 * flushed).  Where no module contains the PC at all (JIT code, or a bad
 * address), a library dlopen()ed later may come to cover it, and the hook
 * does not see dlopen (interposing it would break the caller's RUNPATH and
 * $ORIGIN lookup): a cached "no module" answer is re-checked on every use
 * by nomod_stale(), which is cheap and never the slow path.
 * Such a rule has RULE_NOMOD in w0 (its cfa_off, unused by RULE_FALLBACK),
 * and below it the loader epoch it was computed in (bionic; 0 on glibc). */
#define RULE_NOMOD 0x80000000u
#define RULE_EPOCH_MASK 0x7fffffffu
/* w1 of every RULE_FALLBACK rule (rule_special()) */
#define RULE_W1_FALLBACK \
	((uint32_t)RULE_FALLBACK << 26 | (uint32_t)RULE_FP_UNKNOWN << 29)

static inline bool rule_nomod(struct rule r)
{
	return r.w1 == RULE_W1_FALLBACK && (r.w0 & RULE_NOMOD);
}

static struct rule rule_nomod_make(uint32_t epoch)
{
	struct rule r = rule_special(RULE_FALLBACK);

	r.w0 = RULE_NOMOD | (epoch & RULE_EPOCH_MASK);
	return r;
}

/* Per walk: what nomod_stale() has already found out. */
struct wstate {
	bool stamp_checked; /* bionic: the loader's counters were compared */
};

#if defined(__BIONIC__)
/* bionic has no lock-free module lookup: dl_iterate_phdr takes the
 * loader's lock.  Instead "no module" rules carry the epoch they were
 * computed in; the first walk that meets one compares, once, the loader's
 * load and unload counters (dlpi_adds + dlpi_subs, Android R and later)
 * with the value seen last, and on a change starts a new epoch, making
 * every older "no module" rule stale.  JIT-heavy programs pay one short
 * dl_iterate_phdr per walk that meets such a frame, not a lookup per
 * frame.  (Before Android R there are no counters: the answer stays.) */
static _Atomic uint32_t nomod_epoch;
static _Atomic uint64_t nomod_stamp;

static int stamp_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *stamp = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs))
		*stamp = (uint64_t)info->dlpi_adds + (uint64_t)info->dlpi_subs;
	return 1; /* every module's record carries the same counters */
}
#endif

/* Whether the "no module" answer for @pc, computed in @epoch, may be
 * wrong now.  glibc: _dl_find_object() is lock-free and async-signal-safe
 * (a binary search over the loaded objects, 5-10 ns): ask it again.  That
 * is per frame, but JIT frames that the trace cache reuses pay only this
 * too, no rule lookup and no step. */
static __attribute__((noinline)) bool
nomod_stale(uintptr_t pc, uint32_t epoch, struct wstate *ws)
{
#if defined(__BIONIC__)
	uint64_t now = 0;

	(void)pc;
	if (epoch != (atomic_load_explicit(&nomod_epoch, memory_order_acquire) &
		      RULE_EPOCH_MASK))
		return true;
	if (ws->stamp_checked)
		return false;
	ws->stamp_checked = true;
	dl_iterate_phdr(stamp_visit, &now);
	if (now == atomic_load_explicit(&nomod_stamp, memory_order_acquire))
		return false;
	/* The epoch first: a walk that sees the new stamp sees it too. */
	atomic_fetch_add_explicit(&nomod_epoch, 1, memory_order_acq_rel);
	atomic_store_explicit(&nomod_stamp, now, memory_order_release);
	return true;
#else
	struct dl_find_object dlfo;

	(void)epoch;
	(void)ws;
	return _dl_find_object((void *)pc, &dlfo) == 0;
#endif
}

static struct rule rule_from_row(const struct row *row, const struct cie *cie)
{
	enum rule_cfa cfa;
	enum rule_fp fp = RULE_FP_UNKNOWN;
	int64_t fp_off = 0;

	if (row->ra.how == REG_UNDEF)
		return rule_special(RULE_END);
	if (row->ra.how != REG_AT_CFA || row->ra.off < INT16_MIN ||
	    row->ra.off > INT16_MAX || row->cfa_off < INT32_MIN ||
	    row->cfa_off > INT32_MAX)
		return rule_special(RULE_FALLBACK);
	if (row->cfa_how == CFA_REG && row->cfa_reg == DW_REG_SP)
		cfa = RULE_CFA_SP;
	else if (row->cfa_how == CFA_REG && row->cfa_reg == DW_REG_FP)
		cfa = RULE_CFA_FP;
	else if (row->cfa_how == CFA_DEREF_FP)
		cfa = RULE_CFA_FP_DEREF;
	else /* another register, or an expression */
		return rule_special(RULE_FALLBACK);

	switch (row->fp.how) {
	case REG_SAME:
		fp = RULE_FP_SAME;
		break;
	case REG_AT_CFA:
	case REG_AT_FP:
		if (row->fp.off % (int64_t)WORD ||
		    row->fp.off < -RULE_FP_OFF_MAX ||
		    row->fp.off >= RULE_FP_OFF_MAX)
			break; /* lost, not wrong */
		fp = row->fp.how == REG_AT_CFA ? RULE_FP_AT_CFA : RULE_FP_AT_FP;
		fp_off = row->fp.off;
		break;
	default: /* undefined, val_offset, register, other expressions */
		break;
	}
	return rule_make(cfa, row->cfa_off, row->ra.off, fp, fp_off,
			 cie->signal);
}

/* The rule at @pc, from the CFI of its module (the slow path). */
static struct rule rule_compute(uintptr_t pc)
{
	struct cfa_vm vm;
	struct row init;
	struct cie cie;
	struct fde fde;
	uintptr_t hdr = 0, lo = 0, hi = 0, p;
#if defined(__BIONIC__)
	/* Read before the lookup: a load after it starts a newer epoch. */
	uint32_t epoch =
		atomic_load_explicit(&nomod_epoch, memory_order_acquire);
#else
	uint32_t epoch = 0;
#endif

	if (!module_find(pc, &hdr, &lo, &hi))
		return rule_nomod_make(epoch);
	if (hdr == 0)
		return rule_special(RULE_FALLBACK);
	p = eh_hdr_search(hdr, lo, hi, pc);
	if (p == 0 || !fde_parse(p, lo, hi, pc, &cie, &fde))
		return rule_special(RULE_FALLBACK);

	memset(&vm, 0, sizeof(vm));
	vm.cie = &cie;
	vm.loc = fde.start;
	vm.target = pc;
	vm.row.cfa_how = CFA_UNSET;
	vm.row.ra.how = REG_SAME;
	vm.row.fp.how = REG_SAME;
	if (!vm_run(&vm, &cie.insns))
		return rule_special(RULE_FALLBACK);
	init = vm.row;
	vm.init = &init;
	vm.loc = fde.start; /* in case the CIE program advanced */
	if (!vm_run(&vm, &fde.insns))
		return rule_special(RULE_FALLBACK);
	return rule_from_row(&vm.row, &cie);
}

/* The cache: CACHE_SLOTS slots of two 64-bit words, rule word w0 and w1
 * each in the low half of one, below the same 32-bit tag.  The slot is
 * the PC's low bits (above the instruction alignment on arm64) and the tag
 * holds all its other bits, so (slot, tag) gives back the whole PC: an
 * entry matches only the PC it was written for.  The words are written and
 * read separately, relaxed, without a lock; as both carry the tag, a
 * reader never pairs halves of two PCs' rules, and two writers of one PC
 * write the same rule.  PCs whose tag would not fit 32 bits (or be 0) are
 * computed every time.  A rule that describes an unloaded module stays
 * until unwind_cfi_flush(); a "no module" rule is re-checked on each hit
 * (see RULE_NOMOD). */
#define CACHE_BITS 16
#define CACHE_SLOTS ((size_t)1 << CACHE_BITS)
#define CACHE_BYTES (CACHE_SLOTS * 2 * sizeof(uint64_t))
#if defined(__aarch64__)
#define CACHE_SHIFT 2 /* instructions are 4-byte aligned */
#else
#define CACHE_SHIFT 0
#endif

/* 0: not mapped yet; 1: mmap failed, run uncached; else the address. */
static _Atomic uintptr_t cache_state;

static _Atomic uint64_t *cache_map(void)
{
	uintptr_t v = atomic_load_explicit(&cache_state, memory_order_acquire);
	uintptr_t expected = 0;
	int saved_errno;
	void *p;

	if (v > 1)
		return (_Atomic uint64_t *)v;
	if (v == 1)
		return NULL;
	saved_errno = errno; /* malloc must not clobber errno on success */
	p = mmap(NULL, CACHE_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v = p == MAP_FAILED ? 1 : (uintptr_t)p;
	if (!atomic_compare_exchange_strong_explicit(&cache_state, &expected, v,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		if (v != 1) /* another thread mapped one first */
			munmap(p, CACHE_BYTES);
		v = expected;
	}
	errno = saved_errno;
	return v > 1 ? (_Atomic uint64_t *)v : NULL;
}

/* Tag (in the high half of a word) of @pc; 0 if it cannot be cached. */
static inline uint64_t cache_tag(uintptr_t pc)
{
	uint64_t hi = (uint64_t)pc >> (CACHE_SHIFT + CACHE_BITS);
	uint64_t t = hi << CACHE_SHIFT | (pc & ((1u << CACHE_SHIFT) - 1));

	return hi == 0 || t > UINT32_MAX ? 0 : t << 32;
}

static inline _Atomic uint64_t *cache_slot(_Atomic uint64_t *cache,
					   uintptr_t pc)
{
	return cache + 2 * (pc >> CACHE_SHIFT & (CACHE_SLOTS - 1));
}

/* The slow path: compute, then fill @slot (if any). */
static __attribute__((noinline)) struct rule
rule_miss(uintptr_t pc, _Atomic uint64_t *slot, uint64_t tag)
{
	struct rule r = rule_compute(pc);

	if (slot != NULL) {
		atomic_store_explicit(&slot[1], tag | r.w1,
				      memory_order_relaxed);
		atomic_store_explicit(&slot[0], tag | r.w0,
				      memory_order_relaxed);
	}
	return r;
}

static inline struct rule rule_lookup(_Atomic uint64_t *cache, uintptr_t pc,
				      struct wstate *ws)
{
	uint64_t tag = cache_tag(pc);
	_Atomic uint64_t *slot;
	uint64_t w0, w1;
	struct rule r;

	if (cache == NULL || tag == 0)
		return rule_miss(pc, NULL, 0);
	slot = cache_slot(cache, pc);
	w0 = atomic_load_explicit(&slot[0], memory_order_relaxed);
	w1 = atomic_load_explicit(&slot[1], memory_order_relaxed);
	if (__builtin_expect(((w0 ^ tag) | (w1 ^ tag)) >> 32, 0))
		return rule_miss(pc, slot, tag);
	r.w0 = (uint32_t)w0;
	r.w1 = (uint32_t)w1;
	if (__builtin_expect(rule_nomod(r), 0) &&
	    nomod_stale(pc, r.w0 & RULE_EPOCH_MASK, ws))
		return rule_miss(pc, slot, tag);
	return r;
}

/* ------------------------------------------------------------------------
 * The trace cache
 * ------------------------------------------------------------------------
 *
 * Programs allocate from the same call chains over and over, and two
 * captures on one thread mostly differ only in their innermost frames.
 * Each thread keeps its previous walk, the trace: per frame its state (the
 * lookup pc, sp, fp and flags), the return address the step out of it
 * produced, and every stack word that step read, address and value.
 *
 * A step depends on nothing but the frame's state, the rule of its pc, the
 * stack bounds and the words it reads.  So when a new walk reaches a frame
 * whose state equals a frame of the trace (sp strictly increases along a
 * walk: a cursor finds the candidate) and every word the trace read from
 * that frame outward still holds the value it had, the rest of the new walk
 * is the rest of the trace: its return addresses are copied instead of
 * stepped through.  A reused frame costs a load and a compare for each word
 * its step read (one or two), not a rule lookup.
 *
 * The other inputs are checked as well:
 *  - the rules: unwind_cfi_flush() starts a new trace_gen, which drops
 *    every trace; a frame whose rule was "no module here" is re-checked as
 *    a rule lookup would (nomod_stale());
 *  - the bounds: hi must be the same; lo only decides whether a read is in
 *    range, so each frame of the trace keeps, over itself and every frame
 *    outward, the range lo_min..lo_max of lo in which every read succeeds,
 *    or fails, as it did;
 *  - fp_fallback; and max: a walk cut by max ends in a CUT record, from
 *    whose state a longer walk goes on stepping.
 * So the result is the full walk's, bit for bit.  (A trace is thus not
 * necessarily one walk: it is a chain of steps, each valid when it was
 * recorded, and a walk checks the words of every step it takes from it.
 * A walk that reuses only part of a trace, being cut by max, leaves the
 * rest in place.)
 *
 * A trace lives in a per-thread block, mmap'ed on the thread's first walk,
 * found through an initial-exec TLS pointer, and handed back to trace_pool
 * by a pthread key's destructor when the thread exits, for the next new
 * thread.  A walk that finds its thread's block busy (a signal handler
 * interrupted a walk), or no block, or has a max above TRACE_MAX, walks
 * without a trace. */

#define TRACE_MAX 256	/* frames in a trace */
#define TRACE_HEAD 32	/* free records in front of a new trace */
#define TRACE_RECS (TRACE_HEAD + TRACE_MAX + 1)
#define TRACE_READS 3	/* words one step reads: *(fp + off), the RA, fp */
#define TRACE_POOL 1024 /* blocks that can be recycled */

enum trec_kind {
	K_STEP, /* stepped: out is the caller's return address */
	K_STOP, /* the walk ended here (its reads decided that) */
	K_CUT,	/* the walk was cut by max before stepping this frame */
};

#define F_FP_OK 1u    /* the frame's fp is valid */
#define F_SP_EXACT 2u /* its sp is exact */
#define F_STATE (F_FP_OK | F_SP_EXACT)
#define F_NOMOD 4u /* its rule said "no module": re-check when reused */
#define F_BAD 8u   /* more reads than TRACE_READS: never reused */
#define F_SPECIAL (F_NOMOD | F_BAD)

struct tread {
	uintptr_t addr, val;
};

/* A frame of a walk (its return address is in out[], to be copied in
 * one go). */
struct trec {
	uintptr_t pc, sp, fp; /* the frame (fp is 0 unless F_FP_OK) */
	/* This and every outer record replay only for lo_min <= lo <= lo_max.
	 * While a walk writes the record, lo_min is its own bound. */
	uintptr_t lo_min, lo_max;
	uint32_t epoch;	  /* F_NOMOD: the rule's epoch */
	uint16_t rd;	  /* its reads: reads[rd .. (this + 1)->rd) */
	uint16_t special; /* the first record from here with F_SPECIAL */
	uint8_t flags, kind;
};

/* A trace is records [base, last], a walk under way writes from
 * TRACE_HEAD; rec[last + 1].rd (and .special) end them. */
struct trace {
	struct trec rec[TRACE_RECS + 1];
	uintptr_t out[TRACE_RECS]; /* K_STEP: the return address */
	struct tread reads[TRACE_READS * TRACE_RECS];
};

struct tblock {
	struct trace *trace;   /* the previous walk: records [base, last] */
	struct trace *scratch; /* the walk under way */
	int base, last;
	bool valid, fp_fallback;
	_Atomic bool busy;
	unsigned long gen;
	uintptr_t hi;
	size_t pool_index;
	struct trace arrays[2];
};

#define TRACE_OFF ((struct tblock *)1) /* none for this thread: don't ask */

static _Thread_local struct tblock *trace_tls
	__attribute__((tls_model("initial-exec")));
static _Atomic unsigned long trace_gen;

/* Blocks, each | 1 while a thread has it; 0 for an entry never used. */
static _Atomic uintptr_t trace_pool[TRACE_POOL];
static _Atomic size_t trace_pool_used;

enum { KEY_NONE, KEY_BUSY, KEY_OK, KEY_FAILED };
static _Atomic int trace_key_state;
static pthread_key_t trace_key;

/* The key's destructor: the thread exits, its block goes back.  Later
 * walks of this thread (in other destructors) go without. */
static void trace_detach(void *p)
{
	struct tblock *tb = p;

	trace_tls = TRACE_OFF;
	atomic_store_explicit(&trace_pool[tb->pool_index], (uintptr_t)tb,
			      memory_order_release);
}

static struct tblock *pool_take(void)
{
	size_t used = atomic_load_explicit(&trace_pool_used,
					   memory_order_acquire);
	struct tblock *tb;
	size_t i;
	void *p;

	if (used > TRACE_POOL)
		used = TRACE_POOL;
	for (i = 0; i < used; i++) {
		uintptr_t v = atomic_load_explicit(&trace_pool[i],
						   memory_order_relaxed);

		if (v != 0 && !(v & 1) &&
		    atomic_compare_exchange_strong_explicit(
			    &trace_pool[i], &v, v | 1, memory_order_acq_rel,
			    memory_order_relaxed)) {
			tb = (struct tblock *)v;
			tb->valid = false;
			return tb;
		}
	}
	p = mmap(NULL, sizeof(struct tblock), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	i = atomic_fetch_add_explicit(&trace_pool_used, 1,
				      memory_order_acq_rel);
	if (i >= TRACE_POOL) { /* so many threads at once: go without */
		munmap(p, sizeof(struct tblock));
		return NULL;
	}
	tb = p; /* zeroed: not valid, not busy */
	tb->trace = &tb->arrays[0];
	tb->scratch = &tb->arrays[1];
	tb->pool_index = i;
	atomic_store_explicit(&trace_pool[i], (uintptr_t)tb | 1,
			      memory_order_release);
	return tb;
}

/* The calling thread's first walk: a block for it, NULL to go without. */
static __attribute__((noinline, cold)) struct tblock *trace_attach(void)
{
	int saved_errno = errno;
	int state = atomic_load_explicit(&trace_key_state,
					 memory_order_acquire);
	struct tblock *tb = NULL;

	/* A signal handler's walk meanwhile goes without. */
	trace_tls = TRACE_OFF;
	atomic_signal_fence(memory_order_seq_cst);
	if (state == KEY_NONE &&
	    atomic_compare_exchange_strong_explicit(
		    &trace_key_state, &state, KEY_BUSY, memory_order_acq_rel,
		    memory_order_acquire)) {
		/* Neither call allocates or locks (glibc, bionic), but
		 * glibc's pthread_setspecific() callocs for keys from 32. */
		bool ok = pthread_key_create(&trace_key, trace_detach) == 0;
#if defined(__GLIBC__)
		if (ok && trace_key >= 32) {
			pthread_key_delete(trace_key);
			ok = false;
		}
#endif
		state = ok ? KEY_OK : KEY_FAILED;
		atomic_store_explicit(&trace_key_state, state,
				      memory_order_release);
	}
	if (state == KEY_BUSY) { /* another thread creates it: later */
		trace_tls = NULL;
		goto out;
	}
	if (state == KEY_OK)
		tb = pool_take();
	if (tb != NULL && pthread_setspecific(trace_key, tb) != 0) {
		atomic_store_explicit(&trace_pool[tb->pool_index],
				      (uintptr_t)tb, memory_order_release);
		tb = NULL;
	}
	trace_tls = tb != NULL ? tb : TRACE_OFF;
out:
	errno = saved_errno;
	return tb;
}

static inline struct tblock *trace_begin(int max)
{
	struct tblock *tb = trace_tls;

	if (__builtin_expect(tb == NULL, 0))
		tb = trace_attach();
	if (tb == NULL || tb == TRACE_OFF || max > TRACE_MAX ||
	    atomic_load_explicit(&tb->busy, memory_order_relaxed))
		return NULL;
	atomic_store_explicit(&tb->busy, true, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return tb;
}

static inline void trace_end(struct tblock *tb)
{
	if (tb != NULL) {
		atomic_signal_fence(memory_order_seq_cst);
		atomic_store_explicit(&tb->busy, false, memory_order_relaxed);
	}
}

/* Turn the own bounds of records [from, to] into bounds over themselves
 * and every outer record, and set their special; @lo_min, @lo_max and
 * @special: those of record to + 1 (or 0, UINTPTR_MAX, TRACE_RECS).  A
 * lo_min that already covers outer records only makes the result
 * stricter. */
static void trace_bound(struct trace *t, int from, int to, uintptr_t lo_min,
			uintptr_t lo_max, int special)
{
	for (int i = to; i >= from; i--) {
		for (unsigned int j = t->rec[i].rd; j < t->rec[i + 1].rd; j++)
			if (t->reads[j].addr < lo_max)
				lo_max = t->reads[j].addr;
		if (t->rec[i].lo_min > lo_min)
			lo_min = t->rec[i].lo_min;
		t->rec[i].lo_min = lo_min;
		t->rec[i].lo_max = lo_max;
		if (t->rec[i].flags & F_SPECIAL)
			special = i;
		t->rec[i].special = (uint16_t)special;
	}
}

/* Copy records [k, k + cnt) of @from to @to from record @at, their reads
 * to @to's from reads[to->rec[at].rd]; to->rec[at + cnt].rd gets the end. */
static void trace_copy(struct trace *to, int at, const struct trace *from,
		       int k, int cnt)
{
	unsigned int r0 = from->rec[k].rd, r1 = from->rec[k + cnt].rd;
	unsigned int rb = to->rec[at].rd;

	/* (lo_max and special are for the caller to set.) */
	for (int j = 0; j < cnt; j++) {
		uint16_t rd = to->rec[at + j].rd;

		to->rec[at + j] = from->rec[k + j];
		to->rec[at + j].rd = rd;
		to->out[at + j] = from->out[k + j];
		to->rec[at + j + 1].rd =
			(uint16_t)(from->rec[k + j + 1].rd - r0 + rb);
	}
	for (unsigned int j = 0; j < r1 - r0; j++)
		to->reads[rb + j] = from->reads[r0 + j];
}

static void trace_swap(struct tblock *tb)
{
	struct trace *t = tb->trace;

	tb->trace = tb->scratch;
	tb->scratch = t;
}

/* The walk just made, scratch records [TRACE_HEAD, @last], becomes the
 * trace. */
static void trace_commit(struct tblock *tb, int last, unsigned long gen,
			 uintptr_t hi, bool fp_fallback)
{
	struct trace *s = tb->scratch;

	trace_bound(s, TRACE_HEAD, last, 0, UINTPTR_MAX, TRACE_RECS);
	s->rec[last + 1].special = TRACE_RECS;
	trace_swap(tb);
	tb->base = TRACE_HEAD;
	tb->last = last;
	tb->gen = gen;
	tb->hi = hi;
	tb->fp_fallback = fp_fallback;
	tb->valid = true;
}

/* The walk just made is scratch records [TRACE_HEAD, TRACE_HEAD + n)
 * followed by trace records [k, last]: make that the trace. */
static void trace_splice(struct tblock *tb, int k, int last, int n)
{
	struct trace *t = tb->trace, *s = tb->scratch;
	unsigned int nreads = s->rec[TRACE_HEAD + n].rd - s->rec[TRACE_HEAD].rd;

	if (n == 0) { /* the common case: the same walk again */
		tb->base = k;
		tb->last = last;
		return;
	}
	if (k >= n && t->rec[k].rd >= nreads) {
		/* Room in front of record k: the new records go there. */
		uint16_t rd_k = t->rec[k].rd;

		t->rec[k - n].rd = (uint16_t)(rd_k - nreads);
		trace_copy(t, k - n, s, TRACE_HEAD, n);
		t->rec[k].rd = rd_k; /* (trace_copy() wrote the same) */
		trace_bound(t, k - n, k - 1, t->rec[k].lo_min, t->rec[k].lo_max,
			    t->rec[k].special);
		tb->base = k - n;
		tb->last = last;
		return;
	}
	trace_copy(s, TRACE_HEAD + n, t, k, last - k + 1);
	trace_commit(tb, TRACE_HEAD + n + last - k, tb->gen, tb->hi,
		     tb->fp_fallback);
}

/* The record of @t holding read @r, from record @k on. */
static int trace_reader(const struct trace *t, int k, unsigned int r)
{
	while (k < TRACE_RECS - 1 && t->rec[k + 1].rd <= r)
		k++;
	return k;
}

/* Whether trace records [k, end) replay: -1 if they do, else the first
 * record that does not (every candidate at or before it fails too).
 * Every address was read in range by the walk that recorded it, and with
 * the same hi and lo <= lo_max it still is. */
NO_SANITIZE __attribute__((always_inline))
static inline int trace_check(const struct trace *t, int k, int end,
			      uintptr_t lo, struct wstate *ws)
{
	const struct tread *r = &t->reads[t->rec[k].rd];
	const struct tread *e = &t->reads[t->rec[end].rd];

	if (lo < t->rec[k].lo_min || lo > t->rec[k].lo_max)
		return end; /* another lo, another walk */
	for (; r < e; r++)
		if (__builtin_expect(*(const uintptr_t *)r->addr != r->val, 0))
			return trace_reader(t, k, (unsigned int)(r - t->reads));
	for (int j = t->rec[k].special; j < end;) {
		if ((t->rec[j].flags & F_BAD) ||
		    nomod_stale(t->rec[j].pc, t->rec[j].epoch, ws))
			return j;
		j = t->rec[j + 1].special > j ? t->rec[j + 1].special : end;
	}
	return -1;
}

/* ------------------------------------------------------------------------
 * The walk
 * ------------------------------------------------------------------------ */

struct frame {
	uintptr_t sp, fp;
	bool fp_ok;    /* fp holds the frame's real frame pointer */
	bool sp_exact; /* sp is exact, not a lower bound */
};

/* The stack as the walk checks it: a word at addr may be read iff
 * addr - lo <= span (= hi - lo - WORD, unsigned) and addr is aligned. */
struct bounds {
	uintptr_t lo, hi, span;
};

/* What the current step read: reads r[n], up to r[lim - 1]. */
struct rlog {
	struct tread *r;
	unsigned int n, lim;
	uintptr_t lo_min; /* lo must stay above an aligned word it missed */
	bool bad;	  /* more reads than room */
};

/* The word at @addr, if it lies wholly inside the stack and is aligned. */
NO_SANITIZE
static inline bool stack_word(const struct bounds *b, uintptr_t addr,
			      uintptr_t *out, struct rlog *lg)
{
	uintptr_t v;

	if (addr - b->lo > b->span || addr % WORD) {
		if (addr < b->lo && addr % WORD == 0 && addr >= lg->lo_min)
			lg->lo_min = addr + 1;
		return false;
	}
	v = *(const uintptr_t *)addr;
	*out = v;
	if (__builtin_expect(lg->n < lg->lim, 1)) {
		lg->r[lg->n].addr = addr;
		lg->r[lg->n].val = v;
		lg->n++;
	} else {
		lg->bad = true;
	}
	return true;
}

static inline uintptr_t addr_add(uintptr_t base, int32_t off)
{
	return base + (uintptr_t)(intptr_t)off;
}


/* Step @f to its caller by @r; *@ra gets the return address.  On failure
 * @f is unchanged. */
NO_SANITIZE
static inline bool step_cfi(struct rule r, const struct bounds *stk,
			    struct frame *f, uintptr_t *ra, struct rlog *lg)
{
	int32_t cfa_off = rule_cfa_off(r);
	uintptr_t cfa;

	switch (rule_cfa(r)) {
	case RULE_CFA_SP:
		if (!f->sp_exact)
			return false;
		cfa = addr_add(f->sp, cfa_off);
		break;
	case RULE_CFA_FP:
		if (!f->fp_ok)
			return false;
		cfa = addr_add(f->fp, cfa_off);
		break;
	case RULE_CFA_FP_DEREF:
		if (!f->fp_ok ||
		    !stack_word(stk, addr_add(f->fp, cfa_off), &cfa, lg))
			return false;
		break;
	default:
		return false;
	}
	/* The caller's sp is above ours: this also bounds the walk. */
	if (cfa <= f->sp || cfa > stk->hi ||
	    !stack_word(stk, addr_add(cfa, rule_ra_off(r)), ra, lg))
		return false;

	switch (rule_fp(r)) {
	case RULE_FP_SAME:
		break;
	case RULE_FP_UNKNOWN:
		f->fp_ok = false;
		break;
	case RULE_FP_AT_CFA:
		f->fp_ok = stack_word(stk, addr_add(cfa, rule_fp_off(r)),
				      &f->fp, lg);
		break;
	case RULE_FP_AT_FP:
		f->fp_ok = f->fp_ok &&
			   stack_word(stk, addr_add(f->fp, rule_fp_off(r)),
				      &f->fp, lg);
		break;
	}
	f->sp = cfa;
	f->sp_exact = true;
	return true;
}

/* Step @f through its frame record (fp[0] = the caller's fp, fp[1] = the
 * RA): code without CFI that keeps frame pointers, JIT code mostly. */
NO_SANITIZE
static bool step_fp(const struct bounds *stk, struct frame *f, uintptr_t *ra,
		    struct rlog *lg)
{
	uintptr_t next;

	if (!f->fp_ok || f->fp < f->sp || !stack_word(stk, f->fp, &next, lg) ||
	    !stack_word(stk, f->fp + WORD, ra, lg))
		return false;
	f->sp = f->fp + 2 * WORD;
	f->fp = next;
#if defined(__aarch64__)
	/* arm64 code keeps the record at the bottom of its frame, so fp + 16
	 * is only a lower bound of the caller's sp.  (x86-64's push rbp;
	 * mov rbp,rsp puts it at the top: there it is exact.) */
	f->sp_exact = false;
#endif
	return true;
}

static inline unsigned int frame_flags(const struct frame *f)
{
	return (f->fp_ok ? F_FP_OK : 0) | (f->sp_exact ? F_SP_EXACT : 0);
}

/* Record @i of @s: frame @f at @pc, its reads from lg->n on. */
static inline void rec_open(struct trace *s, int i, uintptr_t pc,
			    const struct frame *f, struct rlog *lg)
{
	s->rec[i].pc = pc;
	s->rec[i].sp = f->sp;
	s->rec[i].fp = f->fp_ok ? f->fp : 0;
	s->rec[i].flags = (uint8_t)frame_flags(f);
	s->rec[i].kind = K_STOP;
	s->rec[i].rd = (uint16_t)lg->n;
	lg->lim = lg->n + TRACE_READS;
	lg->lo_min = 0;
	lg->bad = false;
}

/* Record @i of @s is done. */
static inline void rec_close(struct trace *s, int i, const struct rlog *lg)
{
	s->rec[i + 1].rd = (uint16_t)lg->n;
	s->rec[i].lo_min = lg->lo_min;
	if (lg->bad)
		s->rec[i].flags |= F_BAD;
}

/* The walk, from the registers of @regs, inside [@lo, @hi) (non-empty,
 * checked), with @max > 0; @tb: the thread's trace block, busy (or NULL),
 * whose trace's records up to @tskip are known not to replay.  Ends the
 * block's use. */
NO_SANITIZE __attribute__((noinline)) static int
walk(const struct unwind_regs *regs, uintptr_t lo, uintptr_t hi,
     uintptr_t *pcs, int max, bool fp_fallback, struct tblock *tb,
     int tskip)
{
	struct frame f = { regs->sp, regs->fp, true, true };
	struct bounds s = { lo, hi, hi - lo - WORD };
	struct wstate ws = { false };
	struct tread spare[TRACE_READS]; /* reads of a walk without a trace */
	struct rlog lg = { spare, 0, TRACE_READS, 0, false };
	struct trace *sc = NULL, *tr = NULL;
	_Atomic uint64_t *cache;
	uintptr_t pc = regs->pc; /* the lookup address of the current frame */
	unsigned long gen;
	int n = 0, tk = 0, tlast = 0;

	cache = cache_map();
	gen = atomic_load_explicit(&trace_gen, memory_order_acquire);
	if (tb != NULL) {
		sc = tb->scratch;
		lg.r = sc->reads;
		lg.n = TRACE_HEAD * TRACE_READS;
		if (tb->valid && tb->gen == gen && tb->hi == s.hi &&
		    tb->fp_fallback == fp_fallback) {
			tr = tb->trace;
			tk = tb->base;
			tlast = tb->last;
		}
	}
	/* Every step moves sp strictly up, never above stk->hi: the loop
	 * ends on its own even without @max. */
	while (n < max) {
		int i = TRACE_HEAD + n; /* the record of this frame */
		struct rule r;
		uintptr_t ra;
		bool signal = false;

		if (tr != NULL) {
			/* The trace's frame with this sp, if any. */
			while (tk < tlast && tr->rec[tk].sp < f.sp)
				tk++;
			if (tr->rec[tk].sp == f.sp && tr->rec[tk].pc == pc &&
			    tr->rec[tk].fp == (f.fp_ok ? f.fp : 0) &&
			    (tr->rec[tk].flags & F_STATE) == frame_flags(&f) &&
			    tk > tskip) {
				/* m frames to copy; then the trace's last
				 * record ends this walk too if it is a STOP
				 * within max. */
				int left = tlast - tk;
				int m = left < max - n ? left : max - n;
				bool stop = m == left && n + m < max &&
					    tr->rec[tlast].kind == K_STOP;
				int bad = trace_check(tr, tk, tk + m + stop,
						      s.lo, &ws);

				if (bad >= 0) {
					tskip = bad;
					goto step;
				}
				memcpy(&pcs[n], &tr->out[tk],
				       (size_t)m * sizeof(*pcs));
				if (n + m < max && !stop) {
					/* The trace was cut by a smaller max:
					 * go on from where it was. */
					const struct trec *c = &tr->rec[tlast];

					sc->rec[i].rd = (uint16_t)lg.n;
					trace_copy(sc, i, tr, tk, m);
					lg.n = sc->rec[i + m].rd;
					n += m;
					pc = c->pc;
					f.sp = c->sp;
					f.fp = c->fp;
					f.fp_ok = c->flags & F_FP_OK;
					f.sp_exact = c->flags & F_SP_EXACT;
					tr = NULL;
					continue;
				}
				/* (Cut by max, records past tk + m stay: each
				 * is a step that was valid, and a walk that
				 * uses it will check its words first.) */
				sc->rec[i].rd = (uint16_t)lg.n;
				trace_splice(tb, tk, tlast, n);
				n += m;
				goto out;
			}
		}
step:
		if (sc != NULL)
			rec_open(sc, i, pc, &f, &lg);
		else
			lg.n = 0;
		r = rule_lookup(cache, pc, &ws);
		if (__builtin_expect(rule_cfa(r) >= RULE_FALLBACK, 0)) {
			if (rule_cfa(r) == RULE_END)
				goto stop;
			if (sc != NULL && rule_nomod(r)) {
				sc->rec[i].flags |= F_NOMOD;
				sc->rec[i].epoch = r.w0 & RULE_EPOCH_MASK;
			}
			if (!fp_fallback || !step_fp(&s, &f, &ra, &lg))
				goto stop;
		} else if (step_cfi(r, &s, &f, &ra, &lg)) {
			signal = rule_signal(r);
		} else if (!fp_fallback || !step_fp(&s, &f, &ra, &lg)) {
			goto stop;
		}
		ra = unwind_strip_pac_inline(ra);
		if (ra < 4096)
			goto stop;
		if (sc != NULL) {
			rec_close(sc, i, &lg);
			sc->out[i] = ra;
			sc->rec[i].kind = K_STEP;
		}
		pcs[n++] = ra;
		/* A return address may follow a noreturn call that ends its
		 * function: look up the call itself.  The pc an interrupted
		 * (signal) frame returns to is exact. */
		pc = signal ? ra : ra - 1;
	}
	/* Cut by max: a last record to go on from. */
	if (sc != NULL) {
		rec_open(sc, TRACE_HEAD + n, pc, &f, &lg);
		sc->rec[TRACE_HEAD + n].kind = K_CUT;
	}
stop:
	if (sc != NULL) {
		rec_close(sc, TRACE_HEAD + n, &lg);
		trace_commit(tb, TRACE_HEAD + n, gen, s.hi, fp_fallback);
	}
out:
	trace_end(tb);
	return n;
}

NO_SANITIZE
int unwind_cfi(const struct unwind_regs *regs, const struct unwind_stack *stk,
	       uintptr_t *pcs, int max, bool fp_fallback)
{
	/* Copies: stores to pcs[] could alias *stk, forcing reloads. */
	uintptr_t lo = stk->lo, hi = stk->hi;
	struct tblock *tb;
	int skip = -1;

	if (hi <= lo || hi - lo < WORD || max <= 0)
		return 0;
	tb = trace_begin(max);
	/* The common case, kept short: the walk starts at the first frame
	 * of the trace, and the trace replays from there within max.  (The
	 * generation is read before the trace: see unwind_cfi_flush().) */
	if (tb != NULL && tb->valid &&
	    tb->gen == atomic_load_explicit(&trace_gen, memory_order_acquire) &&
	    tb->hi == hi && tb->fp_fallback == fp_fallback) {
		const struct trace *t = tb->trace;
		int k = tb->base, last = tb->last, m = last - k;

		const struct trec *first = &t->rec[k];

		if (first->sp == regs->sp && first->pc == regs->pc &&
		    first->fp == regs->fp &&
		    (first->flags & F_STATE) == F_STATE &&
		    (m >= max || t->rec[last].kind == K_STOP)) {
			struct wstate ws = { false };
			bool stop = m < max;

			if (m > max)
				m = max;
			skip = trace_check(t, k, k + m + stop, lo, &ws);
			if (skip < 0) {
				memcpy(pcs, &t->out[k], (size_t)m * sizeof(*pcs));
				trace_end(tb);
				return m;
			}
		}
	}
	return walk(regs, lo, hi, pcs, max, fp_fallback, tb, skip);
}

bool unwind_cfi_supported(void)
{
	return true;
}

void unwind_cfi_flush(void)
{
	uintptr_t v = atomic_load_explicit(&cache_state, memory_order_acquire);
	_Atomic uint64_t *cache = (_Atomic uint64_t *)v;

	if (v > 1)
		for (size_t i = 0; i < 2 * CACHE_SLOTS; i++)
			atomic_store_explicit(&cache[i], 0,
					      memory_order_relaxed);
	/* After the clearing: a walk that began before it, and may have
	 * used a rule since cleared, records the old generation. */
	atomic_fetch_add_explicit(&trace_gen, 1, memory_order_release);
}

#else /* !CFI_SUPPORTED */

int unwind_cfi(const struct unwind_regs *regs, const struct unwind_stack *stk,
	       uintptr_t *pcs, int max, bool fp_fallback)
{
	(void)regs;
	(void)stk;
	(void)pcs;
	(void)max;
	(void)fp_fallback;
	return 0;
}

bool unwind_cfi_supported(void)
{
	return false;
}

void unwind_cfi_flush(void)
{
}

#endif
