// Writes the published SQLite fixture with @deepseek-ai/dsh-session 0.1.1-rc.2 and
// @deepseek-ai/dsh-session-persistence-sqlite 0.0.1-rc.1 (its only release, layout 14), as
// this folder's lockfile installs them: `node write-sqlite.mjs <node_modules> <out.db>`, run
// by the Node that lockfile pins (node:sqlite needs Node >= 22.13). Every event is appended through the
// package's own SessionStore; the SQLite backend writes the database.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CWD, chatTurn, crashedTurn } from './chat-turn.mjs'

const [modules, out] = process.argv.slice(2)
if (!modules || !out) throw new Error('usage: node write-sqlite.mjs <node_modules> <out.db>')
const resolve = createRequire(join(modules, 'noop.js')).resolve
const load = (name) => import(pathToFileURL(resolve(name)).href)
const { Context } = await load('@deepseek-ai/cordis')
const { SessionStore } = await load('@deepseek-ai/dsh-session')
const { SessionPersistenceSqlite } = await load('@deepseek-ai/dsh-session-persistence-sqlite')

const ctx = new Context()
await ctx.plugin(SessionStore)
await ctx.plugin(SessionPersistenceSqlite, { path: out, writeBatchMaxDelayMs: 1 })
const sessions = ctx.sessions
// 1. A chat session: two closed turns (streamed text as one row per chunk event), a tool call and result.
const chat = sessions.create('npm-chat', { meta: { cwd: CWD } })
chatTurn(chat, 1)
chatTurn(chat, 2)
await sessions.flush(chat)
// 2. A subagent's session with an agent preset (the two header columns layout 14 adds): one closed turn,
//    then a turn left open with a requested tool call that has no result (a crash: repair must close it).
const child = sessions.create('npm-subagent', { meta: { cwd: CWD, parentSession: 'npm-chat', origin: 'subagent', delegationDepth: 1, agentPreset: 'reviewer' } })
chatTurn(child, 1)
crashedTurn(child, 2)
await sessions.flush(child)
await ctx.dispose?.()
