/*
 * hostile_fuse — a target that runs code from a FUSE file it serves
 * itself, then stops answering its FUSE requests.
 *
 *   hostile_fuse DIR        (root: it mounts; exit 77 when FUSE cannot)
 *
 * It enters a mount namespace of its own (so the mount dies with it),
 * mounts a FUSE file system on DIR (type "fuse.hostile") by speaking the
 * kernel protocol on /dev/fuse directly (no libfuse), serving one file,
 * DIR/lib.so, a copy of its own executable read from /proc/self/exe, with
 * attribute and entry timeouts of 0 (every stat asks the daemon). It maps
 * that file whole, executable, reads every page of it (so the page cache
 * holds them), closes it, and from then on reads its FUSE requests and
 * never answers one. It prints "ready" and burns CPU in hostile_spin,
 * called in the FUSE mapping.
 *
 * A profiler that opens the mapped file (map_files, or the path) and
 * stats it waits for an answer that never comes: before stacktop looked
 * at the target's mountinfo it hung there, with SIGINT and SIGTERM caught
 * and so not fatal (the wait is killable only). It must now leave the
 * file alone and profile on.
 *
 *   hostile_fuse DIR [perfmap | source | debug]
 *
 * With a word, one more path of the target's leads into the mount (all in
 * its own mount namespace, nothing of the host changed), each a lookup
 * the daemon never answers:
 *   perfmap  DIR is bound on /tmp too, and a thread runs code from
 *            anonymous memory (jit_loop), so its perf map,
 *            /tmp/perf-PID.map, is looked for on the FUSE mount;
 *   source   a tmpfs on /var/tmp holds stacktop-hostile-fuse.c, a symlink
 *            to DIR/lib.so, and a thread burns CPU in source_loop, whose
 *            line table names that file (annotate reads it);
 *   debug    a tmpfs on /usr/lib/debug holds libc's debug file by its
 *            build-id (.build-id/xx/rest.debug), a symlink to DIR/lib.so:
 *            libc has no .symtab, so naming it looks there (wall mode: the
 *            daemon thread waits in libc's read).
 */
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <link.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <sys/stat.h>

#define NODE_FILE 2

static int fuse_fd, self_fd;
static uint64_t self_size;
static atomic_int hang;

KEEP uint64_t hostile_spin(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}

static void reply(uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header h = {
	    .len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)data, len}};

	if (writev(fuse_fd, iov, data ? 2 : 1) < 0)
		perror("hostile_fuse: reply");
}

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->nlink = 1;
	a->blksize = 4096;
	if (node == NODE_FILE) {
		a->mode = S_IFREG | 0755;
		a->size = self_size;
		a->blocks = (self_size + 511) / 512;
	} else {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	}
}

static void serve(const struct fuse_in_header *in, const char *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *ii = (const void *)arg;
		struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION,
					  .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION
						       ? ii->minor
						       : FUSE_KERNEL_MINOR_VERSION,
					  .max_readahead = ii->max_readahead,
					  .max_write = 65536,
					  .max_background = 4,
					  .congestion_threshold = 3};
		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out e = {.nodeid = NODE_FILE};

		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "lib.so")) {
			reply(in->unique, -ENOENT, NULL, 0);
			return;
		}
		attr_of(NODE_FILE, &e.attr);
		reply(in->unique, 0, &e, sizeof(e));
		return;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a = {0};

		attr_of(in->nodeid, &a.attr);
		reply(in->unique, 0, &a, sizeof(a));
		return;
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = {.fh = 1, .open_flags = FOPEN_KEEP_CACHE};

		reply(in->unique, 0, &o, sizeof(o));
		return;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = (const void *)arg;
		static char buf[1 << 17];
		size_t n = r->size < sizeof(buf) ? r->size : sizeof(buf);
		ssize_t got = pread(self_fd, buf, n, (off_t)r->offset);

		reply(in->unique, got < 0 ? -EIO : 0, buf, got < 0 ? 0 : (size_t)got);
		return;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return; /* no answer expected */
	case FUSE_RELEASE:
	case FUSE_FLUSH:
	case FUSE_DESTROY:
		reply(in->unique, 0, NULL, 0);
		return;
	default:
		reply(in->unique, -ENOSYS, NULL, 0);
	}
}

/* The daemon: answers until hang is set, then reads and drops. */
static void *daemon_main(void *unused)
{
	static char buf[FUSE_MIN_READ_BUFFER + (1 << 17)];

	(void)unused;
	for (;;) {
		ssize_t n = read(fuse_fd, buf, sizeof(buf));

		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			return NULL; /* unmounted */
		if (atomic_load(&hang))
			continue;
		serve((const struct fuse_in_header *)buf, buf + sizeof(struct fuse_in_header));
	}
}

uint64_t source_loop(uint64_t x, uint64_t n);

