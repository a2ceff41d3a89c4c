# Network diagnosis toolkit: top-level build.
#
#   make            build every tool into bin/
#   make test       build, then run every test (unit, CLI, and the kernel matrix
#                   under QEMU); SANITIZE=1 for ASan+UBSan, TESTS=REGEX to
#                   narrow, KERNELS="6.1 6.12" (default) or KERNELS=none
#   make check      the deterministic tier in under 3 minutes: unit tests, fuzz
#                   replays, recorded traces and captures, command lines
#   make demo       install missing packages, build, and run the main scenario
#   make bench      run the benchmarks (measurements, not pass/fail)
#   make shake      run TESTS=REGEX's bats files RUNS times (default 20) with
#                   LOAD cores kept busy (default 1), KERNELS="6.1 6.12" for
#                   the matching guest suites too; prints each test's pass rate
#   make soak       bbrtrace and udpdwell under churning load between namespaces
#                   for SOAK_SECONDS (default 600): start-vs-end table of memory,
#                   lost/evicted counts and CPU per event; fails on growth past
#                   the bound, a dead tool or a count mismatch (scripts/soak.sh)
#   make fuzz       run the fuzz harnesses (FUZZ_SECONDS per target, default 600)
#   make bpf-arm64  compile every BPF program for arm64 too, into build/bpf-arm64
#   make install    tools, man pages, bash completions, plot templates and the
#                   daemons' systemd units under PREFIX (default /usr/local),
#                   their option files under SYSCONFDIR/default (/etc), staged
#                   under DESTDIR if given; make uninstall removes exactly those
#                   files (an option file only when unchanged)
#
# Each tool's folder has a module.mk that declares what it builds; this file
# holds the shared rules only.

.DEFAULT_GOAL := all
SHELL := /bin/bash

# the version every tool prints: the number in VERSION, and the commit when
# built from a git checkout (-dirty: with changes not committed), e.g.
# "0.9.0 (git dcea620)"
VERSION  := $(shell cat VERSION)
GIT_REV  := $(shell [ -e .git ] && git describe --always --dirty --exclude='*' 2>/dev/null)
TK_VERSION := $(VERSION)$(if $(GIT_REV), (git $(GIT_REV)))
SANITIZE ?= 0
V ?= 0
ifeq ($(V),0)
Q := @
else
Q :=
endif

ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
TRIPLET   := $(shell gcc -dumpmachine 2>/dev/null)
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool

# Objects of the two user-space variants live apart, so switching SANITIZE
# never mixes them; bin/ is relinked when the variant changes.
ifeq ($(SANITIZE),1)
VARIANT   := san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
VARIANT   := rel
SAN_FLAGS :=
endif

# where make install puts things (DESTDIR: a staging root in front of them all)
PREFIX    ?= /usr/local
DATADIR   := $(PREFIX)/share/bbrkit
# the daemons' option files (SYSCONFDIR/default/NAME), outside PREFIX as /etc is
SYSCONFDIR ?= /etc
UNITDIR   := $(PREFIX)/lib/systemd/system

BUILD     := build
OBJ       := $(BUILD)/$(VARIANT)
GEN       := $(BUILD)/gen
BIN       := bin

PKGS      := libbpf libnl-3.0 libnl-route-3.0 libpcap
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
             -D_GNU_SOURCE \
             -I. -Ilib -I$(GEN) $(PKG_CFLAGS) $(SAN_FLAGS) -MMD -MP
LDFLAGS   += $(SAN_FLAGS)
BPF_LIBS  := -lbpf -lelf -lz

BPF_CFLAGS := -g -O2 -target bpf -Wall -Werror -Wno-unused-function -Ibpf/include -I. -MMD -MP
# the target's register names (bpf_tracing.h) and its asm/ headers: the build
# machine's own here; `make bpf-arm64` sets arm64's
BPF_ARCH_FLAGS := -D__TARGET_ARCH_$(ARCH) -I/usr/include/$(TRIPLET)
# arm64's asm/ headers: on an arm64 machine its own; elsewhere Debian's
# linux-libc-dev-arm64-cross. -idirafter keeps linux/ from /usr/include.
ifeq ($(ARCH),arm64)
ARM64_ASM_INC := /usr/include/$(TRIPLET)
else
ARM64_ASM_INC := /usr/aarch64-linux-gnu/include
endif
BPF_ARM64  := $(BUILD)/bpf-arm64

