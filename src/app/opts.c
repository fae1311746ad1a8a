/*
 * opts — the command line.
 *
 * Owns the translation of argv into struct opts: getopt_long with "+" so
 * that everything from the first non-option on is the command to launch and
 * keeps its own options, and with a leading ":" so a missing argument is
 * told apart from an unknown option. opterr is cleared: this module never
 * prints. On a usage error opts_parse writes one sentence into err and
 * returns -EINVAL; main prints it and exits 2.
 *
 * Contract: opts_parse fills every field of *o (defaults first), so the
 * caller needs no memset. o->command points into argv (no copy, nothing to
 * free). getopt keeps its state in globals; opts_parse resets it (optind =
 * 0 makes glibc reinitialise fully, including the position inside a cluster
 * of short options), so it may be called more than once, but not from two
 * threads at once.
 *
 * Numbers are parsed by hand rather than with strtod/strtoul: those accept
 * leading blanks, signs, hex, "inf" and, once main has called setlocale for
 * ncursesw, a decimal comma instead of a point in some locales.
 */
#include "stacktop/app/opts.h"
#include "stacktop/lib/text.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Long-only options get values past any char. */
enum {
	OPTS_STACK_SIZE = 256,
	OPTS_ASCII,
	OPTS_SPIKE_FOR,
	OPTS_MODE,
	OPTS_JSON,
	OPTS_NATIVE,
	OPTS_FORMAT,
	OPTS_PER_THREAD,
	OPTS_MEMORY,
	OPTS_FORCE,
	OPTS_OUTPUT_DIR,
	OPTS_OUTPUT_MODE,
	OPTS_NO_IDLE,
	OPTS_FULL_NAMES,
	OPTS_VIEW_OPT,
	OPTS_SUBPROCESSES,
	OPTS_DEBUGINFOD,
	OPTS_NO_RUNTIME_ATTACH,
	OPTS_EVENTS,
	OPTS_BASE,
	OPTS_NEW,
	OPTS_FAIL_ABOVE,
	OPTS_ANNOTATE,
	OPTS_SOURCE_PATH,
};

/* Kernel PID_MAX_LIMIT on 64-bit: no PID can be larger. */
#define OPTS_PID_MAX 4194304

static const char opts_short[] = "+:ap:r:d:W:bn:l:s:LKwo:hV";

