#!/usr/bin/env node
// The Node side of `python bench/run.py`: the same timed operations on the
// published @deepseek-ai/dsh-session package, on the same logs.
//
// bench/run.py writes each generated log twice: in the spec's revision (read by
// the Python reference) and translated to this package's revision (read here;
// the translation is documented in docs/benchmarks.md). It starts
//
//   node --expose-gc bench.mjs
//
// and drives it with one JSON request per line on stdin, one JSON reply per
// line on stdout, so that it can alternate single runs of an operation between
// Python and Node (both then see the same load on a shared machine):
//
//   {"cmd": "info"}                                  -> {"node", "package", "gc"}
//   {"cmd": "open", "name", "kind", "path"}          -> {"events"}   parse the file once (untimed)
//   {"cmd": "run", "name", "op"}                     -> {"times": {result: seconds}, "meta": {...}, "cpu": seconds}
//   {"cmd": "close", "name"}                         -> {}
//
// A failure replies {"error": message}. The operations and what they report
// are those of bench/bench_reference.py (`seed` times the seed-load and then
// the first and a repeated deriveMessages on that session). Only the package's
// public API is called; a full GC runs before each run, outside the clock.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

const PACKAGE = '@deepseek-ai/dsh-session'
const { Session, decodeStorageRecord, foldSurface, interruptedTurnClosers, packChunkRuns } = await import(PACKAGE)
const require = createRequire(import.meta.url)
const version = JSON.parse(readFileSync(require.resolve(`${PACKAGE}/package.json`), 'utf8')).version

const REPEAT_CALLS = 20 // a repeated derive is one cheap call: each run averages this many
const collect = typeof globalThis.gc === 'function' ? () => globalThis.gc() : () => {}
const now = () => performance.now() / 1000

/** Lines of a JSONL file without the final empty string. */
function fileLines (path) {
  const lines = readFileSync(path, 'utf8').split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/** The package's read path: parse every line, expand chunk rows. */
function readLog (path) {
  const lines = fileLines(path)
  const { type: _tag, ...header } = JSON.parse(lines[0])
  const events = []
  for (let i = 1; i < lines.length; i++) {
    for (const event of decodeStorageRecord(JSON.parse(lines[i]))) events.push(event)
  }
  return { header, events }
}

function timed (op, body) {
  const start = now()
  const value = body()
  return [{ [op]: now() - start }, value]
}

class NodeLog {
  constructor (path) {
    this.path = path
    const lines = fileLines(path)
    this.id = JSON.parse(lines[0]).id
    this.records = lines.slice(1).map((line) => JSON.parse(line))
    this.events = this.records.flatMap((record) => decodeStorageRecord(record))
    this.args = undefined
  }

  parse (op) {
    const [times, count] = timed(op, () => {
      let count = 0
      for (const line of readFileSync(this.path, 'utf8').split('\n')) {
        if (line) { JSON.parse(line); count++ }
      }
      return count
    })
    return { times, meta: { lines: count } }
  }

  read (op) {
    const [times, loaded] = timed(op, () => readLog(this.path))
    return { times, meta: { events: loaded.events.length } }
  }

  // read, crash-repair closers, then restore (ownership transfer of the freshly parsed values)
  load (op) {
    const [times, session] = timed(op, () => {
      const loaded = readLog(this.path)
      const closers = interruptedTurnClosers(loaded.events)
      return Session.fromRestore(this.id, closers.length ? [...loaded.events, ...closers] : loaded.events, loaded.header)
    })
    return { times, meta: { events: session.seq } }
  }

  seed () {
    let start = now()
    const session = Session.create(this.id, this.events)
    const tSeed = now() - start
    collect()
    start = now()
    const derived = session.deriveMessages()
    const tFirst = now() - start
    start = now()
    for (let k = 0; k < REPEAT_CALLS; k++) session.deriveMessages()
    const tRepeat = (now() - start) / REPEAT_CALLS
    return {
      times: { seed: tSeed, 'derive-first': tFirst, 'derive-repeat': tRepeat },
      meta: { events: session.seq, messages: derived.length },
    }
  }

  append (op) {
    if (this.args === undefined) {
      this.args = this.events.map((event) => {
        const opts = {}
        if (event.surfaceOp !== undefined) opts.surfaceOp = event.surfaceOp
        if (event.sourceEventSeqs !== undefined) opts.sourceEventSeqs = event.sourceEventSeqs
        return [event.type, event.data, Object.keys(opts).length ? [opts] : []]
      })
      collect()
    }
    const args = this.args
    const [times, count] = timed(op, () => {
      const session = Session.create(this.id)
      for (const [type, data, opts] of args) session.append(type, data, ...opts)
      return session.seq
    })
    return { times, meta: { events: count } }
  }

  fold (op) {
    const [times, folded] = timed(op, () => foldSurface(this.events))
    return { times, meta: { nodes: folded.nodes.length, replaces: folded.replacements.length } }
  }

  pack (op) {
    const [times, records] = timed(op, () => packChunkRuns(this.events))
    return { times, meta: { records: records.length } }
  }

  unpack (op) {
    const [times, events] = timed(op, () => {
      const out = []
      for (const record of this.records) for (const event of decodeStorageRecord(record)) out.push(event)
      return out
    })
    return { times, meta: { events: events.length } }
  }
}

const OPS = new Set(['parse', 'read', 'load', 'seed', 'append', 'fold', 'pack', 'unpack'])
const logs = new Map()

function handle (request) {
  switch (request.cmd) {
    case 'info':
      return { node: process.version, package: `${PACKAGE}@${version}`, gc: typeof globalThis.gc === 'function' }
    case 'open': {
      const log = new NodeLog(request.path)
      logs.set(request.name, log)
      collect()
      return { events: log.events.length }
    }
    case 'run': {
      const log = logs.get(request.name)
      if (log === undefined) throw new Error(`log ${request.name} is not open`)
      if (!OPS.has(request.op)) throw new Error(`unknown operation ${request.op}`)
      collect()
      const before = process.cpuUsage()
      const reply = log[request.op](request.op)
      const used = process.cpuUsage(before) // every thread of the process: the GC's helpers too
      reply.cpu = (used.user + used.system) / 1e6
      return reply
    }
    case 'close':
      logs.delete(request.name)
      collect()
      return {}
    default:
      throw new Error(`unknown command ${request.cmd}`)
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of lines) {
  if (!line.trim()) continue
  let reply
  try {
    reply = handle(JSON.parse(line))
  } catch (error) {
    reply = { error: String(error?.stack ?? error) }
  }
  process.stdout.write(JSON.stringify(reply) + '\n')
}
