/*
 * pump — the one hook slow work calls so the sample rings keep being read.
 *
 * The perf rings fill at the sampling rate whatever stacktop is doing, and
 * the kernel drops what does not fit. Some work cannot be cut short: the
 * first sample in a module loads its symbols and DWARF (hundreds of ms
 * when a debug file is compressed, more on a saturated machine),
 * /proc/kallsyms is read once. Such loaders call pump() between their
 * steps; the program sets the hook once (pump_set: the sampler empties its
 * rings into memory, see sample/backlog.h), and the modules that call it
 * need not know about samplers, which sit below them or beside them.
 *
 * Contract: pump() calls the hook at most every PUMP_EVERY_NS and never
 * from inside itself; without a hook it does nothing. The hook must not
 * call back into the code that pumped (it copies records, and takes the
 * whole machine's fine steps, which read /proc into proc/machine's own
 * state). Only the thread that set the hook runs it (a worker thread's
 * pump() does nothing).
 */
#ifndef STACKTOP_PUMP_H
#define STACKTOP_PUMP_H

#define PUMP_EVERY_NS 2000000ull

/* fn NULL: no hook. */
void pump_set(void (*fn)(void *ctx), void *ctx);
void pump(void);

#endif
