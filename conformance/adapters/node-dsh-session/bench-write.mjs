#!/usr/bin/env node
// Package-written logs for `python bench/bench_families.py`: the events of a generated log, in the
// published revision's shapes, appended one by one through the package's own SessionStore and
// written by its JSONL backend (`compression: 'none'`), as an operator's harness writes them.
//
//   node bench-write.mjs <events.jsonl> <out.jsonl> [flushEvery]
//
// <events.jsonl> holds one event a line (type, data, optional surfaceOp / sourceEventSeqs; the
// seqs and times there are ignored: the package assigns its own). The package packs chunk runs
// and batches appends itself; a flush every `flushEvery` events (default 200) stands for the
// harness's turn-sized batches. Prints {"events", "bytes"} on stdout.
import { mkdtempSync, readFileSync, readdirSync, cpSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'

Promise.withResolvers ??= function withResolvers () {
  let resolve, reject
  const promise = new this((yes, no) => { resolve = yes; reject = no })
  return { promise, resolve, reject }
}
const { Context } = await import('@deepseek-ai/cordis')
const { SessionStore } = await import('@deepseek-ai/dsh-session')
const { JsonlSessionPersistence } = await import('@deepseek-ai/dsh-session-persistence-jsonl')

const [source, out, every] = process.argv.slice(2)
if (!source || !out) throw new Error('usage: node bench-write.mjs <events.jsonl> <out.jsonl> [flushEvery]')
const flushEvery = Number(every ?? 200)
const events = readFileSync(source, 'utf8').split('\n').filter((line) => line).map((line) => JSON.parse(line))

const root = mkdtempSync(join(tmpdir(), 'sessionspec-bench-write-'))
const ctx = new Context()
await ctx.plugin(SessionStore)
await ctx.plugin(JsonlSessionPersistence, { root, compression: 'none', writeBatchMaxDelayMs: 1 })
let count = 0
try {
  const session = ctx.sessions.create('bench-package-written', { meta: { cwd: '/work/project' } })
  for (const event of events) {
    const opts = {}
    if (event.surfaceOp !== undefined) opts.surfaceOp = event.surfaceOp
    if (event.sourceEventSeqs !== undefined) opts.sourceEventSeqs = event.sourceEventSeqs
    session.append(event.type, event.data, ...(Object.keys(opts).length ? [opts] : []))
    if (++count % flushEvery === 0) await ctx.sessions.flush(session)
  }
  await ctx.sessions.flush(session)
} finally {
  await ctx.dispose?.()
}
// <root>/<project>/<session>/session.jsonl -> out
let written = null
for (const project of readdirSync(root)) {
  for (const dir of readdirSync(join(root, project))) {
    for (const file of readdirSync(join(root, project, dir))) {
      if (file === 'session.jsonl') written = join(root, project, dir, file)
    }
  }
}
if (written === null) throw new Error(`the package wrote no session.jsonl under ${root}`)
cpSync(written, out)
rmSync(root, { recursive: true, force: true })
process.stdout.write(JSON.stringify({ events: count, bytes: statSync(out).size }) + '\n')
