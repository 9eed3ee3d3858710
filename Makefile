# ObjectGraph — the two commands of the README's quick start, and a few helpers.
#
#   make demo   installs the system libraries, builds, runs the demo on the default store
#   make test   the same, then every test and the conformance matrix
#   make bench  release build, then ObjectGraph against raw sqlite3 and raw LMDB
#               (BENCH_ARGS="--quick", "--store lmdb", or workload names; not part of make
#               test — see Benchmarks/README.md)
#   make bench-grdb  the SQLite table next to GRDB doing the same work, and the two compared
#   make fuzz-binary            the binary store reader's self-contained fuzz loop, release
#                               build, FUZZ_SECONDS (default 60)
#   make fuzz-binary-libfuzzer  the same reader under libFuzzer + AddressSanitizer, seeded
#                               with valid stores; crash inputs land in .build/fuzz-binary/
#
# System libraries come from apt (libsqlite3-dev, liblmdb-dev) and are installed only when
# missing; as root directly, otherwise through sudo.

SWIFT ?= swift
APT_PACKAGES := libsqlite3-dev liblmdb-dev

BENCH_ARGS ?=
FUZZ_SECONDS ?= 60
FUZZ_DIR := .build/fuzz-binary

.PHONY: all deps build demo test conformance bench bench-grdb fuzz-binary fuzz-binary-libfuzzer clean

all: build

deps:
	@missing=""; \
	for pkg in $(APT_PACKAGES); do \
		dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing system libraries:$$missing"; \
		if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

demo: build
	$(SWIFT) run objectgraph demo

test: deps
	python3 scripts/check-sources.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(SWIFT) run objectgraph conformance

conformance: build
	$(SWIFT) run objectgraph conformance

bench: deps
	$(SWIFT) build -c release --product objectgraph-bench
	"$$($(SWIFT) build -c release --show-bin-path)/objectgraph-bench" $(BENCH_ARGS)

# The SQLite table, GRDB's against the same raw side, and the two compared. GRDB is resolved
# only here (OBJECTGRAPH_BENCH_GRDB=1 in Package.swift), built in its own scratch path.
bench-grdb: deps
	OBJECTGRAPH_BENCH_GRDB=1 $(SWIFT) build -c release --scratch-path .build/grdb --product objectgraph-bench
	"$$(OBJECTGRAPH_BENCH_GRDB=1 $(SWIFT) build -c release --scratch-path .build/grdb --show-bin-path)/objectgraph-bench" --store grdb $(BENCH_ARGS)

fuzz-binary:
	$(SWIFT) build -c release --product objectgraph-fuzz-binary
	"$$($(SWIFT) build -c release --show-bin-path)/objectgraph-fuzz-binary" --seconds $(FUZZ_SECONDS)

# libFuzzer needs its own build (every module instrumented, no Swift main): a separate
# scratch path, so the normal build is untouched. The seeds come from the normal build.
fuzz-binary-libfuzzer:
	$(SWIFT) build -c release --product objectgraph-fuzz-binary
	"$$($(SWIFT) build -c release --show-bin-path)/objectgraph-fuzz-binary" --write-seeds $(FUZZ_DIR)/seeds
	$(SWIFT) build -c release --scratch-path .build/libfuzzer --product objectgraph-fuzz-binary \
		-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DLIBFUZZER
	mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	"$$($(SWIFT) build -c release --scratch-path .build/libfuzzer --show-bin-path)/objectgraph-fuzz-binary" \
		-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -artifact_prefix=$(FUZZ_DIR)/artifacts/ \
		$(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds

clean:
	rm -rf .build