/* test_docs.sh reads the names in this table: keep one entry per line. */
static const struct option opts_long[] = {
    {"pid", required_argument, NULL, 'p'},
    {"all", no_argument, NULL, 'a'},
    {"subprocesses", no_argument, NULL, OPTS_SUBPROCESSES},
    {"debuginfod", optional_argument, NULL, OPTS_DEBUGINFOD},
    {"no-runtime-attach", no_argument, NULL, OPTS_NO_RUNTIME_ATTACH},
    {"rate", required_argument, NULL, 'r'},
    {"delay", required_argument, NULL, 'd'},
    {"window", required_argument, NULL, 'W'},
    {"batch", no_argument, NULL, 'b'},
    {"iterations", required_argument, NULL, 'n'},
    {"limit", required_argument, NULL, 'l'},
    {"sort", required_argument, NULL, 's'},
    {"lines", no_argument, NULL, 'L'},
    {"no-kernel", no_argument, NULL, 'K'},
    {"stack-size", required_argument, NULL, OPTS_STACK_SIZE},
    {"ascii", no_argument, NULL, OPTS_ASCII},
    {"spike-for", required_argument, NULL, OPTS_SPIKE_FOR},
    {"mode", required_argument, NULL, OPTS_MODE},
    {"wall", no_argument, NULL, 'w'},
    {"events", required_argument, NULL, OPTS_EVENTS},
    {"no-idle", no_argument, NULL, OPTS_NO_IDLE},
    {"full-names", no_argument, NULL, OPTS_FULL_NAMES},
    {"view", required_argument, NULL, OPTS_VIEW_OPT},
    {"annotate", required_argument, NULL, OPTS_ANNOTATE},
    {"source-path", required_argument, NULL, OPTS_SOURCE_PATH},
    {"json", no_argument, NULL, OPTS_JSON},
    {"native", no_argument, NULL, OPTS_NATIVE},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPTS_FORMAT},
    {"per-thread", no_argument, NULL, OPTS_PER_THREAD},
    {"memory", no_argument, NULL, OPTS_MEMORY},
    {"force", no_argument, NULL, OPTS_FORCE},
    {"output-dir", required_argument, NULL, OPTS_OUTPUT_DIR},
    {"output-mode", required_argument, NULL, OPTS_OUTPUT_MODE},
    {"base", required_argument, NULL, OPTS_BASE},
    {"new", required_argument, NULL, OPTS_NEW},
    {"fail-above", required_argument, NULL, OPTS_FAIL_ABOVE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

const char opts_usage[] =
    "Usage: stacktop [OPTIONS] [-a]\n"
    "       stacktop [OPTIONS] -p PID[,PID...]\n"
    "       stacktop [OPTIONS] [--] COMMAND [ARGS...]\n"
    "       stacktop dump [--json] [--native] -p PID\n"
    "       stacktop record [OPTIONS] [-d SECONDS] -o FILE [-a | -p PID | -- CMD]\n"
    "       stacktop report [OPTIONS] FILE\n"
    "       stacktop diff [OPTIONS] BASE NEW   (or --base A1,A2 --new B1,B2)\n"
    "\n"
    "A live sampling profiler: top, but for stacks. Shows the functions a\n"
    "process spends its time in, over a rolling window, refreshed live.\n"
    "\n"
    "Target:\n"
    "  -a, --all                the whole machine: every process (also with no\n"
    "                           target at all); the first view is the process\n"
    "                           table, Enter narrows every view to one process.\n"
    "                           Needs root or CAP_PERFMON\n"
    "  -p, --pid PID[,PID...]   attach to running processes (up to 64)\n"
    "  COMMAND [ARGS...]        launch COMMAND and profile it from its start; the\n"
    "                           first non-option starts it, \"--\" marks it clearly\n"
    "      --subprocesses       also profile every process the target forks or\n"
    "                           execs, and their children (up to 4096 at once);\n"
    "                           runs until the last of them exits\n"
    "      --debuginfod[=URLS]  fetch missing debug files by build-id from\n"
    "                           debuginfod servers (URLS, else DEBUGINFOD_URLS),\n"
    "                           in the background; names appear when they\n"
    "                           arrive. Off by default: no network without it\n"
    "      --no-runtime-attach  never ask a JVM for its perf map (by default a\n"
    "                           HotSpot JVM whose JIT code is unnamed is asked,\n"
    "                           as jcmd PID Compiler.perfmap does)\n"
    "\n"
    "Options:\n"
    "      --mode cpu|wall      cpu: on-CPU time (perf events, the default);\n"
    "                           wall: every thread, running or waiting (ptrace)\n"
    "  -w, --wall               the same as --mode wall\n"
    "      --events KIND        cpu mode's perf events: auto (the default: per-cpu\n"
    "                           where allowed, else inherit), per-cpu (one event\n"
    "                           per CPU, filtered by process in the kernel; needs\n"
    "                           root or CAP_PERFMON and CAP_BPF), inherit (events\n"
    "                           per thread that new threads inherit; threads\n"
    "                           shorter than 10 ms are undersampled) or per-thread\n"
    "  -r, --rate HZ            samples per second per thread (1..10000, default\n"
    "                           99; wall mode 19)\n"
    "  -d, --delay SECONDS      refresh interval (0.1..3600, decimals allowed,\n"
    "                           default 1); with record: how long to record\n"
    "  -W, --window SECONDS     rolling window length (1..86400, default 60)\n"
    "  -b, --batch              print the table as text every delay, not the TUI\n"
    "  -n, --iterations N       stop after N refreshes (default: run until quit)\n"
    "  -l, --limit N            rows per refresh in batch mode (default 30)\n"
    "      --view VIEW          batch mode: print the top, icicle, threads, memory\n"
    "                           or processes view (default top, with -a the\n"
    "                           process table then top; icicle and threads:\n"
    "                           200x40 text)\n"
    "      --annotate FUNC      open the annotate view on FUNC (the hottest\n"
    "                           function named FUNC, else containing it); with -b\n"
    "                           print it: PCT  ADDR  INSTRUCTION, source between\n"
    "      --source-path DIR    annotate: look for source files in DIR too\n"
    "                           (repeatable; the target's own paths come first)\n"
    "  -s, --sort KEY           own, total, owntime or totaltime (default own)\n"
    "  -L, --lines              aggregate by file:line from the start (key L)\n"
    "  -K, --no-kernel          hide kernel frames from the start (key K)\n"
    "      --no-idle            wall mode: hide idle threads from the start (key i)\n"
    "      --full-names         C++ names whole from the start: return type and\n"
    "                           parameters (key v; default ns::Class::method)\n"
    "      --stack-size BYTES   user stack bytes copied per sample (512..65528,\n"
    "                           rounded up to a multiple of 8, default 16384)\n"
    "      --ascii              draw charts with ASCII only (no block characters)\n"
    "      --spike-for SECONDS  CPU above 2x baseline this long raises the spike\n"
    "                           alert (1..86400, default 30)\n"
    "      --output-dir DIR     where the w key writes profiles (default .)\n"
    "      --json               dump: one JSON object instead of text\n"
    "      --native             dump: a Python thread's native frames too, between\n"
    "                           its Python ones (default: its Python traceback)\n"
    "  -o, --output FILE        record: the profile file to write\n"
    "      --format FORMAT      record: folded, pprof or speedscope (default: from\n"
    "                           the file name: .folded/.txt, .pb.gz, .json)\n"
    "      --per-thread         record: a root frame per thread (folded)\n"
    "      --memory             record: the memory view's code paths instead, as a\n"
    "                           pprof profile of bytes still mapped (inuse_space)\n"
    "      --force              overwrite an existing output file\n"
    "      --output-mode MODE   file mode of written profiles, octal, at most 0644\n"
    "                           (default 0600: profiles hold command lines)\n"
    "      --base FILE[,FILE...]  diff: the base profiles (repetitions of one run)\n"
    "      --new FILE[,FILE...]   diff: the new profiles\n"
    "      --fail-above PCT     diff: exit 3 when a function's own or total share\n"
    "                           grew significantly by more than PCT points (a CI\n"
    "                           gate)\n"
    "  -h, --help               show this help and exit\n"
    "  -V, --version            show the version and exit\n"
    "\n"
    "Keys:\n"
    "  1 2 3 4, Tab             top view, icicle view, threads view, memory view\n"
    "  0                        the process table of the whole machine (-a)\n"
    "  c                        process table: group by cgroup (container)\n"
    "  /                        process table: filter by name, command or PID\n"
    "                           (Enter: keep, Esc: clear)\n"
    "  s S, > <                 next / previous sort column (top: %Own, %Total,\n"
    "                           OwnTime, TotalTime; threads: CPU, floor, samples,\n"
    "                           TID, name)\n"
    "  L                        toggle function / file:line\n"
    "  K                        toggle kernel frames\n"
    "  i                        wall mode: hide or show idle threads\n"
    "  g                        hide or show the CPU and memory charts\n"
    "  v                        C++ names whole (return type, parameters) or\n"
    "                           short, ns::Class::method (the default)\n"
    "  b, B                     baseline = the last 10 s (CPU and profile); clear it\n"
    "  D                        top view: diff the last 10 s against the baseline\n"
    "                           (own and total shares; the icicle by call path)\n"
    "  Up Down PgUp PgDn Home End  move the selection (memory: scroll)\n"
    "  Left Right               icicle: previous / next sibling (Up: the caller,\n"
    "                           Down: the heaviest callee)\n"
    "  Enter, Esc               top: open the function in the icicle; threads:\n"
    "                           show only that thread; Esc: all threads again;\n"
    "                           process table: only that process (Esc: all)\n"
    "  Backspace                icicle: zoom out (as Esc; Enter zooms in)\n"
    "  o                        threads: select the holder of the lock it waits on\n"
    "  / n N f c t x            icicle: search, next/previous match, bottom-up,\n"
    "                           colour by kind or module, one root per thread,\n"
    "                           direct recursion unfolded (default: one bar, xN)\n"
    "  a                        top, icicle: annotate the selected function\n"
    "                           (again: source only / mixed / instructions only;\n"
    "                           Enter on a call: the callee; Esc: back)\n"
    "  w                        write the window to a profile file\n"
    "  space                    freeze the display (sampling continues)\n"
    "  R                        reset the window\n"
    "  ?                        help\n"
    "  q, Ctrl-C                quit\n"
    "\n"
    "Examples:\n"
    "  sudo stacktop                            the whole machine: which process?\n"
    "  sudo stacktop -p 4242                    profile a running process\n"
    "  stacktop -- ./server --port 8080         launch a command and profile it\n"
    "  stacktop -b -n 5 -p 4242 > profile.txt   five text refreshes into a file\n"
    "  sudo stacktop -w -p 4242                 why is it slow with low CPU?\n"
    "  sudo stacktop dump -p 4242               every thread's stack, once\n"
    "  sudo stacktop record -d 30 -o cpu.pb.gz -p 4242   for go tool pprof\n"
    "  stacktop diff -b --fail-above 5 old.pb.gz new.pb.gz   what changed?\n"
    "\n"
    "Needs root, or CAP_PERFMON and CAP_SYS_PTRACE, or kernel.perf_event_paranoid\n"
    "<= 1 for your own processes. Exit status: 0 ok, 1 runtime error, 2 usage\n"
    "error, 3 diff --fail-above found a regression. See stacktop(1).\n";

static int opts_fail(char *err, size_t errsz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int opts_fail(char *err, size_t errsz, const char *fmt, ...)
{
	if (err && errsz) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The long name of the option whose getopt value is val, for messages. */
static const char *opts_name(int val)
{
	const struct option *lo;

	for (lo = opts_long; lo->name; lo++)
		if (lo->val == val)
			return lo->name;
	return NULL;
}

/* Strict unsigned decimal: digits only, no sign, no blanks; -ERANGE past max. */
static int opts_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*out = v;
	return v > max ? -ERANGE : 0;
}

/* Decimal with an optional fraction ("2", "0.5", ".5", "2."), locale-free.
 * Digits past the 15th of the fraction are ignored: they cannot matter for
 * a range of 0.1..3600 seconds. */
static int opts_decimal(const char *s, double *out)
{
	unsigned long long ip = 0, fp = 0, div = 1;
	int idigits = 0, fdigits = 0;

	if (!s)
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++, idigits++) {
		if (ip > 1000000000000ULL)
			return -ERANGE;
		ip = ip * 10 + (unsigned)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fdigits++) {
			if (fdigits < 15) {
				fp = fp * 10 + (unsigned)(*s - '0');
				div *= 10;
			}
		}
	}
	if (*s || idigits + fdigits == 0)
		return -EINVAL;
	*out = (double)ip + (double)fp / (double)div;
	return 0;
}

