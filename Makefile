# leaksnap — plain Makefile.
#   make                 build everything into build/
#   make check           run every test; ends with "N passed, N failed"
#   make check SANITIZE=1  same, ASan+UBSan build in build-san/
#   make cross           the hook (and its test programs) for arm64 and 32-bit ARM
#   make demo            run the bundled example end to end
#   make screenshot      docs/images/report.png: the demo's HTML report
#   make bench           benchmarks (bench/), reported as ratios
#   make fuzz FUZZ_SECONDS=N  each libFuzzer harness (tests/fuzz/) for N seconds
#   make fuzz-coverage   line coverage of the library by the committed corpora
#   make install PREFIX=/usr/local DESTDIR=
#   V=1                  show the commands

VERSION := 0.1.0
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DESTDIR ?=
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

ifeq ($(SANITIZE),1)
B ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
B ?= build
SANFLAGS :=
endif

ifneq ($(V),1)
Q := @
say = @printf '  %-7s %s\n' $(1) $(2);
else
Q :=
say :=
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wwrite-strings -Wvla -Wimplicit-fallthrough -Wpointer-arith \
	-Wcast-qual -Wundef -Wnull-dereference -Wold-style-definition
OPT ?= -O2 -g
CPPFLAGS_ALL := -D_GNU_SOURCE -I$(B)/include -Ikit $(CPPFLAGS)
CFLAGS_ALL := -std=c11 -pthread $(OPT) $(WARN) $(SANFLAGS) -fPIC -fvisibility=hidden $(CFLAGS)
LDFLAGS_ALL := -pthread $(SANFLAGS) $(LDFLAGS)
LIBS := -ljansson -ldw -lelf -ldebuginfod -lzip -lz -liberty -lm
# The export library (export/: pprof profiles, flame-graph folding) is a
# second library on top of libleaksnap, so that libleaksnap needs no protobuf-c.
EXPORT_LIBS := -lprotobuf-c -lz -ljansson
CLI_LIBS := -lprotobuf-c

# What building needs (scripts/ensure-deps.sh with no option), checked once;
# the tests' own packages (--check) only when tests are built.
DEPS_STAMP := $(B)/.deps-ok
CHECK_DEPS_STAMP := $(B)/.check-deps-ok

