# Variants of tests/targets/symtest.c for the symbolizer tests (test_sym,
# test_debugfile):
#   symtest-stripped   -rdynamic, strip --strip-all: names only from .dynsym
#   symtest-debuglink  symtest stripped of everything, with a .gnu_debuglink
#                      to symtest-debuglink.debug (objcopy --only-keep-debug)
#   symtest-buildid    symtest stripped, no debuglink: its debug file can only
#                      be found by build-id (the test builds a fake
#                      /usr/lib/debug/.build-id tree)
SYMTEST_VARIANTS := $(B)/targets/symtest-stripped $(B)/targets/symtest-debuglink \
                    $(B)/targets/symtest-buildid
EXTRA_TARGETS += $(SYMTEST_VARIANTS)
EXTRA_TARGETS_SYM := $(B)/targets/symtest $(SYMTEST_VARIANTS)

# "targets:" expands its prerequisites before this fragment is read.
targets: $(SYMTEST_VARIANTS)

$(B)/tests/test_sym: $(EXTRA_TARGETS_SYM) $(B)/targets/inltest $(B)/targets/inltest-stripped
$(B)/tests/test_frames: $(B)/targets/inltest
$(B)/tests/test_debugfile: $(EXTRA_TARGETS_SYM)
$(B)/tests/test_srcline: $(B)/targets/inltest $(B)/targets/symtest
$(B)/tests/test_fde: $(B)/targets/inltest $(B)/targets/inltest-stripped

$(B)/targets/symtest-stripped: tests/targets/symtest.c | $(B)/targets
	$(CC) $(TARGET_CFLAGS) -Wl,--build-id -rdynamic -o $@ $< -lm
	strip --strip-all $@

$(B)/targets/symtest-debuglink: $(B)/targets/symtest
	objcopy --only-keep-debug $< $@.debug
	strip --strip-all -o $@ $<
	objcopy --add-gnu-debuglink=$@.debug $@

$(B)/targets/symtest-buildid: $(B)/targets/symtest
	strip --strip-all -o $@ $<

# inltest-stripped: inltest with no symbols at all (strip --strip-all), for
# naming stripped functions by their eh_frame range (test_inline.sh).
INLTEST_VARIANTS := $(B)/targets/inltest-stripped
EXTRA_TARGETS += $(INLTEST_VARIANTS)
targets: $(INLTEST_VARIANTS)

$(B)/targets/inltest-stripped: $(B)/targets/inltest
	strip --strip-all -o $@ $<

# hotloop-stripped: hotloop with no symbols (annotate from an .eh_frame
# range, test_annotate.sh).
HOTLOOP_VARIANTS := $(B)/targets/hotloop-stripped
EXTRA_TARGETS += $(HOTLOOP_VARIANTS)
targets: $(HOTLOOP_VARIANTS)

$(B)/targets/hotloop-stripped: $(B)/targets/hotloop
	strip --strip-all -o $@ $<
$(B)/tests/test_elfimage: $(B)/targets/inltest