/* An integer option in [lo, hi]; the message names the option and range. */
static int opts_int(int val, const char *arg, unsigned long long lo, unsigned long long hi,
		    unsigned long long *out, char *err, size_t errsz)
{
	unsigned long long v;

	if (opts_uint(arg, hi, &v) < 0 || v < lo)
		return opts_fail(err, errsz,
				 "invalid --%s value '%s': expected an integer from %llu to %llu",
				 opts_name(val), arg, lo, hi);
	*out = v;
	return 0;
}

/* The integer options and their ranges: opts_one checks the value first. */
static const struct opts_range {
	int val;
	unsigned long long lo, hi;
} opts_ranges[] = {
    {'r', 1, 10000},
    {'W', 1, 86400},
    {'n', 1, 1000000000},
    {'l', 1, 100000},
    {OPTS_STACK_SIZE, 512, 65528},
    {OPTS_SPIKE_FOR, 1, 86400},
};

/* The words of the keyword options, NULL-terminated; --view's in the
 * order of enum opts_view, --mode's index 1 is wall. */
static const char *const opts_modes[] = {"cpu", "wall", NULL};
static const char *const opts_views[] = {"top", "icicle", "threads", "memory", "processes", NULL};
/* In the order of enum perf_events (perf.h). */
static const char *const opts_events[] = {"auto", "per-cpu", "inherit", "per-thread", NULL};
static const char *const opts_formats[] = {"folded", "pprof", "speedscope", NULL};

