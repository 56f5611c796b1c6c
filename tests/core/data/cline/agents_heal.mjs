// Runs the agents' own healing code on history files and says whether it would change
// them: Cline 4.x's sanitizeInitialMessagesForSessionStart (what its loader applies to a
// legacy task or an SDK session on resume) and Roo's validateAndFixToolResultIds (what
// Roo applies to each user turn it saves). A task toolpair repaired should need neither.
//   NODE_PATH=<dir with typescript> node agents_heal.mjs <cline checkout> <Roo-Code checkout> FILE...
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const ts = require("typescript")
const [clineRoot, rooRoot, ...files] = process.argv.slice(2)
if (!rooRoot || files.length === 0) throw new Error("usage: node agents_heal.mjs <cline> <Roo-Code> FILE...")

function load(file, shims) {
	const src = fs.readFileSync(file, "utf8")
	const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText
	const mod = { exports: {} }
	new Function("require", "module", "exports", js)((n) => (n in shims ? shims[n] : require(n)), mod, mod.exports)
	return mod.exports
}
const { sanitizeInitialMessagesForSessionStart } = load(path.join(clineRoot, "apps/vscode/src/sdk/initial-message-sanitizer.ts"), {})
const { validateAndFixToolResultIds } = load(path.join(rooRoot, "src/core/task/validateToolResultIds.ts"), {
	"@anthropic-ai/sdk": {},
	"@roo-code/telemetry": { TelemetryService: { hasInstance: () => false } },
	"../../shared/array": { findLastIndex: (a, f) => { for (let i = a.length - 1; i >= 0; i--) if (f(a[i])) return i; return -1 } },
})

// The sanitizer also names every result after its call; that is no pairing change.
const shape = (ms) => JSON.stringify(ms.map((m) => ({ role: m.role, content: (Array.isArray(m.content) ? m.content : [{ type: "text", text: m.content }]).map((b) => { if (b?.type !== "tool_result") return b; const { name, ...r } = b; return r }) })))
for (const file of files) {
	const doc = JSON.parse(fs.readFileSync(file, "utf8"))
	const msgs = Array.isArray(doc) ? doc : doc.messages
	const cline = shape(sanitizeInitialMessagesForSessionStart(msgs)) === shape(msgs) ? "unchanged" : "changed"
	let roo = 0
	for (let i = 1; i < msgs.length; i++) {
		if (msgs[i].role !== "user" || msgs[i - 1].role !== "assistant") continue
		const fixed = validateAndFixToolResultIds(msgs[i], [msgs[i - 1]])
		if (JSON.stringify(fixed.content) !== JSON.stringify(msgs[i].content)) roo++
	}
	console.log(`${file}: Cline's sanitizer: ${cline}; Roo's validateAndFixToolResultIds: ${roo ? `changes ${roo} message(s)` : "unchanged"}`)
}
