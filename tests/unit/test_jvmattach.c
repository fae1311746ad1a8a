/* Unit tests for jvmattach: /proc/PID/status and maps parsing, the
 * protocol's bytes; and whole requests against a fake JVM in this process
 * (a thread that opens the socket once the attach file and SIGQUIT came):
 * an answer, a silent socket, a huge reply, a symlinked socket, and a
 * process that does not catch SIGQUIT (never signalled). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/lib/mono.h"
#include "stacktop/runtime/jvmattach.h"

static void test_parse_status(void **state)
{
	struct jvmattach_ids ids;
	const char *s = "Name:\tjava\nPid:\t4242\nNSpid:\t4242\t7\nUid:\t1000\t1001\t1001\t1001\n"
			"Gid:\t50\t51\t51\t51\nSigCgt:\t0000000101005ccd\n";

	(void)state;
	assert_int_equal(jvmattach_parse_status(s, &ids), 0);
	assert_int_equal(ids.nspid, 7);
	assert_int_equal(ids.euid, 1001);
	assert_int_equal(ids.egid, 51);
	assert_true(ids.quit_caught);
	assert_int_equal(jvmattach_parse_status("Pid:\t9\nUid:\t0 0 0 0\nGid:\t0 0 0 0\n"
						"SigCgt:\t0000000000000002\n",
						&ids),
			 0);
	assert_int_equal(ids.nspid, 9);
	assert_false(ids.quit_caught);
	assert_int_equal(jvmattach_parse_status("Name:\tx\n", &ids), -EINVAL);
}

static void test_request_reply(void **state)
{
	char buf[64];
	int code = -1;
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0\0";

	(void)state;
	assert_int_equal(jvmattach_request("Compiler.perfmap", buf, sizeof(buf)),
			 (int)sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
	assert_int_equal(jvmattach_request("Compiler.perfmap", buf, 10), -ENOSPC);
	assert_int_equal(jvmattach_parse_reply("0\nok", 4, &code), 0);
	assert_int_equal(code, 0);
	assert_int_equal(jvmattach_parse_reply("101\n", 4, &code), 0);
	assert_int_equal(code, 101);
	assert_int_equal(jvmattach_parse_reply("10", 2, &code), -EAGAIN);
	assert_int_equal(jvmattach_parse_reply("x\n", 2, &code), -EINVAL);
	assert_int_equal(jvmattach_parse_reply("\n", 1, &code), -EINVAL);
	assert_int_equal(jvmattach_parse_reply("11111111111111111111", 20, &code), -EINVAL);
}

static void test_maps(void **state)
{
	const char *jvm = "7f00-7f10 r-xp 0 08:01 12 /usr/lib/jvm/java-17/lib/server/libjvm.so\n"
			  "7f20-7f30 r-xp 0 08:01 13 /usr/lib/libc.so.6\n";
	const char *j9 = "7f00-7f10 r-xp 0 08:01 12 /opt/j9/lib/server/libjvm.so\n"
			 "7f20-7f30 r-xp 0 08:01 14 /opt/j9/lib/default/libj9vm29.so\n";
	const char *not = "7f00-7f10 r-xp 0 08:01 12 /tmp/libjvm.so.evil\n"
			  "7f00-7f10 r-xp 0 08:01 12 /tmp/xlibjvm.so\n";

	(void)state;
	assert_true(jvmattach_maps_hotspot(jvm, strlen(jvm)));
	assert_false(jvmattach_maps_hotspot(j9, strlen(j9)));
	assert_false(jvmattach_maps_hotspot(not, strlen(not )));
}

/* ---- a fake JVM --------------------------------------------------------- */

enum fake_mode { FAKE_ANSWER, FAKE_SILENT, FAKE_HUGE, FAKE_SYMLINK };

static char dir[64];
static volatile sig_atomic_t quits;
static struct {
	enum fake_mode mode;
	bool attach_seen; /* the attach file was there at the SIGQUIT */
	char req[64];
	ssize_t reqlen;
	int stop;
} fake;

static void on_quit(int sig)
{
	(void)sig;
	quits++;
}

static void path_of(char *buf, size_t size, const char *what)
{
	snprintf(buf, size, "%s/.%s%d", dir, what, (int)getpid());
}

