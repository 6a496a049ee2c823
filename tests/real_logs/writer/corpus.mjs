// The package-written corpus and the package's verdict on each log: `node corpus.mjs <out-dir> [log ...]`,
// run by the Node this folder's lockfile pins (zstd in node:zlib, node:sqlite). Everything runs through
// the installed packages (lockfile: @deepseek-ai/dsh-session 0.1.1-rc.2, its persistence packages, dsh-llm):
//
// * writing: every scenario of scenarios.mjs through SessionStore + each backend (JSONL raw, JSONL zstd,
//   SQLite), plus crashes (a child process that exits mid-turn and one that exits mid-flush), a copy taken
//   mid-write, two writers on one artifact, and a pinned-revision log resumed by the package;
// * the oracle: each log (these and the ones named on the command line) placed in a fresh backend root and
//   read as the package reads it: `loadStored` (the stored prefix), `load` (the durable load: crash repair
//   written back), the invariant companion over the loaded events, `deriveMessages()` of a Session built
//   from them and `foldSurface()`. Written as `<log>.expect.json` beside the log, with the bytes the
//   durable load left when it changed them (`<log>.repaired`).
import { createRequire } from 'node:module'
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { tmpdir } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import zlib from 'node:zlib'
import { CWD, chatTurn, crashedTurn } from './chat-turn.mjs'
import { SCENARIOS } from './scenarios.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const require = createRequire(join(HERE, 'package.json'))
const load = (name) => import(pathToFileURL(require.resolve(name)).href)
const { Context } = await load('@deepseek-ai/cordis')
const session = await load('@deepseek-ai/dsh-session')
const sessionInvariant = await load('@deepseek-ai/dsh-session/invariant')
const { InvariantError } = await load('@deepseek-ai/dsh-invariants')
const llm = await load('@deepseek-ai/dsh-llm')
const { JsonlSessionPersistence } = await load('@deepseek-ai/dsh-session-persistence-jsonl')
const { SessionPersistenceSqlite } = await load('@deepseek-ai/dsh-session-persistence-sqlite')
const version = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version
const PACKAGES = Object.fromEntries(['@deepseek-ai/dsh-session', '@deepseek-ai/dsh-session-persistence-jsonl', '@deepseek-ai/dsh-session-persistence-sqlite', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-invariants'].map((n) => [n, version(n)]))
const FORMS = { jsonl: '.jsonl', zstd: '.jsonl.zstd', sqlite: '.db' }
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0')

/** A cordis context with the store and one backend of `form` rooted in `root`. */
async function open(form, root, options = {}) {
  const ctx = new Context()
  await ctx.plugin(session.SessionStore)
  const [Backend, config] = form === 'sqlite'
    ? [SessionPersistenceSqlite, { path: join(root, 'sessions.db') }]
    : [JsonlSessionPersistence, { root, compression: form === 'zstd' ? 'zstd' : 'none' }]
  const fiber = ctx.plugin(Backend, { writeBatchMaxDelayMs: 1, ...config, ...options })
  await fiber
  return { ctx, fiber, backend: ctx.sessionPersistence }
}

/** The one artifact a JSONL root holds, or the SQLite file. */
function artifactOf(form, root) {
  if (form === 'sqlite') return join(root, 'sessions.db')
  const found = []
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.startsWith('session.jsonl')) found.push(path)
    }
  }
  walk(root)
  if (found.length !== 1) throw new Error(`expected one artifact under ${root}, found ${found.length}`)
  return found[0]
}

/** Copy a store out: a SQLite database is checkpointed first (VACUUM INTO gives one self-contained file). */
function copyOut(form, from, to) {
  if (form !== 'sqlite') return copyFileSync(from, to)
  rmSync(to, { force: true })
  const { DatabaseSync } = require('node:sqlite')
  const db = new DatabaseSync(from)
  try { db.exec(`VACUUM INTO '${to.replaceAll("'", "''")}'`) } finally { db.close() }
}

async function writeScenario(out, name, scenario, form) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-'))
  const { ctx, fiber } = await open(form, root)
  const s = ctx.sessions.create(`npm-${name}`, { meta: scenario.meta })
  scenario.write(s, llm)
  await ctx.sessions.flush(s)
  const target = join(out, `npm-${name}${FORMS[form]}`)
  copyOut(form, artifactOf(form, root), target)
  await fiber.dispose()
  rmSync(root, { recursive: true, force: true })
  return target
}

