# tfkit: one non-recursive Makefile.
#
#   make [all]      libtfk.a and every cmd/<tool>.c as bin/tfk-<tool>
#   make check      install what is missing, build, run every test
#   make check-quick the same without the TensorFlow tier (says so)
#   make bench      benchmarks with same-run peer ratios (JSON)
#   make demo       install what is missing, build, run the main flow
#   make install    PREFIX=/usr/local DESTDIR=
#   make clean
#
# Settings: DEBUG=1, SANITIZE=address,undefined (builds under build/san/;
# SANITIZE=thread under build/tsan/),
# V=1 (echo commands), PREFIX, DESTDIR, CC.

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
PYTHON   ?= /usr/bin/python3

ifeq ($(SANITIZE),thread)
B        := build/tsan
BIN      := build/tsan/bin
else ifdef SANITIZE
B        := build/san
BIN      := build/san/bin
else
B        := build
BIN      := bin
endif

OPT      := -O2
ifdef DEBUG
OPT      := -O0 -g3
endif

# Debian's serial HDF5 (lib/format/keras.c) lives off the default paths.
HDF5_DIR := /usr/lib/x86_64-linux-gnu/hdf5/serial
CPPFLAGS += -Ilib -I$(B)/gen -I/usr/include/hdf5/serial -D_GNU_SOURCE \
            -DTFK_VERSION='"$(VERSION)"'
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Wno-unused-parameter -MMD -MP \
            -fno-strict-aliasing
LDLIBS   += -Wl,--as-needed -lprotobuf-c -ljansson -larchive -lpng -ljpeg -lgif -lsnappy \
            -L$(HDF5_DIR) -lhdf5 -lz -ldl -lm -lpthread
# Libraries of one tool alone: LDLIBS_TOOL for bin/tfk-TOOL.
LDLIBS_serve := -lmicrohttpd -lgrpc -lgpr
ifdef SANITIZE
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

PROTOS   := $(wildcard formats/*.proto)
GEN_C    := $(PROTOS:%.proto=$(B)/gen/%.pb-c.c)
GEN_H    := $(GEN_C:.c=.h)
LIB_SRC  := $(wildcard lib/*/*.c lib/*/*/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o) $(GEN_C:%.c=%.o)
CMD_SRC  := $(wildcard cmd/*.c)
TOOLS    := $(CMD_SRC:cmd/%.c=$(BIN)/tfk-%)
UNIT_SRC := $(wildcard tests/unit/t-*.c)
UNITS    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
# fuzz-kerasfile finds, within seconds, an endless loop inside Debian's
# libhdf5 1.10.8 (H5Aread's variable-length string conversion) on
# mutated legacy .h5 files: not ours to fix, so it runs only on request
# (make check-fuzz FUZZ_SRC=tests/fuzz/fuzz-kerasfile.c) and README's
# "Untrusted input" says not to read untrusted .h5 files.
FUZZ_HANGS_IN_LIBS := tests/fuzz/fuzz-kerasfile.c
FUZZ_SRC := $(filter-out $(FUZZ_HANGS_IN_LIBS),$(wildcard tests/fuzz/fuzz-*.c))
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCHES  := $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)
LIBTFK   := $(B)/libtfk.a

.PHONY: all check check-quick check-tf check-layers check-unit check-cmd \
        check-man check-fuzz check-sanitize check-tsan setup-deb \
        bench demo install uninstall clean setup
.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDARY:

all: $(LIBTFK) $(TOOLS)

$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: %.proto
	@mkdir -p $(B)/gen
	@$(if $(Q),echo "  PROTOC  $<")
	$(Q)protoc-c -I. --c_out=$(B)/gen $<

$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -w -c -o $@ $<

$(B)/%.o: %.c | $(GEN_H)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBTFK): $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@.$$$$ && ar rcs $@.$$$$ $^ && mv -f $@.$$$$ $@

# A tool is cmd/TOOL.c plus its subcommands' files cmd/TOOL/*.c, if any.
.SECONDEXPANSION:
# (no % inside the expansion: a pattern rule would put the stem there)
$(BIN)/tfk-%: $(B)/cmd/%.o \
		$$(addprefix $(B)/,$$(addsuffix .o,$$(basename $$(wildcard cmd/$$*/*.c)))) \
		$(LIBTFK)
	@mkdir -p $(BIN)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@.$$$$ $(filter %.o,$^) $(LIBTFK) \
		-Wl,--as-needed $(LDLIBS_$*) $(LDLIBS) \
		&& mv -f $@.$$$$ $@

$(B)/tests/t-%: $(B)/tests/unit/t-%.o $(B)/tests/unit/tap.o $(LIBTFK)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@.$$$$ $< $(B)/tests/unit/tap.o $(LIBTFK) \
		$(LDLIBS) && mv -f $@.$$$$ $@

$(B)/bench/%: $(B)/tests/bench/%.o $(LIBTFK)
	@mkdir -p $(B)/bench
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBTFK) $(LDLIBS)

# Tests ----------------------------------------------------------------

