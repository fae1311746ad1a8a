# issue 23: plain Java programs, compiled with javac when a JDK is installed
# (the GNUmakefile installs default-jdk-headless): JvmHot (test_jvm), GcChurn
# (test_gc, test_hsperf). Without one the tests say so and skip.
ifneq ($(shell command -v javac 2>/dev/null),)
EXTRA_TARGETS += $(B)/targets/java/JvmHot.class $(B)/java/GcChurn.class
targets: $(B)/targets/java/JvmHot.class $(B)/java/GcChurn.class
endif

$(B)/targets/java/JvmHot.class: tests/targets/JvmHot.java | $(B)/targets
	mkdir -p $(B)/targets/java
	javac -d $(B)/targets/java $<

$(B)/java/GcChurn.class: tests/targets/lang/GcChurn.java
	mkdir -p $(B)/java
	javac -d $(B)/java $<
