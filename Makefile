# quoteguard — see README.md.  `make` builds build/libquoteguard.so.
CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CFLAGS  ?= -O2 -g
# C11 with GNU extensions, which GCC and clang accept under -std=c11:
# __attribute__, __thread, __builtin_*, case and designator ranges,
# statement expressions, __typeof__.
# The layers, lowest first: src/core is pure (no client library, no I/O),
# src/wire reads the protocols, src/policy is the shared glue (settings,
# log, guard, per-connection state), src/front interposes.
LAYERS      = core wire policy front
QG_INCLUDES = -Iinclude $(LAYERS:%=-Isrc/%)
QG_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
            $(QG_INCLUDES) $(CFLAGS)
LDLIBS_SHIM = -ldl -lpthread

# Pure logic (no client library): the checker, usable without the shim.
CORE_SRC  = $(wildcard src/core/*.c)
# Everything the preloaded library is made of.
SHIM_SRC  = $(wildcard $(LAYERS:%=src/%/*.c))
# The shim minus the interposing fronts: what unit tests link.
LOGIC_SRC = $(filter-out src/front/%.c,$(SHIM_SRC))

# On x86-64 the vector scans are built a second time for AVX2 (with BMI2 and
# PCLMUL, which every AVX2 CPU has), and the quick scan a third for AVX-512BW;
# src/core/vectors.c picks the widest the CPU runs.
ifeq ($(shell uname -m),x86_64)
WIDE_BUILDS = avx2 avx512
endif
WIDE_FLAGS_avx2   = -mavx2 -mbmi2 -mpclmul
WIDE_FLAGS_avx512 = $(WIDE_FLAGS_avx2) -mavx512f -mavx512bw
WIDE_SRC_avx2     = block_skip quick_scan
WIDE_SRC_avx512   = quick_scan
WIDE_OBJ      = $(foreach b,$(WIDE_BUILDS),$(WIDE_SRC_$(b):%=$(BUILD)/obj/src/core/%_$(b).o))
CORE_OBJ  = $(CORE_SRC:%.c=$(BUILD)/obj/%.o) $(WIDE_OBJ)
SHIM_OBJ  = $(SHIM_SRC:%.c=$(BUILD)/obj/%.o) $(WIDE_OBJ)
LOGIC_OBJ = $(LOGIC_SRC:%.c=$(BUILD)/obj/%.o) $(WIDE_OBJ)

UNIT_SRC  = $(wildcard tests/unit/*.c)
UNIT_BIN  = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Legacy-style clients: pg_* link libpq, my_* link libmariadb, both_* link neither (dlopen);
# ssl_* link the system OpenSSL (clients that speak a protocol over TLS themselves).
CLIENT_SRC = $(wildcard tests/clients/*.c)
CLIENT_BIN = $(CLIENT_SRC:tests/clients/%.c=$(BUILD)/clients/%)

.PHONY: all check check-quick test-unit unit clients deps clean asan install uninstall demo bench bench-shape \
        bench-callgrind fuzz lint lint-locale lint-includes lint-calls \
        diff-tools measure

# ------------------------------------------------------------------- build
all: $(BUILD)/libquoteguard.so $(BUILD)/libquoteguard-check.a $(BUILD)/libquoteguard-check.so \
     $(BUILD)/quoteguard-config $(BUILD)/client-libraries

# Each object depends on the headers it includes, as the compiler lists them
# in a .d file beside it; an object without one (an older build) is rebuilt.
DEPFLAGS = -MMD -MP
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.d
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/src/core/%_avx2.o: src/core/%.c $(BUILD)/obj/src/core/%_avx2.d
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) $(DEPFLAGS) $(WIDE_FLAGS_avx2) -c $< -o $@

$(BUILD)/obj/src/core/%_avx512.o: src/core/%.c $(BUILD)/obj/src/core/%_avx512.d
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) $(DEPFLAGS) $(WIDE_FLAGS_avx512) -c $< -o $@

# The wrapper's copy of the client-library table: its sonames, one a line,
# read by scripts/quoteguard in the source tree and baked in by `make install`.
$(BUILD)/client-libraries: src/policy/client_libraries.h
	@mkdir -p $(dir $@)
	printf '#include "client_libraries.h"\n#define SONAME(api, soname) soname\nQG_CLIENT_LIBRARIES(SONAME)\n' | \
	  $(CC) -E -P -Isrc/policy -x c - | grep -o '"[^"]*"' | tr -d '"' > $@.tmp
	mv -f $@.tmp $@

$(BUILD)/libquoteguard.so: $(SHIM_OBJ) src/shim-data.ld
	$(CC) -shared $(QG_CFLAGS) $(LDFLAGS) -Wl,-T,src/shim-data.ld -o $@ $(SHIM_OBJ) $(LDLIBS_SHIM)

# The shim's settings loader on its own: `quoteguard check --config`.
$(BUILD)/quoteguard-config: tools/quoteguard-config.c $(LOGIC_OBJ)
	$(CC) $(QG_CFLAGS) $(LDFLAGS) -o $@ $< $(LOGIC_OBJ) $(LDLIBS_SHIM)

$(BUILD)/libquoteguard-check.a: $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libquoteguard-check.so: $(CORE_OBJ)
	$(CC) -shared $(QG_CFLAGS) $(LDFLAGS) -Wl,-soname,$(CHECK_SO).$(CHECK_ABI) -o $@ $^

# Their header lists go to $(BUILD)/obj/tests, so that $(BUILD)/tests holds
# the test binaries alone.
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/obj/tests/%.d $(LOGIC_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj/tests
	$(CC) $(QG_CFLAGS) $(DEPFLAGS) -MF $(BUILD)/obj/tests/$*.d -MT $@ -fvisibility=default -Itests -o $@ $< $(LOGIC_OBJ) $(LDLIBS_SHIM)

# It makes and reads compressed MySQL frames itself (the shim loads zlib).
$(BUILD)/tests/test_wire_stream: LDLIBS_SHIM += -lz

# The pass counts (src/core/pass_count.h) exist only in a build of their
# own, for test_passes; the shipped objects count nothing.
COUNTING_OBJ = $(LOGIC_SRC:%.c=$(BUILD)/counting/%.o) $(WIDE_OBJ)

$(BUILD)/counting/%.o: %.c $(BUILD)/counting/%.d
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -DQG_COUNT_PASSES $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/test_passes: tests/unit/test_passes.c $(BUILD)/obj/tests/test_passes.d $(COUNTING_OBJ)
	@mkdir -p $(dir $@) $(BUILD)/obj/tests
	$(CC) $(QG_CFLAGS) -DQG_COUNT_PASSES $(DEPFLAGS) -MF $(BUILD)/obj/tests/test_passes.d -MT $@ -fvisibility=default -Itests -o $@ $< $(COUNTING_OBJ) $(LDLIBS_SHIM)

$(BUILD)/clients/pg_%: tests/clients/pg_%.c tests/clients/*.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) -o $@ $< -lpq -lpthread

$(BUILD)/clients/my_%: tests/clients/my_%.c tests/clients/*.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) $(shell mariadb_config --cflags 2>/dev/null) -o $@ $< $(shell mariadb_config --libs 2>/dev/null || echo -lmariadb) -lpthread

$(BUILD)/clients/ssl_%: tests/clients/ssl_%.c tests/clients/*.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $< -lssl -lcrypto -ldl

$(BUILD)/clients/both_%: tests/clients/both_%.c tests/clients/*.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I/usr/include/postgresql $(shell mariadb_config --cflags 2>/dev/null) -o $@ $< -ldl -lpthread

# The detection rule's error rates on generated statements (docs/DETECTION.md):
# a bounded run is tests/t/10-rule-measure.t, the long one `make measure`
# (with 20000 statements a dialect through each real driver,
# tests/t/80-rule-drivers.t, and 1000 effective attacks a dialect sent to
# the servers, tests/t/19-rule-attacks-servers.t).
MEASURE_BIN = $(BUILD)/measure/measure_rule
# The checker's benchmark, which tests compare with the reference too.
BENCH_BIN   = $(BUILD)/bench/bench_checker
# make bench's clients of real servers, which a test runs through too.
BENCH_PAIRED_BIN = $(BUILD)/bench/bench_paired
BENCH_COLD_BIN   = $(BUILD)/bench/bench_cold
BENCH_FRONT_BIN  = $(BUILD)/bench/bench_front
MEASURE_PER_DIALECT ?= 1000000
MEASURE_DRIVER_STATEMENTS ?= 20000
MEASURE_ATTACK_SAMPLE ?= 1000

$(MEASURE_BIN): tests/measure/measure_rule.c tests/measure/escapers.h $(LOGIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -Itests/measure -o $@ $< $(LOGIC_OBJ) $(LDLIBS_SHIM)

unit: $(UNIT_BIN) $(MEASURE_BIN)
clients: $(CLIENT_BIN)

# ---------------------------------------------------------- check and lint
# Installs the Debian packages the tests need when they are missing.
deps:
	scripts/install-deps

# The README's test command (and CI's): lint, then every test, CHECK_JOBS
# test files at a time: each starts its servers in a directory and on ports
# of its own, and what the tests build is built here first.
CHECK_JOBS ?= 2
check: deps all unit clients diff-tools lint $(BENCH_BIN) $(BENCH_PAIRED_BIN) $(BENCH_FRONT_BIN) \
       $(BENCH_COLD_BIN)
	BUILD=$(BUILD) QG_TEST_JOBS=$(CHECK_JOBS) tests/run

# The unit binaries alone: seconds.
test-unit: $(UNIT_BIN)
	BUILD=$(BUILD) tests/run $(UNIT_BIN)

# Everything that starts no server: the unit binaries and the tests whose
# `# servers:` line says none (tests/README.md; tests/t/00-test-index.t
# checks every test has that line), two at a time, the fuzz targets for
# QUICK_FUZZ_SECONDS each.
QUICK_TESTS = $(shell grep -l '^\# servers: none$$' tests/t/*.t)
QUICK_FUZZ_SECONDS ?= 5
check-quick: all unit clients diff-tools $(BENCH_BIN)
	BUILD=$(BUILD) QG_TEST_JOBS=2 QG_FUZZ_SECONDS=$(QUICK_FUZZ_SECONDS) tests/run $(UNIT_BIN) $(QUICK_TESTS)

asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" all unit

LINT_SRC = $(SHIM_SRC) $(wildcard tools/*.c)
# Case and character classes follow the process locale in the C library
# (Turkish 'I'); the shim uses src/core/ascii.h.
LOCALE_CALLS = \<(str(n)?casecmp|strcasestr|to(lower|upper)|is(alpha|alnum|digit|xdigit|space|upper|lower|punct|print|graph|cntrl|blank))[[:space:]]*\(
lint-locale:
	@! grep -nE '$(LOCALE_CALLS)' $(LINT_SRC) $(wildcard src/*/*.h) || \
	  { echo "lint: locale-dependent calls above; use src/core/ascii.h" >&2; false; }

