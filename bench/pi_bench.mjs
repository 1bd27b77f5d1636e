// Times pi's own session code inside node with performance.now(), so node's
// start-up is not counted. bench/run.py names the package to time in
// PI_BENCH_PKG_DIR (the installed pi-coding-agent package directory, found the
// way ../shared/pi-oracle/pi-oracle installs it: @mariozechner/pi-coding-agent
// 0.73.1 in ~/.cache/pi-oracle, @earendil-works/pi-coding-agent 1.6.0 in
// ~/.cache/pi-oracle-1.6.0, both under $PI_ORACLE_HOME when set) and runs
// this script with the node that version needs. Without PI_BENCH_PKG_DIR it
// times 0.73.1.
//
//   node bench/pi_bench.mjs file SESSION.jsonl REPEAT   -> JSON timings (ms), peak RSS
//   node bench/pi_bench.mjs list DIR REPEAT             -> JSON timings (ms)
//   PI_CODING_AGENT_DIR=A node bench/pi_bench.mjs listall - -> listAll() of A/sessions (ms)
//
// Prints one JSON object on stdout.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join, basename } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

// Peak RSS of this process in bytes: the kernel's high-water mark of its own
// memory (VmHWM). resourceUsage().maxRSS is getrusage's, which on Linux keeps
// across exec the RSS the launching process had when it forked us.
function peakRss() {
	try {
		const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
		if (m) return Number(m[1]) * 1024;
	} catch {}
	return process.resourceUsage().maxRSS * 1024;
}

const pkgDir =
	process.env.PI_BENCH_PKG_DIR ||
	join(process.env.PI_ORACLE_HOME || join(homedir(), ".cache", "pi-oracle"), "node_modules", "@mariozechner", "pi-coding-agent");
const dist = join(pkgDir, "dist", "core");
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const t0 = performance.now();
const { SessionManager } = await import(pathToFileURL(join(dist, "session-manager.js")).href);
const { prepareCompaction, DEFAULT_COMPACTION_SETTINGS } = await import(
	pathToFileURL(join(dist, "compaction", "compaction.js")).href
);
const importMs = performance.now() - t0;

const [mode, target, repeatArg] = process.argv.slice(2);
const repeat = Number(repeatArg || 5);

function time(fn) {
	const start = performance.now();
	const value = fn();
	return [performance.now() - start, value];
}
async function timeAsync(fn) {
	const start = performance.now();
	const value = await fn();
	return [performance.now() - start, value];
}

const out = { importMs, package: pkg.name, version: pkg.version, node: process.version };
if (mode === "file") {
	// each repetition: open a private copy, then context, tree, prepare and
	// one append on it (copying is not timed)
	const ops = { open: [], context: [], tree: [], prepare: [], listing: [], append: [] };
	const listAllTakesDir = !pkg.name.startsWith("@mariozechner/");
	const dir = mkdtempSync(join(tmpdir(), "pi-bench-"));
	try {
		for (let i = 0; i < repeat; i++) {
			const copy = join(dir, `${i}-${basename(target)}`);
			copyFileSync(target, copy);
			const [tOpen, sm] = time(() => SessionManager.open(copy, dir));
			ops.open.push(tOpen);
			const [tCtx, ctx] = time(() => sm.buildSessionContext());
			ops.context.push(tCtx);
			out.contextMessages = ctx.messages.length;
			out.maxRssContextBytes = peakRss();
			const [tTree] = time(() => sm.getTree());
			ops.tree.push(tTree);
			const [tPrep, prep] = time(() => prepareCompaction(sm.getBranch(), DEFAULT_COMPACTION_SETTINGS));
			ops.prepare.push(tPrep);
			out.prepareFirstKept = prep ? prep.firstKeptEntryId : null;
			out.maxRssBytes = peakRss();
			const [tList] = await timeAsync(() =>
				listAllTakesDir ? SessionManager.listAll(dir) : SessionManager.list("/nonexistent", dir),
			);
			ops.listing.push(tList);
			const [tAppend] = time(() =>
				sm.appendMessage({ role: "user", content: [{ type: "text", text: "one more thing" }], timestamp: 1 }),
			);
			ops.append.push(tAppend);
			rmSync(copy);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
	out.ops = ops;
} else if (mode === "list") {
	const ops = { list_first: [], list_second: [] };
	const listAllTakesDir = !pkg.name.startsWith("@mariozechner/");
	for (let i = 0; i < repeat; i++) {
		// every session of the directory: 0.73.1's list(cwd, dir) does not
		// look at cwd; 1.6's keeps only sessions of cwd there, its
		// listAll(dir) keeps them all (the oracle's `list` does the same)
		const list = listAllTakesDir
			? () => SessionManager.listAll(target)
			: () => SessionManager.list("/nonexistent", target);
		const [t1, a] = await timeAsync(list);
		const [t2] = await timeAsync(list);
		ops.list_first.push(t1);
		ops.list_second.push(t2);
		out.sessions = a.length;
	}
	out.ops = ops;
} else if (mode === "listall") {
	// every session of every project under $PI_CODING_AGENT_DIR/sessions:
	// what /resume's "all" view loads (TARGET is not used)
	const [t1, a] = await timeAsync(() => SessionManager.listAll());
	out.ops = { list_first: [t1] };
	out.sessions = a.length;
} else {
	process.stderr.write("usage: pi_bench.mjs file|list|listall TARGET [REPEAT]\n");
	process.exit(2);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
