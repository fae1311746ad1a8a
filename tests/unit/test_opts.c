/*
 * test_opts — the command line: defaults, every option in its short and long
 * form, both ends of every range and one past, PID lists, the target rules
 * (-p or a command, not both, not neither), "--" and options after the
 * command, --help/--version, and that each error names the option.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

#include "stacktop/app/opts.h"

static struct opts o;
static char err[256];

/* Parse a NULL-terminated list of arguments (argv[0] is added). */
static int parse_a(const char *const *args)
{
	static char *argv[128];
	int argc = 0;

	argv[argc++] = (char *)"stacktop";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return opts_parse(argc, argv, &o, err, sizeof(err));
}

/* parse("-p", "1") parses stacktop -p 1; the list is terminated here. */
#define parse(...) parse_a((const char *const[]){__VA_ARGS__, NULL})

#define OK(...) assert_int_equal(parse(__VA_ARGS__), 0)
/* A usage error whose message contains the given text. */
#define BAD(needle, ...)                                                                           \
	do {                                                                                       \
		assert_int_equal(parse(__VA_ARGS__), -EINVAL);                                     \
		if (!strstr(err, needle))                                                          \
			fail_msg("error '%s' lacks '%s'", err, needle);                            \
	} while (0)

/* What every option parsed to: one pid, and the value of each option. */
struct want {
	int pid;
	unsigned rate_hz;
	double delay_s;
	unsigned window_s;
	bool batch;
	long iterations;
	int limit;
	enum sort_key sort;
	bool lines, hide_kernel;
	unsigned stack_size;
};

static void assert_opts(const struct want *w)
{
	assert_int_equal(o.npids, 1);
	assert_int_equal(o.pids[0], w->pid);
	assert_int_equal(o.rate_hz, w->rate_hz);
	assert_true(o.delay_s == w->delay_s);
	assert_int_equal(o.window_s, w->window_s);
	assert_int_equal(o.batch, w->batch);
	assert_int_equal(o.iterations, w->iterations);
	assert_int_equal(o.limit, w->limit);
	assert_int_equal(o.sort, w->sort);
	assert_int_equal(o.lines, w->lines);
	assert_int_equal(o.hide_kernel, w->hide_kernel);
	assert_int_equal(o.stack_size, w->stack_size);
}

static void test_defaults(void **state)
{
	OK("-p", "4242");
	assert_opts(&(struct want){4242, 99, 1.0, 60, false, 0, 30, SORT_OWN, false, false, 16384});
	assert_null(o.command);
	assert_false(o.help);
	assert_false(o.version);
	assert_string_equal(err, "");
}

static void test_every_option_short(void **state)
{
	OK("-p", "7", "-r", "250", "-d", "0.5", "-W", "30", "-b", "-n", "5", "-l", "12", "-s",
	   "totaltime", "-L", "-K", "--stack-size", "8192");
	assert_opts(&(struct want){7, 250, 0.5, 30, true, 5, 12, SORT_TOTALTIME, true, true, 8192});
}

static void test_every_option_long(void **state)
{
	OK("--pid", "8", "--rate=1000", "--delay", "2.25", "--window=120", "--batch",
	   "--iterations", "3", "--limit=7", "--sort", "owntime", "--lines", "--no-kernel",
	   "--stack-size=4096");
	assert_opts(&(struct want){8, 1000, 2.25, 120, true, 3, 7, SORT_OWNTIME, true, true, 4096});
}

static void test_clustered_and_attached(void **state)
{
	OK("-bLKp9", "-r50", "-n2");
	assert_true(o.batch);
	assert_true(o.lines);
	assert_true(o.hide_kernel);
	assert_int_equal(o.pids[0], 9);
	assert_int_equal(o.rate_hz, 50);
	assert_int_equal(o.iterations, 2);
	/* Unique prefixes of long options are accepted. */
	OK("--no-k", "--win", "5", "-p", "1");
	assert_true(o.hide_kernel);
	assert_int_equal(o.window_s, 5);
}

