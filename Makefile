# The two commands of the README, and the developer targets behind them.
#
#   make demo       set up, build, and run the main job
#   make test       set up, build, and run every test through ctest
#   make sanitize   ASan + UBSan build (clang) of the tests labelled sanitize and the fuzz replay
#   make fuzz       libFuzzer targets (clang); run one with build-fuzz/fuzz/<target> fuzz/corpus/<dir>
#   make bench      build and run the benchmarks (installs the peers they measure against too)
#   make install    install headers, library and CMake/pkg-config files under PREFIX
#
# Each target installs the Debian packages it needs when they are missing (as root), or prints the
# apt-get line to run and stops.

PACKAGES := cmake ninja-build g++ make pkg-config libzstd-dev libxxhash-dev libfmt-dev \
            libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libpq-dev \
            nlohmann-json3-dev
CLANG_PACKAGES := clang-14 libclang-rt-14-dev
# For `make bench` only: the peers bench/record_benchmark measures against (protobuf with arenas,
# FlatBuffers, cereal). Nothing else builds with them.
BENCH_PACKAGES := protobuf-compiler libprotobuf-dev flatbuffers-compiler libflatbuffers-dev \
                  libcereal-dev

BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
PREFIX ?= /usr/local
JOBS ?= 2

.PHONY: all deps deps-clang deps-bench configure build demo test sanitize fuzz bench install clean

all: build

deps:
	@./tools/setup-deps.sh $(PACKAGES)

deps-clang: deps
	@./tools/setup-deps.sh $(CLANG_PACKAGES)

deps-bench: deps
	@./tools/setup-deps.sh $(BENCH_PACKAGES)

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./tools/demo.sh $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

sanitize: deps-clang
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DROLLY_SANITIZE=address,undefined -DROLLY_BUILD_BENCHMARKS=OFF -DROLLY_BUILD_EXAMPLES=OFF \
	  -DROLLY_BUILD_TOOLS=OFF
	cmake --build build-sanitize -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build-sanitize --output-on-failure -j $(JOBS) -L sanitize

fuzz: deps-clang
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DROLLY_BUILD_FUZZERS=ON -DROLLY_SANITIZE=address,undefined -DROLLY_BUILD_BENCHMARKS=OFF \
	  -DROLLY_BUILD_EXAMPLES=OFF -DROLLY_BUILD_TOOLS=OFF -DROLLY_BUILD_TESTS=OFF
	cmake --build build-fuzz -j $(JOBS)

# Configures again, so a build directory made before the bench packages were installed finds them.
bench: deps-bench configure
	cmake -S . -B $(BUILD)
	cmake --build $(BUILD) -j $(JOBS)
	./tools/run-benchmarks.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-sanitize build-fuzz
