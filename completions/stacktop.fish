# fish completion for stacktop(1): the subcommands dump, record, report, diff
# as the first word, each with its own options; options and their values,
# PIDs with their process names for -p/--pid (a comma-separated list), the
# sort keys, modes and formats, files for -o/--output and report's FILE,
# directories for --output-dir; and after "--" or the first non-option the
# command to launch with its own completions.

# Print the subcommand (dump, record, report), or "top" without one: a
# subcommand is only ever the first word.
function __stacktop_sub
    set -l tokens (commandline -opc)
    if set -q tokens[2]; and contains -- $tokens[2] dump record report diff
        echo $tokens[2]
    else
        echo top
    end
end

# Print the words of the command to launch that are before the cursor;
# status 0 once the command has started ("--" or the first non-option, as
# getopt sees it; an option's value is never the command).
function __stacktop_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    switch (__stacktop_sub)
        case dump report diff
            # dump launches nothing; report's and diff's non-options are files.
            return 1
        case record
            set -e tokens[1]
    end
    set -l i 1
    set -l n (count $tokens)
    while test $i -le $n
        set -l t $tokens[$i]
        switch $t
            case --
                set -e tokens[1..$i]
                set -q tokens[1]; and printf '%s\n' $tokens
                return 0
            case --pid --rate --delay --window --iterations --limit --view --sort --stack-size --spike-for \
                --mode --output --format --output-dir --output-mode --annotate --source-path
                set i (math $i + 2)
            case '--*'
                set i (math $i + 1)
            case '-?*'
                # In a cluster like -bLp the first value-taking letter eats
                # the rest of the word, or the next word when it is last.
                if string match -qr -- '^-[bLKhVw]*[prdWnlso]$' $t
                    set i (math $i + 2)
                else
                    set i (math $i + 1)
                end
            case '*'
                printf '%s\n' $tokens[$i..-1]
                return 0
        end
    end
    return 1
end

function __stacktop_no_command
    not __stacktop_command >/dev/null
end

# True when options are completed (no command started yet) and the form on
# the line is one of the arguments: top, dump, record, report.
function __stacktop_in
    contains -- (__stacktop_sub) $argv; and __stacktop_no_command
end

# True while the first word is completed: a subcommand may go there.
function __stacktop_first_word
    test (count (commandline -opc)) -eq 1
end

# True when -p/--pid was given: then there is no command to launch.
function __stacktop_has_pid
    for t in (commandline -opc)[2..-1]
        switch $t
            case --
                return 1
            case --pid '--pid=*'
                return 0
            case '--*'
            case '-*'
                string match -qr -- '^-[bLKhVw]*p' $t; and return 0
        end
    end
    return 1
end

# Complete the command to launch and its arguments with their own rules.
function __stacktop_complete_command
    set -l words (__stacktop_command)
    if not set -q words[1]
        __fish_complete_command
        return
    end
    complete -C (string join -- ' ' (string escape -- $words) (commandline -ct))
end

