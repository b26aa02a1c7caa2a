/* leaksnap hook: Android's packed relocations (DT_ANDROID_REL/RELA, what
 * lld --pack-dyn-relocs=android writes), decoded for got_find.
 *
 * The stream: the four bytes "APS2", then signed LEB128 numbers.  First
 * the number of relocations and the r_offset to start from; then groups
 * until that many relocations are out.  A group opens with its size and
 * its flags, then, as the flags say, what all its relocations share: the
 * r_offset step (GROUPED_BY_OFFSET_DELTA), the r_info (GROUPED_BY_INFO),
 * and a step of the addend (HAS_ADDEND with GROUPED_BY_ADDEND).  Each
 * relocation of the group then carries what is not shared: its r_offset
 * step, its r_info, its addend step (HAS_ADDEND alone).  Offsets and
 * addends are running sums across groups; a group without HAS_ADDEND
 * sets the addend to 0.  Arithmetic wraps at the pointer size, as the
 * loader's does.
 *
 * The stream is untrusted: a number running past the end, a group of no
 * or too many relocations, an unknown flag, a group repeating one offset
 * (a shared offset step of 0 for more than one relocation: neither
 * bionic's packer nor lld writes one), or more relocations than the
 * module has words give -1, never a long loop; and got_find reports at
 * most GOT_MAX_SLOTS slots of a module. */
#include "got_internal.h" /* first: got.h defines _GNU_SOURCE */

#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define APS2_BY_INFO 1u
#define APS2_BY_OFFSET_DELTA 2u
#define APS2_BY_ADDEND 4u
#define APS2_HAS_ADDEND 8u

struct sleb {
	const uint8_t *p, *end;
	bool bad;
};

/* The next number, truncated to the pointer size; sets @s->bad (and gives
 * 0) at the end of the stream or on a number longer than 64 bits. */
static ElfW(Addr) sleb_next(struct sleb *s)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (s->p >= s->end || shift >= 64) {
			s->bad = true;
			return 0;
		}
		b = *s->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (ElfW(Addr))v;
}

/* The most relocations a module can have: one per word it maps. */
static uintptr_t max_relocs(const struct gotp_walk *w)
{
	uintptr_t words = 0;

	for (unsigned i = 0; i < w->phnum; i++)
		if (w->phdr[i].p_type == PT_LOAD)
			words += w->phdr[i].p_memsz / sizeof(ElfW(Addr));
	return words;
}

int gotp_aps2(struct gotp_walk *w, const uint8_t *p, uintptr_t size, bool rela)
{
	struct sleb s = { .p = p + 4, .end = p + size, .bad = false };
	ElfW(Addr) count, done, offset, info = 0, addend = 0;

	if (size < 4 || memcmp(p, "APS2", 4) != 0) {
		w->why = "packed relocations without the APS2 mark";
		return -1;
	}
	count = sleb_next(&s);
	offset = sleb_next(&s);
	if (s.bad)
		goto truncated;
	if (count > max_relocs(w)) {
		w->why = "more packed relocations than the module has words";
		return -1;
	}
	for (done = 0; done < count;) {
		ElfW(Addr) n = sleb_next(&s), flags = sleb_next(&s), step = 0;

		if (s.bad)
			goto truncated;
		if (n == 0 || n > count - done || (flags & ~(ElfW(Addr))15) != 0) {
			w->why = "bad packed relocation group";
			return -1;
		}
		if ((flags & APS2_HAS_ADDEND) && !rela) {
			w->why = "addends in packed REL relocations";
			return -1;
		}
		if (flags & APS2_BY_OFFSET_DELTA) {
			step = sleb_next(&s);
			if (step == 0 && n > 1 && !s.bad) {
				w->why = "packed relocation group repeats one offset";
				return -1;
			}
		}
		if (flags & APS2_BY_INFO)
			info = sleb_next(&s);
		if (!(flags & APS2_HAS_ADDEND))
			addend = 0;
		else if (flags & APS2_BY_ADDEND)
			addend += sleb_next(&s);
		for (ElfW(Addr) i = 0; i < n; i++) {
			int st;

			offset += (flags & APS2_BY_OFFSET_DELTA) ? step : sleb_next(&s);
			if (!(flags & APS2_BY_INFO))
				info = sleb_next(&s);
			if ((flags & (APS2_HAS_ADDEND | APS2_BY_ADDEND)) == APS2_HAS_ADDEND)
				addend += sleb_next(&s);
			if (s.bad)
				goto truncated;
			st = gotp_reloc(w, offset, info, addend);
			if (st != 0)
				return st;
		}
		done += n;
	}
	return 0;
truncated:
	w->why = "packed relocations cut short";
	return -1;
}
