# octo — the commands every developer and CI use. `make test` is what .ci/run runs.
CARGO ?= cargo
ARGS ?=
# nextest when installed (faster, isolated), plain cargo test otherwise
NEXTEST := $(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo yes)
# The local model engine (llama.cpp) needs cmake, a C++ compiler and libclang. `build` and `test`
# check once (installing them as root on Debian, as CI does) and pass LOCAL=yes|no on; without
# them octo is built without the engine and says what to install.
LOCAL ?= $(shell scripts/local-deps)
# NATIVE=yes: llama.cpp's kernels built for this machine's CPU (AVX2, AVX-512 … where it has
# them), as the local-model figures in dev-docs/local-model.md were taken. AMX stays off: its
# tiles need the kernel's permission, which VMs and containers often withhold. Only CMake-built
# C/C++ is affected (the Rust code stays portable). Off by default: the tests' tiny model then
# answers differently, and its answers are what the new-user tests time. llama-cpp-sys-2 does
# not rebuild when these change: `cargo clean -p llama-cpp-sys-2` first.
NATIVE ?= no
NATIVE_FLAGS = -O3 -DNDEBUG -march=native -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
ifeq ($(NATIVE),yes)
ifeq ($(shell uname -m),x86_64)
ifeq ($(shell printf 'int main(void){return 0;}' | $${CC:-cc} $(NATIVE_FLAGS) -x c - -o /dev/null 2>/dev/null && echo ok),ok)
export CMAKE_C_FLAGS_RELEASE ?= $(NATIVE_FLAGS)
export CMAKE_CXX_FLAGS_RELEASE ?= $(NATIVE_FLAGS)
endif
endif
endif
WS = --workspace $(if $(filter yes,$(LOCAL)),,--exclude octo-provider-local --no-default-features)
BIN = $(if $(filter yes,$(LOCAL)),,--no-default-features)

.PHONY: build build-octo test test-all unit doctest vet doc fmt fmt-check bench run tidy conformance eval

build:
	@$(MAKE) --no-print-directory build-octo LOCAL=$$(scripts/local-deps)

build-octo:
	$(CARGO) build --release -p octo-cli $(BIN)

## test: formatting, lints, docs, every unit/integration test, then doctests
test:
	@$(MAKE) --no-print-directory test-all LOCAL=$$(scripts/local-deps)

test-all: fmt-check vet doc unit doctest

unit:
ifeq ($(NEXTEST),yes)
	$(CARGO) nextest run $(WS) --lib --bins --tests --no-fail-fast
else
	$(CARGO) test $(WS) --lib --bins --tests --no-fail-fast
endif

doctest:
	$(CARGO) test $(WS) --doc

vet:
	$(CARGO) clippy $(WS) --all-targets -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc $(WS) --no-deps

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

# The start-up bench measures the binary `make build` ships (`cargo bench` builds its own octo
# with the dev-dependencies' features, about 1 MiB heavier at start). A hard link, not a copy:
# a copy's page cache is filled by `cp`'s writes, in large folios that a start maps whole
# (about 1.5 MiB more; dev-docs/performance.md).
bench:
	@$(MAKE) --no-print-directory build
	ln -f target/release/octo target/release/octo-shipped
	OCTO_STARTUP_BIN=$(CURDIR)/target/release/octo-shipped $(CARGO) bench $(WS)

run:
	$(CARGO) run -q -p octo-cli $(BIN) -- $(ARGS)

## tidy: format and apply clippy's machine-applicable fixes
tidy: fmt
	$(CARGO) clippy $(WS) --all-targets --fix --allow-dirty --allow-staged

## eval: score a model on octo's own tasks (ENDPOINT=… MODEL=…, SUITE=… for another suite,
## EVAL_ARGS=… for more, e.g. --agent-cmd or -j 4); see dev-docs/eval.md
SUITE ?= eval/tasks
ENDPOINT ?=
MODEL ?=
EVAL_ARGS ?=
eval:
	$(CARGO) build --release -p octo-eval $(if $(filter yes,$(LOCAL)),-p octo-cli --bin octo-engine,)
	./target/release/octo-eval run --suite $(SUITE) $(if $(ENDPOINT),--endpoint $(ENDPOINT),) $(if $(MODEL),--model $(MODEL),) $(EVAL_ARGS)

## conformance: the official MCP conformance suite's client scenarios against octo (needs npm)
conformance:
	bash scripts/mcp-conformance