/* A keyword option: *out = the index of arg (in any case) in words; the
 * message lists the words ("expected top, icicle or threads"). */
static int opts_keyword(int val, const char *arg, const char *const *words, unsigned long long *out,
			char *err, size_t errsz)
{
	char list[128] = "";
	const char *sep;
	size_t i, used = 0;

	for (i = 0; words[i]; i++) {
		if (!strcasecmp(arg, words[i])) {
			*out = i;
			return 0;
		}
	}
	for (i = 0; words[i] && used < sizeof(list); i++) {
		sep = words[i + 1] ? ", " : " or ";
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? sep : "",
					 words[i]);
	}
	return opts_fail(err, errsz, "invalid --%s value '%s': expected %s", opts_name(val), arg,
			 list);
}

/* An octal file mode with no bit outside 0644 (no execute, and no write
 * for group or others: a profile holds command lines). */
static int opts_file_mode(const char *arg, unsigned *out)
{
	unsigned v = 0;
	size_t n;

	for (n = 0; arg[n]; n++) {
		if (arg[n] < '0' || arg[n] > '7' || n >= 4)
			return -EINVAL;
		v = v * 8 + (unsigned)(arg[n] - '0');
	}
	if (n == 0 || (v & ~0644u))
		return -EINVAL;
	*out = v;
	return 0;
}

