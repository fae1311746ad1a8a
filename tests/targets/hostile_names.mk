# issue 28 items 3-5: hostile names (test_hostile_names.sh).
#   hostile_bigname-onename  hostile_bigname with every f_N symbol's st_name
#                            pointing at its one 1 MiB name (bigname.pl
#                            rewrites .symtab in place; the file stays small)
HOSTILE_NAMES_VARIANTS := $(B)/targets/hostile_bigname-onename
EXTRA_TARGETS += $(HOSTILE_NAMES_VARIANTS)
targets: $(HOSTILE_NAMES_VARIANTS)

$(B)/targets/hostile_bigname-onename: $(B)/targets/hostile_bigname tests/targets/bigname.pl
	perl tests/targets/bigname.pl $< $@

# 6,000 functions and a 1 MiB name: -O2 -g took 16 s of a 2-core build,
# -O0 without DWARF 3 s; the test reads the symbol table, not DWARF.
$(B)/targets/hostile_bigname: TARGET_CFLAGS := -O0 -pthread -Wall
