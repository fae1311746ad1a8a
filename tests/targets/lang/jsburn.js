// jsburn — a known hot JavaScript function for `node --perf-prof`, whose
// names come in a jitdump file (jit-PID.dump in the current directory).
// V8 writes that file through a 2 MiB stdio buffer: after jsburn_hot is
// optimized, many small functions are compiled so that its records reach
// the file, then jsburn_hot runs for SECONDS (argv, default 60).
'use strict';

function jsburn_hot(n) {
	let s = 0;
	for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
	return s;
}

function jsburn_main(seconds) {
	let t = 0;
	for (let k = 0; k < 2000; k++) t += jsburn_hot(10000);
	for (let i = 0; i < 3000; i++) t += new Function('x', 'return x + ' + i)(i);
	const end = Date.now() + seconds * 1000;
	while (Date.now() < end) t += jsburn_hot(100000);
	return t;
}

console.log(jsburn_main(Number(process.argv[2]) || 60));