# Filled in by the module.mk files.
TOOLS      :=
# the tools that need root: installed to sbin, man section 8
SBIN_TOOLS :=
BENCH_PROGS :=
UNIT_TESTS :=
FUZZ_TARGETS :=
LIB_SRCS   := $(wildcard lib/*.c)

include $(sort $(wildcard */module.mk))

LIB_OBJS   := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LIBTK      := $(OBJ)/libtoolkit.a

.PHONY: all test check demo bench shake soak fuzz clean deps unit-tests bench-progs fuzz-build kernel-table bpf-arm64 \
        install uninstall install-list FORCE
all: $(addprefix $(BIN)/,$(TOOLS))

deps:
	$(Q)./scripts/install-deps.sh

# --- variant stamp: touched only when SANITIZE changes ---------------------
$(BUILD)/variant: FORCE
	@mkdir -p $(@D)
	@echo $(VARIANT) | cmp -s - $@ || echo $(VARIANT) > $@

# the data directory compiled into the tools that read DATADIR: rebuilt on a new PREFIX
$(BUILD)/datadir: FORCE
	@mkdir -p $(@D)
	@echo '$(DATADIR)' | cmp -s - $@ || echo '$(DATADIR)' > $@

# the version compiled into the tools (lib/cli.c): rebuilt when it changes
$(BUILD)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(TK_VERSION)' | cmp -s - $@ || echo '$(TK_VERSION)' > $@

$(OBJ)/lib/cli.o: CFLAGS += -DTOOLKIT_VERSION='"$(TK_VERSION)"'
$(OBJ)/lib/cli.o: $(BUILD)/version

# --- user space ---------------------------------------------------------------
$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(LIBTK): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# --- BPF: clang + CO-RE, skeletons from bpftool -------------------------------
define bpf_compile
	@mkdir -p $(@D)
	@$(if $(Q),echo "  BPF     $@")
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_ARCH_FLAGS) -c $< -o $@
endef

$(GEN)/%.bpf.o: bpf/%.bpf.c
	$(bpf_compile)

# every BPF object compiled for arm64 too: a compile check, no skeletons
$(BPF_ARM64)/%.bpf.o: BPF_ARCH_FLAGS := -D__TARGET_ARCH_arm64 -idirafter $(ARM64_ASM_INC)
$(BPF_ARM64)/%.bpf.o: bpf/%.bpf.c | $(ARM64_ASM_INC)/asm/types.h
	$(bpf_compile)