static bool opts_has_pid(const struct opts *o, pid_t pid)
{
	int i;

	for (i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

/* Add "PID[,PID...]" to o->pids; blanks also separate, so that
 * -p "$(pidof x)" works. Empty fields (",,", a trailing comma) are junk. */
static int opts_pids(struct opts *o, const char *arg, char *err, size_t errsz)
{
	const char *s = arg;
	unsigned long long v;
	char num[16];
	size_t n;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		for (n = 0; s[n] >= '0' && s[n] <= '9'; n++)
			;
		if (n == 0)
			return opts_fail(err, errsz,
					 "invalid --pid value '%s': expected process IDs separated "
					 "by commas, like 4242,4243",
					 arg);
		v = 0;
		if (n < sizeof(num)) {
			memcpy(num, s, n);
			num[n] = '\0';
			if (opts_uint(num, OPTS_PID_MAX, &v) < 0)
				v = 0;
		}
		if (v == 0)
			return opts_fail(
			    err, errsz,
			    "invalid --pid value '%.*s': a process ID is an integer from 1 to %d",
			    (int)n, s, OPTS_PID_MAX);
		s += n;
		if (!opts_has_pid(o, (pid_t)v)) {
			if (o->npids == OPTS_MAX_PIDS)
				return opts_fail(err, errsz,
						 "too many processes for --pid: at most %d",
						 OPTS_MAX_PIDS);
			o->pids[o->npids++] = (pid_t)v;
		}
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (*s == '\0')
			return 0;
		if (*s == ',')
			s++;
	}
}

static void opts_defaults(struct opts *o)
{
	*o = (struct opts){.rate_hz = 99,
			   .delay_s = 1.0,
			   .window_s = 60,
			   .iterations = 0,
			   .limit = 30,
			   .sort = SORT_OWN,
			   .stack_size = 16384,
			   .spike_for_s = 30,
			   .output_dir = ".",
			   .output_mode = 0600,
			   .fail_above = -1};
}

/* getopt returned '?': name what was wrong. For long options glibc leaves
 * optopt 0 when the name is unknown or ambiguous, and sets it to the
 * option's value when a flag was given "=value". */
static int opts_bad_option(char **argv, char *err, size_t errsz)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const struct option *lo;
	char cands[256] = "";
	size_t len, nc = 0;

	if (optopt && strncmp(arg, "--", 2) == 0 && opts_name(optopt))
		return opts_fail(err, errsz, "option --%s takes no value; try --help",
				 opts_name(optopt));
	if (optopt)
		return opts_fail(err, errsz, "unknown option '-%c'; try --help", optopt);
	if (strncmp(arg, "--", 2) != 0)
		return opts_fail(err, errsz, "unknown option '%s'; try --help", arg);
	len = strcspn(arg + 2, "=");
	for (lo = opts_long; lo->name; lo++) {
		if (strncmp(lo->name, arg + 2, len) == 0 && len > 0) {
			size_t used = strlen(cands);
			snprintf(cands + used, sizeof(cands) - used, "%s--%s", nc ? ", " : "",
				 lo->name);
			nc++;
		}
	}
	if (nc > 1)
		return opts_fail(err, errsz, "ambiguous option '%.*s' (could be %s); try --help",
				 (int)len + 2, arg, cands);
	return opts_fail(err, errsz, "unknown option '%.*s'; try --help", (int)len + 2, arg);
}

static int opts_missing(char *err, size_t errsz)
{
	static const struct {
		int val;
		const char *meta;
	} metas[] = {
	    {'p', "PID[,PID...]"},
	    {'r', "HZ"},
	    {'d', "SECONDS"},
	    {'W', "SECONDS"},
	    {'n', "N"},
	    {'l', "N"},
	    {'s', "KEY"},
	    {OPTS_STACK_SIZE, "BYTES"},
	    {OPTS_SPIKE_FOR, "SECONDS"},
	    {OPTS_MODE, "cpu|wall"},
	    {'o', "FILE"},
	    {OPTS_FORMAT, "folded|pprof|speedscope"},
	    {OPTS_OUTPUT_DIR, "DIR"},
	    {OPTS_OUTPUT_MODE, "MODE"},
	};
	const char *meta = "a value";
	size_t i;

	for (i = 0; i < sizeof(metas) / sizeof(metas[0]); i++)
		if (metas[i].val == optopt)
			meta = metas[i].meta;
	if (!opts_name(optopt))
		return opts_fail(err, errsz, "option '-%c' needs a value; try --help", optopt);
	return opts_fail(err, errsz, "option --%s needs a value (%s); try --help",
			 opts_name(optopt), meta);
}

/* A debuginfod server list as DEBUGINFOD_URLS has it: URLs separated by
 * spaces, each http://, https:// or file://, printable ASCII only. */
static int opts_urls(const char *arg)
{
	static const char *const schemes[] = {"http://", "https://", "file://"};
	bool start = true, any = false;

	for (const char *p = arg; *p; p++) {
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 127) {
			if (*p != ' ')
				return -EINVAL;
			start = true;
			continue;
		}
		if (start) {
			size_t i;

			for (i = 0; i < 3 && strncmp(p, schemes[i], strlen(schemes[i])); i++)
				;
			if (i == 3)
				return -EINVAL;
			start = false;
			any = true;
		}
	}
	return any ? 0 : -EINVAL;
}

