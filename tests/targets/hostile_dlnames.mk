# issue 28 (the last finding): hostile_dlnames loads copies of
# hostile_dlnames.so, each with new function names (test_hostile_dlnames).
# The library is C in a .inc, so the rule for tests/targets/*.c does not
# link it as a program; -O0: nested calls kept as they are written.
EXTRA_TARGETS += $(B)/targets/hostile_dlnames.so
targets: $(B)/targets/hostile_dlnames.so

$(B)/targets/hostile_dlnames.so: tests/targets/hostile_dlnames_lib.inc | $(B)/targets
	$(CC) -O0 -shared -fPIC -Wall -x c -o $@ $<