/** A child process that appends a closed turn, flushes, starts a second turn and exits at `when`. */
async function child(form, root, when) {
  const { ctx } = await open(form, root, { writeBatchMaxDelayMs: when === 'mid-flush' ? 1 : 60000 })
  const s = ctx.sessions.create(`npm-exit-${when}`, { meta: { cwd: CWD } })
  chatTurn(s, 1)
  await ctx.sessions.flush(s)
  crashedTurn(s, 2)
  if (when === 'mid-turn') await ctx.sessions.flush(s) // the open turn is durable; the process dies before turn/end
  else await new Promise((done) => setImmediate(done)) // the batch's write has started; the process dies in it
  process.exit(0)
}

function crashed(out, form, when) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-exit-'))
  const run = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', fileURLToPath(import.meta.url), '--child', form, root, when], { stdio: 'inherit' })
  if (run.status !== 0) throw new Error(`the ${when} child exited with ${run.status}`)
  const target = join(out, `npm-exit-${when}${FORMS[form]}`)
  // a crashed SQLite writer leaves its WAL beside the database: copied together, as a backup tool would
  if (form === 'sqlite') copyOut(form, artifactOf(form, root), target)
  else copyFileSync(artifactOf(form, root), target)
  rmSync(root, { recursive: true, force: true })
  return target
}

/** A copy of a JSONL artifact taken while its writer was in the middle of one record (or one zstd frame). */
async function copiedMidWrite(out, form) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-copy-'))
  const { ctx, fiber } = await open(form, root)
  const s = ctx.sessions.create(`npm-copied-${form}`, { meta: { cwd: CWD } })
  chatTurn(s, 1)
  await ctx.sessions.flush(s)
  const before = readFileSync(artifactOf(form, root)).length
  chatTurn(s, 2)
  await ctx.sessions.flush(s)
  const data = readFileSync(artifactOf(form, root))
  await fiber.dispose()
  rmSync(root, { recursive: true, force: true })
  // the bytes a copy sees when it reads while the second batch is half written
  const target = join(out, `npm-copied-mid-write${FORMS[form]}`)
  writeFileSync(target, data.subarray(0, before + Math.floor((data.length - before) / 2)))
  return target
}

/** Two processes' stores appending to one JSONL artifact: each read the same prefix, then both appended. */
async function twoWriters(out) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-two-'))
  const first = await open('jsonl', root)
  const s = first.ctx.sessions.create('npm-two-writers', { meta: { cwd: CWD } })
  chatTurn(s, 1)
  await first.ctx.sessions.flush(s)
  const second = await open('jsonl', root)
  const prepared = await second.backend.prepare('npm-two-writers')
  const t = prepared.session
  second.ctx.sessions.enter(t)
  second.ctx.sessions.announce(t)
  chatTurn(s, 2)
  chatTurn(t, 2)
  await Promise.all([first.ctx.sessions.flush(s), second.ctx.sessions.flush(t)])
  const target = join(out, 'npm-two-writers.jsonl')
  copyFileSync(artifactOf('jsonl', root), target)
  await first.fiber.dispose()
  await second.fiber.dispose()
  rmSync(root, { recursive: true, force: true })
  return target
}

/**
 * A pinned-revision log (upstream's own fixture) resumed by the package for two turns, in a form. The
 * placeholder upstream's snapshot tool left for a request header's tool list becomes an empty list.
 */
