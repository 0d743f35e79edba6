# cucore: the two commands a newcomer needs are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build demo test asan tsan valgrind install clean deps docs format check-format

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job: cucore on the bundled example kernels.
demo: build
	@./scripts/demo.sh $(BUILD)/bin/cucore

# Every test (GPU tests are reported as skipped where there is no GPU).
test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCUCORE_SANITIZE=address,undefined \
	  -DCUCORE_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j$(JOBS)

# The thread-stress tests (CTest label `threads`) under ThreadSanitizer; races inside the
# uninstrumented toolkit libraries only are suppressed (tests/tsan.supp), never cucore's.
tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCUCORE_SANITIZE=thread \
	  -DCUCORE_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-tsan -j$(JOBS)
	@cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --output-on-failure -L threads -j$(JOBS)

# The CPU unit tests under valgrind memcheck.
valgrind: build
	@./scripts/valgrind.sh $(BUILD)

# The API reference, generated from include/cucore.h and its parts (include/cucore/*.h) by
# doxygen (docs/Doxyfile), into $(BUILD)/docs/html. Fails on any undocumented public declaration.
docs: deps
	@./scripts/api-docs.sh $(BUILD)/docs

# The C sources and headers against .clang-format (docs/STYLE.md): check-format lists the files
# that differ, format rewrites them (clang-format 14, installed from Debian when missing).
check-format:
	@./scripts/check-format.sh

format:
	@./scripts/check-format.sh --fix

install: build
	@cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	@rm -rf $(BUILD) build-asan build-tsan
