/*
 * procwords — the whole machine's words besides the process table's rows:
 * a process's label for other views, the box's alerts line (the table and
 * the top view draw it), where each busy floor is spent (looked up in the
 * window for the table's verdicts and the alerts), and the small texts the
 * table shares with them. Strings only: the views draw them. Names from
 * targets come out escaped where the comment says so, raw elsewhere.
 */
#ifndef STACKTOP_PROCWORDS_H
#define STACKTOP_PROCWORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "stacktop/proc/machine.h"
#include "stacktop/ui/view_procs.h"

struct frame;
struct window;

/* Where each busy floor of p[0..n) is spent, into st->floors: the
 * process's hottest user function (kernel frames hidden, by own samples)
 * in w over the seconds it sat at its floor, those whose CPU point is <=
 * floor_pct + max(5, floor_pct / 4) (the point at t is the second before
 * t: bucket (t - 0.5 s) / bucket_ns); a floor decided on fine steps
 * (machine_proc.floor_fine: a history of a few seconds, maybe no second
 * at the floor), over the window's samples of the threads that hold it
 * (floor_tids, the first with samples; none: its floor seconds). "" when
 * it has no samples there.
 * At most VIEW_PROCS_FLOORS processes, the highest floors first; one
 * window_top of one process's floor seconds (or a holder) each. w NULL:
 * none. 0 or -errno. */
int procwords_floors(struct view_procs_state *st, const struct machine_proc *p, size_t n,
		     struct window *w);
/* A busy floor's function from st->floors, "" when not looked up (st
 * NULL: none). */
const char *procwords_floor_of(const struct view_procs_state *st, pid_t pid);

/* The alerts line of the whole machine: the processes with a verdict, most
 * important first (stuck in D, busy floor, memory climbing, zombies with
 * their parent), e.g. "! stuck: nfsd (812) 1 thread in D 8s   ! busy
 * floor: floor (4242) 31% in busy_poll   ! memory climbs: leak (4250)
 * +2.1 MiB/min
 * ! zombie: 4260 defunct, parent zpar (4259) has not reaped it"; in width
 * columns (0: any), in brief words when the long ones do not all fit
 * ("! stuck: nfsd (812) D 8s", "! memory: leak (4250) +2.1 MiB/min",
 * "! zombie: 4260, parent zpar (4259)"), what still does not fit counted
 * in "+N more"; "" when no process has a verdict. A busy floor's function
 * from st->floors (st NULL: none; cut to 16 columns in brief). Names
 * escaped. stacktop itself is left out (its memory grows while its window
 * fills; its row says so). */
void procwords_alerts(const struct machine_proc *p, size_t n, const struct view_procs_state *st,
		      int width, char *buf, size_t size);

/* A process's label for other views: "comm 4242" (escaped; kernel
 * threads "[comm] 4242"); "pid 4242" when p is NULL. */
void procwords_label(const struct machine_proc *p, pid_t pid, char *buf, size_t size);

/* The process pid among p[0..n), NULL when not there. */
const struct machine_proc *procwords_find(const struct machine_proc *p, size_t n, pid_t pid);
/* A function's name as the table shows it (raw: the renderer escapes):
 * its name (short C++ names unless full), module+offset without one, the
 * pc without a sym; " [k]" after a kernel function. */
void procwords_func(const struct frame *f, bool full, char *out, size_t size);

#endif
