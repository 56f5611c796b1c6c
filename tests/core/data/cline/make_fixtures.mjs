// Writes the Cline-family fixtures of tests/core/data/cline/ with each agent's own
// serialisation code (see README.md there). Run from that folder:
//   NODE_PATH=<dir with json-stream-stringify, proper-lockfile, typescript> \
//     node make_fixtures.mjs <Roo-Code checkout>
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const here = path.dirname(new URL(import.meta.url).pathname)
const rooRoot = process.argv[2]
if (!rooRoot) throw new Error("usage: node make_fixtures.mjs <Roo-Code checkout>")

// Roo's own writer (src/utils/safeWriteJson.ts), compiled as it is.
const ts = require("typescript")
const src = fs.readFileSync(path.join(rooRoot, "src/utils/safeWriteJson.ts"), "utf8")
const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText
const mod = { exports: {} }
new Function("require", "module", "exports", js)(require, mod, mod.exports)
const { safeWriteJson } = mod.exports

// The real Cline 4.x session (cline/cline sdk/packages/core/fixtures/session).
const real = JSON.parse(fs.readFileSync(path.join(here, "source/session.messages.json"), "utf8"))

// Cline's legacy storage has no `file` block: a mentioned file reaches the history as
// text (`<file_content path=...>`), and a tool_result carries no `name`.
function legacyContent(content) {
	return content.map((b) => {
		if (b.type === "file") return { type: "text", text: `<file_content path="${b.path}">\n${b.content}\n</file_content>` }
		if (b.type === "tool_result") {
			const { name, ...rest } = b
			return rest
		}
		return b
	})
}

function mkdir(p) {
	fs.mkdirSync(p, { recursive: true })
	return p
}

// -- Cline <= 3.x task folder: disk.ts saveApiConversationHistory is
//    atomicWriteFile(path, JSON.stringify(apiConversationHistory)); ui_messages.json and
//    context_history.json are JSON.stringify too (disk.ts, ContextManager.ts).
const clineTaskId = "1783376868634"
const clineStorage = path.join(here, "saoudrizwan.claude-dev")
const clineTask = mkdir(path.join(clineStorage, "tasks", clineTaskId))
const clineHistory = real.messages.map((m) => {
	const out = { role: m.role, content: legacyContent(m.content) }
	if (m.id) out.id = m.id
	if (m.modelInfo) out.modelInfo = m.modelInfo
	if (m.metrics) out.metrics = m.metrics
	if (m.ts) out.ts = m.ts
	return out
})
fs.writeFileSync(path.join(clineTask, "api_conversation_history.json"), JSON.stringify(clineHistory))
const ui = [{ ts: Number(clineTaskId), type: "say", say: "task", text: real.messages[0].content[0].text }]
clineHistory.forEach((m, i) => {
	const t = m.ts ?? Number(clineTaskId) + i
	if (m.role === "assistant") {
		ui.push({ ts: t, type: "say", say: "api_req_started", text: JSON.stringify({ cost: m.metrics?.cost ?? 0 }), conversationHistoryIndex: i - 1 })
		for (const b of m.content) {
			if (b.type === "text") ui.push({ ts: t + 1, type: "say", say: "text", text: b.text, partial: false, conversationHistoryIndex: i - 1 })
			if (b.type === "tool_use") ui.push({ ts: t + 2, type: "say", say: "tool", text: JSON.stringify({ tool: b.name }), conversationHistoryIndex: i - 1 })
		}
	} else if (i > 0 && m.content.some((b) => b.type === "text")) {
		ui.push({ ts: t, type: "say", say: "user_feedback", text: m.content.find((b) => b.type === "text").text, conversationHistoryIndex: i - 1 })
	}
})
ui.push({ ts: clineHistory.at(-1).ts + 5, type: "ask", ask: "completion_result", text: "", conversationHistoryIndex: clineHistory.length - 1 })
fs.writeFileSync(path.join(clineTask, "ui_messages.json"), JSON.stringify(ui))
// One context update, as the file-read optimisation records it: message 4, block 0.
const ctx = [[4, [1783376876000, [[0, [[1783376876000, "text", ["[[NOTE] This file read has been removed to save space in the context window.]"], [["read_files"]]]]]]]]]
fs.writeFileSync(path.join(clineTask, "context_history.json"), JSON.stringify(ctx))
fs.writeFileSync(path.join(clineTask, "task_metadata.json"), JSON.stringify({ files_in_context: [], model_usage: [{ ts: clineHistory.at(-1).ts, model_id: "anthropic/claude-opus-4.8-fast", model_provider_id: "cline", mode: "act" }], environment_history: [] }, null, 2))
mkdir(path.join(clineStorage, "state"))
fs.writeFileSync(path.join(clineStorage, "state", "taskHistory.json"), JSON.stringify([{ id: clineTaskId, ulid: "01K0000000000000000000000", ts: clineHistory.at(-1).ts, task: real.messages[0].content[0].text, tokensIn: 0, tokensOut: 0, totalCost: 0 }]))