async function resumedPinned(out, pinned, form, name) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-resume-'))
  const data = Buffer.from(readFileSync(pinned, 'utf8').replaceAll('"tools":"{{tools}}"', '"tools":[]'))
  const header = JSON.parse(data.subarray(0, data.indexOf(10)).toString('utf8'))
  let { ctx, fiber, backend } = await open(form, root)
  if (form === 'sqlite') {
    // seed the store with the pinned log as its own backend wrote it: create + append the same events
    const { type, ...meta } = header
    await backend.create(meta)
    const events = data.toString('utf8').trim().split('\n').slice(1).map((line) => JSON.parse(line))
    await backend.append(header.id, events.flatMap((record) => [...session.decodeStorageRecord(record)]))
  } else {
    const { path } = backend.locate(header)
    mkdirSync(dirname(path), { recursive: true })
    const cut = data.indexOf(10) + 1 // the zstd form's first frame is exactly the header line
    writeFileSync(path, form === 'zstd' ? Buffer.concat([zlib.zstdCompressSync(data.subarray(0, cut)), zlib.zstdCompressSync(data.subarray(cut))]) : data)
  }
  await fiber.dispose();
  ({ ctx, fiber, backend } = await open(form, root))
  const prepared = await backend.prepare(header.id)
  const s = prepared.session
  ctx.sessions.enter(s)
  ctx.sessions.announce(s)
  const last = Math.max(0, ...s.events.filter((e) => e.type === 'turn/start').map((e) => e.data.turn))
  chatTurn(s, last + 1)
  chatTurn(s, last + 2)
  await ctx.sessions.flush(s)
  const target = join(out, `npm-resumed-${name}${FORMS[form]}`)
  copyOut(form, artifactOf(form, root), target)
  await fiber.dispose()
  rmSync(root, { recursive: true, force: true })
  return target
}

// -- the oracle ------------------------------------------------------------------

function formOf(data) {
  if (data.subarray(0, 4).equals(ZSTD_MAGIC)) return 'zstd'
  if (data.subarray(0, 16).equals(SQLITE_MAGIC)) return 'sqlite'
  return 'jsonl'
}

/** The first violation the invariant companion finds in `events` (its installer replays a live session). */
async function invariantVerdict(events) {
  let registered = null
  await sessionInvariant.apply({ invariants: { register(packageName, installer) { registered = { packageName, installer }; return () => {} } } })
  const ctx = { sessions: { list: () => [{ events }] }, on: () => () => {} }
  try {
    registered.installer(ctx, (message) => { throw new InvariantError(registered.packageName, message) })
    return 'ok'
  } catch (error) {
    return { refused: String(error?.message ?? error) }
  }
}

const plain = (form, bytes) => (form === 'zstd' ? zlib.zstdDecompressSync(bytes) : bytes)
const failure = (error) => ({ refused: `${error?.name ?? 'Error'}: ${error?.message ?? error}` })

/** What the package makes of one session of a log: its load verdict, derive, fold and repaired bytes. */
async function verdictOf(form, data, id, cwd) {
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-oracle-'))
  try {
    const { fiber, backend } = await open(form, root)
    let path
    if (form === 'sqlite') {
      await fiber.dispose()
      path = join(root, 'sessions.db')
      writeFileSync(path, data)
    } else {
      path = backend.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) }).path
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, data)
      await fiber.dispose()
    }
    const opened = await open(form, root)
    const result = {}
    try {
      const stored = await opened.backend.loadStored(id)
      result.stored = stored === undefined ? null : { events: stored.events.length, torn: stored.tornMarker !== undefined }
    } catch (error) {
      result.stored = failure(error)
    }
    let loaded
    try {
      loaded = await opened.backend.load(id)
      result.load = 'ok'
    } catch (error) {
      result.load = failure(error)
    }
    await opened.fiber.dispose()
    if (loaded !== undefined) {
      const events = [...loaded.events]
      result.events = events.length
      result.types = Object.fromEntries(Object.entries(events.reduce((n, e) => ({ ...n, [e.type]: (n[e.type] ?? 0) + 1 }), {})).sort())
      result.closers = typeof result.stored?.events === 'number' ? events.slice(result.stored.events) : null
      result.invariants = await invariantVerdict(events)
      try {
        result.messages = session.Session.create(id, events, loaded.meta).deriveMessages()
      } catch (error) {
        result.messages = failure(error)
      }
      try {
        const fold = session.foldSurface(events)
        result.fold = { nodes: fold.nodes.map((node) => node.seq ?? node), replacements: fold.replacements ?? [] }
      } catch (error) {
        result.fold = failure(error)
      }
    }
    const after = readFileSync(path)
    // a SQLite file changes on every open (WAL, header counters): what load wrote is its closers
    result.repaired = form === 'sqlite' ? 'closers' : after.equals(data) ? 'unchanged' : 'changed'
    return { result, repaired: after.equals(data) || form === 'sqlite' ? null : after }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** The session ids and cwds of a log: the header line of a JSONL form, every session of a SQLite store. */
