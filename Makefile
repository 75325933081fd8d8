# octo — the commands every developer and CI use. `make test` is what .ci/run runs.
CARGO ?= cargo
ARGS ?=
# nextest when installed (faster, isolated), plain cargo test otherwise
NEXTEST := $(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo yes)

.PHONY: build test unit doctest vet doc fmt fmt-check bench run tidy

build:
	$(CARGO) build --release -p octo-cli

## test: formatting, lints, docs, every unit/integration test, then doctests
test: fmt-check vet doc unit doctest

unit:
ifeq ($(NEXTEST),yes)
	$(CARGO) nextest run --workspace --lib --bins --tests --no-fail-fast
else
	$(CARGO) test --workspace --lib --bins --tests --no-fail-fast
endif

doctest:
	$(CARGO) test --workspace --doc

vet:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

fmt:
	$(CARGO) fmt --all

fmt-check:
	$(CARGO) fmt --all -- --check

bench:
	$(CARGO) bench --workspace

run:
	$(CARGO) run -q -p octo-cli -- $(ARGS)

## tidy: format and apply clippy's machine-applicable fixes
tidy: fmt
	$(CARGO) clippy --workspace --all-targets --fix --allow-dirty --allow-staged
