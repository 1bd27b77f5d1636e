// Which skills pi 1.6 puts in its system prompt at run time: its resource loader
// (DefaultResourceLoader.reload + getSkills), not the exported loadSkills.
// Used by tests/test_prompt_trees.py to write tests/goldens/prompt/skills_runtime.json.
// Usage: node pi16_runtime_skills.mjs PACKAGE_DIR CALLS.json
//   CALLS.json: [{cwd, agentDir, skillPaths, noSkills}], run in order; prints a JSON array of
//   {skills: [{name, filePath, scope}], diagnostics} (the project is trusted).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, callsFile] = process.argv.slice(2);
const pi = await import(pathToFileURL(join(packageDir, "dist", "index.js")).href);
const out = [];
for (const { cwd, agentDir, skillPaths, noSkills } of JSON.parse(readFileSync(callsFile, "utf8"))) {
  const settingsManager = pi.SettingsManager.create(cwd, agentDir, { projectTrusted: true });
  const loader = new pi.DefaultResourceLoader({ cwd, agentDir, settingsManager, additionalSkillPaths: skillPaths, noSkills });
  await loader.reload();
  const { skills, diagnostics } = loader.getSkills();
  out.push({
    skills: skills.map((s) => ({ name: s.name, filePath: s.filePath, scope: s.sourceInfo.scope })),
    diagnostics,
  });
}
console.log(JSON.stringify(out));
