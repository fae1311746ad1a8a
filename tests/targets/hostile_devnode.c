/*
 * hostile_devnode — a target that plants character devices where a
 * profiler looks for its debug file, and counts who opens them.
 *
 *   hostile_devnode DIR [SECONDS]   default: run until SIGTERM
 *
 * A profiler looks for a module's separate debug file when the module has
 * no .symtab: by build-id at /usr/lib/debug/.build-id/xx/yyyy.debug, then
 * by .gnu_debuglink (DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME),
 * all inside the target's root (/proc/PID/root). Opening a device node
 * there as root runs its driver's open (/dev/watchdog arms a watchdog).
 *
 * Stage 1 (run as root, needs CAP_SYS_ADMIN and CAP_MKNOD):
 *  - reads its own build-id (the NT_GNU_BUILD_ID note of the main program,
 *    found in memory with dl_iterate_phdr);
 *  - writes DIR/hostile-devnode, a copy of itself without .symtab or debug
 *    sections and with a .gnu_debuglink naming hostile-devnode.debug
 *    (objcopy --strip-all --add-gnu-debuglink; the build-id note stays);
 *  - unshare(CLONE_NEWNS), makes every mount private, and mounts a tmpfs
 *    on /usr/lib/debug (which must exist: the host's is hidden in this
 *    namespace only, never written);
 *  - creates there two character devices 1:3 (the null device, harmless):
 *    .build-id/xx/yyyy.debug for its build-id, and DIR/hostile-devnode.debug
 *    (the debuglink's /usr/lib/debug candidate);
 *  - execs the stripped copy (stage 2), which keeps the mount namespace.
 *
 * Stage 2 burns CPU in devnode_spin with an inotify watch (IN_OPEN |
 * IN_ACCESS) on both nodes. An O_PATH open (which only looks at the inode)
 * raises no IN_OPEN; a real open does. Prints "ready" once watching; on
 * SIGUSR1 prints the count so far, on SIGTERM (or after SECONDS) the count
 * and exits 0:
 *
 *   opened N (build-id B, debuglink L), accessed A
 *
 * N = B + L, the IN_OPEN events on the two nodes.
 */
#include "target.h"

#include <elf.h>
#include <stdbool.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define ARMED "--armed"
#define COPY "hostile-devnode"
#define LINK "hostile-devnode.debug"

static volatile sig_atomic_t reports_asked, want_exit;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		reports_asked++;
	else
		want_exit = 1;
}

KEEP uint64_t devnode_spin(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

struct build_id {
	unsigned char b[64];
	size_t len;
};

/* The NT_GNU_BUILD_ID note of the main program (the first object
 * dl_iterate_phdr reports), read from its PT_NOTE segments in memory. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *id = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t namesz = (n->n_namesz + 3) & ~(size_t)3;
			size_t descsz = (n->n_descsz + 3) & ~(size_t)3;
			const char *name = p + sizeof(*n), *desc = name + namesz;

			if (desc + descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz >= 2 &&
			    n->n_descsz <= sizeof(id->b)) {
				memcpy(id->b, desc, n->n_descsz);
				id->len = n->n_descsz;
				return 1;
			}
			p = desc + descsz;
		}
	}
	return 1; /* only the main program */
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug (dir: without the file name). */
static void build_id_path(const struct build_id *id, char *path, size_t size, bool dir)
{
	size_t o = (size_t)snprintf(path, size, "/usr/lib/debug/.build-id/%02x", id->b[0]);

	if (dir)
		return;
	o += (size_t)snprintf(path + o, size - o, "/");
	for (size_t i = 1; i < id->len && o + 3 < size; i++)
		o += (size_t)snprintf(path + o, size - o, "%02x", id->b[i]);
	snprintf(path + o, size - o, ".debug");
}

/* mkdir -p (the last component too). */
static int mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) && errno != EEXIST)
				return -1;
			*s = c;
			if (!c)
				return 0;
		}
	}
}

static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

static int plant(const char *path)
{
	if (mknod(path, S_IFCHR | 0644, makedev(1, 3))) {
		perror(path);
		return -1;
	}
	return 0;
}

