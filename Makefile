# atrace: the two commands of the README.
#   make demo   install what is missing, build, record the demo, print its report
#   make test   install what is missing, build, run the whole suite through ctest
# Both need root: installing packages and loading BPF programs.

BUILD     ?= build
# The last lines: the consumers the exporters are tested with (atrace convert,
# report --html): dot, callgrind_annotate, pj_dump, protoc, headless chromium;
# and sys/sdt.h for the USDT benchmark (bench/usdt_cost.sh); QEMU and a
# static busybox boot Debian's 6.1 and 6.12 kernels for the multi-kernel
# tests (tests/kernels/run.sh).
JOBS      ?= $(shell nproc)
DEBIAN_PACKAGES := build-essential cmake pkg-config clang libclang-rt-14-dev bpftool \
	libbpf-dev libelf-dev libzstd-dev libxxhash-dev libcap-dev \
	nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev \
	bpftrace util-linux \
	graphviz valgrind pajeng protobuf-compiler chromium systemtap-sdt-dev \
	qemu-system-x86 busybox-static

.PHONY: all deps build demo test clean

all: build

# Installs only what is missing; apt-get update first, as a fresh machine needs.
deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/atrace record -o $(BUILD)/demo.data --select='demo::*' -- $(BUILD)/atrace-demo
	$(BUILD)/atrace report -i $(BUILD)/demo.data

test: build
	cd $(BUILD) && ctest --output-on-failure -j 1

clean:
	rm -rf $(BUILD)
