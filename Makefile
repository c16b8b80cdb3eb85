# atrace: the two commands of the README.
#   make demo   install what building atrace needs, build atrace and the demo
#               only, record the demo, print its report and what to try next
#   make test   install what the tests need too, build everything, run the
#               whole suite through ctest
# Both need root: installing packages and loading BPF programs. For
# releases, `make fresh-check` runs both in a fresh Debian 12 root.

BUILD     ?= build
JOBS      ?= $(shell nproc)

# What building and running atrace needs: compilers, the BPF toolchain
# (clang -target bpf, bpftool for skeletons) and the libraries it links
# (libiberty: the C++ and Rust demangler; libcurl: convert --to=clickhouse),
# and help2man, which makes the
# man pages from atrace's --help.
BUILD_PACKAGES := build-essential cmake pkg-config clang bpftool \
	libbpf-dev libelf-dev libzstd-dev libxxhash-dev libcap-dev \
	nlohmann-json3-dev libcli11-dev libzydis-dev libre2-dev libiberty-dev libdw-dev liblzma-dev libcurl4-openssl-dev help2man
# What the tests and benchmarks need besides: GoogleTest and Google Benchmark,
# clang's sanitizer runtimes (the fuzzer), bpftrace (cross-checked counts),
# the consumers the exporters are tested with (dot, callgrind_annotate,
# pj_dump, protoc, headless chromium), sys/sdt.h (USDT benchmark), and
# sqlite3 and python3, traced by the safety corpus (test_safety.cpp), with
# libssl3, which python3 dlopens (test_exec_follow.cpp), rustc (a Rust
# target, its legacy and v0 symbols demangled), and
# tmux, the terminal `atrace top`'s live screen is tested in (test_top.cpp),
# podman and runc, the container engine a process is traced in
# (test_podman.cpp: runc, since crun refuses a hybrid cgroup layout),
# Node.js and npm, which run speedscope's importer (test_speedscope.cpp
# installs the pinned npm package into the build tree) and DuckDB
# (test_tables_queries.cpp installs the pinned @duckdb/node-api),
# QEMU and a static busybox, which boot Debian's 6.1 and 6.12 kernels for
# the multi-kernel tests (tests/kernels/run.sh), jq and gnuplot for the
# benchmark scripts' tables and charts (bench/), and clang-tidy and
# clang-format (.ci/clang-tidy.sh in CI, `make tidy`, `make format`), and
# man-db, whose man renders the man pages the tests check (a fresh Debian
# root has no man), and uftrace, the yardstick the process-tree tests
# compare their counts with, and clickhouse-server and its client, the engine the typed
# tables are loaded into (test_tables*.cpp, two servers for a cluster).
TEST_PACKAGES := libgtest-dev libgmock-dev libbenchmark-dev libclang-rt-14-dev \
	bpftrace util-linux jq gnuplot-nox clang-tidy clang-format \
	graphviz valgrind pajeng protobuf-compiler chromium systemtap-sdt-dev \
	sqlite3 python3 perl libssl3 rustc tmux podman runc nodejs npm:npm qemu-system-x86 busybox-static \
	man-db:man uftrace clickhouse-server clickhouse-client

.PHONY: all deps deps-test build build-all demo test fresh-check format format-check tidy clean

all: build

# Installs only what is missing; apt-get update first, as a fresh machine needs.
# PACKAGE:COMMAND is missing only when neither the package nor the command
# is there (npm: Node.js from nodesource bundles its own npm, which
# Debian's npm package conflicts with).
define install_missing
	@missing=""; for p in $(1); do \
	  pkg=$${p%%:*}; cmd=$${p#*:}; \
	  if [ "$$cmd" != "$$p" ] && command -v "$$cmd" >/dev/null 2>&1; then continue; fi; \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install_missing,$(BUILD_PACKAGES))

deps-test: deps
	$(call install_missing,$(TEST_PACKAGES))

# atrace and the demo only. A build directory configured by `make test` keeps
# its tests (ATRACE_TESTS stays in the cache) but builds just these targets.
build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS) --target atrace atrace-demo

build-all: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATRACE_TESTS=ON
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/atrace record -o $(BUILD)/demo.data --select='demo::*' --kernel=all -- $(BUILD)/atrace-demo
	$(BUILD)/atrace report -i $(BUILD)/demo.data
	@echo; printf '%s\n' \
	  "The binary is $(BUILD)/atrace. Next, on the same trace:" \
	  "  $(BUILD)/atrace report -i $(BUILD)/demo.data --html=demo.html   # one page: table, flame graph, timeline" \
	  "  $(BUILD)/atrace convert -i $(BUILD)/demo.data --to=perfetto -o demo.pftrace   # open in ui.perfetto.dev" \
	  "  $(BUILD)/atrace report -i $(BUILD)/demo.data --tree --depth=3" \
	  "Or attach to a running process (Ctrl-C stops, the process goes on):" \
	  "  sudo $(BUILD)/atrace list -p PID 'libc.so.6:read*'" \
	  "  sudo $(BUILD)/atrace record -p PID --select='libc.so.6:read' --duration=5 && $(BUILD)/atrace report"

test: build-all
	cd $(BUILD) && ctest --output-on-failure -j 1

# For releases and changes to the install steps (docs/development.md): the
# README's two commands in a fresh Debian 12 root that mmdebstrap makes in
# FRESH_ROOT (made anew; log FRESH_ROOT.log), with nothing installed but
# git, make and sudo. About an hour on 2 cores; it downloads some 200
# packages.
FRESH_ROOT ?= /var/tmp/atrace-fresh-root
fresh-check:
	$(call install_missing,mmdebstrap)
	.ci/fresh-root.sh $(FRESH_ROOT)

# Development (docs/development.md): clang-format over the C++ sources, or
# only report what differs; clang-tidy over the sources of $(BUILD), as CI
# runs it.
format:
	.ci/format.sh

format-check:
	.ci/format.sh --check

tidy:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS) --target atrace  # the generated headers
	.ci/clang-tidy.sh -j $(JOBS) $(BUILD)

clean:
	rm -rf $(BUILD)
