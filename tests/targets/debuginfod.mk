# A stripped cpuburn for the debuginfod test (test_debuginfod): no .symtab,
# no debuglink, only its build-id; build/targets/cpuburn is its unstripped
# twin (same build-id), which the test serves with a local debuginfod.
EXTRA_TARGETS += $(B)/targets/cpuburn-stripped
targets: $(B)/targets/cpuburn-stripped

$(B)/targets/cpuburn-stripped: $(B)/targets/cpuburn
	strip --strip-all -o $@ $<

# test_dbgfetch serves symtest as symtest-buildid's debug file.
$(B)/tests/test_dbgfetch: $(B)/targets/symtest $(B)/targets/symtest-buildid
