// The pinned revision's reading of the seeded fixtures: `node pinned-oracle.mjs <build-node_modules> <dir>`.
// <build-node_modules> is the upstream-source build of 2f74ac98ba (conformance/adapters/upstream-source/build/
// node_modules: upstream's own session core at the pinned commit). For every `<log>.jsonl` in <dir> that has
// a `<log>.jsonl.expect.json`, its stored records are decoded by that core's `decodeStorageRecord`, a Session
// is built from them (`new Session(id, events, header)`, the commit's constructor, which checks the seed), and
// `deriveMessages()` and `foldSurface()` are recorded as `pinned` in `<log>.pinned.json`, or the core's refusal.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [modules, dir] = process.argv.slice(2)
if (!modules || !dir) throw new Error('usage: node pinned-oracle.mjs <build-node_modules> <dir>')
const core = await import(pathToFileURL(join(modules, '@deepseek-ai/dsh-session/lib/index.js')).href)
const failure = (error) => ({ refused: `${error?.name ?? 'Error'}: ${error?.message ?? error}` })

function reading(text) {
  const [first, ...lines] = text.split('\n').filter((line) => line.trim().length > 0)
  const { type: _type, ...header } = JSON.parse(first)
  const events = lines.flatMap((line) => [...core.decodeStorageRecord(JSON.parse(line))])
  let session
  try {
    session = new core.Session(header.id, events, header)
  } catch (error) {
    return { session: failure(error), events: events.length }
  }
  const result = { session: 'ok', events: events.length }
  try {
    result.messages = session.deriveMessages()
  } catch (error) {
    result.messages = failure(error)
  }
  try {
    const fold = core.foldSurface(events)
    result.fold = { nodes: fold.nodes.map((node) => node.seq ?? node), replacements: fold.replacements ?? [] }
  } catch (error) {
    result.fold = failure(error)
  }
  return result
}

const BUILD = JSON.parse(readFileSync(join(modules, '..', 'BUILD.json'), 'utf8'))
for (const name of readdirSync(dir).sort()) {
  if (!name.endsWith('.jsonl') || !readdirSync(dir).includes(`${name}.expect.json`)) continue
  let result
  try {
    result = reading(readFileSync(join(dir, name), 'utf8'))
  } catch (error) {
    result = { session: failure(error) }
  }
  writeFileSync(join(dir, `${name}.pinned.json`), `${JSON.stringify({ build: BUILD, pinned: result }, null, 1)}\n`)
}