// -- Roo Code task folder: every file through Roo's safeWriteJson; ApiMessage is
//    MessageParam plus `ts` (task-persistence/apiMessages.ts).
const rooStorage = path.join(here, "rooveterinaryinc.roo-cline")
async function rooTask(id, history) {
	const dir = mkdir(path.join(rooStorage, "tasks", id))
	await safeWriteJson(path.join(dir, "api_conversation_history.json"), history)
	const uiMsgs = history.map((m) => ({ ts: m.ts, type: "say", say: m.role === "assistant" ? "text" : "user_feedback", text: m.content.find((b) => b.type === "text")?.text ?? "" }))
	await safeWriteJson(path.join(dir, "ui_messages.json"), uiMsgs)
	await safeWriteJson(path.join(dir, "history_item.json"), { id, number: 1, ts: history.at(-1).ts, task: history[0].content[0].text.slice(0, 80), tokensIn: 0, tokensOut: 0, totalCost: 0, workspace: "/Users/example/dev/cline", mode: "code" })
}
const rooHistory = clineHistory.map((m) => ({ role: m.role, content: m.content, ts: m.ts }))
// Two parallel calls in one turn (messages 13 and 15 of the real session made one at a
// time), as native tool calling sends them: both calls, then both results.
const parallel = [...rooHistory.slice(0, 13)]
parallel.push({ role: "assistant", content: [...rooHistory[13].content, ...rooHistory[15].content.filter((b) => b.type === "tool_use")], ts: rooHistory[13].ts })
parallel.push({ role: "user", content: [...rooHistory[14].content, ...rooHistory[16].content], ts: rooHistory[14].ts })
parallel.push(...rooHistory.slice(17))
await rooTask("0198a3c4-5b6e-7f80-9a1b-2c3d4e5f6071", parallel)
// A condensed task: messages 1-9 replaced by a summary (isSummary, condenseId), kept
// on disk tagged with condenseParent, as Roo's non-destructive condense leaves them.
const condensed = parallel.map((m, i) => (i >= 1 && i <= 9 ? { ...m, condenseParent: "c0ffee00" } : m))
condensed.splice(10, 0, { role: "user", content: [{ type: "text", text: "## Conversation summary\nThe filter icon in agent-sidebar.tsx now follows the Sessions text button." }], ts: parallel[9].ts + 1, isSummary: true, condenseId: "c0ffee00" })
await rooTask("0198a3c4-5b6e-7f80-9a1b-2c3d4e5f6072", condensed)

// -- Cline 4.x SDK session: session-manifest-store.ts writes
//    `${JSON.stringify(payload, null, 2)}\n` (the committed source fixture was re-indented
//    with tabs by the repository's formatter).
const sdkDir = mkdir(path.join(here, "sessions", real.sessionId))
fs.writeFileSync(path.join(sdkDir, `${real.sessionId}.messages.json`), `${JSON.stringify(real, null, 2)}\n`)
console.log("written")