static void *fake_jvm(void *arg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char attach[128], real[100];
	int ls, c;

	(void)arg;
	while (!quits && !fake.stop)
		usleep(10000);
	if (fake.stop)
		return NULL;
	path_of(attach, sizeof(attach), "attach_pid");
	fake.attach_seen = access(attach, F_OK) == 0;
	path_of(sa.sun_path, sizeof(sa.sun_path), "java_pid");
	if (fake.mode == FAKE_SYMLINK) { /* the socket elsewhere, a link at its name */
		snprintf(real, sizeof(real), "%s/real.sock", dir);
		symlink(real, sa.sun_path);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", real);
	}
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	listen(ls, 4);
	struct timeval tv = {3, 0};
	setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	c = accept(ls, NULL, NULL);
	if (c >= 0) {
		fake.reqlen = read(c, fake.req, sizeof(fake.req));
		if (fake.mode == FAKE_ANSWER)
			write(c, "0\nCommand executed\n", 19);
		else if (fake.mode == FAKE_HUGE) {
			static char big[1 << 16];
			memset(big, 'x', sizeof(big));
			write(c, "0\n", 2);
			for (int i = 0; i < 64 && send(c, big, sizeof(big), MSG_NOSIGNAL) > 0; i++)
				;
		} else {
			while (!fake.stop)
				usleep(10000);
		}
		close(c);
	}
	close(ls);
	return NULL;
}

static enum jvmattach_status run(enum fake_mode mode, bool catch_quit, bool may_signal)
{
	struct jvmattach a = {0};
	enum jvmattach_status st;
	pthread_t th;
	char cmd[128];

	snprintf(dir, sizeof(dir), "/tmp/stj%d", (int)getpid());
	mkdir(dir, 0700);
	jvmattach_tune(1500, 800, dir);
	memset(&fake, 0, sizeof(fake));
	fake.mode = mode;
	quits = 0;
	signal(SIGQUIT, catch_quit ? on_quit : SIG_DFL);
	pthread_create(&th, NULL, fake_jvm, NULL);
	assert_int_equal(jvmattach_start(&a, getpid(), may_signal, mono_ns()), 0);
	uint64_t t0 = mono_ns();
	while ((st = jvmattach_poll(&a, mono_ns())) == JVMATTACH_RUNNING)
		usleep(20000);
	assert_true(mono_ns() - t0 < 10000000000ull); /* bounded */
	fake.stop = 1;
	pthread_join(th, NULL);
	snprintf(cmd, sizeof(cmd), "%s/.attach_pid%d", dir, (int)getpid());
	assert_int_equal(access(cmd, F_OK), -1); /* cleaned up */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return st;
}

static void test_attach_answer(void **state)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0\0";

	(void)state;
	assert_int_equal(run(FAKE_ANSWER, true, true), JVMATTACH_OK);
	assert_true(fake.attach_seen);
	assert_int_equal(fake.reqlen, (ssize_t)sizeof(want) - 1);
	assert_memory_equal(fake.req, want, sizeof(want) - 1);
}

/* What each fake JVM, signal disposition and permission to signal ends in. */
static void test_attach_outcomes(void **state)
{
	static const struct {
		const char *what;
		enum fake_mode mode;
		bool catch_quit, may_signal;
		enum jvmattach_status want;
	} cases[] = {
	    {"a JVM that never answers", FAKE_SILENT, true, true, JVMATTACH_NO_REPLY},
	    {"an answer past the cap", FAKE_HUGE, true, true, JVMATTACH_OK},
	    /* never connected through the link: see reqlen below */
	    {"a socket reached through a symlink", FAKE_SYMLINK, true, true, JVMATTACH_NO_SOCKET},
	    /* SIGQUIT's default would kill this test: it must not be sent */
	    {"SIGQUIT not caught", FAKE_ANSWER, false, true, JVMATTACH_UNSAFE},
	    /* a JVM that opened no socket before is not signalled again */
	    {"no signal allowed", FAKE_ANSWER, true, false, JVMATTACH_NO_SOCKET},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum jvmattach_status st =
		    run(cases[i].mode, cases[i].catch_quit, cases[i].may_signal);

		if (st != cases[i].want)
			fail_msg("%s: status %d, want %d", cases[i].what, st, cases[i].want);
		if (cases[i].mode == FAKE_SYMLINK)
			assert_int_equal(fake.reqlen, 0);
		if (!cases[i].may_signal)
			assert_int_equal(quits, 0);
	}
}

TEST_MAIN(NULL, NULL, TEST(test_parse_status), TEST(test_request_reply), TEST(test_maps),
	  TEST(test_attach_answer), TEST(test_attach_outcomes))