static void test_sort_keys(void **state)
{
	OK("-s", "own", "-p", "1");
	assert_int_equal(o.sort, SORT_OWN);
	OK("-s", "total", "-p", "1");
	assert_int_equal(o.sort, SORT_TOTAL);
	OK("-s", "owntime", "-p", "1");
	assert_int_equal(o.sort, SORT_OWNTIME);
	OK("-s", "TotalTime", "-p", "1");
	assert_int_equal(o.sort, SORT_TOTALTIME);
	BAD("--sort", "-s", "cpu", "-p", "1");
	assert_non_null(strstr(err, "owntime"));
	BAD("--sort", "-s", "", "-p", "1");
}

static void test_view(void **state)
{
	OK("-b", "-p", "1");
	assert_int_equal(o.view, OPTS_VIEW_TOP);
	OK("-b", "--view", "icicle", "-p", "1");
	assert_int_equal(o.view, OPTS_VIEW_ICICLE);
	OK("-b", "--view=threads", "-p", "1");
	assert_int_equal(o.view, OPTS_VIEW_THREADS);
	OK("-b", "--view", "top", "-p", "1");
	assert_int_equal(o.view, OPTS_VIEW_TOP);
	OK("-b", "--view", "memory", "-p", "1");
	assert_int_equal(o.view, OPTS_VIEW_MEMORY);
	OK("record", "--memory", "-o", "m.pb.gz", "-p", "1");
	assert_true(o.memory);
	BAD("--memory go with 'stacktop record'", "--memory", "-p", "1");
	BAD("--memory writes a pprof profile", "record", "--memory", "--format", "folded", "-o",
	    "m", "-p", "1");
	BAD("invalid --view value 'flame': expected top, icicle, threads, memory or processes",
	    "-b", "--view", "flame", "-p", "1");
}

/* The whole-number options: the values each accepts and what they parse
 * to, and values it refuses with a message naming the option. */
struct number_case {
	const char *arg, *name;
	const char *ok[4];
	long want[4];
	const char *bad[8];
};

static const struct number_case number_cases[] = {
    {"-r",
     "--rate",
     {"1", "10000"},
     {1, 10000},
     {"0", "10001", "-5", "99hz", " 99", "", "99999999999999999999999999"}},
    {"-W", "--window", {"1", "86400"}, {1, 86400}, {"0", "86401", "1.5"}},
    {"-n", "--iterations", {"1", "1000000000"}, {1, 1000000000L}, {"0", "1000000001", "x"}},
    {"-l", "--limit", {"1", "100000"}, {1, 100000}, {"0", "100001"}},
    /* Rounded up to a multiple of 8. */
    {"--stack-size",
     "--stack-size",
     {"512", "65528", "513", "65521"},
     {512, 65528, 520, 65528},
     {"511", "65529", "16k"}},
};

/* The parsed value of a number option. */
static long number_of(const char *arg)
{
	switch (arg[1] == '-' ? 's' : arg[1]) {
	case 'r':
		return o.rate_hz;
	case 'W':
		return o.window_s;
	case 'n':
		return o.iterations;
	case 'l':
		return o.limit;
	default:
		return o.stack_size;
	}
}

static void test_number_ranges(void **state)
{
	for (size_t i = 0; i < sizeof(number_cases) / sizeof(number_cases[0]); i++) {
		const struct number_case *c = &number_cases[i];
		for (int k = 0; k < 4 && c->ok[k]; k++) {
			assert_int_equal(parse(c->arg, c->ok[k], "-p", "1"), 0);
			assert_int_equal(number_of(c->arg), c->want[k]);
		}
		for (int k = 0; k < 8 && c->bad[k]; k++)
			BAD(c->name, c->arg, c->bad[k], "-p", "1");
	}
	/* The ranges, said in the messages. */
	BAD("1 to 10000", "-r", "0", "-p", "1");
	BAD("1 to 86400", "-W", "0", "-p", "1");
	BAD("512 to 65528", "--stack-size", "511", "-p", "1");
	BAD("--stack-size", "--stack-size=16k", "-p", "1");
}

