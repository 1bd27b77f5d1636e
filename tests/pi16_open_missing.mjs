// What pi 1.6's SessionManager.open does with a path that does not exist
// (pi's test "creates parent dir of explicit file"): which directories and
// files exist after open, after a first user message and after the answer,
// and the file's records. Used by tests/test_manager.py.
// Usage: node pi16_open_missing.mjs PACKAGE_DIR SESSION_PATH CWD
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, sessionPath, cwd] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(packageDir, "dist", "index.js")).href);
const state = () => ({ dir: existsSync(dirname(sessionPath)), file: existsSync(sessionPath) });
const steps = [];
const sm = pi.SessionManager.open(sessionPath, undefined, cwd);
steps.push({ step: "open", ...state(), sessionFile: sm.getSessionFile(), entries: sm.getEntries().length });
sm.appendMessage({ role: "user", content: [{ type: "text", text: "hello" }], timestamp: 1 });
steps.push({ step: "user", ...state() });
sm.appendMessage({
  role: "assistant", content: [{ type: "text", text: "hi" }], api: "openai-responses", provider: "p", model: "m",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
           cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop", timestamp: 2,
});
steps.push({ step: "assistant", ...state() });
const records = readFileSync(sessionPath, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
console.log(JSON.stringify({ steps, records }));
