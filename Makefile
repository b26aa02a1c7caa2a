# leaksnap — plain Makefile.
#   make                 build everything into build/
#   make check           run every test; ends with "N passed, N failed"
#   make check SANITIZE=1  same, ASan+UBSan build in build-san/
#   make demo            run the bundled example end to end
#   make bench           benchmarks (bench/), reported as ratios
#   make install PREFIX=/usr/local DESTDIR=
#   V=1                  show the commands

VERSION := 0.1.0
PREFIX ?= /usr/local
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
CPPFLAGS_ALL := -D_GNU_SOURCE -I$(B)/include -Ilibsnapshot $(CPPFLAGS)
CFLAGS_ALL := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -fvisibility=hidden $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)
LIBS := -ljansson -ldw -lelf -lzip -lz

DEPS_STAMP := $(B)/.deps-ok

# Library sources: one folder per pipeline stage, one public header each.
LIB_HEADERS := libsnapshot/snapshot.h mapsparse/maps.h
LIB_SRCS := $(wildcard libsnapshot/*.c) $(wildcard mapsparse/*.c)
LIB_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRCS))
PUB_HEADERS := $(addprefix $(B)/include/leaksnap/,$(notdir $(LIB_HEADERS)))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRCS))

SOMAJOR := 0

all: $(PUB_HEADERS) $(B)/bin/leaksnap $(B)/bin/leakdiff $(B)/lib/libleaksnap.a \
	$(B)/lib/libleaksnap.so $(B)/lib/pkgconfig/leaksnap.pc

.DELETE_ON_ERROR:
.SECONDARY: $(PUB_HEADERS)
.PHONY: all check demo bench install uninstall clean deps tests

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/ensure-deps.sh
	$(Q)sh scripts/ensure-deps.sh --check
	$(Q)mkdir -p $(@D) && touch $@

$(B)/include/leaksnap/%.h: libsnapshot/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@
$(B)/include/leaksnap/%.h: mapsparse/%.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D) && cp $< $@

$(B)/obj/%.o: %.c $(PUB_HEADERS) | $(DEPS_STAMP)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

$(B)/lib/libleaksnap.a: $(LIB_OBJS)
	$(call say,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

$(B)/lib/libleaksnap.so: $(LIB_OBJS)
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) -shared -Wl,-soname,libleaksnap.so.$(SOMAJOR) \
		-Wl,--no-undefined $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

$(B)/lib/pkgconfig/leaksnap.pc: leaksnap.pc.in Makefile
	$(Q)mkdir -p $(@D) && sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

$(B)/bin/leaksnap: $(CLI_OBJS) $(B)/lib/libleaksnap.a
	$(call say,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(B)/lib/libleaksnap.a $(LIBS)

$(B)/bin/leakdiff: $(B)/bin/leaksnap
	$(Q)ln -sf leaksnap $@

# Tests ---------------------------------------------------------------------
$(B)/tests/test_%: tests/unit/test_%.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(filter-out -fvisibility=hidden,$(CFLAGS_ALL)) \
		-Wno-missing-prototypes -o $@ $< $(B)/lib/libleaksnap.a -lcmocka $(LIBS) $(LDFLAGS_ALL)

$(B)/tests/%: tests/tools/%.c $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

tests: all $(UNIT_BINS) $(TOOL_BINS)

check: tests
	$(Q)sh tests/run-all.sh $(B)

# Demo, bench ----------------------------------------------------------------
demo: all
	$(Q)sh scripts/demo.sh $(B)

$(B)/bench/%: bench/%.c $(B)/lib/libleaksnap.a $(PUB_HEADERS)
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< \
		$(B)/lib/libleaksnap.a $(LIBS) $(LDFLAGS_ALL)

bench: all $(BENCH_BINS)
	$(Q)sh scripts/ensure-deps.sh --bench
	$(Q)sh bench/run.sh $(B)

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
	install -m 644 $(PUB_HEADERS) $(DESTDIR)$(PREFIX)/include/leaksnap/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' leaksnap.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/leaksnap $(DESTDIR)$(PREFIX)/bin/leakdiff \
		$(DESTDIR)$(PREFIX)/lib/libleaksnap.a $(DESTDIR)$(PREFIX)/lib/libleaksnap.so* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/leaksnap.pc
	rm -rf $(DESTDIR)$(PREFIX)/include/leaksnap

clean:
	rm -rf build build-san