static void test_delay_range(void **state)
{
	OK("-d", "0.1", "-p", "1");
	assert_true(o.delay_s == 0.1);
	OK("-d", "3600", "-p", "1");
	assert_true(o.delay_s == 3600.0);
	OK("-d", ".5", "-p", "1");
	assert_true(o.delay_s == 0.5);
	OK("-d", "2.", "-p", "1");
	assert_true(o.delay_s == 2.0);
	OK("-d", "0.100", "-p", "1");
	assert_true(o.delay_s == 0.1);
	BAD("--delay", "-d", "0.09", "-p", "1");
	assert_non_null(strstr(err, "0.1 to 3600"));
	BAD("--delay", "-d", "3600.01", "-p", "1");
	BAD("--delay", "-d", "3601", "-p", "1");
	BAD("--delay", "-d", "0", "-p", "1");
	BAD("--delay", "-d", "1,5", "-p", "1");
	BAD("--delay", "-d", "inf", "-p", "1");
	BAD("--delay", "-d", "nan", "-p", "1");
	BAD("--delay", "-d", "1e2", "-p", "1");
	BAD("--delay", "-d", ".", "-p", "1");
	BAD("--delay", "-d", "-1", "-p", "1");
	BAD("--delay", "-d", "1s", "-p", "1");
}