function sessionsOf(form, data, file) {
  if (form === 'sqlite') {
    const { DatabaseSync } = require('node:sqlite')
    const dir = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-list-')) // a copy: opening a WAL database writes beside it
    writeFileSync(join(dir, 'sessions.db'), data)
    const db = new DatabaseSync(join(dir, 'sessions.db'), { readOnly: true })
    try { return db.prepare('SELECT id, cwd FROM sessions ORDER BY id').all().map((row) => ({ id: row.id, cwd: row.cwd ?? undefined })) } finally { db.close(); rmSync(dir, { recursive: true, force: true }) }
  }
  const text = plain(form, form === 'zstd' ? data.subarray(0, data.indexOf(ZSTD_MAGIC, 4) > 0 ? data.indexOf(ZSTD_MAGIC, 4) : data.length) : data).toString('utf8')
  const header = JSON.parse(text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n')))
  return [{ id: header.id, cwd: header.cwd }]
}

async function oracle(out, file, extra = {}) {
  const data = readFileSync(file)
  const form = formOf(data)
  const sessions = {}
  for (const { id, cwd } of sessionsOf(form, data, file)) {
    const { result, repaired } = await verdictOf(form, data, id, cwd)
    sessions[id] = result
    if (repaired !== null) writeFileSync(join(out, `${basename(file)}.repaired`), repaired)
  }
  writeFileSync(join(out, `${basename(file)}.expect.json`), `${JSON.stringify({ packages: PACKAGES, ...extra, form, sessions }, null, 1)}\n`)
}

// -- upstream's fixture logs, seeded as its web test scaffold seeds them ----------------

// Fixed where the scaffold reads the clock (`Date.now() - 60_000`), so a regeneration is byte-stable.
const SEED_CREATED_AT = Date.UTC(2026, 0, 1) - 60_000
const PACKED_ROWS = new Set(['text-chunks', 'reasoning-chunks', 'tool-call-chunks'])

/**
 * The events of a fixture text as upstream's replay reader (`parseSessionLog`) gives them: the header line
 * skipped, a missing seq (seq0 of a packed row) numbered on, a missing time 0, each record decoded by the
 * package's `decodeStorageRecord` (a packed chunk row becomes its chunk events).
 */
function parseFixture(text) {
  const events = []
  const lines = text.split(/\r?\n/)
  let headerSkipped = false
  for (const [index, line] of lines.entries()) {
    if (line.trim().length === 0) continue
    if (!headerSkipped) { headerSkipped = true; continue }
    const record = JSON.parse(line)
    const packed = PACKED_ROWS.has(record.type)
    if (!Object.hasOwn(record, packed ? 'seq0' : 'seq')) record[packed ? 'seq0' : 'seq'] = events.length
    if (!Object.hasOwn(record, packed ? 'time0' : 'time')) record[packed ? 'time0' : 'time'] = 0
    try {
      events.push(...session.decodeStorageRecord(record))
    } catch (error) {
      throw new Error(`line ${index + 1}: ${error?.message ?? error}`)
    }
  }
  return events
}

/**
 * Seed one fixture (`{name, text, toolSets}`) through the package as `apps/web/tests/scaffold.ts` does
 * (`realizeSeedFixture` + `seedSession` at b150a551b8): `{{sessionId}}` and `{{cwd}}` (and the fixture's
 * own cwd) realized, the header rebuilt (version, id, createdAt, cwd, delegationDepth 0), event times
 * materialized from order against the fixture's createdAt, then `create` + `append` on the real
 * SessionStore + JSONL backend. The `{{tools}}` token of a request header gets the tool schemas of the
 * fixture's sidecar (`restorePinnedToolSchemas` of the acp-snapshot suite), in header order, else `[]`.
 * Returns the seeded artifact, or `{ refused }` with the reason the package (or the parse) gave.
 */
async function seedFixture(out, { name, text, toolSets }) {
  const id = name
  let realized = text.split('{{sessionId}}').join(id).split('{{cwd}}').join(CWD)
  const fixtureHeader = JSON.parse(realized.split('\n', 1)[0])
  if (typeof fixtureHeader.cwd === 'string' && fixtureHeader.cwd !== '') realized = realized.split(fixtureHeader.cwd).join(CWD)
  let events
  try {
    events = parseFixture(realized)
  } catch (error) {
    return { refused: `parse: ${error?.message ?? error}` }
  }
  if (events.length === 0) return { refused: 'seed fixture has no events' } // seedSession's own refusal
  let header = 0
  for (const event of events) {
    if (event.type === 'request/header' && event.data?.header?.tools === '{{tools}}') {
      event.data = { ...event.data, header: { ...event.data.header, tools: toolSets?.[header] ?? [] } }
      header += 1
    }
  }
  const meta = { version: session.SESSION_FORMAT_VERSION, id, createdAt: SEED_CREATED_AT, cwd: CWD, delegationDepth: 0 }
  const anchor = typeof fixtureHeader.createdAt === 'number' && fixtureHeader.createdAt !== 0 ? fixtureHeader.createdAt : meta.createdAt
  const materialized = events.map((event, index) => ({ ...event, time: anchor + index }))
  const root = mkdtempSync(join(tmpdir(), 'sessionspec-corpus-seed-'))
  try {
    const { fiber, backend } = await open('jsonl', root)
    try {
      await backend.create(meta)
      await backend.append(id, materialized)
    } catch (error) {
      // what the seeder asked the backend to write, kept so a validator can be asked about the same records
      const asked = [JSON.stringify({ type: 'session', ...meta }), ...materialized.map((event) => JSON.stringify(event)), '']
      writeFileSync(join(out, `${name}.refused.jsonl`), asked.join('\n'))
      return { refused: failure(error).refused, asked: join(out, `${name}.refused.jsonl`) }
    } finally {
      await fiber.dispose()
    }
    const target = join(out, `${name}.jsonl`)
    copyFileSync(artifactOf('jsonl', root), target)
    return { target, endsInTurnEnd: events.at(-1)?.type === 'turn/end', restoredToolSets: header }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** `--seed <out-dir> <fixtures.json>`: every fixture seeded, then the package's verdict on what was seeded. */
async function seedAll(out, manifest) {
  for (const fixture of JSON.parse(readFileSync(manifest, 'utf8'))) {
    const seeded = await seedFixture(out, fixture)
    const seed = { provenance: fixture.provenance, ...(seeded.refused ? { refused: seeded.refused } : { endsInTurnEnd: seeded.endsInTurnEnd, restoredToolSets: seeded.restoredToolSets }) }
    if (seeded.refused) writeFileSync(join(out, `${fixture.name}.jsonl.expect.json`), `${JSON.stringify({ packages: PACKAGES, seed, sessions: {} }, null, 1)}\n`)
    else await oracle(out, seeded.target, { seed })
    // the records the backend would not append, as a file: what the package's reader makes of those bytes
    if (seeded.asked) await oracle(out, seeded.asked, { seed })
  }
}

// -- main ------------------------------------------------------------------------

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4], process.argv[5])
} else if (process.argv[2] === '--seed') {
  await seedAll(process.argv[3], process.argv[4])
} else {
  const [out, pinnedChild, pinnedSteering, ...others] = process.argv.slice(2)
  if (!out || !pinnedSteering) throw new Error('usage: node corpus.mjs <out-dir> <pinned-child.jsonl> <pinned-steering.jsonl> [log ...]')
  const written = []
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    for (const form of Object.keys(FORMS)) written.push(await writeScenario(out, name, scenario, form))
  }
  for (const form of Object.keys(FORMS)) {
    written.push(crashed(out, form, 'mid-turn'), crashed(out, form, 'mid-flush'))
    written.push(await resumedPinned(out, pinnedChild, form, 'pinned'), await resumedPinned(out, pinnedSteering, form, 'steering'))
  }
  written.push(await copiedMidWrite(out, 'jsonl'), await copiedMidWrite(out, 'zstd'), await twoWriters(out))
  for (const file of [...written, ...others]) await oracle(out, file)
}