# No cycle between files: a.c or a.h including b.h makes a depend on b,
# and tsort refuses a loop.  And no file includes a header of a higher
# layer (LAYERS, lowest first; scripts/lint-layers).
lint-includes:
	@for f in src/*/*.[ch]; do m=$${f##*/}; m=$${m%.?}; \
	  sed -n 's/^#include "\(.*\)\.h".*/\1/p' $$f | sed "s|^|$$m |"; done | tsort >/dev/null
	@for f in src/*/*.[ch]; do \
	  for h in $$(sed -n 's/^#include "\(.*\)".*/\1/p' $$f); do \
	    for d in include $(LAYERS:%=src/%); do [ ! -f $$d/$$h ] || echo "$$f $$d/$$h"; done; \
	  done; done | scripts/lint-layers "$(LAYERS)"

# No cycle in the call graph between files either: an object file that uses
# a symbol another one defines (the shim's own read/write/close included,
# which the wire front interposes) makes its file depend on that one.
# The wide builds of a file count as the file.  And no file calls a
# function a higher layer defines.  Files are named layer/name.
lint-calls: $(SHIM_OBJ)
	@{ nm -A -g --defined-only $(SHIM_OBJ) | sed 's/^/D /'; nm -A -u $(SHIM_OBJ) | sed 's/^/U /'; } | \
	  awk 'function unit(f) { sub(/:.*/, "", f); sub(/.*\/src\//, "", f); sub(/\.o$$/, "", f); \
	                          sub(/_($(subst $(eval) ,|,$(WIDE_BUILDS)))$$/, "", f); return f } \
	       $$1 == "D" { def[$$NF] = unit($$2); next } \
	       { used[unit($$2) " " $$NF] = 1 } \
	       END { for (u in used) { split(u, p, " "); \
	               if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]], p[2] } }' | \
	  sort > $(BUILD)/call-graph.txt
	@cut -d' ' -f1,2 $(BUILD)/call-graph.txt | tsort >/dev/null || \
	  { echo "lint: the files above call each other in a loop (caller, callee, symbol: $(BUILD)/call-graph.txt)" >&2; false; }
	@scripts/lint-layers "$(LAYERS)" < $(BUILD)/call-graph.txt

