# issue 23: a plain Java program (test_jvm): compiled with javac when a JDK
# is installed (make deps-test installs default-jdk-headless); without one
# the test says so and skips.
DEB_TEST += default-jdk-headless
ifneq ($(shell command -v javac 2>/dev/null),)
EXTRA_TARGETS += $(B)/targets/java/JvmHot.class
targets: $(B)/targets/java/JvmHot.class
endif

$(B)/targets/java/JvmHot.class: tests/targets/JvmHot.java | $(B)/targets
	mkdir -p $(B)/targets/java
	javac -d $(B)/targets/java $<