# "PID<tab>name" for every process; the current token's comma list is kept
# as a prefix so 12,34<tab> completes the last PID.
function __stacktop_pids
    set -l head (string match -r -- '^.*,' (commandline -ct))
    for d in /proc/*
        set -l pid (string replace -- /proc/ '' $d)
        string match -qr -- '^[0-9]+$' $pid; or continue
        read -l comm <$d/comm 2>/dev/null; or continue
        printf '%s%s\t%s\n' "$head" $pid $comm
    end
end

complete -c stacktop -f

# The subcommands, as the first word only.
complete -c stacktop -n __stacktop_first_word -x -a dump -d "Print every thread's stack once and exit"
complete -c stacktop -n __stacktop_first_word -x -a record -d 'Sample without a screen and write a profile file'
complete -c stacktop -n __stacktop_first_word -x -a report -d 'Open a saved folded or pprof profile'
complete -c stacktop -n __stacktop_first_word -x -a diff -d 'Compare saved profiles, with significance'

# The command to launch, once it has started (or as the first non-option).
complete -c stacktop -n __stacktop_command -x -a '(__stacktop_complete_command)'
complete -c stacktop -n '__stacktop_in top record; and not __stacktop_has_pid' -x -a '(__fish_complete_command)'

# report's FILE.
complete -c stacktop -n '__stacktop_in report diff' -F

# Which forms offer an option: top (no subcommand), dump, record, report.
set -l top '__stacktop_in top'
set -l live '__stacktop_in top report'
set -l listing '__stacktop_in top report diff'
set -l sampling '__stacktop_in top record'
complete -c stacktop -n '__stacktop_in top record' -s a -l all -d 'The whole machine: every process (the process table first)'
complete -c stacktop -n '__stacktop_in top dump record' -s p -l pid -x -a '(__stacktop_pids)' -d 'Attach to running processes (comma-separated PIDs)'
complete -c stacktop -n $sampling -l subprocesses -d 'Also profile every process the target forks or execs'
complete -c stacktop -n $sampling -l no-runtime-attach -d 'Never ask a JVM for its perf map'
complete -c stacktop -n $sampling -l debuginfod -f -d 'Fetch missing debug files from debuginfod servers (=URLS, default DEBUGINFOD_URLS)'
complete -c stacktop -n $sampling -l mode -x -a 'cpu\ton-CPU\ time,\ the\ default wall\tevery\ thread,\ running\ or\ waiting' -d 'Sampling mode'
complete -c stacktop -n $sampling -s w -l wall -d 'Wall-clock mode: every thread, running or waiting'
complete -c stacktop -n $sampling -l events -x -a 'auto\tper-cpu\ where\ allowed per-cpu\tone\ event\ per\ CPU,\ BPF\ filter inherit\tper-thread\ events\ new\ threads\ inherit per-thread\tone\ event\ per\ thread' -d 'cpu mode perf events'
complete -c stacktop -n $sampling -s r -l rate -x -d 'Samples per second per thread (1..10000, default 99, wall 19)'
complete -c stacktop -n $top -s d -l delay -x -d 'Refresh interval in seconds (0.1..3600, default 1)'
complete -c stacktop -n '__stacktop_in record' -s d -l delay -x -d 'Seconds to record (0.1..86400, default until Ctrl-C)'
complete -c stacktop -n $top -s W -l window -x -d 'Rolling window length in seconds (1..86400, default 60)'
complete -c stacktop -n $listing -s b -l batch -d 'Print the table as text every delay instead of the TUI'
complete -c stacktop -n $live -s n -l iterations -x -d 'Stop after N refreshes'
complete -c stacktop -n $listing -s l -l limit -x -d 'Rows per refresh in batch mode (default 30)'
complete -c stacktop -n $live -l view -x -a 'top icicle threads memory processes' -d 'Batch mode: the view to print (default top)'
complete -c stacktop -n $live -s s -l sort -x -a 'own\t%Own total\t%Total owntime\tOwnTime totaltime\tTotalTime' -d 'Sort the table by a column'
complete -c stacktop -n $listing -s L -l lines -d 'Aggregate by file:line from the start'
complete -c stacktop -n '__stacktop_in top record report diff' -s K -l no-kernel -d 'Hide kernel frames from the start'
complete -c stacktop -n $top -l no-idle -d 'Wall mode: hide idle threads from the start'
complete -c stacktop -n $top -l full-names -d 'C++ names whole (return type, parameters) from the start'
complete -c stacktop -n $sampling -l stack-size -x -a '8192 16384 32768 65528' -d 'User stack bytes copied per sample (512..65528)'
complete -c stacktop -n $live -l ascii -d 'Draw charts with ASCII only'
complete -c stacktop -n $top -l spike-for -x -d 'Seconds above 2x baseline before the spike alert (default 30)'
complete -c stacktop -n $live -l output-dir -x -a '(__fish_complete_directories (commandline -ct))' -d 'Directory the w key writes profiles to (default .)'
complete -c stacktop -n $live -l annotate -x -d 'Open (with -b print) the annotate view on a function'
complete -c stacktop -n $live -l source-path -x -a '(__fish_complete_directories (commandline -ct))' -d 'Annotate: a directory to look for source files in'
complete -c stacktop -n '__stacktop_in dump' -l json -d 'Print one JSON object instead of text'
complete -c stacktop -n '__stacktop_in dump' -l native -d "A Python thread's native frames too, between its Python ones"
complete -c stacktop -n '__stacktop_in record' -s o -l output -r -F -d 'The profile file to write'
complete -c stacktop -n '__stacktop_in record' -l format -x -a 'folded\tFlameGraph pprof\tgo\ tool\ pprof speedscope\tspeedscope.app' -d 'File format (default: from the file name)'
complete -c stacktop -n '__stacktop_in record' -l per-thread -d 'A root frame per thread'
complete -c stacktop -n '__stacktop_in record' -l memory -d 'The memory attribution as pprof (inuse_space)'
complete -c stacktop -n '__stacktop_in record' -l force -d 'Overwrite an existing output file'
complete -c stacktop -n '__stacktop_in top record report' -l output-mode -x -a '0600 0640 0644' -d 'Mode of written profiles, octal, at most 0644 (default 0600)'
complete -c stacktop -n '__stacktop_in diff' -l base -r -F -d 'The base profiles (comma-separated repetitions)'
complete -c stacktop -n '__stacktop_in diff' -l new -r -F -d 'The new profiles (comma-separated repetitions)'
complete -c stacktop -n '__stacktop_in diff' -l fail-above -x -d 'Exit 3 when a significant increase exceeds PCT points'
complete -c stacktop -n '__stacktop_in top record report diff' -s h -l help -d 'Show the help and exit'
complete -c stacktop -n $top -s V -l version -d 'Show the version and exit'