# The common kit (kit/): helpers every part shares, never public API; its
# tool-only modules (process running) are linked into the CLI, not the library.
KIT_TOOL_SRCS := $(wildcard kit/kit_run.c)
KIT_SRCS := $(filter-out $(KIT_TOOL_SRCS),$(wildcard kit/*.c))
# Library sources: one folder per pipeline stage, one public header each.
LIB_HEADERS := kit/error.h libsnapshot/snapshot.h mapsparse/maps.h symbolizer/symbolizer.h resolve/resolve.h \
	diff/diff.h export/export.h
LIB_SRCS := $(KIT_SRCS) $(wildcard libsnapshot/*.c) $(wildcard mapsparse/*.c) $(wildcard symbolizer/*.c) \
	$(wildcard resolve/*.c) $(wildcard diff/*.c)
LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRCS))
KIT_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(KIT_SRCS))
EXPORT_SRCS := $(wildcard export/*.c)
EXPORT_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(EXPORT_SRCS))
# The report page (report/): the tool's, not installed.
REPORT_SRCS := $(wildcard report/*.c)
REPORT_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(REPORT_SRCS))
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRCS))
# The Android device driver (adb/) runs adb through the kit's process
# runner; the CLI's `leaksnap adb` drives it.
ADB_SRCS := $(wildcard adb/*.c)
# Attaching to a running process (attach/): ptrace, and the process's ELF
# files read with libelf; the CLI's `leaksnap attach` drives it.  One file
# per architecture holds its registers (attach/arch_*.c).
ATTACH_SRCS := $(wildcard attach/*.c)
# The client of a process's control socket (control/): `leaksnap ctl`,
# `watch`, `record --watch` and `adb snapshot --socket` speak through it.
CONTROL_SRCS := $(wildcard control/*.c)
# The store (store/): snapshots kept across runs in SQLite (and ClickHouse),
# the CLI's `leaksnap store`; the tool's, not installed yet.
STORE_SRCS := $(wildcard store/*.c)
STORE_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(STORE_SRCS))
STORE_LIBS := -lsqlite3 -lcurl -lpthread
TOOL_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(KIT_TOOL_SRCS) $(ADB_SRCS) $(ATTACH_SRCS) $(CONTROL_SRCS)) $(STORE_OBJS)
PUB_HEADERS := $(addprefix $(B)/include/leaksnap/,$(notdir $(LIB_HEADERS)))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))

SOMAJOR := 0

all: $(PUB_HEADERS) $(B)/bin/leaksnap $(B)/bin/leakdiff $(B)/lib/libleaksnap.a \
	$(B)/lib/libleaksnap.so $(B)/lib/pkgconfig/leaksnap.pc $(B)/lib/libleakhook.so \
	$(B)/lib/libleakhook-inapp.so $(B)/include/leaksnap/leakhook.h $(B)/lib/libleaksnap-export.a \
	$(B)/lib/libleaksnap-export.so $(B)/lib/pkgconfig/leaksnap-export.pc

.DELETE_ON_ERROR:
.SECONDARY: $(PUB_HEADERS)
.PHONY: all check demo bench install uninstall clean deps tests cross screenshot

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/ensure-deps.sh
	$(Q)sh scripts/ensure-deps.sh
	$(Q)mkdir -p $(@D) && touch $@
$(CHECK_DEPS_STAMP): scripts/ensure-deps.sh
	$(Q)sh scripts/ensure-deps.sh --check
	$(Q)mkdir -p $(@D) && touch $@

$(B)/include/leaksnap/%.h: libsnapshot/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: mapsparse/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: symbolizer/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: diff/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/error.h: kit/error.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: resolve/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: export/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@

$(B)/obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# libiberty (the demangler) is linked statically and cannot say its version:
# --version names the Debian package it came from, when there is one.
LIBIBERTY_VERSION := $(shell dpkg-query -W -f='$${Version}' libiberty-dev 2>/dev/null)
$(B)/obj/cli/version.o: CPPFLAGS_ALL += \
	$(if $(LIBIBERTY_VERSION),-DLEAKSNAP_LIBIBERTY_VERSION='"$(LIBIBERTY_VERSION)"')

$(B)/lib/libleaksnap.a: $(LIB_OBJS)
	$(call say,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

$(B)/lib/libleaksnap.so: $(LIB_OBJS)
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -Wl,-soname,libleaksnap.so.$(SOMAJOR) \
		-Wl,--no-undefined -Wl,--exclude-libs,ALL $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(B)/lib/pkgconfig/%.pc: %.pc.in Makefile
	$(Q)mkdir -p $(@D) && sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

# The HTML report's style and script, embedded in the page (report/page.c);
# the script's parts are joined in this order.
REPORT_CSS := report/report.css
REPORT_JS := report/util.js report/curve.js report/flame.js report/tables.js report/history.js \
	report/main.js
$(B)/gen/report_assets.h: scripts/embed-assets.sh $(REPORT_CSS) $(REPORT_JS)
	$(call say,GEN,$@)
	$(Q)mkdir -p $(@D) && sh scripts/embed-assets.sh $@ $(REPORT_CSS) $(REPORT_JS)
$(B)/obj/report/page.o: $(B)/gen/report_assets.h
$(B)/obj/report/page.o: CPPFLAGS_ALL += -I$(B)/gen
# The commands include report/'s header.
$(CLI_OBJS): CPPFLAGS_ALL += -Ireport

# pprof profiles: protoc-c generates the C code for export/profile.proto
# (never committed); export/pprof.c and its unit test use it.
PB_OBJ := $(B)/obj/gen/profile.pb-c.o
$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: export/%.proto | $(DEPS_STAMP)
	$(call say,GEN,$@)
	$(Q)mkdir -p $(@D) && protoc-c --proto_path=export --c_out=$(B)/gen $<
$(PB_OBJ): $(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -I$(B)/gen $(CFLAGS_ALL) -c -o $@ $<
$(B)/obj/export/pprof.o: $(B)/gen/profile.pb-c.h
$(B)/obj/export/pprof.o: CPPFLAGS_ALL += -I$(B)/gen

# libleaksnap-export: exports exactly libleaksnap-export.sym (LEAKSNAP_API).
$(B)/lib/libleaksnap-export.a: $(EXPORT_OBJS) $(PB_OBJ)
	$(call say,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

# The kit is hidden in libleaksnap.so: the export library links its own
# copy of the parts it uses (from this archive, never installed).
$(B)/lib/libkit.a: $(KIT_OBJS)
	$(call say,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

$(B)/lib/libleaksnap-export.so: $(EXPORT_OBJS) $(PB_OBJ) $(B)/lib/libleaksnap.so $(B)/lib/libkit.a
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -Wl,-soname,libleaksnap-export.so.$(SOMAJOR) \
		-Wl,--no-undefined -Wl,--exclude-libs,ALL $(LDFLAGS_ALL) -o $@ $(EXPORT_OBJS) $(PB_OBJ) \
		$(B)/lib/libkit.a -L$(B)/lib -lleaksnap $(EXPORT_LIBS)

$(CLI_OBJS) $(TOOL_OBJS): CPPFLAGS_ALL += -Iadb -Iattach -Icontrol -Istore
$(CLI_OBJS) $(TOOL_OBJS): $(B)/include/leaksnap/leakhook.h
$(B)/bin/leaksnap: $(CLI_OBJS) $(TOOL_OBJS) $(REPORT_OBJS) $(B)/lib/libleaksnap-export.a \
		$(B)/lib/libleaksnap.a
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(TOOL_OBJS) $(REPORT_OBJS) \
		$(B)/lib/libleaksnap-export.a $(B)/lib/libleaksnap.a $(LIBS) $(CLI_LIBS) $(STORE_LIBS)

$(B)/bin/leakdiff: $(B)/bin/leaksnap
	$(Q)ln -sf leaksnap $@

# The malloc hook: libc (and its unwinder) only, never sanitized (it *is*
# the allocator interface), frame pointers on so that its entry points can
# describe their own frames (hook/unwind.h).
HOOK_SRCS := $(wildcard hook/*.c) libsnapshot/header.c
HOOK_OBJS := $(patsubst %.c,$(B)/hook-obj/%.o,$(HOOK_SRCS))
HOOK_CFLAGS_BASE := -std=c11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -ftls-model=initial-exec \
	-fno-omit-frame-pointer -fasynchronous-unwind-tables -DLEAKSNAP_HOOK_VERSION='"$(VERSION)"'
HOOK_CFLAGS := $(HOOK_CFLAGS_BASE) -mno-omit-leaf-frame-pointer $(CFLAGS)

$(B)/include/leaksnap/leakhook.h: hook/leakhook.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@

$(B)/hook-obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(HOOK_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B)/hook-obj -name '*.d' 2>/dev/null)

$(B)/lib/libleakhook.so: $(HOOK_OBJS) hook/libleakhook.sym
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -Wl,--no-undefined -Wl,--version-script=hook/libleakhook.sym \
		-Wl,-z,now $(LDFLAGS) -o $@ $(HOOK_OBJS) -static-libgcc -ldl -lpthread

# The in-app build (docs/inapp.md): the same sources with -DHOOK_INAPP, which
# interposes nothing by symbol; leaksnap_start() patches GOT slots.  Never
# unloaded (-z nodelete): slots and copied pointers may still lead into it.
HOOK_INAPP_OBJS := $(patsubst %.c,$(B)/hook-inapp-obj/%.o,$(HOOK_SRCS))
# (its thread-local storage is initial-exec too, and small enough for the
# room glibc keeps for a dlopen()ed library's: hook_internal.h, HOOK_TLS)
HOOK_INAPP_CFLAGS := $(HOOK_CFLAGS)
$(B)/hook-inapp-obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$(call say,CC,inapp:$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -DHOOK_INAPP $(HOOK_INAPP_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B)/hook-inapp-obj -name '*.d' 2>/dev/null)

$(B)/lib/libleakhook-inapp.so: $(HOOK_INAPP_OBJS) hook/libleakhook-inapp.sym
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -Wl,--no-undefined \
		-Wl,--version-script=hook/libleakhook-inapp.sym -Wl,-z,now -Wl,-z,nodelete $(LDFLAGS) -o $@ \
		$(HOOK_INAPP_OBJS) -static-libgcc -ldl -lpthread

# Tests ---------------------------------------------------------------------
# (a unit test is rebuilt when a file it includes changes: its .d beside it)
-include $(wildcard $(B)/tests/*.d)
$(B)/tests/test_%: tests/unit/test_%.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -MMD -MP -MF $@.d -o $@ $< $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(LDFLAGS_ALL)

# (it checks the kit's dump-name tags against the hook's own)
$(B)/tests/test_dumpname: $(B)/include/leaksnap/leakhook.h

$(B)/tests/stackcheck: tests/tools/stackcheck.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< $(B)/lib/libleaksnap.a \
		$(LIBS) $(LDFLAGS_ALL)

$(B)/tests/%: tests/tools/%.c $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

# The allocation-failure test takes the library's malloc, calloc, realloc,
# strdup, strndup and free (only calls from objects linked statically: the
# library's own, not libc's, Jansson's or libdw's).
ALLOC_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,--wrap=free
$(B)/tests/test_allocfail: tests/unit/test_allocfail.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(LDFLAGS_ALL) $(ALLOC_WRAP)

# The pprof test takes the profile writer from the export library and the
# generated code to decode what it wrote.
$(B)/tests/test_pprof: tests/unit/test_pprof.c $(B)/lib/libleaksnap-export.a $(B)/lib/libleaksnap.a \
		$(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -I$(B)/gen \
		$(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) -Wno-missing-prototypes -o $@ $< \
		$(B)/lib/libleaksnap-export.a $(B)/lib/libleaksnap.a -lcmocka \
		$(LIBS) $(EXPORT_LIBS) $(LDFLAGS_ALL)

# The unwinder test builds the hook's unwinders into a program of its own,
# without frame pointers, as ordinary Debian code is built (not the shadow
# stack's, unwind_instr.c, which is the hook's: t-instrument*.sh test it).
UNWIND_TEST_SRCS := $(filter-out hook/unwind_instr.c,$(filter hook/unwind%.c,$(HOOK_SRCS)))
$(B)/tests/test_unwind: tests/unit/test_unwind.c $(UNWIND_TEST_SRCS) $(wildcard hook/unwind*.h) \
		| $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) -D_GNU_SOURCE -iquote hook -std=c11 $(OPT) $(WARN) -fomit-frame-pointer \
		-rdynamic -Wno-missing-prototypes -o $@ $< $(UNWIND_TEST_SRCS) \
		-lcmocka -ldl -lpthread

# The hook's query of a signal's action (hook_internal.h), as the hook
# builds it.
$(B)/tests/test_hook_sigaction: tests/unit/test_hook_sigaction.c hook/hook_internal.h \
		| $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) -D_GNU_SOURCE -iquote hook -std=c11 $(OPT) $(WARN) \
		-Wno-missing-prototypes -o $@ $< -lcmocka -lpthread

# The sampling test builds the hook's draws and filter of sampled blocks
# into a program of its own, over a stand-in for the tables.
SAMPLE_TEST_SRCS := hook/sample.c hook/sample_filter.c
$(B)/tests/test_sample: tests/unit/test_sample.c $(SAMPLE_TEST_SRCS) hook/sample.h \
		hook/hook_internal.h hook/table_internal.h | $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) -D_GNU_SOURCE -iquote hook -std=c11 $(OPT) $(WARN) \
		-Wno-missing-prototypes -o $@ $< $(SAMPLE_TEST_SRCS) -lcmocka -lm -lpthread

# The control socket's command parser (hook/control_proto.c: pure, no system
# calls), tested as it is outside the hook; its fuzz harness likewise.
$(B)/tests/test_control_proto: tests/unit/test_control_proto.c hook/control_proto.c hook/control_proto.h \
		| $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -iquote hook $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< hook/control_proto.c -lcmocka $(LDFLAGS_ALL)

# The adb runner of the device driver (adb/adb_run.c, over kit/kit_run.c);
# the test keeps the messages it would print (its own adb_output) to check
# them.
$(B)/tests/test_adb: tests/unit/test_adb.c adb/adb_run.c adb/adb.h $(KIT_TOOL_SRCS) kit/kit_run.h \
		$(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Iadb -Ikit $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< adb/adb_run.c $(KIT_TOOL_SRCS) -lcmocka $(LDFLAGS_ALL)

# attach/ below the command: its sources built into the test (the tool's
# objects are not in a library), over libleaksnap's maps parser and kit.
$(B)/tests/test_attach: tests/unit/test_attach.c $(ATTACH_SRCS) $(wildcard attach/*.h) \
		$(B)/lib/libleaksnap.a $(PUB_HEADERS) $(B)/include/leaksnap/leakhook.h
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Iattach $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(ATTACH_SRCS) $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(LDFLAGS_ALL)

# control/ below the commands: its sources built into the test, over
# libleaksnap's kit (error records); sockets made in the test stand in
# for a process.
$(B)/tests/test_control: tests/unit/test_control.c $(CONTROL_SRCS) control/control.h \
		$(B)/lib/libleaksnap.a $(PUB_HEADERS) $(B)/include/leaksnap/leakhook.h
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Icontrol $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(CONTROL_SRCS) $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(LDFLAGS_ALL)
# store/ below the command: its objects (the tool's) over libleaksnap and
# libsqlite3; storeq reads a store with the SQLite C API alone.
$(B)/tests/test_store: tests/unit/test_store.c $(STORE_OBJS) $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Istore $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(STORE_OBJS) $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(STORE_LIBS) $(LDFLAGS_ALL)
$(B)/tests/test_store_ch: tests/unit/test_store_ch.c $(STORE_OBJS) $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Istore $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(STORE_OBJS) $(B)/lib/libleaksnap.a -lcmocka $(LIBS) \
		$(STORE_LIBS) $(LDFLAGS_ALL)
$(B)/tests/test_ch_codec: tests/unit/test_ch_codec.c $(B)/obj/store/ch_codec.o $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Istore $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(B)/obj/store/ch_codec.o -lcmocka $(LDFLAGS_ALL)
$(B)/tests/storeq: tests/tools/storeq.c $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< $(STORE_LIBS) $(LDFLAGS_ALL)

# Programs the hook tests run (tests/hook/): plain -O2 builds, C and C++.
HOOKT_C := $(wildcard tests/hook/*.c)
HOOKT_CXX := $(wildcard tests/hook/*.cc)
HOOKT_BINS := $(patsubst tests/hook/%.c,$(B)/tests/hook/%,$(filter-out tests/hook/lib% tests/hook/instr_plain.c,$(HOOKT_C))) \
	$(patsubst tests/hook/%.cc,$(B)/tests/hook/%,$(HOOKT_CXX)) \
	$(patsubst tests/hook/%.c,$(B)/tests/hook/%.so,$(filter tests/hook/lib%,$(HOOKT_C))) \
	$(B)/tests/hook/leaks-fp $(B)/tests/hook/sub/libinappplug.so $(B)/tests/hook/libinappcxx.so
HOOKT_FLAGS := -O2 -g -Wall -Wextra -Werror -Ihook -D_GNU_SOURCE
HOOKT_LEAF_FP := $(if $(filter x86_64 aarch64,$(shell uname -m)),-mno-omit-leaf-frame-pointer)
$(HOOKT_BINS): hook/leakhook.h

$(B)/tests/hook/lib%.so: tests/hook/lib%.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -fPIC -shared -o $@ $<
# The in-app tests' library that loads its plug-in by bare name through its
# RUNPATH ($ORIGIN/sub, where the plug-in is, bound at load: its GOT is
# read-only after relocation).
$(B)/tests/hook/libinappdl.so: tests/hook/libinappdl.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -fPIC -shared -Wl,--enable-new-dtags \
		-Wl,-rpath,'$$ORIGIN/sub' -o $@ $< -ldl
# A C++ plug-in for them (.cpp: the .cc files are programs).
$(B)/tests/hook/libinappcxx.so: tests/hook/libinappcxx.cpp
	$(call say,CXX,$<)
	$(Q)mkdir -p $(@D) && $(CXX) $(HOOKT_FLAGS) -std=c++17 -fPIC -shared -o $@ $<
$(B)/tests/hook/sub/libinappplug.so: tests/hook/libinappplug.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -fPIC -shared -Wl,-z,relro,-z,now -o $@ $<
$(B)/tests/hook/leaks-fp: tests/hook/leaks.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -fno-omit-frame-pointer -std=gnu11 -rdynamic \
		-o $@ $< -ldl -lpthread
$(B)/tests/hook/%: tests/hook/%.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -rdynamic -o $@ $< -ldl -lpthread
# LEAKSNAP_UNWIND=instrument's program: -finstrument-functions, with frame
# pointers to compare the fp walk with it; instr_plain.c without either.
INSTR_FLAGS := -finstrument-functions -fno-omit-frame-pointer
$(B)/tests/hook/instr: tests/hook/instr.c tests/hook/instr_plain.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -c -o $@-plain.o tests/hook/instr_plain.c && \
		$(CC) $(HOOKT_FLAGS) $(INSTR_FLAGS) $(HOOKT_LEAF_FP) -std=gnu11 -rdynamic -o $@ $< $@-plain.o \
		-lpthread
$(B)/tests/hook/instrxx: tests/hook/instrxx.cc
	$(call say,CXX,$<)
	$(Q)mkdir -p $(@D) && $(CXX) $(HOOKT_FLAGS) $(INSTR_FLAGS) $(HOOKT_LEAF_FP) -std=c++17 -rdynamic \
		-o $@ $<
$(B)/tests/hook/%: tests/hook/%.cc
	$(call say,CXX,$<)
	$(Q)mkdir -p $(@D) && $(CXX) $(HOOKT_FLAGS) -std=c++17 -rdynamic -o $@ $< -ldl -lpthread

# Programs and libraries tests/t-attach.sh uses (tests/attach/): processes
# to attach to (one of them statically linked), a stand-in for the in-app
# hook that records how it was called, a library dlopen refuses, and a C++
# service leaking through a library of its own.
ATTT_C := $(wildcard tests/attach/*.c)
ATTT_CXX := $(wildcard tests/attach/*.cc)
ATTT_BINS := $(patsubst tests/attach/%.c,$(B)/tests/attach/%,$(filter-out tests/attach/lib%,$(ATTT_C))) \
	$(patsubst tests/attach/%.cc,$(B)/tests/attach/%,$(filter-out tests/attach/lib%,$(ATTT_CXX))) \
	$(patsubst tests/attach/%.c,$(B)/tests/attach/%.so,$(filter tests/attach/lib%,$(ATTT_C))) \
	$(patsubst tests/attach/%.cc,$(B)/tests/attach/%.so,$(filter tests/attach/lib%,$(ATTT_CXX))) \
	$(B)/tests/attach/target-static
$(ATTT_BINS): hook/leakhook.h

$(B)/tests/attach/lib%.so: tests/attach/lib%.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -fPIC -shared -o $@ $<
$(B)/tests/attach/lib%.so: tests/attach/lib%.cc
	$(call say,CXX,$<)
	$(Q)mkdir -p $(@D) && $(CXX) $(HOOKT_FLAGS) -O0 -fPIC -shared -o $@ $<
$(B)/tests/attach/target-static: tests/attach/target.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -static -o $@ $< -lpthread
$(B)/tests/attach/%: tests/attach/%.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $< -lpthread
$(B)/tests/attach/service: tests/attach/service.cc $(B)/tests/attach/libservleak.so
	$(call say,CXX,$<)
	$(Q)mkdir -p $(@D) && $(CXX) $(HOOKT_FLAGS) -std=c++17 -o $@ $< -L$(B)/tests/attach \
		-Wl,-rpath,'$$ORIGIN' -lservleak -lpthread

# Cross builds (make cross): the hook and the C programs of the hook tests
# for arm64 and for 32-bit ARM in Thumb state, with Debian's cross
# compilers, run under qemu-user by tests/t-android-hook.sh.  32-bit ARM code is
# built with -funwind-tables, as the NDK and AOSP build it: the hook unwinds
# there through the EHABI tables (.ARM.exidx; docs/hook.md).
CROSS_ARCHES := arm64 arm
CROSS_CC_arm64 := aarch64-linux-gnu-gcc
CROSS_CC_arm := arm-linux-gnueabihf-gcc
CROSS_FLAGS_arm64 := -mno-omit-leaf-frame-pointer
CROSS_FLAGS_arm := -mthumb -funwind-tables
CROSS_PROGS := leaks apkload reach reachexit
CROSS_LIBS := libleaker libapk libreach
cross_outputs = $(B)/cross/$(1)/libleakhook.so $(B)/cross/$(1)/libleakhook-inapp.so \
	$(addprefix $(B)/cross/$(1)/tests/hook/,$(CROSS_PROGS)) \
	$(patsubst %,$(B)/cross/$(1)/tests/hook/%.so,$(CROSS_LIBS)) \
	$(patsubst attach/%.c,$(B)/cross/$(1)/attach-obj/%.o,attach/arch_$(1).c $(ATTACH_CROSS_SRCS))
# The arches whose compiler is installed: make check builds and tests those.
CROSS_FOUND := $(foreach a,$(CROSS_ARCHES),$(if $(shell command -v $(CROSS_CC_$(a)) 2>/dev/null),$(a)))

# attach/ for the arch: its register file and the files that do not read
# ELF (libelf's headers are the host's), compiled, not run (qemu-user has
# no ptrace: docs/attach.md)
ATTACH_CROSS_SRCS := attach/session.c attach/inject.c attach/proc.c
define cross_rules
$(B)/cross/$(1)/attach-obj/%.o: attach/%.c attach/attach_internal.h attach/attach.h \
		$(PUB_HEADERS) $(B)/include/leaksnap/leakhook.h | $(DEPS_STAMP)
	$$(call say,CC,$(1):$$<)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(CPPFLAGS_ALL) $$(filter-out $$(SANFLAGS),$$(CFLAGS_ALL)) \
		$$(CROSS_FLAGS_$(1)) \
		-c -o $$@ $$<
$(B)/cross/$(1)/hook-obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$$(call say,CC,$(1):$$<)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(CPPFLAGS_ALL) $$(HOOK_CFLAGS_BASE) $$(CROSS_FLAGS_$(1)) \
		-MMD -MP -c -o $$@ $$<
$(B)/cross/$(1)/libleakhook.so: $(patsubst %.c,$(B)/cross/$(1)/hook-obj/%.o,$(HOOK_SRCS)) hook/libleakhook.sym
	$$(call say,LD,$$@)
	$$(Q)$$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) -shared -Wl,--no-undefined \
		-Wl,--version-script=hook/libleakhook.sym -Wl,-z,now -o $$@ \
		$(patsubst %.c,$(B)/cross/$(1)/hook-obj/%.o,$(HOOK_SRCS)) -static-libgcc -ldl -lpthread
$(B)/cross/$(1)/hook-inapp-obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$$(call say,CC,$(1):inapp:$$<)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(CPPFLAGS_ALL) -DHOOK_INAPP \
		$$(filter-out -ftls-model=initial-exec,$$(HOOK_CFLAGS_BASE)) $$(CROSS_FLAGS_$(1)) -MMD -MP -c -o $$@ $$<
$(B)/cross/$(1)/libleakhook-inapp.so: $(patsubst %.c,$(B)/cross/$(1)/hook-inapp-obj/%.o,$(HOOK_SRCS)) \
		hook/libleakhook-inapp.sym
	$$(call say,LD,$$@)
	$$(Q)$$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) -shared -Wl,--no-undefined \
		-Wl,--version-script=hook/libleakhook-inapp.sym -Wl,-z,now -Wl,-z,nodelete -o $$@ \
		$(patsubst %.c,$(B)/cross/$(1)/hook-inapp-obj/%.o,$(HOOK_SRCS)) -static-libgcc -ldl -lpthread
$(B)/cross/$(1)/tests/hook/lib%.so: tests/hook/lib%.c
	$$(call say,CC,$(1):$$<)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(HOOKT_FLAGS) $$(CROSS_FLAGS_$(1)) -fPIC -shared \
		-Wl,-z,max-page-size=4096 -o $$@ $$<
$(B)/cross/$(1)/tests/hook/%: tests/hook/%.c
	$$(call say,CC,$(1):$$<)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(HOOKT_FLAGS) $$(CROSS_FLAGS_$(1)) -std=gnu11 -rdynamic \
		-o $$@ $$< -ldl -lpthread
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call cross_rules,$(a))))
-include $(shell find $(B)/cross -name '*.d' 2>/dev/null)

ifneq ($(filter cross,$(MAKECMDGOALS)),)
ifneq ($(CROSS_FOUND),$(CROSS_ARCHES))
$(error make cross: $(foreach a,$(filter-out $(CROSS_FOUND),$(CROSS_ARCHES)),$(CROSS_CC_$(a))) not installed; as root: sh scripts/ensure-deps.sh --cross)
endif
endif
cross: $(foreach a,$(CROSS_ARCHES),$(call cross_outputs,$(a)))

# GOT slots (hook/got*.c, read by the in-app build) ---------------------------
# tests/got/libgotuse.c linked in each relocation format the in-app build
# meets (tests/got/gotcases.c says what each must hold), and libgotnone.c.
# test_got (cmocka) checks them natively; gotcross, a plain program with
# the same checks, for arm64 and 32-bit ARM under qemu-user
# (tests/t-got-cross.sh).  The lld formats are linked by clang --target
# against the cross compilers' sysroots.
GOT_SRCS := hook/got.c hook/got_aps2.c
GOT_HDRS := hook/got.h hook/got_internal.h tests/got/gotcases.h tests/got/gotcase_int.h
GOT_CASES := tests/got/gotcases.c tests/got/gotcorrupt.c tests/got/gotpages.c tests/got/gotbias.c
GOT_LIB_FLAGS := -O2 -g -Wall -Wextra -Werror -fPIC -shared
# based: linked at 0x20000000 (gotbias.c loads it below and just above);
# part: RELRO ending mid-page (gotpages.c)
GOT_GNU := lazy now norelro based
GOT_LLD := lld aps2 aps2relr lldrelr aps2relr36 part
GOT_LD_based := -Wl,-Ttext-segment=0x20000000
GOT_LD_part := -Wl,-z,now -Wl,-z,common-page-size=64
GOT_LD_now := -Wl,-z,now
GOT_LD_norelro := -Wl,-z,norelro
GOT_LD_relr := -Wl,-z,pack-relative-relocs
GOT_LD_aps2 := -nostartfiles -Wl,--pack-dyn-relocs=android
GOT_LD_aps2relr := -nostartfiles -Wl,--pack-dyn-relocs=android+relr -Wl,--use-android-relr-tags
GOT_LD_lldrelr := -Wl,--pack-dyn-relocs=relr
GOT_LD_aps2relr36 := -nostartfiles -Wl,--pack-dyn-relocs=android+relr
GOT_TEST_CFLAGS := -D_GNU_SOURCE -iquote hook -iquote tests/got -std=c11 $(OPT) $(WARN)
# (GNU ld's DT_RELR, "relr", is x86-64 only: the ARM linkers ignore the option)
GOT_NATIVE := $(patsubst %,$(B)/tests/got/libgot-%.so,$(GOT_GNU) relr $(GOT_LLD)) $(B)/tests/got/libgotnone.so
CROSS_TRIPLE_arm64 := aarch64-linux-gnu
CROSS_TRIPLE_arm := arm-linux-gnueabihf
got_cross_outputs = $(patsubst %,$(B)/cross/$(1)/tests/got/libgot-%.so,$(GOT_GNU) $(GOT_LLD)) \
	$(B)/cross/$(1)/tests/got/libgotnone.so $(B)/cross/$(1)/tests/got/gotcross

$(patsubst %,$(B)/tests/got/libgot-%.so,$(GOT_GNU) relr): $(B)/tests/got/libgot-%.so: tests/got/libgotuse.c \
		| $(CHECK_DEPS_STAMP)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(GOT_LIB_FLAGS) $(GOT_LD_$*) -o $@ $<
$(patsubst %,$(B)/tests/got/libgot-%.so,$(GOT_LLD)): $(B)/tests/got/libgot-%.so: tests/got/libgotuse.c \
		| $(CHECK_DEPS_STAMP)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D) && clang -fuse-ld=lld $(GOT_LIB_FLAGS) $(GOT_LD_$*) -o $@ $<
$(B)/tests/got/libgotnone.so: tests/got/libgotnone.c | $(CHECK_DEPS_STAMP)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(GOT_LIB_FLAGS) -o $@ $<
$(B)/tests/test_got: tests/unit/test_got.c $(GOT_CASES) $(GOT_SRCS) $(GOT_HDRS) tests/got/gothdr.c \
		| $(DEPS_STAMP) $(GOT_NATIVE)
	$(call say,CC,$<)
	$(Q)$(CC) -std=c11 $(WARN) -iquote hook -fsyntax-only tests/got/gothdr.c
	$(Q)mkdir -p $(@D) && $(CC) $(GOT_TEST_CFLAGS) -Wno-missing-prototypes -o $@ $< \
		$(GOT_CASES) $(GOT_SRCS) -lcmocka -ldl -pthread

define got_cross_rules
$(patsubst %,$(B)/cross/$(1)/tests/got/libgot-%.so,$(GOT_GNU)): $(B)/cross/$(1)/tests/got/libgot-%.so: \
		tests/got/libgotuse.c
	$$(call say,CC,$$@)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) $$(GOT_LIB_FLAGS) $$(GOT_LD_$$*) -o $$@ $$<
$(patsubst %,$(B)/cross/$(1)/tests/got/libgot-%.so,$(GOT_LLD)): $(B)/cross/$(1)/tests/got/libgot-%.so: \
		tests/got/libgotuse.c | $(CHECK_DEPS_STAMP)
	$$(call say,CC,$$@)
	$$(Q)mkdir -p $$(@D) && clang --target=$$(CROSS_TRIPLE_$(1)) -fuse-ld=lld $$(CROSS_FLAGS_$(1)) \
		$$(GOT_LIB_FLAGS) $$(GOT_LD_$$*) -o $$@ $$<
$(B)/cross/$(1)/tests/got/libgotnone.so: tests/got/libgotnone.c
	$$(call say,CC,$$@)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(CROSS_FLAGS_$(1)) $$(GOT_LIB_FLAGS) -o $$@ $$<
$(B)/cross/$(1)/tests/got/gotcross: tests/got/gotcross.c $(GOT_CASES) $(GOT_SRCS) $(GOT_HDRS)
	$$(call say,CC,$$@)
	$$(Q)mkdir -p $$(@D) && $$(CROSS_CC_$(1)) $$(GOT_TEST_CFLAGS) $$(CROSS_FLAGS_$(1)) -o $$@ \
		tests/got/gotcross.c $(GOT_CASES) $(GOT_SRCS) -ldl -pthread
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call got_cross_rules,$(a))))
cross: $(foreach a,$(CROSS_ARCHES),$(call got_cross_outputs,$(a)))
tests: $(GOT_NATIVE) $(foreach a,$(CROSS_FOUND),$(call got_cross_outputs,$(a)))
# ------------------------------------------------------------------------------


# Fuzz harnesses (tests/fuzz/fuzz_<name>.c): make check replays each one's
# corpus through a plain main() (replay.c); make fuzz builds them with
# clang's libFuzzer into $(B)/fuzz/ and runs them.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_COMMON := tests/fuzz/common.c
REPLAY_BINS := $(patsubst %,$(B)/tests/fuzz/replay_%,$(FUZZ_NAMES))

# (a harness of hook code names its sources: FUZZ_EXTRA_<name>)
FUZZ_EXTRA_ctlcmd := hook/control_proto.c
$(B)/tests/fuzz/replay_ctlcmd: hook/control_proto.c hook/control_proto.h
$(B)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c $(FUZZ_COMMON) tests/fuzz/replay.c tests/fuzz/fuzz.h \
		$(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -iquote hook $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-o $@ $< $(FUZZ_EXTRA_$*) $(FUZZ_COMMON) tests/fuzz/replay.c $(B)/lib/libleaksnap.a $(LIBS) \
		$(LDFLAGS_ALL)

# The control client's harness takes control/ too (the tool's, not in
# libleaksnap).
$(B)/tests/fuzz/replay_control: tests/fuzz/fuzz_control.c $(FUZZ_COMMON) tests/fuzz/replay.c \
		tests/fuzz/fuzz.h $(CONTROL_SRCS) control/control.h $(B)/lib/libleaksnap.a $(PUB_HEADERS) \
		$(B)/include/leaksnap/leakhook.h
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Icontrol $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-o $@ $< $(FUZZ_COMMON) tests/fuzz/replay.c $(CONTROL_SRCS) $(B)/lib/libleaksnap.a $(LIBS) \
		$(LDFLAGS_ALL)

# Every test program waits for the tests' packages (cmocka, the peers).
$(UNIT_BINS) $(TOOL_BINS) $(HOOKT_BINS) $(ATTT_BINS) $(REPLAY_BINS): | $(CHECK_DEPS_STAMP)
tests: $(CHECK_DEPS_STAMP) all $(UNIT_BINS) $(TOOL_BINS) $(HOOKT_BINS) $(ATTT_BINS) $(REPLAY_BINS) $(B)/bench/reachbench \
	$(B)/bench/gendump $(foreach a,$(CROSS_FOUND),$(call cross_outputs,$(a)))

check: tests
	$(Q)sh tests/run-all.sh $(B)

# Demo, bench ----------------------------------------------------------------
demo: all
	$(Q)sh scripts/demo.sh $(B)

# The README's picture of the demo's HTML report, taken by headless chromium.
screenshot: demo
	$(Q)mkdir -p docs/images
	$(Q)python3 tests/tools/browser.py --screenshot docs/images/report.png --size 1280x900 \
		$(B)/demo/report.html scripts/screenshot.js >/dev/null
	@echo "docs/images/report.png"

# The process bench/reach.sh and t-reach.sh run under the hook: a plain
# build like the hook tests' programs (never sanitized: ASan and the hook
# cannot both be preloaded).
$(B)/bench/reachbench: bench/reachbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $< -ldl

# The fork-per-request server of bench/fork.sh, a plain build as reachbench's.
$(B)/bench/forkbench: bench/forkbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $<

# The loaded server of bench/pause.sh, a plain build as reachbench's.
$(B)/bench/pausebench: bench/pausebench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $< -lpthread

# The process of one thread of bench/pause.sh, a plain build as reachbench's.
$(B)/bench/onepause: bench/onepause.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $< -lpthread

# The process and timer of bench/control.sh, a plain build as reachbench's.
$(B)/bench/ctlbench: bench/ctlbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(HOOKT_FLAGS) -std=gnu11 -o $@ $< -ldl -lpthread

# The store benchmark's generator writes through store/ (the tool's).
$(B)/bench/storegen: bench/storegen.c $(STORE_OBJS) $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) -Istore $(CFLAGS_ALL) -o $@ $< $(STORE_OBJS) \
		$(B)/lib/libleaksnap.a $(LIBS) $(STORE_LIBS) $(LDFLAGS_ALL)
$(B)/bench/%: bench/%.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< \
		$(B)/lib/libleaksnap.a $(LIBS) $(LDFLAGS_ALL)

# The varied workload also with frame pointers, for LEAKSNAP_UNWIND=fp.
$(B)/bench/varbench-fp: bench/varbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -fno-omit-frame-pointer -o $@ $< \
		$(LDFLAGS_ALL)

# The varied workload built with -finstrument-functions, for
# LEAKSNAP_UNWIND=instrument (bench/sample.sh: its cost, and that of the
# instrumentation itself).
$(B)/bench/varbench-instr: bench/varbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -finstrument-functions -o $@ $< \
		$(LDFLAGS_ALL)

# The varied workload in a shared library, for the in-app hook watching it.
$(B)/bench/libvarbench.so: bench/varbench.c
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) -Dmain=varbench_main \
		-Wno-missing-prototypes -shared -o $@ $< $(LDFLAGS_ALL)
$(B)/bench/varbench_main: bench/varbench_main.c $(B)/bench/libvarbench.so
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< -L$(B)/bench -lvarbench \
		-Wl,-rpath,'$$ORIGIN' $(LDFLAGS_ALL)

bench: all $(BENCH_BINS) $(B)/bench/varbench-fp $(B)/bench/varbench-instr $(B)/tests/stackcheck \
		$(B)/tests/hook/ctlclient
	$(Q)sh scripts/ensure-deps.sh --bench
	$(Q)sh bench/run.sh $(B)
	$(Q)sh bench/hook.sh $(B)
	$(Q)sh bench/reach.sh $(B)
	$(Q)sh bench/fork.sh $(B)
	$(Q)sh bench/pause.sh $(B)
	$(Q)sh bench/control.sh $(B)
	$(Q)sh bench/sym.sh $(B)
	$(Q)sh bench/diff.sh $(B)
	$(Q)sh bench/store.sh $(B)
	$(Q)sh bench/store_ch.sh $(B)

# Fuzzing --------------------------------------------------------------------
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_CC ?= clang
FB := $(B)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CLANG_WARN := $(WARN) -Wno-unknown-attributes # gcc's noipa
FUZZ_CFLAGS := -std=c11 -pthread -O1 -g $(CLANG_WARN) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(CFLAGS)
FUZZ_OBJS := $(patsubst %.c,$(FB)/obj/%.o,$(LIB_SRCS) $(CONTROL_SRCS) $(FUZZ_COMMON))
COV_CFLAGS := -std=c11 -pthread -O0 -g $(CLANG_WARN) -fprofile-instr-generate -fcoverage-mapping $(CFLAGS)
COV_OBJS := $(patsubst %.c,$(FB)/cov-obj/%.o,$(LIB_SRCS) $(CONTROL_SRCS) $(FUZZ_COMMON) tests/fuzz/replay.c)
# (the control client's harness includes its header, which includes the
# hook's contract)
$(FB)/fuzz_control $(FB)/cov_control: CPPFLAGS_ALL += -Icontrol
$(patsubst %.c,$(FB)/obj/%.o,$(CONTROL_SRCS)) $(patsubst %.c,$(FB)/cov-obj/%.o,$(CONTROL_SRCS)) \
$(FB)/fuzz_control $(FB)/cov_control: $(B)/include/leaksnap/leakhook.h
.PHONY: fuzz fuzz-coverage
.SECONDARY: $(FUZZ_OBJS) $(COV_OBJS)

$(FB)/obj/%.o: %.c $(PUB_HEADERS) tests/fuzz/fuzz.h | $(DEPS_STAMP) $(FB)/.deps-ok
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(FUZZ_CC) $(CPPFLAGS_ALL) $(FUZZ_CFLAGS) -c -o $@ $<

$(FB)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(call say,LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS_ALL) -iquote hook $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_EXTRA_$*) \
		$(FUZZ_OBJS) $(LIBS)

$(FB)/.deps-ok: scripts/ensure-deps.sh
	$(Q)sh scripts/ensure-deps.sh --fuzz
	$(Q)mkdir -p $(@D) && touch $@

fuzz: $(FB)/.deps-ok $(patsubst %,$(FB)/fuzz_%,$(FUZZ_TARGETS))
	$(Q)sh tests/fuzz/run.sh $(FB) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(FB)/cov-obj/%.o: %.c $(PUB_HEADERS) tests/fuzz/fuzz.h | $(DEPS_STAMP) $(FB)/.deps-ok
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(FUZZ_CC) $(CPPFLAGS_ALL) $(COV_CFLAGS) -c -o $@ $<

$(FB)/cov_%: tests/fuzz/fuzz_%.c $(COV_OBJS)
	$(call say,LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS_ALL) -iquote hook $(COV_CFLAGS) -o $@ $< $(FUZZ_EXTRA_$*) $(COV_OBJS) $(LIBS)

fuzz-coverage: $(patsubst %,$(FB)/cov_%,$(FUZZ_NAMES))
	$(Q)sh tests/fuzz/coverage.sh $(FB) $(FUZZ_NAMES)

# Install --------------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/leaksnap
	install -m 755 $(B)/bin/leaksnap $(DESTDIR)$(PREFIX)/bin/leaksnap
	ln -sf leaksnap $(DESTDIR)$(PREFIX)/bin/leakdiff
	install -m 644 $(B)/lib/libleaksnap.a $(DESTDIR)$(PREFIX)/lib/libleaksnap.a
	install -m 755 $(B)/lib/libleaksnap.so $(DESTDIR)$(PREFIX)/lib/libleaksnap.so.$(VERSION)
	ln -sf libleaksnap.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libleaksnap.so.$(SOMAJOR)
	ln -sf libleaksnap.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libleaksnap.so
	install -m 644 $(B)/lib/libleaksnap-export.a $(DESTDIR)$(PREFIX)/lib/libleaksnap-export.a
	install -m 755 $(B)/lib/libleaksnap-export.so \
		$(DESTDIR)$(PREFIX)/lib/libleaksnap-export.so.$(VERSION)
	ln -sf libleaksnap-export.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libleaksnap-export.so.$(SOMAJOR)
	ln -sf libleaksnap-export.so.$(SOMAJOR) $(DESTDIR)$(PREFIX)/lib/libleaksnap-export.so
	install -m 755 $(B)/lib/libleakhook.so $(DESTDIR)$(PREFIX)/lib/libleakhook.so
	install -m 755 $(B)/lib/libleakhook-inapp.so $(DESTDIR)$(PREFIX)/lib/libleakhook-inapp.so
	install -m 644 $(PUB_HEADERS) hook/leakhook.h $(DESTDIR)$(PREFIX)/include/leaksnap/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' leaksnap.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap.pc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' leaksnap-export.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap-export.pc
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 644 docs/man/leaksnap.1 docs/man/leakdiff.1 docs/man/leaksnap-attach.1 \
		docs/man/leaksnap-ctl.1 docs/man/leaksnap-watch.1 docs/man/leaksnap-store.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 docs/man/leaksnap-format.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 docs/man/libleakhook.7 $(DESTDIR)$(MANDIR)/man7/
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 docs/completion/leaksnap.bash $(DESTDIR)$(BASHCOMPDIR)/leaksnap
	ln -sf leaksnap $(DESTDIR)$(BASHCOMPDIR)/leakdiff
	install -m 644 docs/completion/_leaksnap $(DESTDIR)$(ZSHCOMPDIR)/_leaksnap

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/leaksnap $(DESTDIR)$(PREFIX)/bin/leakdiff \
		$(DESTDIR)$(PREFIX)/lib/libleaksnap.a $(DESTDIR)$(PREFIX)/lib/libleaksnap.so* \
		$(DESTDIR)$(PREFIX)/lib/libleaksnap-export.a $(DESTDIR)$(PREFIX)/lib/libleaksnap-export.so* \
		$(DESTDIR)$(PREFIX)/lib/libleakhook.so $(DESTDIR)$(PREFIX)/lib/libleakhook-inapp.so \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap-export.pc
	rm -rf $(DESTDIR)$(PREFIX)/include/leaksnap
	rm -f $(DESTDIR)$(MANDIR)/man1/leaksnap.1 $(DESTDIR)$(MANDIR)/man1/leakdiff.1 \
		$(DESTDIR)$(MANDIR)/man1/leaksnap-attach.1 $(DESTDIR)$(MANDIR)/man1/leaksnap-ctl.1 \
		$(DESTDIR)$(MANDIR)/man1/leaksnap-watch.1 $(DESTDIR)$(MANDIR)/man1/leaksnap-store.1 \
		$(DESTDIR)$(MANDIR)/man5/leaksnap-format.5 $(DESTDIR)$(MANDIR)/man7/libleakhook.7 \
		$(DESTDIR)$(BASHCOMPDIR)/leaksnap $(DESTDIR)$(BASHCOMPDIR)/leakdiff \
		$(DESTDIR)$(ZSHCOMPDIR)/_leaksnap

clean:
	rm -rf build build-san