static int stage1(const char *dir, const char *secs, const struct build_id *id)
{
	char self[PATH_MAX], copy[PATH_MAX + 64], link[PATH_MAX + 64], opt[PATH_MAX + 128];
	char path[PATH_MAX + 64];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd;

	/* Our path now: in objcopy, /proc/self/exe is objcopy. */
	if (len <= 0)
		return perror("/proc/self/exe"), -1;
	self[len] = '\0';
	snprintf(copy, sizeof(copy), "%s/" COPY, dir);
	snprintf(link, sizeof(link), "%s/" LINK, dir);
	/* objcopy reads the debuglink's file for its CRC: a stand-in, gone
	 * before anyone looks (and the copy's directory never holds a node). */
	fd = open(link, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return perror(link), -1;
	close(fd);
	snprintf(opt, sizeof(opt), "--add-gnu-debuglink=%s", link);
	char *objcopy[] = {"objcopy", "--strip-all", opt, self, copy, NULL};
	if (run(objcopy)) {
		fprintf(stderr, "hostile_devnode: objcopy failed\n");
		return -1;
	}
	unlink(link);

	if (unshare(CLONE_NEWNS))
		return perror("unshare(CLONE_NEWNS)"), -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return perror("mount --make-rprivate /"), -1;
	if (mount("hostile_devnode", "/usr/lib/debug", "tmpfs", MS_NOSUID | MS_NOEXEC,
		  "mode=0755,size=1m"))
		return perror("mount tmpfs /usr/lib/debug"), -1;

	build_id_path(id, path, sizeof(path), true);
	if (mkdirs(path))
		return perror(path), -1;
	build_id_path(id, path, sizeof(path), false);
	if (plant(path))
		return -1;
	snprintf(path, sizeof(path), "/usr/lib/debug%s", dir);
	if (mkdirs(path))
		return perror(path), -1;
	snprintf(path, sizeof(path), "/usr/lib/debug%s/" LINK, dir);
	if (plant(path))
		return -1;

	char *armed[] = {COPY, ARMED, (char *)dir, (char *)secs, NULL};
	execv(copy, armed);
	perror(copy);
	return -1;
}

static void report(int bid, int dbl, int acc)
{
	printf("opened %d (build-id %d, debuglink %d), accessed %d\n", bid + dbl, bid, dbl, acc);
	fflush(stdout);
}

static int stage2(const char *dir, double secs, const struct build_id *id)
{
	/* static: the stack stays small, so a profiler's 16 KiB stack copy
	 * reaches main's caller. */
	static char bpath[PATH_MAX], lpath[PATH_MAX + 64];
	static char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int in, wb, wl, bid = 0, dbl = 0, acc = 0;
	sig_atomic_t reports_done = 0;
	struct sigaction sa = {.sa_handler = on_signal};
	double end = secs > 0 ? mono_s() + secs : 0;
	uint64_t x = 1, n = spin_calibrate(0.01);

	build_id_path(id, bpath, sizeof(bpath), false);
	snprintf(lpath, sizeof(lpath), "/usr/lib/debug%s/" LINK, dir);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in < 0)
		return perror("inotify_init1"), 1;
	wb = inotify_add_watch(in, bpath, IN_OPEN | IN_ACCESS);
	if (wb < 0)
		return perror(bpath), 1;
	wl = inotify_add_watch(in, lpath, IN_OPEN | IN_ACCESS);
	if (wl < 0)
		return perror(lpath), 1;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready %s\n", bpath);
	fflush(stdout);
	for (;;) {
		/* The flags first, then the queue: events raised before the
		 * signal that asks for them are all read before the report. */
		sig_atomic_t asked = reports_asked;
		bool quit = want_exit || (end > 0 && mono_s() >= end);
		ssize_t r;

		while ((r = read(in, buf, sizeof(buf))) > 0) {
			for (char *p = buf; p < buf + r;) {
				const struct inotify_event *ev = (const struct inotify_event *)p;

				if (ev->mask & IN_OPEN)
					*(ev->wd == wb ? &bid : &dbl) += 1;
				if (ev->mask & IN_ACCESS)
					acc++;
				p += sizeof(*ev) + ev->len;
			}
		}
		if (quit)
			break;
		if (asked != reports_done) {
			reports_done = asked;
			report(bid, dbl, acc);
		}
		x = devnode_spin(x, n);
		sink = x;
	}
	report(bid, dbl, acc);
	return 0;
}

int main(int argc, char **argv)
{
	struct build_id id = {.len = 0};
	static char dir[PATH_MAX];

	dl_iterate_phdr(find_build_id, &id);
	if (argc == 4 && !strcmp(argv[1], ARMED)) {
		if (!id.len)
			return fprintf(stderr, "hostile_devnode: no build-id\n"), 1;
		return stage2(argv[2], atof(argv[3]), &id);
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: hostile_devnode DIR [SECONDS]\n");
		return 2;
	}
	if (!id.len) {
		fprintf(stderr, "hostile_devnode: built without a build-id (-Wl,--build-id)\n");
		return 1;
	}
	if (!realpath(argv[1], dir))
		return perror(argv[1]), 1;
	if (strlen(dir) > 1024)
		return fprintf(stderr, "hostile_devnode: %s: too long\n", dir), 1;
	return stage1(dir, argc > 2 ? argv[2] : "0", &id) ? 1 : 0;
}
