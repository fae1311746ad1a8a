# The Go targets of test_go (tests/targets/gocpu.go), built with the Go
# toolchain twice: as is (gocpu: .symtab and DWARF) and as production
# builds are (gocpu-stripped: -ldflags="-s -w", only .gopclntab names it);
# gosig (tests/targets/gosig.go), often in its signal handler, stripped.
# Without go (make deps-test installs golang-go) nothing is built and
# test_go skips with a message.
GO_TARGETS := $(B)/targets/gocpu $(B)/targets/gocpu-stripped $(B)/targets/gosig
EXTRA_TARGETS += $(GO_TARGETS)

targets: $(GO_TARGETS)

GO_ENV := GO111MODULE=off GOFLAGS= GOCACHE=$(abspath $(B))/gocache HOME=$(abspath $(B))

$(B)/targets/gocpu: tests/targets/gocpu.go | $(B)/targets
	@command -v go >/dev/null || { echo "go not installed: $@ not built (test_go skips)"; exit 0; }; \
	$(GO_ENV) go build -o $@ $<

$(B)/targets/gocpu-stripped: tests/targets/gocpu.go | $(B)/targets
	@command -v go >/dev/null || { echo "go not installed: $@ not built (test_go skips)"; exit 0; }; \
	$(GO_ENV) go build -ldflags="-s -w" -o $@ $<

$(B)/targets/gosig: tests/targets/gosig.go | $(B)/targets
	@command -v go >/dev/null || { echo "go not installed: $@ not built (test_go skips)"; exit 0; }; \
	$(GO_ENV) go build -ldflags="-s -w" -o $@ $<