/* Apply one option with its argument. */
static int opts_one(struct opts *o, int c, const char *arg, char *err, size_t errsz)
{
	unsigned long long v = 0;
	double d;
	int ret = 0;
	const struct opts_range *r;

	for (r = opts_ranges; r < opts_ranges + sizeof(opts_ranges) / sizeof(*r); r++)
		if (r->val == c && (ret = opts_int(c, arg, r->lo, r->hi, &v, err, errsz)) < 0)
			return ret;
	switch (c) {
	case 'p':
		return opts_pids(o, arg, err, errsz);
	case 'r':
		o->rate_hz = (unsigned)v;
		o->rate_given = true;
		break;
	case 'd':
		if (o->cmd == OPTS_CMD_RECORD) {
			/* record: -d is how long to record. */
			if (opts_decimal(arg, &d) < 0 || d < 0.1 || d > 86400)
				return opts_fail(
				    err, errsz,
				    "invalid -d value '%s': expected seconds to record "
				    "from 0.1 to 86400",
				    arg);
			o->duration_s = d;
			break;
		}
		if (opts_decimal(arg, &d) < 0 || d < 0.1 || d > 3600)
			return opts_fail(err, errsz,
					 "invalid --delay value '%s': expected seconds from 0.1 to "
					 "3600, like 0.5",
					 arg);
		o->delay_s = d;
		break;
	case 'W':
		o->window_s = (unsigned)v;
		break;
	case 'b':
		o->batch = true;
		break;
	case 'n':
		o->iterations = (long)v;
		break;
	case 'l':
		o->limit = (int)v;
		break;
	case 's':
		if (sort_parse(arg, &o->sort) < 0)
			return opts_fail(
			    err, errsz,
			    "invalid --sort value '%s': expected own, total, owntime or totaltime",
			    arg);
		break;
	case 'L':
		o->lines = true;
		break;
	case 'K':
		o->hide_kernel = true;
		break;
	case OPTS_STACK_SIZE:
		/* perf wants sample_stack_user 8-byte aligned (EINVAL otherwise). */
		o->stack_size = (unsigned)((v + 7) & ~7ULL);
		break;
	case OPTS_ASCII:
		o->ascii = true;
		break;
	case OPTS_MODE:
		if ((ret = opts_keyword(c, arg, opts_modes, &v, err, errsz)) < 0)
			return ret;
		o->wall = v == 1;
		break;
	case 'w':
		o->wall = true;
		break;
	case OPTS_EVENTS:
		if ((ret = opts_keyword(c, arg, opts_events, &v, err, errsz)) < 0)
			return ret;
		o->events = (unsigned)v;
		o->events_given = true;
		break;
	case OPTS_NO_IDLE:
		o->idle_hidden = true;
		break;
	case OPTS_FULL_NAMES:
		o->full_names = true;
		break;
	case OPTS_VIEW_OPT:
		if ((ret = opts_keyword(c, arg, opts_views, &v, err, errsz)) < 0)
			return ret;
		o->view = (enum opts_view)v;
		o->view_given = true;
		break;
	case 'a':
		o->all = true;
		break;
	case OPTS_JSON:
		o->json = true;
		break;
	case OPTS_NATIVE:
		o->native = true;
		break;
	case OPTS_ANNOTATE:
		if (!arg[0])
			return opts_fail(err, errsz, "option --annotate needs a function name");
		o->annotate = arg;
		break;
	case OPTS_SOURCE_PATH:
		if (!arg[0])
			return opts_fail(err, errsz, "option --source-path needs a directory");
		if (o->nsource_path == OPTS_SOURCE_PATH_MAX)
			return opts_fail(err, errsz, "--source-path may be given at most %d times",
					 OPTS_SOURCE_PATH_MAX);
		o->source_path[o->nsource_path++] = arg;
		break;
	case 'o':
		if (!arg[0])
			return opts_fail(err, errsz, "option --output needs a file name");
		o->output = arg;
		break;
	case OPTS_FORMAT:
		if ((ret = opts_keyword(c, arg, opts_formats, &v, err, errsz)) < 0)
			return ret;
		o->format = arg;
		break;
	case OPTS_PER_THREAD:
		o->per_thread = true;
		break;
	case OPTS_MEMORY:
		o->memory = true;
		break;
	case OPTS_FORCE:
		o->force = true;
		break;
	case OPTS_OUTPUT_DIR:
		if (!arg[0])
			return opts_fail(err, errsz, "option --output-dir needs a directory");
		o->output_dir = arg;
		break;
	case OPTS_OUTPUT_MODE:
		if (opts_file_mode(arg, &o->output_mode) < 0)
			return opts_fail(err, errsz,
					 "invalid --output-mode value '%s': expected an octal mode "
					 "of at most 0644, like 0600 or 0640",
					 arg);
		break;
	case OPTS_SPIKE_FOR:
		o->spike_for_s = (unsigned)v;
		break;
	case OPTS_SUBPROCESSES:
		o->subprocesses = true;
		break;
	case OPTS_NO_RUNTIME_ATTACH:
		o->no_runtime_attach = true;
		break;
	case OPTS_DEBUGINFOD:
		o->debuginfod = true;
		if (arg && opts_urls(arg) < 0) {
			char shown[128]; /* the value as typed, control characters made visible */

			text_sanitize(arg, shown, sizeof(shown));
			return opts_fail(err, errsz,
					 "invalid --debuginfod value '%s': expected server URLs "
					 "(http://, https:// or file://, separated by spaces)",
					 shown);
		}
		o->debuginfod_urls = arg;
		break;
	case OPTS_BASE:
	case OPTS_NEW:
		if (!arg[0])
			return opts_fail(err, errsz, "option --%s needs profile files",
					 opts_name(c));
		*(c == OPTS_BASE ? &o->diff_base : &o->diff_new) = arg;
		break;
	case OPTS_FAIL_ABOVE:
		if (opts_decimal(arg, &d) < 0 || d > 100)
			return opts_fail(
			    err, errsz,
			    "invalid --fail-above value '%s': expected percentage points "
			    "from 0 to 100, like 5",
			    arg);
		o->fail_above = d;
		break;
	default:
		return opts_fail(err, errsz, "internal error: unhandled option %d", c);
	}
	return ret;
}

