# Build and check vcpnode. `make check` runs what a change must pass:
# formatting, go vet, staticcheck, the race-enabled tests, and a release build.
#
#   make build                 bin/vcpnode, trimmed and stamped with the git version
#   make test | vet | staticcheck | fmt-check
#   make install               build, then scripts/install.sh (installs the service too)
#   make release               archives, checksums, .deb and .rpm in dist/ (scripts/release.sh)
#   make package-check         goreleaser check, then build and install-test the .deb
#   make docs                  regenerate docs/commands from the command tree

GO      ?= go
BIN     ?= bin/vcpnode
PREFIX  ?=
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# staticcheck is fetched through the module proxy at this version, built into
# bin/tools, and never added to go.mod.
STATICCHECK_VERSION ?= v0.8.2
TOOLS := $(CURDIR)/bin/tools

.PHONY: all check build test vet fmt-check staticcheck install release package-check docs clean

all: check

check: fmt-check vet staticcheck test build

# Static (no cgo) and reproducible: no paths of this machine, no VCS stamp
# beyond the version and commit given here.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/vcpnode
	@echo "built $(BIN) ($(VERSION))"

test:
	$(GO) test -race ./...

# docs/commands from the command tree (TestCommandDocsAreCurrent fails when stale).
docs:
	$(GO) generate ./cmd/vcpnode

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# If the module proxy cannot be reached, say so and go on: vet still ran.
staticcheck:
	@if GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); then \
		$(TOOLS)/staticcheck ./...; \
	else \
		echo "warning: staticcheck $(STATICCHECK_VERSION) could not be fetched; only go vet checked the code" >&2; \
	fi

install: build
	scripts/install.sh --binary $(BIN) $(if $(PREFIX),--prefix $(PREFIX))

release:
	scripts/release.sh

package-check:
	scripts/package-check.sh

clean:
	rm -rf bin dist
