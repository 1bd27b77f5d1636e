// Times pi's own session code (npm @mariozechner/pi-coding-agent, installed by
// ../shared/pi-oracle/pi-oracle into ~/.cache/pi-oracle or $PI_ORACLE_HOME)
// inside node with performance.now(), so node's start-up is not counted.
//
//   node bench/pi_bench.mjs file SESSION.jsonl REPEAT   -> JSON timings (ms), peak RSS
//   node bench/pi_bench.mjs list DIR REPEAT             -> JSON timings (ms)
//
// Prints one JSON object on stdout.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, homedir } from "node:os";
import { join, basename } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const home = process.env.PI_ORACLE_HOME || join(homedir(), ".cache", "pi-oracle");
const dist = join(home, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
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

const out = { importMs };
if (mode === "file") {
	// each repetition: open a private copy, then context, tree, prepare and
	// one append on it (copying is not timed)
	const ops = { open: [], context: [], tree: [], prepare: [], append: [] };
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
			const [tTree] = time(() => sm.getTree());
			ops.tree.push(tTree);
			const [tPrep, prep] = time(() => prepareCompaction(sm.getBranch(), DEFAULT_COMPACTION_SETTINGS));
			ops.prepare.push(tPrep);
			out.prepareFirstKept = prep ? prep.firstKeptEntryId : null;
			out.maxRssBytes = process.resourceUsage().maxRSS * 1024;
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
	for (let i = 0; i < repeat; i++) {
		const [t1, a] = await timeAsync(() => SessionManager.list("/nonexistent", target));
		const [t2] = await timeAsync(() => SessionManager.list("/nonexistent", target));
		ops.list_first.push(t1);
		ops.list_second.push(t2);
		out.sessions = a.length;
	}
	out.ops = ops;
} else {
	process.stderr.write("usage: pi_bench.mjs file|list TARGET [REPEAT]\n");
	process.exit(2);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