/* source: burn in source_loop (its file a symlink into the mount). */
static void *source_thread(void *unused)
{
	uint64_t x = 3;

	(void)unused;
	for (;;)
		sink = x = source_loop(x, 1000000);
	return NULL;
}

/* perfmap: run code from anonymous memory, as a JIT does. */
static void *jit_thread(void *code)
{
	for (;;)
		((void (*)(void))code)();
	return NULL;
}

/* libc's build-id as hex into out (dl_iterate_phdr: its PT_NOTE). */
static int libc_build_id(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	if (!strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr),
			   *end = p + ph->p_memsz;

		while (ph->p_type == PT_NOTE && p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const unsigned char *d =
			    (const unsigned char *)(n + 1) + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= 64) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					sprintf((char *)out + 2 * k, "%02x", d[k]);
				return 1;
			}
			p = (const char *)d + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

/* A private tmpfs on dir holding name, a symlink to target. */
static int plant(const char *dir, const char *name, const char *target)
{
	char path[4096], sub[4096];
	const char *slash = strrchr(name, '/');

	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m"))
		return perror(dir), -1;
	if (slash) {
		snprintf(sub, sizeof(sub), "%s/%.*s", dir, (int)(slash - name), name);
		for (char *c = sub + strlen(dir) + 1; (c = strchr(c, '/')); *c++ = '/') {
			*c = 0;
			mkdir(sub, 0755);
		}
		mkdir(sub, 0755);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (symlink(target, path))
		return perror(path), -1;
	return 0;
}

/* The extra path into the mount of mode (see the top). */
static int plant_mode(const char *mode, const char *lib)
{
	char id[160] = "", name[256];

	if (!strcmp(mode, "source"))
		return plant("/var/tmp", "stacktop-hostile-fuse.c", lib);
	if (!strcmp(mode, "debug")) {
		if (!dl_iterate_phdr(libc_build_id, id) || strlen(id) < 4)
			return fprintf(stderr, "hostile_fuse: no libc build-id\n"), -1;
		snprintf(name, sizeof(name), ".build-id/%.2s/%s.debug", id, id + 2);
		return plant("/usr/lib/debug", name, lib);
	}
	return strcmp(mode, "perfmap") ? -1 : 0;
}

/* After the file is mapped: the threads of mode, and /tmp on the mount. */
static int start_mode(const char *mode, const char *dir)
{
	pthread_t th;

	if (!strcmp(mode, "source"))
		return pthread_create(&th, NULL, source_thread, NULL) ? -1 : 0;
	if (!strcmp(mode, "perfmap")) {
		unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (code == MAP_FAILED || mount(dir, "/tmp", NULL, MS_BIND, NULL))
			return perror("hostile_fuse: perfmap"), -1;
		emit_countdown(code, 1000000);
		return pthread_create(&th, NULL, jit_thread, code) ? -1 : 0;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char opts[128], path[4096];
	long off = file_offset_of((const void *)&hostile_spin);
	uint64_t (*spin)(uint64_t, uint64_t), x = 1;
	volatile char touch;
	pthread_t th;
	struct stat st;
	char *base;
	int fd;

	const char *mode = argc > 2 ? argv[2] : NULL;

	if (argc < 2 || argc > 3 || off < 0) {
		fprintf(stderr, "usage: hostile_fuse DIR [perfmap | source | debug]\n");
		return 2;
	}
	self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (self_fd < 0 || fstat(self_fd, &st))
		return perror("/proc/self/exe"), 1;
	self_size = (uint64_t)st.st_size;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return perror("hostile_fuse: mount namespace"), 77;
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0)
		return perror("/dev/fuse"), 77;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
	if (mount("hostile", argv[1], "fuse.hostile", MS_NOSUID | MS_NODEV, opts))
		return perror("hostile_fuse: mount"), 77;
	if (pthread_create(&th, NULL, daemon_main, NULL))
		return 1;
	snprintf(path, sizeof(path), "%s/lib.so", argv[1]);
	if (mode && plant_mode(mode, path))
		return 1;
	base = map_code(path, O_RDONLY, self_size, &fd);
	if (!base)
		return 1;
	for (uint64_t o = 0; o < self_size; o += 4096)
		touch = base[o];
	(void)touch;
	close(fd); /* FLUSH is answered: before the hang */
	if (mode && start_mode(mode, argv[1]))
		return 1;
	atomic_store(&hang, 1);
	spin = (uint64_t(*)(uint64_t, uint64_t))(base + off);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		x = spin(x, 1000000);
		sink = x;
	}
}

/* Last in the file: the line table names a file in the mount (source). */
#line 1 "/var/tmp/stacktop-hostile-fuse.c"
KEEP uint64_t source_loop(uint64_t x, uint64_t n)
{
	SPIN(x, n);
	return x;
}