$(ARM64_ASM_INC)/asm/types.h:
	$(error arm64's asm/ headers are missing ($@): run ./scripts/install-deps.sh (linux-libc-dev-arm64-cross))

bpf-arm64: $(patsubst bpf/%.bpf.c,$(BPF_ARM64)/%.bpf.o,$(wildcard bpf/*.bpf.c))

$(GEN)/%.skel.h: $(GEN)/%.bpf.o
	@$(if $(Q),echo "  SKEL    $@")
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# tool_template(name): bin/name from $(name)_SRCS, needing skeletons $(name)_BPF
define tool_template
$(1)_OBJS := $$($(1)_SRCS:%.c=$(OBJ)/%.o)
$$($(1)_OBJS): $$(foreach b,$$($(1)_BPF),$(GEN)/$$(b).skel.h)
$(BIN)/$(1): $$($(1)_OBJS) $(LIBTK) $(BUILD)/variant
	@mkdir -p $(BIN)
	@$$(if $(Q),echo "  LD      $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$($(1)_OBJS) $(LIBTK) $$($(1)_LIBS) -lm
endef
$(foreach t,$(TOOLS),$(eval $(call tool_template,$(t))))

# unit tests: tests/unit/NAME.c linked with $(NAME)_SRCS and cmocka
define unit_template
$(1)_OBJS := $$(patsubst %.c,$(OBJ)/%.o,tests/unit/$(1).c $$($(1)_SRCS))
$$($(1)_OBJS): $$(foreach b,$$($(1)_BPF),$(GEN)/$$(b).skel.h)
$(OBJ)/unit/$(1): $$($(1)_OBJS) $(LIBTK) $(BUILD)/variant
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  LD      $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$($(1)_OBJS) $(LIBTK) $$($(1)_LIBS) -lcmocka -lm
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call unit_template,$(t))))

# benchmark programs: bench/NAME.c linked with $(NAME)_SRCS, built by `make bench`
define bench_template
$(1)_OBJS := $$(patsubst %.c,$(OBJ)/%.o,bench/$(1).c $$($(1)_SRCS))
$$($(1)_OBJS): $$(foreach b,$$($(1)_BPF),$(GEN)/$$(b).skel.h)
$(OBJ)/bench/$(1): $$($(1)_OBJS) $(LIBTK) $(BUILD)/variant
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  LD      $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$($(1)_OBJS) $(LIBTK) $$($(1)_LIBS) -lm
endef
$(foreach t,$(BENCH_PROGS),$(eval $(call bench_template,$(t))))
bench-progs: $(addprefix $(OBJ)/bench/,$(BENCH_PROGS))

unit-tests: $(addprefix $(OBJ)/unit/,$(UNIT_TESTS)) $(addprefix $(OBJ)/replay/,$(FUZZ_TARGETS))

# --- the README's commands ------------------------------------------------------
# they build with one job per CPU unless make was given -j: a fresh clone's
# build is CPU-bound, and make test waits on it before any test
BUILD_JOBS ?= $(shell nproc)
SUBMAKE = $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(BUILD_JOBS))

test: deps
	$(Q)$(SUBMAKE) all unit-tests
	$(Q)UNIT_DIR=$(OBJ)/unit UNIT_TESTS="$(UNIT_TESTS)" REPLAY_DIR=$(OBJ)/replay \
		FUZZ_TARGETS="$(FUZZ_TARGETS)" ./tests/run.sh

# the deterministic tier, for the inner loop: unit tests, fuzz replays, and
# the bats files marked "# tier: check" (no kernel matrix)
check:
	$(Q)$(SUBMAKE) all unit-tests
	$(Q)TIER=check UNIT_DIR=$(OBJ)/unit UNIT_TESTS="$(UNIT_TESTS)" REPLAY_DIR=$(OBJ)/replay \
		FUZZ_TARGETS="$(FUZZ_TARGETS)" ./tests/run.sh

# the README's Kernels table from the last make test's results (build/kernels);
# UPDATE=README.md writes it into the README between its markers
kernel-table:
	$(Q)./tests/kernels/table.sh $(if $(UPDATE),--update $(UPDATE))

demo: deps
	$(Q)$(SUBMAKE) all
	$(Q)./scripts/demo.sh

bench: deps
	$(Q)$(SUBMAKE) all bench-progs
	$(Q)BENCH_BIN=$(OBJ)/bench ./bench/run.sh

# the shake harness: TESTS=REGEX's bats files (and, with KERNELS, its guest
# suites) RUNS times, LOAD cores kept busy beside them; each test's pass rate
RUNS ?= 20
LOAD ?= 1
shake: deps
	$(Q)test -n '$(TESTS)' || { echo "make shake: name the files, e.g. make shake TESTS='^rtmp$$' RUNS=20 LOAD=1" >&2; exit 2; }
	$(Q)$(SUBMAKE) all
	$(Q)./tests/shake.sh --runs '$(RUNS)' --load '$(LOAD)' --kernels '$(or $(KERNELS),none)' '$(TESTS)'

SOAK_SECONDS ?= 600
soak: deps
	$(Q)$(SUBMAKE) all
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) ./scripts/soak.sh

# --- fuzzing: clang libFuzzer + ASan + UBSan ----------------------------------------
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -DTOOLKIT_VERSION='"$(TK_VERSION)"' -I. -Ilib -I$(GEN) \
               $(PKG_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
define fuzz_template
# one clang call compiles every source, so -MMD would keep only the last one's
# headers: the binary depends on every header next to its sources instead
$(BUILD)/fuzz/$(1): tests/fuzz/$(1).c $$($(1)_SRCS) \
		$$(wildcard $$(addsuffix *.h,$$(sort $$(dir tests/fuzz/$(1).c $$($(1)_SRCS)))) lib/*.h)
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  FUZZ    $$@")
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $$@ $$(filter %.c,$$^) $$($(1)_LIBS)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_template,$(t))))

# replay binaries: each harness over its corpus, without libFuzzer, in `make test`
define replay_template
$(1)_ROBJS := $$(patsubst %.c,$(OBJ)/%.o,tests/fuzz/$(1).c tests/fuzz/replay.c $$(filter-out lib/%,$$($(1)_SRCS)))
$(OBJ)/replay/$(1): $$($(1)_ROBJS) $(LIBTK) $(BUILD)/variant
	@mkdir -p $$(@D)
	@$$(if $(Q),echo "  LD      $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$($(1)_ROBJS) $(LIBTK) $$($(1)_LIBS) -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call replay_template,$(t))))

fuzz-build: $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS))
fuzz: deps
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" ./tests/fuzz/run.sh

# --- make install, make uninstall ------------------------------------------------------
# The install list, "MODE SOURCE DEST" per file, is the one contract: install
# copies it, uninstall removes exactly its DESTs, and tests/bats/install.bats
# reads it (make -s install-list). DEST is under PREFIX, or SYSCONFDIR for the
# daemons' option files; DESTDIR goes before it. An option file already there
# is kept (it is the user's), and uninstall removes it only when unchanged.
# The systemd units are systemd/NAME.service.in with the paths filled in.
$(BUILD)/systemd/%.service: systemd/%.service.in $(BUILD)/datadir
	@mkdir -p $(@D)
	$(Q)sed -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@.tmp && mv $@.tmp $@
DAEMONS     := bbrtrace udpdwell
CONF_LIST   := $(foreach d,$(DAEMONS),644:systemd/$(d).default:$(SYSCONFDIR)/default/$(d))
MANDIR      := $(PREFIX)/share/man
COMPDIR     := $(PREFIX)/share/bash-completion/completions
tool_dir     = $(PREFIX)/$(if $(filter $(1),$(SBIN_TOOLS)),sbin,bin)
man_section  = $(if $(filter $(1),$(SBIN_TOOLS)),8,1)
man_entry    = 644:man/$(1).$(2):$(MANDIR)/man$(2)/$(1).$(2)

INSTALL_LIST := $(foreach t,$(TOOLS),755:$(BIN)/$(t):$(call tool_dir,$(t))/$(t)) \
                $(foreach t,$(TOOLS),$(call man_entry,$(t),$(call man_section,$(t)))) \
                $(foreach t,$(TOOLS),644:completion/bbrkit.bash:$(COMPDIR)/$(t)) \
                $(foreach g,$(sort $(wildcard plots/*.gp)),644:$(g):$(DATADIR)/plots/$(notdir $(g))) \
                $(foreach m,monitoring/bbrkit.rules.yml monitoring/bbrkit-dashboard.json,644:$(m):$(DATADIR)/$(m)) \
                $(foreach d,$(DAEMONS),644:$(BUILD)/systemd/$(d).service:$(UNITDIR)/$(d).service)
install_mode = $(word 1,$(subst :, ,$(1)))
install_src  = $(word 2,$(subst :, ,$(1)))
install_dest = $(DESTDIR)$(word 3,$(subst :, ,$(1)))

install-list:
	@$(foreach e,$(INSTALL_LIST) $(CONF_LIST),echo '$(subst :, ,$(e))';)

install: $(foreach e,$(INSTALL_LIST) $(CONF_LIST),$(call install_src,$(e)))
	$(Q)$(foreach e,$(INSTALL_LIST),$(if $(Q),echo "  INSTALL $(call install_dest,$(e))" &&) \
		install -D -m $(call install_mode,$(e)) $(call install_src,$(e)) '$(call install_dest,$(e))' &&) true
	$(Q)$(foreach e,$(CONF_LIST),{ [ -e '$(call install_dest,$(e))' ] && echo "  KEEP    $(call install_dest,$(e))" || \
		{ $(if $(Q),echo "  INSTALL $(call install_dest,$(e))" &&) \
		  install -D -m $(call install_mode,$(e)) $(call install_src,$(e)) '$(call install_dest,$(e))'; }; } &&) true

# DATADIR is ours alone: its directories go too, when nothing else is in them
uninstall:
	$(Q)rm -f $(foreach e,$(INSTALL_LIST),'$(call install_dest,$(e))')
	$(Q)$(foreach e,$(CONF_LIST),{ cmp -s $(call install_src,$(e)) '$(call install_dest,$(e))' && \
		rm -f '$(call install_dest,$(e))' || true; } &&) true
	$(Q)for d in '$(DESTDIR)$(DATADIR)/plots' '$(DESTDIR)$(DATADIR)/monitoring' '$(DESTDIR)$(DATADIR)'; do \
		[ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"; done

clean:
	rm -rf $(BUILD) $(BIN)

.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
