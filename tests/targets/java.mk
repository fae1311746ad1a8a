# Java targets (test_gc, test_hsperf), compiled when javac is installed
# (default-jdk-headless); the tests skip with a message without it.
ifneq ($(shell command -v javac 2>/dev/null),)
EXTRA_TARGETS += $(B)/java/GcChurn.class
targets: $(B)/java/GcChurn.class

$(B)/java/GcChurn.class: tests/targets/lang/GcChurn.java
	mkdir -p $(B)/java
	javac -d $(B)/java $<
endif