static void test_pid_lists(void **state)
{
	OK("-p", "10,20,30");
	assert_int_equal(o.npids, 3);
	assert_int_equal(o.pids[0], 10);
	assert_int_equal(o.pids[1], 20);
	assert_int_equal(o.pids[2], 30);

	/* Duplicates removed, first order kept, across several -p. */
	OK("-p", "5,6,5", "-p", "6,7", "--pid=5");
	assert_int_equal(o.npids, 3);
	assert_int_equal(o.pids[0], 5);
	assert_int_equal(o.pids[1], 6);
	assert_int_equal(o.pids[2], 7);

	/* Blanks separate too: -p "$(pidof x)". */
	OK("-p", "11 12\t13 , 14");
	assert_int_equal(o.npids, 4);
	assert_int_equal(o.pids[3], 14);

	OK("-p", "4194304");
	assert_int_equal(o.pids[0], 4194304);

	static const char *const bad[] = {"abc",  "12,abc", "12,",     ",12",
					  "1,,2", "12x",    "-12",     "+12",
					  "0",	  "1,0",    "4194305", "99999999999999999999999",
					  ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BAD("--pid", "-p", bad[i]);
}

static void test_pid_limit(void **state)
{
	char list[64 * 8 + 16];
	size_t n = 0;
	int i;

	for (i = 1; i <= 64; i++)
		n +=
		    (size_t)snprintf(list + n, sizeof(list) - n, "%s%d", i > 1 ? "," : "", 100 + i);
	assert_int_equal(parse("-p", list), 0);
	assert_int_equal(o.npids, 64);
	assert_int_equal(o.pids[63], 164);

	/* A duplicate of one already there does not count against the limit. */
	assert_int_equal(parse("-p", list, "-p", "101"), 0);
	assert_int_equal(o.npids, 64);

	assert_int_equal(parse("-p", list, "-p", "999"), -EINVAL);
	assert_non_null(strstr(err, "--pid"));
	assert_non_null(strstr(err, "64"));
}

/* o.command is exactly the arguments given (then its NULL). */
#define ASSERT_COMMAND(...)                                                                        \
	do {                                                                                       \
		const char *const want_[] = {__VA_ARGS__, NULL};                                   \
		size_t i_ = 0;                                                                     \
		assert_non_null(o.command);                                                        \
		for (; want_[i_]; i_++)                                                            \
			assert_string_equal(o.command[i_], want_[i_]);                             \
		assert_null(o.command[i_]);                                                        \
	} while (0)

static void test_command(void **state)
{
	OK("--", "./server", "--port", "8080");
	assert_int_equal(o.npids, 0);
	ASSERT_COMMAND("./server", "--port", "8080");

	/* Without "--": the first non-option starts the command. */
	OK("-r", "200", "sleep", "10");
	assert_int_equal(o.rate_hz, 200);
	ASSERT_COMMAND("sleep", "10");

	/* Options after the command belong to the command. */
	OK("-b", "./server", "-p", "5", "-r", "0", "--help");
	assert_true(o.batch);
	assert_int_equal(o.npids, 0);
	assert_int_equal(o.rate_hz, 99);
	assert_false(o.help);
	ASSERT_COMMAND("./server", "-p", "5", "-r", "0", "--help");

	/* A second "--" is the command's. */
	OK("--", "cmd", "--", "x");
	assert_string_equal(o.command[1], "--");

	/* "--" with nothing after and a pid: no command. */
	OK("-p", "3", "--");
	assert_null(o.command);
	assert_int_equal(o.pids[0], 3);

	BAD("empty", "--", "");
}

static void test_target_rules(void **state)
{
	BAD("not both", "-p", "4242", "--", "./server");
	BAD("not both", "-p", "4242", "./server");
}

/* Nothing named is the whole machine, as -a; what cannot go with it is
 * refused in one sentence. */
static void test_whole_machine(void **state)
{
	assert_int_equal(parse_a((const char *const[]){NULL}), 0);
	assert_true(o.all);
	OK("-b");
	assert_true(o.all);
	OK("--");
	assert_true(o.all);
	OK("-a", "-b", "--view", "processes");
	assert_true(o.all && o.view == OPTS_VIEW_PROCESSES && o.view_given);
	OK("record", "-o", "x.folded", "--all");
	assert_true(o.all && o.cmd == OPTS_CMD_RECORD);
	OK("-p", "5");
	assert_false(o.all);
	BAD("without -p PID", "-a", "-p", "5");
	BAD("without -p PID", "-a", "./server");
	BAD("wall mode", "-a", "-w");
	BAD("--memory", "record", "-o", "m.pb.gz", "--memory");
	BAD("--subprocesses", "-a", "--subprocesses");
	BAD("per-cpu", "-a", "--events", "inherit");
	BAD("live view", "report", "-a", "f.folded");
	BAD("-p PID", "dump");
	BAD("give -a", "-p", "5", "--view", "processes");
}

static void test_help_version(void **state)
{
	OK("--help");
	assert_true(o.help);
	OK("-h");
	assert_true(o.help);
	OK("-V");
	assert_true(o.version);
	assert_false(o.help);
	OK("--version");
	assert_true(o.version);
	/* Help wins over what follows it, so "-h" is always a way out. */
	OK("-b", "-h", "--bogus");
	assert_true(o.help);
}

static void test_errors_name_the_option(void **state)
{
	BAD("'-x'", "-x", "-p", "1");
	assert_non_null(strstr(err, "try --help"));
	BAD("'-x'", "-bx", "-p", "1");
	BAD("'--frobnicate'", "--frobnicate", "-p", "1");
	assert_non_null(strstr(err, "try --help"));
	BAD("'--frob'", "--frob=3", "-p", "1");
	/* "--s" could be --sort or --stack-size. */
	BAD("ambiguous", "--s", "own", "-p", "1");
	assert_non_null(strstr(err, "--sort"));
	assert_non_null(strstr(err, "--stack-size"));
	BAD("--batch", "--batch=1", "-p", "1");
	assert_non_null(strstr(err, "takes no value"));

	/* Missing arguments, short and long, with the value's name. */
	BAD("--rate", "-p", "1", "-r");
	assert_non_null(strstr(err, "needs a value"));
	assert_non_null(strstr(err, "HZ"));
	BAD("--pid", "-p");
	BAD("--stack-size", "-p", "1", "--stack-size");
	assert_non_null(strstr(err, "BYTES"));
	BAD("--delay", "-p", "1", "--delay");
	BAD("--window", "-p", "1", "-W");
	BAD("--iterations", "-p", "1", "-n");
	BAD("--limit", "-p", "1", "-l");
	BAD("--sort", "-p", "1", "-s");
}

/* getopt keeps state in globals: a parse stopped inside a cluster of short
 * options must not leak into the next one. */
static void test_reparse(void **state)
{
	BAD("'-x'", "-bxK", "-p", "1");
	OK("-K", "-p", "2");
	assert_true(o.hide_kernel);
	assert_false(o.batch);
	assert_int_equal(o.pids[0], 2);
	/* And state from the previous parse does not survive in o. */
	OK("-p", "3");
	assert_false(o.hide_kernel);
	assert_int_equal(o.npids, 1);
}

/* A NULL or zero-sized err buffer is allowed. */
static void test_null_err(void **state)
{
	char *argv[] = {(char *)"stacktop", (char *)"-r", (char *)"0", NULL};

	assert_int_equal(opts_parse(3, argv, &o, NULL, 0), -EINVAL);
}

static void test_subcommands(void **state)
{
	/* dump: exactly one running process. */
	OK("dump", "-p", "42");
	assert_int_equal(o.cmd, OPTS_CMD_DUMP);
	assert_int_equal(o.pids[0], 42);
	assert_false(o.json);
	OK("dump", "--json", "-p", "42");
	assert_true(o.json);
	BAD("exactly one -p PID", "dump", "-p", "1,2");
	BAD("exactly one -p PID", "dump", "--", "ls");
	BAD("--json goes with", "--json", "-p", "1");

	/* record: -d is the duration, -o is required, format by name. */
	OK("record", "-d", "5", "-o", "x.pb.gz", "-p", "7");
	assert_int_equal(o.cmd, OPTS_CMD_RECORD);
	assert_float_equal(o.duration_s, 5.0, 1e-9);
	assert_float_equal(o.delay_s, 1.0, 1e-9);
	assert_string_equal(o.output, "x.pb.gz");
	OK("record", "--format=speedscope", "--per-thread", "--force", "-o", "p.json", "--", "ls");
	assert_string_equal(o.format, "speedscope");
	assert_true(o.per_thread && o.force);
	assert_string_equal(o.command[0], "ls");
	BAD("record needs -o FILE", "record", "-p", "7");
	BAD("invalid --format value 'svg'", "record", "--format", "svg", "-o", "x", "-p", "7");
	BAD("seconds to record", "record", "-d", "0", "-o", "x", "-p", "7");
	BAD("go with 'stacktop record'", "-o", "x", "-p", "7");

	/* report: one FILE, no target. */
	OK("report", "-b", "prof.folded");
	assert_int_equal(o.cmd, OPTS_CMD_REPORT);
	assert_string_equal(o.report_file, "prof.folded");
	assert_null(o.command);
	BAD("report needs a profile FILE", "report");
	BAD("one FILE", "report", "a", "b");
	BAD("-p does not apply", "report", "-p", "1", "a");

	/* A command named like a subcommand is still a command after "--". */
	OK("--", "record");
	assert_int_equal(o.cmd, OPTS_CMD_TOP);
	assert_string_equal(o.command[0], "record");
}

static void test_wall_mode(void **state)
{
	OK("-p", "1");
	assert_false(o.wall);
	assert_false(o.rate_given);
	OK("-w", "-p", "1");
	assert_true(o.wall);
	OK("--mode", "wall", "-p", "1");
	assert_true(o.wall);
	OK("--mode=cpu", "-p", "1");
	assert_false(o.wall);
	OK("-w", "-r", "49", "--no-idle", "-p", "1");
	assert_true(o.rate_given && o.idle_hidden);
	BAD("invalid --mode value 'gpu'", "--mode", "gpu", "-p", "1");
	OK("--output-dir", "/tmp", "-p", "1");
	assert_string_equal(o.output_dir, "/tmp");
	OK("-p", "1");
	assert_string_equal(o.output_dir, ".");
}

/* --output-mode: octal, nothing outside 0644; profiles default to 0600. */
static void test_output_mode(void **state)
{
	OK("-p", "1");
	assert_int_equal(o.output_mode, 0600);
	OK("--output-mode", "0644", "-p", "1");
	assert_int_equal(o.output_mode, 0644);
	OK("record", "--output-mode=640", "-o", "x.pb.gz", "-p", "1");
	assert_int_equal(o.output_mode, 0640);
	OK("--output-mode", "0400", "-p", "1");
	assert_int_equal(o.output_mode, 0400);
	BAD("invalid --output-mode value '0666': expected an octal mode of at most 0644",
	    "--output-mode", "0666", "-p", "1");
	BAD("invalid --output-mode value '0755'", "--output-mode", "0755", "-p", "1");
	BAD("invalid --output-mode value '0648'", "--output-mode", "0648", "-p", "1");
	BAD("invalid --output-mode value 'rw'", "--output-mode", "rw", "-p", "1");
	BAD("invalid --output-mode value ''", "--output-mode", "", "-p", "1");
	BAD("invalid --output-mode value '00644'", "--output-mode", "00644", "-p", "1");
	BAD("--output-mode needs a value (MODE)", "-p", "1", "--output-mode");
}

/* --subprocesses: off by default; with -p, a command, record; not with
 * dump or report. */
static void test_subprocesses(void **state)
{
	OK("-p", "1");
	assert_false(o.subprocesses);
	OK("--subprocesses", "-p", "1");
	assert_true(o.subprocesses);
	OK("-b", "--subprocesses", "--", "make", "-j2");
	assert_true(o.subprocesses);
	assert_string_equal(o.command[0], "make");
	/* After the command starts, it is the command's own option. */
	OK("make", "--subprocesses");
	assert_false(o.subprocesses);
	OK("record", "--subprocesses", "-o", "x.pb.gz", "--", "make");
	assert_true(o.subprocesses);
	OK("-w", "--subprocesses", "-p", "1");
	assert_true(o.subprocesses && o.wall);
	BAD("--subprocesses goes with the live view and 'stacktop record'", "dump",
	    "--subprocesses", "-p", "1");
	BAD("--subprocesses goes with the live view", "report", "--subprocesses", "x.folded");
	BAD("option --subprocesses takes no value", "--subprocesses=yes", "-p", "1");
	OK("--subproc", "-p", "1"); /* a unique prefix, as getopt_long allows */
	assert_true(o.subprocesses);
}

/* --no-runtime-attach: JVMs are asked by default; live view and record. */
static void test_no_runtime_attach(void **state)
{
	OK("-p", "1");
	assert_false(o.no_runtime_attach);
	OK("--no-runtime-attach", "-p", "1");
	assert_true(o.no_runtime_attach);
	OK("record", "--no-runtime-attach", "-o", "x.folded", "--", "java", "Main");
	assert_true(o.no_runtime_attach);
	BAD("--no-runtime-attach goes with the live view and 'stacktop record'", "dump",
	    "--no-runtime-attach", "-p", "1");
	BAD("--no-runtime-attach goes with the live view", "report", "--no-runtime-attach",
	    "x.folded");
}

/* --debuginfod[=URLS]: off by default; the URLs are checked, not fetched. */
static void test_debuginfod(void **state)
{
	OK("-p", "1");
	assert_false(o.debuginfod);
	OK("--debuginfod", "-p", "1");
	assert_true(o.debuginfod);
	assert_null(o.debuginfod_urls);
	OK("--debuginfod=http://127.0.0.1:8002 https://debuginfod.debian.net", "-p", "1");
	assert_true(o.debuginfod);
	assert_string_equal(o.debuginfod_urls,
			    "http://127.0.0.1:8002 https://debuginfod.debian.net");
	OK("record", "--debuginfod=file:///srv/dbg", "-o", "x.folded", "-p", "1");
	assert_true(o.debuginfod);
	BAD("invalid --debuginfod value 'ftp://x'", "--debuginfod=ftp://x", "-p", "1");
	BAD("invalid --debuginfod value", "--debuginfod=", "-p", "1");
	BAD("invalid --debuginfod value", "--debuginfod=http://a\x1b[2J", "-p", "1");
	BAD("--debuginfod goes with the live view", "dump", "--debuginfod", "-p", "1");
	/* an optional value is attached with '=' only: the next word is not it */
	OK("--debuginfod", "-p", "1");
	assert_int_equal(o.pids[0], 1);
}

/* --annotate FUNC and --source-path DIR (repeatable, up to 16). */
static void test_annotate(void **state)
{
	OK("-b", "--annotate", "hot_loop", "--source-path", "/a", "--source-path=/b", "-p", "1");
	assert_string_equal(o.annotate, "hot_loop");
	assert_int_equal(o.nsource_path, 2);
	assert_string_equal(o.source_path[0], "/a");
	assert_string_equal(o.source_path[1], "/b");
	assert_null(o.source_path[2]);
	OK("report", "--annotate", "main", "x.folded");
	BAD("option --annotate needs a function name", "--annotate", "", "-p", "1");
	BAD("option --source-path needs a directory", "--source-path=", "-p", "1");
	BAD("--annotate and --source-path go with the live view", "record", "--annotate", "f", "-o",
	    "x.folded", "-p", "1");
	BAD("--annotate and --source-path go with the live view", "dump", "--source-path", "/a",
	    "-p", "1");
	BAD("--source-path may be given at most 16 times", "--source-path=1", "--source-path=2",
	    "--source-path=3", "--source-path=4", "--source-path=5", "--source-path=6",
	    "--source-path=7", "--source-path=8", "--source-path=9", "--source-path=10",
	    "--source-path=11", "--source-path=12", "--source-path=13", "--source-path=14",
	    "--source-path=15", "--source-path=16", "--source-path=17", "-p", "1");
}

static void test_usage_text(void **state)
{
	static const char *const must[] = {
	    "Usage: stacktop [OPTIONS] [-a]",
	    "stacktop [OPTIONS] -p PID[,PID...]",
	    "stacktop [OPTIONS] [--] COMMAND [ARGS...]",
	    "--pid",
	    "--rate",
	    "--delay",
	    "--window",
	    "--batch",
	    "--iterations",
	    "--limit",
	    "--sort",
	    "--lines",
	    "--no-kernel",
	    "--stack-size",
	    "--subprocesses",
	    "--help",
	    "--version",
	    "sudo stacktop -p 4242",
	    "stacktop -- ./server --port 8080",
	    "stacktop -b -n 5 -p 4242 > profile.txt",
	    "Keys:",
	    "Ctrl-C",
	    "perf_event_paranoid",
	};
	size_t i, len = strlen(opts_usage);
	const char *line, *nl;

	for (i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!strstr(opts_usage, must[i]))
			fail_msg("usage lacks '%s'", must[i]);
	assert_true(len > 0 && opts_usage[len - 1] == '\n');
	/* Fits an 80-column terminal without touching the last column. */
	for (line = opts_usage; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if (nl - line > 79)
			fail_msg("usage line too long: %.*s", (int)(nl - line), line);
	}
}

/* diff: BASE NEW in any order with its options, or --base/--new; the
 * gate's threshold; what does not belong to it. */
static void test_diff(void **state)
{
	OK("diff", "-b", "old.pb.gz", "new.folded");
	assert_int_equal(o.cmd, OPTS_CMD_DIFF);
	assert_string_equal(o.diff_base, "old.pb.gz");
	assert_string_equal(o.diff_new, "new.folded");
	assert_true(o.fail_above < 0);
	OK("diff", "a1,a2", "b1", "--fail-above", "5.5", "-L", "-l", "9");
	assert_string_equal(o.diff_base, "a1,a2");
	assert_true(o.fail_above == 5.5);
	assert_true(o.lines);
	assert_int_equal(o.limit, 9);
	OK("diff", "--base", "a", "--new=b", "--fail-above=0");
	assert_string_equal(o.diff_new, "b");
	assert_true(o.fail_above == 0);
	BAD("two profiles", "diff", "only.pb.gz");
	BAD("two profiles", "diff", "a", "b", "c");
	BAD("both --base and --new", "diff", "--base", "a");
	BAD("not both", "diff", "--base", "a", "--new", "b", "c");
	BAD("--fail-above", "diff", "a", "b", "--fail-above", "101");
	BAD("--fail-above", "diff", "a", "b", "--fail-above", "-1");
	BAD("do not apply", "diff", "-p", "1", "a", "b");
	BAD("go with 'stacktop diff'", "--fail-above", "5", "-p", "1");
	BAD("go with 'stacktop diff'", "report", "--base", "a", "f.pb.gz");
}

TEST_MAIN(NULL, NULL, TEST(test_defaults), TEST(test_every_option_short),
	  TEST(test_every_option_long), TEST(test_clustered_and_attached), TEST(test_sort_keys),
	  TEST(test_view), TEST(test_number_ranges), TEST(test_delay_range), TEST(test_pid_lists),
	  TEST(test_pid_limit), TEST(test_command), TEST(test_target_rules),
	  TEST(test_whole_machine), TEST(test_help_version), TEST(test_errors_name_the_option),
	  TEST(test_reparse), TEST(test_null_err), TEST(test_subcommands), TEST(test_wall_mode),
	  TEST(test_output_mode), TEST(test_subprocesses), TEST(test_no_runtime_attach),
	  TEST(test_debuginfod), TEST(test_annotate), TEST(test_usage_text), TEST(test_diff))
