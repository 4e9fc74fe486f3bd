# meshnn — top-level entry points. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install the Debian packages they need (idempotent) and build.
SHELL := /bin/bash
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

# Every Debian package the project needs (build, tests, fuzzing, goldens, MPI, the Python module
# and its pytest suite, whose reference tests run the PyTorch models in tools/; chromium runs the
# serve page's headless-browser test, libpng writes verify's spectrogram images).
DEB_PACKAGES := build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev \
  libdnnl-dev ocl-icd-opencl-dev opencl-headers libopenmpi-dev openmpi-bin \
  nlohmann-json3-dev libsndfile1-dev libcli11-dev libspdlog-dev libfmt-dev \
  libgtest-dev libgmock-dev libbenchmark-dev clang-format cppcheck \
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch \
  libboost-dev python3-requests python3-websockets iproute2 haproxy libpng-dev chromium
# Only `make goldens` and `make bench` (PyTorch comparisons) need these; OpenBLAS is PyTorch's
# best BLAS here (Debian's torch otherwise runs the reference BLAS, ~100x slower on GEMMs).
PY_PACKAGES := python3-torch python3-numpy libopenblas0-openmp

export OMPI_MCA_btl ?= ^ofi,openib
export OMPI_MCA_mtl ?= ^ofi,psm

.PHONY: all deps deps-python build demo test format-check test-asan test-tsan bench fuzz fuzz-smoke goldens goldens-check install clean format

all: build

deps:
	@./tools/install_deps.sh $(DEB_PACKAGES)

deps-python:
	@./tools/install_deps.sh $(PY_PACKAGES)

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/meshnn demo

test: build format-check
	cd $(BUILD) && ctest --output-on-failure -j 1 --timeout 900

# Every C++ source formatted as .clang-format says (100 columns); `make format` fixes it.
format-check: deps
	clang-format --dry-run -Werror $$(git ls-files '*.cc' '*.h')

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHNN_SANITIZE=ON \
	  -DMESHNN_BUILD_BENCH=OFF $(CMAKE_FLAGS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j 1 --timeout 1800

$(TSAN_BUILD)/build.ninja:
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHNN_TSAN=ON \
	  -DMESHNN_BUILD_BENCH=OFF $(CMAKE_FLAGS)

# The threading tests under ThreadSanitizer (one stream hammered from six threads, the local
# pipeline's liveness); optional in CI: libgomp and oneDNN are not instrumented (tools/tsan.supp).
TSAN_FILTER ?= StreamConcurrency.*:PipelineLiveness.*
test-tsan: deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target meshnn_tests
	TSAN_OPTIONS=suppressions=$(CURDIR)/tools/tsan.supp:halt_on_error=1:second_deadlock_stack=1 \
	  OMP_NUM_THREADS=1 ./$(TSAN_BUILD)/meshnn_tests --gtest_filter='$(TSAN_FILTER)'

$(FUZZ_BUILD)/build.ninja:
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DMESHNN_FUZZ=ON -DMESHNN_BUILD_TESTS=OFF -DMESHNN_BUILD_BENCH=OFF -DMESHNN_BUILD_CLI=OFF

# libFuzzer on every parser and config check, FUZZ_SECONDS each (default 60); corpora seeded from
# fuzz/corpus. A run to a fixed execution count instead: FUZZ_RUNS=1000000 (see tools/run_fuzzers.sh).
FUZZ_TARGETS := $(basename $(notdir $(wildcard fuzz/*_fuzz.cc)))  # one per fuzz/*_fuzz.cc
fuzz: deps $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(FUZZ_TARGETS)
	./tools/run_fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=15

bench: build deps-python
	./tools/run_bench.sh $(BUILD)

goldens: deps-python
	./tools/goldens/make_all.sh

# Regenerates every fixture into a scratch folder and compares with the committed files.
goldens-check: deps-python
	./tools/goldens/make_all.sh --check

# Library, headers, CLI, CMake package and the Python package (into
# $(PREFIX)/lib/python3.X/dist-packages, where Debian's /usr/bin/python3 finds it for /usr/local).
install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
