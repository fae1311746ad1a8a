/*
 * jvmattach — a HotSpot JVM asked for its perf map (see jvmattach.h).
 */
#include "stacktop/runtime/jvmattach.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacktop/proc/tfile.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* The child's exit codes (one per status). */
enum {
	XC_OK = 0,
	XC_REFUSED = 10,
	XC_NO_SOCKET,
	XC_NO_REPLY,
	XC_UNSAFE,
	XC_FAILED,
};

static unsigned socket_wait_ms = JVMATTACH_SOCKET_WAIT_S * 1000;
static unsigned reply_wait_ms = JVMATTACH_REPLY_WAIT_S * 1000;
static const char *tmp_dir = "/tmp";

void jvmattach_tune(unsigned sock_ms, unsigned reply_ms, const char *tmpdir)
{
	socket_wait_ms = sock_ms ? sock_ms : JVMATTACH_SOCKET_WAIT_S * 1000;
	reply_wait_ms = reply_ms ? reply_ms : JVMATTACH_REPLY_WAIT_S * 1000;
	tmp_dir = tmpdir ? tmpdir : "/tmp";
}

/* ---- what a process is ---------------------------------------------------- */

/* A line of maps whose path ends in /NAME (a deleted file's " (deleted)"
 * aside). */
static bool maps_has(const char *maps, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = maps, *end = maps + len; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		const char *le = e ? e : end;
		const char *hit = memmem(p, (size_t)(le - p), name, nl);

		if (hit && hit > p && hit[-1] == '/' &&
		    (hit + nl == le || !strncmp(hit + nl, " (deleted)", 10)))
			return true;
		p = le + 1;
	}
	return false;
}

bool jvmattach_maps_hotspot(const char *maps, size_t len)
{
	/* OpenJ9 ships a libjvm.so too, beside its own VM library: its attach
	 * is another protocol, and its SIGQUIT writes a javacore. */
	return maps_has(maps, len, "libjvm.so") && !maps_has(maps, len, "libj9vm29.so") &&
	       !maps_has(maps, len, "libj9vm.so");
}

/* The last number of a "Key:\t1\t2" line. */
static bool last_field(const char *line, long *v)
{
	bool got = false;
	char *end;

	for (const char *p = line;; p = end) {
		long x = strtol(p, &end, 10);

		if (end == p)
			return got;
		*v = x;
		got = true;
	}
}

int jvmattach_parse_status(const char *status, struct jvmattach_ids *out)
{
	bool uid = false, gid = false, ns = false;
	unsigned long long cgt = 0;

	memset(out, 0, sizeof(*out));
	for (const char *l = status; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned r, e;
		long v = 0;

		if (!strncmp(l, "NSpid:", 6) && last_field(l + 6, &v) && v > 0) {
			out->nspid = (pid_t)v;
			ns = true;
		} else if (!strncmp(l, "Pid:", 4) && !ns && last_field(l + 4, &v) && v > 0) {
			out->nspid = (pid_t)v; /* kernels before 4.1 have no NSpid */
		} else if (!strncmp(l, "Uid:", 4) && sscanf(l + 4, "%u %u", &r, &e) == 2) {
			out->euid = e;
			uid = true;
		} else if (!strncmp(l, "Gid:", 4) && sscanf(l + 4, "%u %u", &r, &e) == 2) {
			out->egid = e;
			gid = true;
		} else if (!strncmp(l, "SigCgt:", 7)) {
			cgt = strtoull(l + 7, NULL, 16);
		}
	}
	out->quit_caught = cgt & (1ull << (SIGQUIT - 1));
	return uid && gid && out->nspid > 0 ? 0 : -EINVAL;
}

static int read_status(pid_t pid, struct jvmattach_ids *ids)
{
	char buf[8192];
	ssize_t n = tfile_read_status(pid, buf, sizeof(buf));

	return n < 0 ? (int)n : jvmattach_parse_status(buf, ids);
}

/* ---- the protocol --------------------------------------------------------- */

int jvmattach_request(const char *cmd, char *buf, size_t size)
{
	/* protocol version, the operation, then its three arguments: jcmd
	 * takes the whole command line as the first */
	static const char head[] = "1\0jcmd";
	size_t cl = strlen(cmd), n = sizeof(head) + cl + 3;

	if (n > size)
		return -ENOSPC;
	memcpy(buf, head, sizeof(head));
	memcpy(buf + sizeof(head), cmd, cl);
	memset(buf + sizeof(head) + cl, 0, 3);
	return (int)n;
}