/* Options that only make sense with one subcommand. */
/* -a (or nothing to profile): what goes with the whole machine. */
static int opts_check_all(struct opts *o, char *err, size_t errsz)
{
	if (!o->all) {
		if (o->view == OPTS_VIEW_PROCESSES && o->cmd != OPTS_CMD_DIFF)
			return opts_fail(err, errsz,
					 "--view processes is the whole machine's table: give -a");
		return 0;
	}
	if (o->npids || o->command)
		return opts_fail(err, errsz,
				 "-a samples every process: give it without -p PID or a command");
	if (o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_REPORT || o->cmd == OPTS_CMD_DIFF)
		return opts_fail(err, errsz, "-a goes with the live view and 'stacktop record'");
	if (o->wall)
		return opts_fail(err, errsz,
				 "the whole machine is sampled on the CPU: wall mode stops "
				 "threads one at a time and takes one process (-w -p PID)");
	if (o->memory)
		return opts_fail(err, errsz,
				 "record --memory traces one process's mappings: give -p PID");
	if (o->subprocesses)
		return opts_fail(err, errsz,
				 "-a already samples every process: drop --subprocesses");
	if (o->events_given && o->events != 1 /* per-cpu */)
		return opts_fail(err, errsz,
				 "the whole machine is sampled with one event per CPU: "
				 "--events per-cpu only");
	return 0;
}

static int opts_check_command(struct opts *o, char *err, size_t errsz)
{
	if (o->json && o->cmd != OPTS_CMD_DUMP)
		return opts_fail(err, errsz, "--json goes with 'stacktop dump'");
	if (o->native && o->cmd != OPTS_CMD_DUMP)
		return opts_fail(err, errsz, "--native goes with 'stacktop dump'");
	if ((o->output || o->format || o->per_thread || o->memory) && o->cmd != OPTS_CMD_RECORD)
		return opts_fail(
		    err, errsz,
		    "--output, --format, --per-thread and --memory go with 'stacktop record'");
	if (o->memory && (o->wall || (o->format && strcmp(o->format, "pprof"))))
		return opts_fail(err, errsz,
				 "--memory writes a pprof profile of cpu mode's memory tracing "
				 "(no --mode wall, --format pprof)");
	if (o->cmd == OPTS_CMD_RECORD && !o->output)
		return opts_fail(err, errsz, "record needs -o FILE (e.g. -o profile.pb.gz)");
	if ((o->diff_base || o->diff_new || o->fail_above >= 0) && o->cmd != OPTS_CMD_DIFF)
		return opts_fail(err, errsz,
				 "--base, --new and --fail-above go with 'stacktop diff'");
	if ((o->annotate || o->nsource_path) &&
	    (o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_RECORD || o->cmd == OPTS_CMD_DIFF))
		return opts_fail(
		    err, errsz,
		    "--annotate and --source-path go with the live view and 'stacktop report'");
	if (o->cmd == OPTS_CMD_REPORT && o->wall)
		return opts_fail(err, errsz, "report shows a saved FILE: --mode does not apply");
	if (o->debuginfod && (o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_REPORT))
		return opts_fail(err, errsz,
				 "--debuginfod goes with the live view and 'stacktop record'");
	if (o->events_given && (o->wall || o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_REPORT))
		return opts_fail(err, errsz,
				 "--events goes with cpu mode's live view and 'stacktop record'");
	if (o->no_runtime_attach && (o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_REPORT))
		return opts_fail(
		    err, errsz,
		    "--no-runtime-attach goes with the live view and 'stacktop record'");
	if (o->subprocesses && (o->cmd == OPTS_CMD_DUMP || o->cmd == OPTS_CMD_REPORT))
		return opts_fail(err, errsz,
				 "--subprocesses goes with the live view and 'stacktop record'");
	return opts_check_all(o, err, errsz);
}

