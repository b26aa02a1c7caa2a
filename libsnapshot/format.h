/* leaksnap: on-disk constants of the LEAKSNAP v1 container.
 * Shared by libsnapshot and the malloc hook (which must not depend on the
 * rest of the library); see docs/format.md. */
#ifndef LEAKSNAP_FORMAT_H
#define LEAKSNAP_FORMAT_H

#define LEAKSNAP_MAGIC "LEAKSNAP"
#define LEAKSNAP_MAGIC_LEN 8
#define LEAKSNAP_VERSION 1

/* DDMS NHGT payload signature (little-endian u32 at offset 0). */
#define LEAKSNAP_NHGT_SIGNATURE 0x812345ddu

#define LEAKSNAP_TEXT_HEADER "Android Native Heap Dump v"

#endif