setup:
	@scripts/setup --check 2>/dev/null || scripts/setup

setup-deb:
	@scripts/setup --check --no-tf 2>/dev/null || scripts/setup --no-tf

# The plain suite, then the fuzz smoke runs, then the whole suite again
# under ASan/UBSan: sanitizers find what assertions cannot.
check: setup
	$(Q)$(MAKE) --no-print-directory all $(UNITS)
	$(Q)$(MAKE) --no-print-directory check-layers check-unit check-cmd \
		check-man
	$(Q)$(MAKE) --no-print-directory check-tf
	$(Q)$(MAKE) --no-print-directory check-fuzz
	$(Q)$(MAKE) --no-print-directory check-sanitize
	$(Q)$(MAKE) --no-print-directory check-tsan

# Everything but the TensorFlow tier, for a machine without its
# environment; says so, and is not what CI runs.
check-quick: setup-deb
	$(Q)$(MAKE) --no-print-directory all $(UNITS)
	$(Q)$(MAKE) --no-print-directory check-layers check-unit check-cmd \
		check-man
	$(Q)$(MAKE) --no-print-directory check-fuzz
	$(Q)$(MAKE) --no-print-directory check-sanitize
	$(Q)$(MAKE) --no-print-directory check-tsan
	@echo "check-quick: the TensorFlow tier (make check-tf) was skipped" >&2

# The TensorFlow oracle tier: TensorFlow 2.21, Keras, LiteRT and
# TensorBoard (scripts/tf-requirements.txt, in the environment that
# scripts/tfenv builds) read what tfkit writes and compute what it
# computes. Without the environment it fails; it never skips.
check-tf: all
	$(Q)env=$$(scripts/tfenv --check) || { echo "check-tf: the \
	TensorFlow environment is missing or stale: run scripts/setup" >&2; \
		exit 1; }; TFK_BIN=$(abspath $(BIN)) TFK_FIXTURES=$(TFK_FIXTURES) \
		prove -j2 --exec "$$env/bin/python" tests/tf/t-*.py

# TensorFlow-written fixtures, read in place; TFK_FIXTURES=DIR overrides
# (e.g. for a clone that does not sit next to shared/).
TFK_FIXTURES ?= $(abspath ../shared/fixtures)
check-unit check-cmd: export TFK_BIN = $(abspath $(BIN))
check-unit check-cmd check-fuzz: export TFK_FIXTURES := $(TFK_FIXTURES)
check-unit check-cmd: export PYTHON := $(PYTHON)
check-unit: all $(UNITS)
	$(Q)prove -j2 --exec '' $(UNITS)
check-cmd: all
	$(Q)prove -j2 --exec '/bin/sh' tests/cmd/t*.sh

check-man: all
	$(Q)scripts/check-man $(BIN)

# lib/'s includes point down its layers (the order is in the script)
check-layers:
	$(Q)scripts/check-layers

check-sanitize:
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined \
		all check-unit check-cmd

# The unit tests whose code shares state between threads (the model
# API's servables and runners, the thread pool, the trace recorder,
# the record reader's read-ahead thread)
# under ThreadSanitizer, built apart in build/tsan.
TSAN_UNITS := t-servable t-pool t-profile t-record
check-tsan:
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread \
		$(TSAN_UNITS:%=build/tsan/tests/%)
	$(Q)TFK_FIXTURES=$(TFK_FIXTURES) TSAN_OPTIONS=halt_on_error=1 \
		prove --exec '' $(TSAN_UNITS:%=build/tsan/tests/%)

# Each libFuzzer target briefly (scripts/fuzz builds them with clang into
# build/fuzz and keeps their corpora there). The fixed seed makes a
# clean checkout try the same inputs on every machine, as far as its
# speed gets in the time; FUZZ_SECONDS=600 FUZZ_SEED=0 (random) for a hunt.
FUZZ_SECONDS ?= 10
FUZZ_SEED ?= 1
check-fuzz:
	$(Q)LDLIBS='$(LDLIBS)' FUZZ_SEED='$(FUZZ_SEED)' scripts/fuzz \
		$(FUZZ_SECONDS) $(FUZZ_SRC)

# Build messages go to stderr so that stdout is the JSON report alone.
bench:
	$(Q)$(MAKE) --no-print-directory all $(BENCHES) >&2
	$(Q)TFK_BIN=$(abspath $(BIN)) TFK_BENCH_BIN=$(abspath $(B)/bench) \
		PYTHON=$(PYTHON) scripts/bench

demo: setup
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo $(BIN)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/man1/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	$(if $(wildcard man/man5/*.5),install -m 644 man/man5/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/)

uninstall:
	rm -f $(TOOLS:$(BIN)/%=$(DESTDIR)$(PREFIX)/bin/%)
	rm -f $(patsubst man/%,$(DESTDIR)$(PREFIX)/share/man/%,$(wildcard man/man1/*.1 man/man5/*.5))

clean:
	rm -rf build bin

-include $(shell find $(B) -name '*.d' 2>/dev/null)
