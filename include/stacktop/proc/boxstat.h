/*
 * boxstat — the box's own CPU and memory, for the whole-machine mode
 * (proc/machine reads them each tick): /proc/stat (online CPUs, its cpuN
 * lines; the busy share since the last read over every CPU's jiffies) and
 * /proc/meminfo (used = MemTotal - MemAvailable). Both files stay open
 * and are read again from their start; the /proc/stat buffer is
 * allocated once (the cpu lines of 256 CPUs and more).
 *
 *   boxstat_init → boxstat_read* → boxstat_free
 *
 * A read that fails leaves the last figures. Errors: 0 / -errno.
 */
#ifndef STACKTOP_BOXSTAT_H
#define STACKTOP_BOXSTAT_H

#include <stdint.h>

struct boxstat {
	int ncpu;	   /* online CPUs */
	double cpu_pct;	   /* busy since the previous read, % of one core (200: two busy) */
	uint64_t mem_used; /* bytes */
	uint64_t mem_total;
	/* internal */
	int stat_fd, meminfo_fd;
	uint64_t busy_prev, idle_prev;
	char *statbuf;
};

int boxstat_init(struct boxstat *b);
/* Both files under procfd (an open /proc). */
void boxstat_read(struct boxstat *b, int procfd);
void boxstat_free(struct boxstat *b);

#endif