lint: lint-locale lint-includes lint-calls
	cppcheck --quiet --error-exitcode=1 --inline-suppr --enable=warning,performance,portability \
	  --std=c11 $(QG_INCLUDES) --suppress=missingIncludeSystem $(LINT_SRC)
	clang-tidy --quiet $(LINT_SRC) -- -std=c11 -D_GNU_SOURCE $(QG_INCLUDES)
	$(foreach b,$(WIDE_BUILDS),clang-tidy --quiet $(WIDE_SRC_$(b):%=src/core/%.c) -- -std=c11 -D_GNU_SOURCE \
	  $(QG_INCLUDES) $(WIDE_FLAGS_$(b)) &&) true

measure: deps all clients $(MEASURE_BIN)
	$(MEASURE_BIN) --per-dialect $(MEASURE_PER_DIALECT)
	BUILD=$(BUILD) QG_DRIVER_STATEMENTS=$(MEASURE_DRIVER_STATEMENTS) tests/run tests/t/80-rule-drivers.t
	BUILD=$(BUILD) QG_ATTACK_SAMPLE=$(MEASURE_ATTACK_SAMPLE) tests/run tests/t/19-rule-attacks-servers.t

demo: deps all clients
	scripts/demo

clean:
	rm -rf build build-asan build-fuzz

