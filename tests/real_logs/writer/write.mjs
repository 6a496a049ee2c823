// Writes the published-revision fixture logs of logs/ with @deepseek-ai/dsh-session
// (0.1.1-rc.2) and @deepseek-ai/dsh-session-persistence-jsonl (0.1.0-rc.8, its only 0.1.x
// release), as this folder's lockfile installs them: `node write.mjs <out-dir>`. Every event
// is appended through the package's own SessionStore; the JSONL backend writes the artifacts.
import { register } from 'node:module'
import { mkdtempSync, cpSync, rmSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { CWD, chatTurn, crashedTurn } from './chat-turn.mjs'
register('./hooks.mjs', import.meta.url)
// ES2024 Promise.withResolvers (Node 22) used by the persistence coordinator; Node 20 lacks it.
Promise.withResolvers ??= function withResolvers() {
  let resolve, reject
  const promise = new this((yes, no) => { resolve = yes; reject = no })
  return { promise, resolve, reject }
}
const { Context } = await import('@deepseek-ai/cordis')
const { SessionStore } = await import('@deepseek-ai/dsh-session')
const { JsonlSessionPersistence } = await import('@deepseek-ai/dsh-session-persistence-jsonl')

const out = process.argv[2]
if (!out) throw new Error('usage: node write.mjs <out-dir>')
async function withStore(compression, body) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-real-logs-'))
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(JsonlSessionPersistence, { root, compression, writeBatchMaxDelayMs: 1 })
  try {
    await body(ctx.sessions)
  } finally {
    await ctx.dispose?.()
  }
  return root
}

function collect(root, names) {
  // <root>/<project>/<session>/session.jsonl[.zstd] -> <out>/<name>
  for (const project of readdirSync(root)) {
    for (const dir of readdirSync(join(root, project))) {
      for (const file of readdirSync(join(root, project, dir))) {
        const name = names[dir]
        if (name === undefined) throw new Error(`unexpected session directory ${dir}`)
        cpSync(join(root, project, dir, file), join(out, name + file.slice('session'.length)))
      }
    }
  }
  rmSync(root, { recursive: true, force: true })
}

// 1. A chat session: two closed turns (packed chunk rows, a tool call and result).
// 2. A resumed session: seeded with the chat's events, so the package appends its
//    session/end-seed marker, then a slash command and a third turn.
// 3. A settings-only session: a title and an approval policy, types whose payload is
//    the same in both revisions (the ambiguous case for detection).
collect(await withStore('none', async (sessions) => {
  const chat = sessions.create('npm-chat', { meta: { cwd: CWD } })
  chatTurn(chat, 1)
  chatTurn(chat, 2)
  await sessions.flush(chat)
  const resumed = sessions.create('npm-resumed', { seed: chat.events, meta: { cwd: CWD, seedLength: chat.events.length } })
  resumed.append('command/run', { commandId: 'cmd-1', name: 'compact', args: '', source: { kind: 'user' } })
  resumed.append('command/done', { commandId: 'cmd-1', kind: 'success', text: 'nothing to compact' })
  chatTurn(resumed, 3)
  await sessions.flush(resumed)
  const settings = sessions.create('npm-settings', { meta: { cwd: CWD } })
  settings.append('approval/policy', { policy: 'never' })
  settings.append('session/title', { title: 'Fix the flaky parser test', messageSeqs: [], source: { kind: 'provider', provider: 'title-llm', model: { provider: 'deepseek', model: 'deepseek-chat' } } })
  await sessions.flush(settings)
}), { 'npm-chat': 'published-chat', 'npm-resumed': 'published-resumed', 'npm-settings': 'published-settings' })

// 4. A compressed artifact of a crashed session: one closed turn, then a turn left open
//    with a requested tool call that has no result (crash repair must close it).
collect(await withStore('zstd', async (sessions) => {
  const s = sessions.create('npm-crashed', { meta: { cwd: CWD } })
  chatTurn(s, 1)
  await sessions.flush(s)
  crashedTurn(s, 2)
  await sessions.flush(s)
}), { 'npm-crashed': 'published-crashed' })
