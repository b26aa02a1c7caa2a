/* leaksnap hook, CFI unwinder: reading a module's call-frame information
 * (.eh_frame via .eh_frame_hdr) and running its CFA program: the rule
 * of a PC, computed on a rule-cache miss.
 * The other files are listed in unwind_cfi.h.  Runs inside malloc: nothing
 * here allocates, locks or prints. */
#include "unwind_cfi.h"

#if CFI_SUPPORTED

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
struct rule rule_compute(uintptr_t pc)
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

#endif /* CFI_SUPPORTED */
