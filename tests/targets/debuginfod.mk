# A stripped cpuburn for the debuginfod test (test_debuginfod): no .symtab,
# no debuglink, only its build-id; build/targets/cpuburn is its unstripped
# twin (same build-id), which the test serves with a local debuginfod.
EXTRA_TARGETS += $(B)/targets/cpuburn-stripped
targets: $(B)/targets/cpuburn-stripped

$(B)/targets/cpuburn-stripped: $(B)/targets/cpuburn
	strip --strip-all -o $@ $<
