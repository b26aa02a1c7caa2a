#!/bin/sh
# Rebuilds the committed fixtures of tests/t-symbolizer-cross.sh from cross.c.
# Run it from anywhere; it needs gcc-aarch64-linux-gnu,
# gcc-arm-linux-gnueabihf (with binutils-arm-linux-gnueabihf for objcopy)
# and gcc.  gcc -m32 needs only the compiler: no 32-bit C library or libgcc
# is linked, so gcc-multilib (which Debian 12 will not install beside
# gcc-arm-linux-gnueabihf) is not needed.  The output is the same byte for
# byte wherever it is built.  Built here, on Debian 12, with GCC 12.2.0 and
# binutils 2.40:
#
#   aarch64-linux-gnu-gcc   (Debian 12.2.0-14) 12.2.0
#   arm-linux-gnueabihf-gcc (Debian 12.2.0-14) 12.2.0
#   gcc                     (Debian 12.2.0-14) 12.2.0
#
# No C library, no start files: each file holds the code of cross.c and
# nothing else, so that every address of .text has a known answer.  The
# build directory is written into DWARF as /fixtures/cross, so the files do
# not depend on where they were built (FileName: /fixtures/cross/cross.c).
#
#   arm64.so   AArch64 shared object (ET_DYN), $x and $d mapping symbols
#   thumb.so   32-bit ARM shared object (ET_DYN), Thumb (-mthumb) with one
#              ARM function (cross_other): $t, $a and $d (a tbb table and
#              a literal pool)
#   arm        32-bit ARM executable (ET_EXEC), ARM state (-marm) with one
#              Thumb function (cross_other): $a, $t and $d
#   x86        32-bit x86 executable (ET_EXEC), ELFCLASS32; its PIC jump
#              table keeps local .L labels in the symbol table
#   x86-64     x86-64 executable (ET_EXEC)
#   thumb-nodebug.so, arm-nodebug
#              thumb.so and arm without DWARF (objcopy --strip-debug): only
#              their symbol tables, with Thumb function symbols (bit 0 set)
#              and mapping symbols, name their code
#
# After a rebuild, run tests/t-symbolizer-cross.sh: its expectations come
# from the LINE markers of cross.c and from the files themselves.
set -eu
cd "$(dirname "$0")"
COMMON="-g -O2 -fno-asynchronous-unwind-tables -ffreestanding -nostdlib
	-fdebug-prefix-map=$(pwd)=/fixtures/cross
	-Wl,--build-id -Wl,-z,max-page-size=4096 -Wl,-z,norelro"
SO="-fPIC -fvisibility=hidden -shared"
EXE="-fPIE -static -no-pie -Wl,-e,cross_entry"

aarch64-linux-gnu-gcc $COMMON $SO -o arm64.so cross.c
arm-linux-gnueabihf-gcc $COMMON -mthumb $SO -o thumb.so cross.c
arm-linux-gnueabihf-gcc $COMMON -marm $EXE -o arm cross.c
gcc -m32 $COMMON -Wl,-z,noseparate-code $EXE -o x86 cross.c
gcc $COMMON -Wl,-z,noseparate-code $EXE -o x86-64 cross.c
arm-linux-gnueabihf-objcopy --strip-debug thumb.so thumb-nodebug.so
arm-linux-gnueabihf-objcopy --strip-debug arm arm-nodebug
ls -l arm64.so thumb.so arm x86 x86-64 thumb-nodebug.so arm-nodebug
