#!/usr/bin/env python3
"""mkapk.py OUT LIB ENTRY: write an APK-like zip OUT holding LIB as ENTRY
(e.g. lib/arm64-v8a/libfoo.so), stored uncompressed and page-aligned as
`zipalign -p` lays it out (the padding in an extra field), between deflated
entries as in a real APK; print the library's offset in OUT."""
import struct
import sys
import zipfile

out, lib, name = sys.argv[1:]
data = open(lib, 'rb').read()
with zipfile.ZipFile(out, 'w') as z:
    z.writestr('AndroidManifest.xml', b'<manifest/>' * 50, zipfile.ZIP_DEFLATED)
    z.writestr('classes.dex', b'dex\n035\0' + bytes(3000), zipfile.ZIP_DEFLATED)
    zi = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_STORED
    here = z.fp.tell()
    pad = (-(here + 30 + len(name) + 4)) % 4096
    zi.extra = struct.pack('<HH', 0xd935, pad) + bytes(pad)
    z.writestr(zi, data)
    z.writestr('res/raw/tail.bin', bytes(5000), zipfile.ZIP_DEFLATED)
with zipfile.ZipFile(out) as z:
    zi = z.getinfo(name)
off = zi.header_offset + 30 + len(zi.filename.encode()) + len(zi.extra)
assert off % 4096 == 0 and open(out, 'rb').read()[off:off + len(data)] == data
print(off)