int jvmattach_parse_reply(const char *buf, size_t len, int *code)
{
	const char *nl = memchr(buf, '\n', len);
	char num[16];
	char *end;
	long v;

	if (!nl)
		return len >= sizeof(num) ? -EINVAL : -EAGAIN;
	if (nl == buf || (size_t)(nl - buf) >= sizeof(num))
		return -EINVAL;
	memcpy(num, buf, (size_t)(nl - buf));
	num[nl - buf] = '\0';
	v = strtol(num, &end, 10);
	if (*end || v < -100000 || v > 100000)
		return -EINVAL;
	*code = (int)v;
	return 0;
}

/* ---- the child ------------------------------------------------------------ */

/* Everything the child needs, built before the fork (after it, only
 * system calls: the parent may have threads). */
struct job {
	int rootfd, pidfd;
	struct jvmattach_ids ids;
	char attach_name[40], sock_name[40];
	char req[64];
	int reqlen;
	unsigned sock_ms, reply_ms;
	const char *tmpdir;
	bool may_signal;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static int openat2_fd(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* The socket, O_PATH, no symlink on the way: a socket of the JVM's user,
 * else -1. */
static int open_socket(int tmpfd, const struct job *j)
{
	struct stat st;
	int fd = openat2_fd(tmpfd, j->sock_name, O_PATH | O_CLOEXEC,
			    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != j->ids.euid) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Create the attach file and signal; wait for the socket. Its O_PATH fd or
 * -X_* code. The attach file is removed again when it is still ours. */
static int trigger(int tmpfd, const struct job *j)
{
	struct stat mine, now;
	int afd, sfd = -1;
	uint64_t t0;

	afd = openat(tmpfd, j->attach_name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (afd < 0 && errno != EEXIST)
		return -XC_FAILED;
	if (afd >= 0 && fstat(afd, &mine)) {
		close(afd);
		afd = -1;
	}
	if (syscall(SYS_pidfd_send_signal, j->pidfd, SIGQUIT, NULL, 0) == 0) {
		for (t0 = now_ms(); now_ms() - t0 < j->sock_ms; sleep_ms(50))
			if ((sfd = open_socket(tmpfd, j)) >= 0)
				break;
	}
	if (afd >= 0) {
		if (fstatat(tmpfd, j->attach_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == mine.st_dev && now.st_ino == mine.st_ino)
			unlinkat(tmpfd, j->attach_name, 0);
		close(afd);
	}
	return sfd >= 0 ? sfd : -XC_NO_SOCKET;
}

/* "/proc/self/fd/N" without stdio: the child of a threaded parent may
 * only make system calls. */
static void fd_path(int fd, char *buf, size_t size)
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) && n < (int)sizeof(digits));
	if (sizeof(head) + (size_t)n > size) {
		buf[0] = '\0';
		return;
	}
	memcpy(buf, head, sizeof(head) - 1);
	for (int i = 0; i < n; i++)
		buf[sizeof(head) - 1 + i] = digits[n - 1 - i];
	buf[sizeof(head) - 1 + n] = '\0';
}

/* Send the request, read the reply's code within the wait. An X_* code. */
static int converse(int sfd, const struct job *j)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char buf[4096];
	size_t len = 0, total = 0;
	int s, code = -1, rc = XC_NO_REPLY;
	bool got = false;
	uint64_t t0 = now_ms();

	fd_path(sfd, sa.sun_path, sizeof(sa.sun_path));
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return XC_FAILED;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(s);
		return XC_NO_REPLY;
	}
	for (int off = 0; off < j->reqlen;) {
		struct pollfd p = {s, POLLOUT, 0};
		ssize_t n;

		if (now_ms() - t0 >= j->reply_ms || poll(&p, 1, 100) < 0)
			goto out;
		n = send(s, j->req + off, (size_t)(j->reqlen - off), MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto out;
		off += n > 0 ? (int)n : 0;
	}
	/* The code is the first line; the rest (the command's output) is
	 * read to its end and dropped, bounded, so the JVM's writes end. */
	while (total < JVMATTACH_REPLY_MAX && now_ms() - t0 < j->reply_ms) {
		struct pollfd p = {s, POLLIN, 0};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(s, buf + len, sizeof(buf) - len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
		if (got)
			continue;
		len += (size_t)n;
		int e = jvmattach_parse_reply(buf, len, &code);
		if (e == -EINVAL) {
			rc = XC_REFUSED;
			goto out;
		}
		got = e == 0;
		len = got ? 0 : len; /* the rest is read into the buffer's start */
	}
	if (got)
		rc = code == 0 ? XC_OK : XC_REFUSED;
out:
	close(s);
	return rc;
}

static int child_main(const struct job *j)
{
	sigset_t none;
	int tmpfd, sfd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGALRM, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(JVMATTACH_CHILD_MAX_S);
	/* The JVM's credentials before any path of its: its peer check
	 * passes, and its files are met with its rights only. */
	if ((geteuid() == 0 && setgroups(0, NULL)) ||
	    setresgid(j->ids.egid, j->ids.egid, j->ids.egid) ||
	    setresuid(j->ids.euid, j->ids.euid, j->ids.euid))
		return XC_FAILED;
	tmpfd = openat2_fd(j->rootfd, j->tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC,
			   RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (tmpfd < 0)
		return XC_FAILED;
	sfd = open_socket(tmpfd, j); /* -Xrs, or attached before: no signal needed */
	if (sfd < 0 && !j->may_signal)
		return XC_NO_SOCKET;
	if (sfd < 0 && !j->ids.quit_caught)
		return XC_UNSAFE;
	if (sfd < 0)
		sfd = trigger(tmpfd, j);
	if (sfd < 0)
		return -sfd;
	return converse(sfd, j);
}

/* ---- the parent ----------------------------------------------------------- */

int jvmattach_start(struct jvmattach *a, pid_t pid, bool may_signal, uint64_t now_ns)
{
	struct job j = {.rootfd = -1, .pidfd = -1, .may_signal = may_signal};
	pid_t c;
	int e;

	if (a->child > 0)
		return -EBUSY;
	if ((e = read_status(pid, &j.ids)))
		return e;
	j.pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (j.pidfd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	snprintf(j.attach_name, sizeof(j.attach_name), ".attach_pid%d", (int)j.ids.nspid);
	snprintf(j.sock_name, sizeof(j.sock_name), ".java_pid%d", (int)j.ids.nspid);
	j.reqlen = jvmattach_request("Compiler.perfmap", j.req, sizeof(j.req));
	j.sock_ms = socket_wait_ms;
	j.reply_ms = reply_wait_ms;
	j.tmpdir = tmp_dir;
	/* The status was read before the pidfd: the pid was still this
	 * process's only if it is alive now (a reused pid would have to die
	 * and be reused in between: re-read and compare). */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	j.rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (j.rootfd < 0) {
		e = errno == ENOENT ? -ESRCH : -errno;
		goto out;
	}
	c = fork();
	if (c < 0) {
		e = -errno;
		goto out;
	}
	if (c == 0)
		_exit(child_main(&j));
	*a = (struct jvmattach){
	    .pid = pid, .child = c, .started_ns = now_ns, .status = JVMATTACH_RUNNING};
	e = 0;
out:
	close(j.pidfd);
	if (j.rootfd >= 0)
		close(j.rootfd);
	return e;
}

static enum jvmattach_status status_of(int wst)
{
	if (!WIFEXITED(wst))
		return JVMATTACH_NO_REPLY; /* the alarm, or our kill */
	switch (WEXITSTATUS(wst)) {
	case XC_OK:
		return JVMATTACH_OK;
	case XC_REFUSED:
		return JVMATTACH_REFUSED;
	case XC_NO_SOCKET:
		return JVMATTACH_NO_SOCKET;
	case XC_NO_REPLY:
		return JVMATTACH_NO_REPLY;
	case XC_UNSAFE:
		return JVMATTACH_UNSAFE;
	default:
		return JVMATTACH_FAILED;
	}
}

enum jvmattach_status jvmattach_poll(struct jvmattach *a, uint64_t now_ns)
{
	int wst;
	pid_t r;

	if (a->child <= 0)
		return a->status;
	r = waitpid(a->child, &wst, WNOHANG);
	if (r == a->child) {
		a->child = 0;
		a->status = a->killed ? JVMATTACH_NO_REPLY : status_of(wst);
		return a->status;
	}
	if (r < 0) { /* not our child any more: nothing to wait for */
		a->child = 0;
		a->status = JVMATTACH_FAILED;
		return a->status;
	}
	if (!a->killed && now_ns - a->started_ns > JVMATTACH_CHILD_MAX_S * 1000000000ull) {
		kill(a->child, SIGKILL);
		a->killed = true;
	}
	return JVMATTACH_RUNNING;
}

void jvmattach_cancel(struct jvmattach *a)
{
	if (a->child > 0) {
		kill(a->child, SIGKILL);
		while (waitpid(a->child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	a->child = 0;
	a->status = JVMATTACH_IDLE;
}
