/* leaksnap kit: on-disk constants of the LEAKSNAP v1 container, and the
 * rule for the bytes of a path the hook keeps in metadata.  Shared by
 * libsnapshot, the CLI and the malloc hook (which must not depend on the
 * rest of the library); see docs/format.md. */
#ifndef LEAKSNAP_KIT_FORMAT_H
#define LEAKSNAP_KIT_FORMAT_H

#include "kit_utf8.h"

#define LEAKSNAP_MAGIC "LEAKSNAP"
#define LEAKSNAP_MAGIC_LEN 8
#define LEAKSNAP_VERSION 1

/* DDMS NHGT payload signature (little-endian u32 at offset 0). */
#define LEAKSNAP_NHGT_SIGNATURE 0x812345ddu

#define LEAKSNAP_TEXT_HEADER "Android Native Heap Dump v"

/* Metadata values are one line of text: the hook writes paths and command
 * lines with every byte that does not start a kit_text_char() (kit_utf8.h)
 * replaced by '?', one for one.  How many bytes at @s[@i] (of @n) are kept
 * as they are: 0 when s[i] is replaced.  Readers apply it to a maps path
 * to find that module's build_id= line. */
static inline unsigned kit_meta_keep(const unsigned char *s, size_t n, size_t i)
{
	int len = kit_text_char(s + i, n - i);
	return len > 0 ? (unsigned)len : 0;
}

#endif