# ------------------------------------------------------------------- bench
# `make bench`: the start-up cost (bench/bench_startup.sh), the checker alone
# (bench/bench_checker.c), query shapes (bench/bench_shape.c), the
# instructions the shim adds per query (bench/bench_callgrind.sh) and per
# front (bench/bench_fronts.sh) and, unless BENCH_E2E=0, real clients with
# and without the shim (bench/bench_e2e.sh).  Tables on stdout, JSON in
# $(BUILD)/bench/.  Never part of `make check`; see docs/PERFORMANCE.md.
BENCH_E2E  ?= 1
BENCH_RUNS ?= 5

$(BENCH_BIN): bench/bench_checker.c bench/strings_floor.c bench/strings_floor.h tests/agree.h $(LOGIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $< bench/strings_floor.c $(LOGIC_OBJ) -lpg_query -lm $(LDLIBS_SHIM)

# The shim's added latency per query on one connection, in pairs (bench_e2e.sh).
$(BENCH_PAIRED_BIN): bench/bench_paired.c bench/paired.h bench/sjis_literal.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
	    $(shell mariadb_config --cflags 2>/dev/null) -o $@ $< -lpq \
	    $(shell mariadb_config --libs 2>/dev/null || echo -lmariadb) -ldl -lm

# What the wire front costs: non-database descriptors, and a query through
# it vs through the libpq front (bench/bench_wire.sh).
BENCH_WIRE_BIN = $(BUILD)/bench/bench_wire

$(BENCH_WIRE_BIN): bench/bench_wire.c bench/paired.h $(LOGIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
	    -o $@ $< $(LOGIC_OBJ) -lpq $(LDLIBS_SHIM)

.PHONY: bench-wire
bench-wire: deps all $(BENCH_WIRE_BIN)
	BUILD=$(BUILD) BENCH_RUNS=$(BENCH_RUNS) bench/bench_wire.sh

# The checker's cost right after a round trip (bench_e2e.sh).
$(BENCH_COLD_BIN): bench/bench_cold.c bench/front_corpus.h bench/sjis_literal.h $(LOGIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
	    -o $@ $< $(LOGIC_OBJ) -lpq $(LDLIBS_SHIM)

# CPU time per query of the query-shape fingerprint and of the guard with
# shapes off and enforced.
BENCH_SHAPE_BIN = $(BUILD)/bench/bench_shape

$(BENCH_SHAPE_BIN): bench/bench_shape.c $(LOGIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $< $(LOGIC_OBJ) $(LDLIBS_SHIM)

bench-shape: $(BENCH_SHAPE_BIN)
	$(BENCH_SHAPE_BIN) --runs $(BENCH_RUNS)

# Instructions the shim adds per query, counted by callgrind.
bench-callgrind: deps all
	BUILD=$(BUILD) bench/bench_callgrind.sh

# Instructions per query on each front, the client's and the shim's
# (bench/bench_fronts.sh): a C client of libpq and of libmariadb on a mixed corpus.
$(BENCH_FRONT_BIN): bench/bench_front.c bench/front_corpus.h bench/paired.h
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) \
	    $(shell mariadb_config --cflags 2>/dev/null) -o $@ $< -lpq \
	    $(shell mariadb_config --libs 2>/dev/null || echo -lmariadb) -ldl -lm

.PHONY: bench-fronts bench-startup
bench-fronts: deps all $(BENCH_FRONT_BIN)
	BUILD=$(BUILD) bench/bench_fronts.sh

# What the preload costs a process without a database (bench/bench_startup.sh):
# beside an empty object preloaded, the loader's share of any preload.
BENCH_STARTUP_BIN = $(BUILD)/bench/bench_startup
BENCH_EMPTY_SO = $(BUILD)/bench/libempty.so

$(BENCH_STARTUP_BIN): bench/bench_startup.c
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $<

$(BENCH_EMPTY_SO):
	@mkdir -p $(dir $@)
	$(CC) -shared $(QG_CFLAGS) -o $@ -x c /dev/null

bench-startup: all $(BENCH_STARTUP_BIN) $(BENCH_EMPTY_SO)
	BUILD=$(BUILD) bench/bench_startup.sh

# A PHP mysqli point select with and without the shim, paired (bench/bench_mysqli.sh),
# over the unix socket and inside TLS.
.PHONY: bench-mysqli
bench-mysqli: deps all
	BUILD=$(BUILD) bench/bench_mysqli.sh
	BUILD=$(BUILD) BENCH_MYSQLI_TLS=1 bench/bench_mysqli.sh

# The cache lines one check of the fronts' corpus touches (bench/lines_touched.sh).
.PHONY: bench-lines
bench-lines: $(BENCH_COLD_BIN)
	BUILD=$(BUILD) bench/lines_touched.sh

bench: deps all $(BENCH_BIN) $(BENCH_PAIRED_BIN) $(BENCH_FRONT_BIN) $(BENCH_COLD_BIN) bench-startup bench-shape bench-callgrind \
       bench-lines bench-fronts bench-wire bench-mysqli
	$(BENCH_BIN) --runs $(BENCH_RUNS) --json $(BUILD)/bench/checker.json
	@if [ "$(BENCH_E2E)" != 0 ]; then \
	  BUILD=$(BUILD) BENCH_RUNS=$(BENCH_RUNS) bench/bench_e2e.sh; fi

# ---------------------------------------------------------------- install
# make install PREFIX=/usr/local DESTDIR=/staging: the shim in lib/quoteguard/,
# the wrapper (library path and version baked in) and the report in bin/, the
# checker library, header, pkg-config file and man pages.
INSTALL    ?= install
BINDIR      = $(PREFIX)/bin
LIBDIR      = $(PREFIX)/lib
INCLUDEDIR  = $(PREFIX)/include
MANDIR      = $(PREFIX)/share/man
QG_VERSION  = $(shell sed -n 's/^\#define QG_VERSION "\(.*\)"$$/\1/p' include/quoteguard.h)
CHECK_SO    = libquoteguard-check.so
# The checker library's soname carries QG_VERSION's major number and, while
# that is 0, its minor too: a 0.x release may change the ABI (0.2.0 made the
# lexer opaque), a later one only with a new major number.
QG_VERSION_PARTS = $(subst ., ,$(QG_VERSION))
CHECK_ABI   = $(word 1,$(QG_VERSION_PARTS))$(if $(filter 0,$(word 1,$(QG_VERSION_PARTS))),.$(word 2,$(QG_VERSION_PARTS)))

# install-tool: what an operator runs (the library, its settings tool, the
# wrapper, the report, the man pages); install adds the checker library.
install-tool: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/quoteguard \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	$(INSTALL) -m 0644 $(BUILD)/libquoteguard.so $(DESTDIR)$(LIBDIR)/quoteguard/libquoteguard.so
	$(INSTALL) -m 0755 $(BUILD)/quoteguard-config $(DESTDIR)$(LIBDIR)/quoteguard/quoteguard-config
	sed -e 's|^QG_LIB_INSTALLED=.*|QG_LIB_INSTALLED=$(LIBDIR)/quoteguard/libquoteguard.so|' \
	    -e 's|^QG_VERSION_INSTALLED=.*|QG_VERSION_INSTALLED=$(QG_VERSION)|' \
	    -e "s|^QG_CLIENT_LIBRARIES_INSTALLED=.*|QG_CLIENT_LIBRARIES_INSTALLED='$$(echo $$(cat $(BUILD)/client-libraries))'|" \
	    scripts/quoteguard > $(DESTDIR)$(BINDIR)/.quoteguard.tmp
	chmod 0755 $(DESTDIR)$(BINDIR)/.quoteguard.tmp
	mv -f $(DESTDIR)$(BINDIR)/.quoteguard.tmp $(DESTDIR)$(BINDIR)/quoteguard
	$(INSTALL) -m 0755 scripts/quoteguard-report $(DESTDIR)$(BINDIR)/quoteguard-report
	$(INSTALL) -m 0755 scripts/quoteguard-shapes $(DESTDIR)$(BINDIR)/quoteguard-shapes
	$(INSTALL) -m 0644 man/quoteguard.1 $(DESTDIR)$(MANDIR)/man1/quoteguard.1
	$(INSTALL) -m 0644 man/quoteguard.conf.5 $(DESTDIR)$(MANDIR)/man5/quoteguard.conf.5

install: install-tool
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	$(INSTALL) -m 0644 include/quoteguard.h $(DESTDIR)$(INCLUDEDIR)/quoteguard.h
	$(INSTALL) -m 0644 $(BUILD)/libquoteguard-check.a $(DESTDIR)$(LIBDIR)/libquoteguard-check.a
	$(INSTALL) -m 0755 $(BUILD)/$(CHECK_SO) $(DESTDIR)$(LIBDIR)/$(CHECK_SO).$(QG_VERSION)
	ln -sf $(CHECK_SO).$(QG_VERSION) $(DESTDIR)$(LIBDIR)/$(CHECK_SO).$(CHECK_ABI)
	ln -sf $(CHECK_SO).$(CHECK_ABI) $(DESTDIR)$(LIBDIR)/$(CHECK_SO)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: quoteguard' \
	  'Description: quoteguard checker: finds SQL whose quoting a multibyte client encoding breaks' \
	  'Version: $(QG_VERSION)' 'Libs: -L$${libdir} -lquoteguard-check' 'Cflags: -I$${includedir}' \
	  > $(DESTDIR)$(LIBDIR)/pkgconfig/quoteguard.pc

# make deb: the Debian package (debian/), built in a copy of the tree so
# that the build here is left alone; the .deb lands in $(BUILD)/deb/.
.PHONY: deb install-tool
deb:
	rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	tar -cf - --exclude=./build --exclude=./build-asan --exclude=./build-fuzz --exclude=./.git . | \
	  tar -C $(BUILD)/deb/src -xf -
	cd $(BUILD)/deb/src && dpkg-buildpackage -b -us -uc --no-sign > ../build.log 2>&1 || \
	  { tail -n 30 ../build.log; exit 1; }
	rm -rf $(BUILD)/deb/src
	@ls $(BUILD)/deb/*.deb

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/quoteguard/libquoteguard.so $(DESTDIR)$(LIBDIR)/quoteguard/quoteguard-config \
	  $(DESTDIR)$(BINDIR)/quoteguard \
	  $(DESTDIR)$(BINDIR)/quoteguard-report $(DESTDIR)$(BINDIR)/quoteguard-shapes \
	  $(DESTDIR)$(INCLUDEDIR)/quoteguard.h \
	  $(DESTDIR)$(LIBDIR)/libquoteguard-check.a $(DESTDIR)$(LIBDIR)/$(CHECK_SO) \
	  $(DESTDIR)$(LIBDIR)/$(CHECK_SO).$(CHECK_ABI) $(DESTDIR)$(LIBDIR)/$(CHECK_SO).$(QG_VERSION) \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/quoteguard.pc \
	  $(DESTDIR)$(MANDIR)/man1/quoteguard.1 $(DESTDIR)$(MANDIR)/man5/quoteguard.conf.5
	rmdir $(DESTDIR)$(LIBDIR)/quoteguard 2>/dev/null || true

# --------------------------------------------- fuzzing and differential tests
# `make fuzz [FUZZ_SECONDS=60]`: libFuzzer targets fuzz/fuzz_*.c under ASan +
# UBSan in build-fuzz/, seeded from the tests and ../shared/corpus; each runs
# FUZZ_SECONDS and the table printed at the end gives executions and findings.
FUZZ_CC      ?= clang
FUZZ_BUILD    = build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_CFLAGS   = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
                $(QG_INCLUDES) -Ifuzz -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SRC = $(wildcard fuzz/fuzz_*.c)
FUZZ_BIN = $(FUZZ_SRC:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_OBJ = $(LOGIC_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) \
           $(foreach b,$(WIDE_BUILDS),$(WIDE_SRC_$(b):%=$(FUZZ_BUILD)/obj/src/core/%_$(b).o))

$(FUZZ_BUILD)/obj/%.o: %.c $(FUZZ_BUILD)/obj/%.d
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/obj/src/core/%_avx2.o: src/core/%.c $(FUZZ_BUILD)/obj/src/core/%_avx2.d
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) $(WIDE_FLAGS_avx2) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/obj/src/core/%_avx512.o: src/core/%.c $(FUZZ_BUILD)/obj/src/core/%_avx512.d
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) $(WIDE_FLAGS_avx512) -fsanitize=fuzzer-no-link -c $< -o $@

# Named here so make keeps the objects (they are not intermediate files).
$(FUZZ_BIN): $(FUZZ_OBJ)
# The harness itself is not coverage-instrumented: its comparisons would only
# slow the run down and steer the fuzzer towards the harness.
$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@.o
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $@.o $(FUZZ_OBJ) $(LDLIBS_SHIM)

# It makes and reads compressed MySQL frames itself (the shim loads zlib).
$(FUZZ_BUILD)/fuzz_wire: LDLIBS_SHIM += -lz

fuzz: deps $(FUZZ_BIN)
	fuzz/run --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) $(FUZZ_BIN)

# Helpers of the differential tests tests/t/6*.t (built by `make check`).
DIFF_TOOLS = $(BUILD)/diff/encoding_verdicts $(BUILD)/diff/pgquery_spans $(BUILD)/diff/pg_conversions
diff-tools: $(DIFF_TOOLS)

$(BUILD)/diff/encoding_verdicts: tests/diff/encoding_verdicts.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $< $(CORE_OBJ)

$(BUILD)/diff/pg_conversions: tests/diff/pg_conversions.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql) -o $@ $< $(CORE_OBJ) -lpq

$(BUILD)/diff/pgquery_spans: tests/diff/pgquery_spans.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(QG_CFLAGS) -o $@ $< $(CORE_OBJ) -lpg_query

# The header lists the compiler writes (DEPFLAGS); named as targets so that
# a missing one makes its object out of date.
DEP_FILES = $(SHIM_OBJ:.o=.d) $(COUNTING_OBJ:.o=.d) $(UNIT_SRC:tests/unit/%.c=$(BUILD)/obj/tests/%.d) $(FUZZ_OBJ:.o=.d)
$(DEP_FILES):
-include $(wildcard $(DEP_FILES))
