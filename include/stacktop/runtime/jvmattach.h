/*
 * jvmattach — ask a HotSpot JVM for its perf map, the way `jcmd PID
 * Compiler.perfmap` does (JDK 17+), through the JVM's documented attach
 * mechanism; no code of ours is ever loaded into the target.
 *
 * The mechanism (HotSpot's attachListener_linux.cpp): a file
 * .attach_pid<N> in the JVM's cwd or /tmp, owned by the JVM's user or
 * root, and a SIGQUIT make the JVM open the UNIX socket /tmp/.java_pid<N>
 * (N: the JVM's own pid, in its pid namespace); a client whose effective
 * uid and gid are the JVM's sends protocol 1: "1\0jcmd\0Compiler.perfmap\0
 * \0\0", and reads "<code>\n" and the command's output. The JVM then writes
 * /tmp/perf-<N>.map, which symbols/perfmap reads.
 *
 * All of it runs in a short-lived child process, so the caller (the UI's
 * loop) never waits: jvmattach_start forks it, jvmattach_poll reaps it on
 * the tick. The child takes the JVM's credentials (setgroups, setresgid,
 * setresuid) before it touches a path: the socket's peer check then
 * passes, the attach file is the JVM's user's, and the target's files are
 * met with the target's rights only. Paths are resolved under the
 * target's root (/proc/PID/root, so a JVM in a container is reached in its
 * own mount namespace) with openat2 RESOLVE_IN_ROOT; the socket is opened
 * O_PATH with no symlink anywhere (RESOLVE_NO_SYMLINKS), must be a socket
 * owned by the JVM's user, and is connected through /proc/self/fd (the
 * very inode checked). The attach file is created O_EXCL|O_NOFOLLOW and
 * removed only while it is still the one created (an existing one is left
 * to its owner). SIGQUIT goes through a pidfd (no pid reuse), and only to
 * a process that catches it (SigCgt): a JVM run with -Xrs does not, and
 * would dump core; such a JVM opens its socket at start-up, which is used
 * when it is there. Bounds: 5 s for the socket to appear, 5 s for the
 * reply, 64 KiB of reply read, the child killed after 15 s whatever it
 * waits in (a FUSE /tmp), and at stacktop's death (PR_SET_PDEATHSIG).
 *
 * Contract: a struct jvmattach is zeroed (or jvmattach_cancel'ed) before
 * jvmattach_start; jvmattach_poll on every tick until it returns a result
 * (not JVMATTACH_RUNNING); jvmattach_cancel kills and reaps a child still
 * running. Functions return 0 or -errno; nothing prints. Not thread safe.
 */
#ifndef STACKTOP_JVMATTACH_H
#define STACKTOP_JVMATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How a request ended (the child's exit code maps to one). */
enum jvmattach_status {
	JVMATTACH_IDLE = 0,  /* none started */
	JVMATTACH_RUNNING,   /* the child is at work */
	JVMATTACH_OK,	     /* the JVM answered 0: its perf map is written */
	JVMATTACH_REFUSED,   /* the JVM answered with an error code */
	JVMATTACH_NO_SOCKET, /* no attach socket came (-XX:+DisableAttachMechanism?) */
	JVMATTACH_NO_REPLY,  /* the socket took the request but no reply came in time */
	JVMATTACH_UNSAFE,    /* no socket, and SIGQUIT is not caught: not sent */
	JVMATTACH_FAILED,    /* credentials, paths, a kill: see errno-like detail */
};

/* Seconds the child waits for the socket, and for the reply; the child is
 * killed after JVMATTACH_CHILD_MAX_S whatever it is doing. */
#define JVMATTACH_SOCKET_WAIT_S 5
#define JVMATTACH_REPLY_WAIT_S 5
#define JVMATTACH_CHILD_MAX_S 15
/* Reply bytes read at most (the code is in the first line). */
#define JVMATTACH_REPLY_MAX (64u << 10)

struct jvmattach {
	pid_t pid;   /* the JVM (our pid namespace) */
	pid_t child; /* >0 while running */
	uint64_t started_ns;
	bool killed; /* the child overran and was sent SIGKILL */
	enum jvmattach_status status;
};

/* What /proc/PID/status says of a process, for an attach. */
struct jvmattach_ids {
	pid_t nspid;	  /* its pid in its own namespace (last NSpid field) */
	uid_t euid;	  /* effective uid, our namespace's view */
	gid_t egid;	  /* effective gid */
	bool quit_caught; /* SIGQUIT has a handler (SigCgt) */
};

/* Is a process a HotSpot JVM, from the text of its /proc/PID/maps:
 * libjvm.so mapped, and not OpenJ9's libj9vm, whose attach is another
 * (rtkind_of reads the file). */
bool jvmattach_maps_hotspot(const char *maps, size_t len);

/* Fork the child that asks pid for its perf map. may_signal false: only
 * through a socket already there (JVMATTACH_NO_SOCKET without one): a JVM
 * whose attach is disabled prints a thread dump at each SIGQUIT, so one
 * that opened no socket is not signalled again. 0 (a->status RUNNING), or
 * -errno (-ESRCH gone, -EBUSY one is running). */
int jvmattach_start(struct jvmattach *a, pid_t pid, bool may_signal, uint64_t now_ns);
/* Reap the child when it is done; kill it once it overran. The status:
 * RUNNING until then. Never blocks. */
enum jvmattach_status jvmattach_poll(struct jvmattach *a, uint64_t now_ns);
/* Kill and reap a running child (at the end of a run). */
void jvmattach_cancel(struct jvmattach *a);

/* Parse the text of /proc/PID/status. 0 or -EINVAL (no Uid/Gid line). */
int jvmattach_parse_status(const char *status, struct jvmattach_ids *out);
/* Protocol 1's request for one jcmd command line into buf: "1\0jcmd\0" cmd
 * "\0\0\0". Its length, or -ENOSPC. */
int jvmattach_request(const char *cmd, char *buf, size_t size);
/* The reply's code from its first bytes ("0\n..."): 0 and *code, or
 * -EAGAIN (no full first line yet), -EINVAL (not a number). */
int jvmattach_parse_reply(const char *buf, size_t len, int *code);

/* For tests: the waits (ms; 0 = the defaults above) and the directory
 * under the target's root where the files are (NULL: "/tmp"). */
void jvmattach_tune(unsigned socket_wait_ms, unsigned reply_wait_ms, const char *tmpdir);

#endif