/* diff: BASE NEW as words, or --base and --new; nothing to sample. */
static int opts_diff(struct opts *o, int argc, char **argv, char *err, size_t errsz)
{
	int left = argc - optind;

	if (o->npids || o->wall || o->events_given || o->subprocesses)
		return opts_fail(err, errsz,
				 "diff compares saved profiles: -p, --mode, --events and "
				 "--subprocesses do not apply");
	if (!!o->diff_base != !!o->diff_new)
		return opts_fail(err, errsz, "diff needs both --base and --new, or BASE NEW");
	if (o->diff_base && left)
		return opts_fail(err, errsz, "diff takes --base and --new, or BASE NEW, not both");
	if (!o->diff_base && left != 2)
		return opts_fail(err, errsz,
				 "diff needs two profiles: stacktop diff [OPTIONS] BASE NEW; try "
				 "--help");
	if (!o->diff_base) {
		o->diff_base = argv[optind];
		o->diff_new = argv[optind + 1];
	}
	if (!o->diff_base[0] || !o->diff_new[0])
		return opts_fail(err, errsz, "diff: a profile file name is empty");
	return opts_check_command(o, err, errsz);
}

int opts_parse(int argc, char **argv, struct opts *o, char *err, size_t errsz)
{
	int c, ret;

	opts_defaults(o);
	if (err && errsz)
		err[0] = '\0';
	if (argc < 1 || !argv)
		return opts_fail(err, errsz,
				 "nothing to profile: give -p PID or a command; try --help");

	/* A subcommand is the first word: parse the rest as its options. */
	static const struct {
		const char *name;
		enum opts_cmd cmd;
	} cmds[] = {{"dump", OPTS_CMD_DUMP},
		    {"record", OPTS_CMD_RECORD},
		    {"report", OPTS_CMD_REPORT},
		    {"diff", OPTS_CMD_DIFF}};
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			o->cmd = cmds[i].cmd;
			argv++;
			argc--;
			break;
		}
	}

	optind = 0;
	opterr = 0;
	/* diff's file names may come before its options (no command to keep
	 * apart): let getopt permute, i.e. drop the leading '+'. */
	while ((c = getopt_long(argc, argv, o->cmd == OPTS_CMD_DIFF ? opts_short + 1 : opts_short,
				opts_long, NULL)) != -1) {
		switch (c) {
		case 'h':
			o->help = true;
			return 0;
		case 'V':
			o->version = true;
			return 0;
		case '?':
			return opts_bad_option(argv, err, errsz);
		case ':':
			return opts_missing(err, errsz);
		default:
			ret = opts_one(o, c, optarg, err, errsz);
			if (ret < 0)
				return ret;
		}
	}

	if (o->cmd == OPTS_CMD_DIFF)
		return opts_diff(o, argc, argv, err, errsz);
	if (o->cmd == OPTS_CMD_REPORT) {
		if (optind >= argc)
			return opts_fail(err, errsz,
					 "report needs a profile FILE to open; try --help");
		if (optind + 1 < argc)
			return opts_fail(err, errsz, "report opens one FILE, not '%s' too",
					 argv[optind + 1]);
		if (o->npids)
			return opts_fail(err, errsz,
					 "report opens a saved FILE: -p does not apply");
		o->report_file = argv[optind];
		return opts_check_command(o, err, errsz);
	}
	if (optind < argc) {
		if (argv[optind][0] == '\0')
			return opts_fail(err, errsz, "the command to launch is an empty string");
		o->command = &argv[optind];
	}
	if (o->command && o->npids)
		return opts_fail(err, errsz,
				 "give either -p PID or a command to launch, not both (the command "
				 "starts at '%s')",
				 o->command[0]);
	/* Nothing named: the whole machine, as perf top does (dump needs
	 * its one process). */
	if (!o->command && !o->npids && o->cmd != OPTS_CMD_DUMP)
		o->all = true;
	if (o->cmd == OPTS_CMD_DUMP && (o->command || o->npids != 1 || o->all))
		return opts_fail(err, errsz, "dump takes exactly one -p PID (a running process)");
	return opts_check_command(o, err, errsz);
}
