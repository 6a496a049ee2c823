#!/usr/bin/env node
// Builds upstream deepseek-harness's session core and its persistence backends from source at the
// pinned commit (manifest.json), for the Node adapter's `--target upstream-2f74ac98ba`.
//
// Upstream's source is the implementation under test, so nothing of it is vendored here: the source
// comes from a git repository of upstream given by path (`--git-dir`), or from an extracted tree of
// that commit (`--source`, e.g. GitHub's tarball of the commit). Either way every file compiled is
// checked against the git blob id manifest.json records for it at the commit, so the build is the
// commit's source or nothing. The packages are compiled as upstream's own build bundles them (one
// ESM bundle per entry, `platform: node`, `target: es2024`, bare imports left to resolution), by the
// esbuild this folder's lockfile pins, into `build/node_modules/<package name>/` with upstream's own
// package.json, so the adapter loads them by package name exactly as the npm install is loaded.
//
//   npm ci --prefix conformance/adapters/upstream-source
//   node conformance/adapters/upstream-source/build.mjs --git-dir PATH/TO/deepseek-harness/.git
//   node conformance/adapters/upstream-source/build.mjs --source PATH/TO/EXTRACTED/TREE
//   node conformance/adapters/upstream-source/build.mjs --write-manifest --git-dir PATH   (maintainers)
//
// Exit status: 0 built (or already built from the same inputs), 1 the source is unavailable or does
// not match the manifest, 2 usage.

import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
const MANIFEST = join(HERE, 'manifest.json')
const BUILD = join(HERE, 'build')

/** The packages of the implementation under test, in dependency order: upstream directory -> role. */
const PACKAGES = [
  'vendor/cosmokit',
  'vendor/cordis',
  'vendor/schemastery',
  'packages/util/brand',
  'packages/support/invariants',
  'packages/llm/llm',
  'packages/core/scope',
  'packages/core/session',
  'packages/session-persistence/session-persistence',
  'packages/session-persistence/session-persistence-jsonl',
  'packages/session-persistence/session-persistence-sqlite',
]

function fail(message, status = 1) {
  process.stderr.write(`upstream-source: ${message}\n`)
  process.exit(status)
}

function parseArgs(argv) {
  const args = { gitDir: process.env.UPSTREAM_GIT_DIR, source: undefined, writeManifest: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--git-dir') args.gitDir = argv[++i]
    else if (arg === '--source') args.source = argv[++i]
    else if (arg === '--write-manifest') args.writeManifest = true
    else fail(`unknown argument ${JSON.stringify(arg)} (usage: build.mjs [--git-dir DIR | --source DIR] [--write-manifest])`, 2)
  }
  return args
}

function git(gitDir, args, options = {}) {
  const result = spawnSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 1 << 28, ...options })
  if (result.error) fail(`cannot run git: ${result.error.message}`)
  if (result.status !== 0) fail(`git ${args.join(' ')} failed in ${gitDir}: ${String(result.stderr).trim()}`)
  return result.stdout
}

/** Git's blob id of some bytes: what `git hash-object` prints. */
function blobId(bytes) {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
}

/** The files the build reads: every package's package.json and src/ tree, not its tests. */
function isBuildInput(path) {
  return PACKAGES.some((dir) => path === `${dir}/package.json` || path.startsWith(`${dir}/src/`))
}

function writeManifest(gitDir, commitName) {
  const commit = String(git(gitDir, ['rev-parse', '--verify', `${commitName}^{commit}`])).trim()
  const listing = String(git(gitDir, ['ls-tree', '-r', commit, '--', ...PACKAGES]))
  const files = {}
  for (const line of listing.split('\n')) {
    const match = /^\d+ blob ([0-9a-f]{40})\t(.+)$/.exec(line)
    if (match && isBuildInput(match[2])) files[match[2]] = match[1]
  }
  const manifest = {
    $comment: 'Upstream source the upstream-2f74ac98ba target is built from: every input file with its git blob id at the commit. Regenerate with build.mjs --write-manifest --git-dir DIR.',
    repository: 'deepseek-ai/deepseek-harness',
    commit,
    packages: PACKAGES,
    files,
  }
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`)
  process.stdout.write(`manifest.json: ${Object.keys(files).length} files at ${commit}\n`)
}

/** The manifest's files read from the git repository or the extracted tree, each checked against its blob id. */
function readSource(manifest, args) {
  const sources = {}
  const paths = Object.keys(manifest.files)
  if (args.source !== undefined) {
    for (const path of paths) {
      const file = join(args.source, path)
      if (!existsSync(file)) fail(`${file}: missing from the source tree (expected upstream ${manifest.commit})`)
      sources[path] = readFileSync(file)
    }
  } else if (args.gitDir !== undefined) {
    // One `git cat-file --batch` for every file, by <commit>:<path>, so no work tree is needed.
    const output = git(args.gitDir, ['cat-file', '--batch'], { input: paths.map((path) => `${manifest.commit}:${path}`).join('\n') + '\n' })
    let offset = 0
    for (const path of paths) {
      const end = output.indexOf(0x0a, offset)
      const header = String(output.subarray(offset, end))
      const match = /^([0-9a-f]{40}) blob (\d+)$/.exec(header)
      if (!match) fail(`${args.gitDir}: ${manifest.commit}:${path} is not in this repository (${header})`)
      const size = Number(match[2])
      sources[path] = output.subarray(end + 1, end + 1 + size)
      offset = end + 1 + size + 1
    }
  } else {
    fail(`no upstream source: give --git-dir DIR (a clone of ${manifest.repository}) or --source DIR (its tree at ${manifest.commit}), or set UPSTREAM_GIT_DIR`)
  }
  for (const path of paths) {
    const id = blobId(sources[path])
    if (id !== manifest.files[path]) fail(`${path}: content is blob ${id}, not ${manifest.files[path]} as at upstream ${manifest.commit}`)
  }
  return sources
}

/** Output file of a package.json target (lib/X.js, lib/types/X.js, lib/X.mjs, lib/X.cjs) -> its source and format. */
function entryOf(target) {
  const match = /^\.?\/?lib\/(?:types\/)?([\w-]+)\.(js|mjs|cjs)$/.exec(target)
  if (!match) return null
  return { out: target.replace(/^\.?\//, ''), src: `src/${match[1]}.ts`, format: match[2] === 'cjs' ? 'cjs' : 'esm' }
}

function packageEntries(pkg) {
  const targets = new Set()
  for (const field of ['main', 'module']) if (typeof pkg[field] === 'string') targets.add(pkg[field])
  const walk = (value) => {
    if (typeof value === 'string') targets.add(value)
    else if (value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) if (key !== 'types') walk(inner)
  }
  walk(pkg.exports)
  return [...targets].map(entryOf).filter(Boolean)
}

async function build(manifest, sources) {
  const esbuild = await import('esbuild').catch(() => fail(`esbuild is not installed: run npm ci --prefix ${relative(process.cwd(), HERE) || '.'}`))
  const inputDigest = createHash('sha256')
  for (const path of Object.keys(manifest.files).sort()) inputDigest.update(`${path}\0${manifest.files[path]}\0`)
  const stamp = { commit: manifest.commit, esbuild: esbuild.version, inputs: inputDigest.digest('hex') }
  const stampFile = join(BUILD, 'BUILD.json')
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === `${JSON.stringify(stamp, null, 2)}\n`) {
    process.stdout.write(`up to date: ${relative(process.cwd(), BUILD)} (upstream ${manifest.commit}, esbuild ${esbuild.version})\n`)
    return
  }
  // Built beside the final folder, then moved into place: a failed build leaves no half-built target.
  const staging = `${BUILD}.tmp-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  const tree = join(staging, 'source')
  for (const [path, bytes] of Object.entries(sources)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true })
    writeFileSync(join(tree, path), bytes)
  }
  const built = []
  for (const dir of manifest.packages) {
    const pkg = JSON.parse(String(sources[`${dir}/package.json`]))
    const out = join(staging, 'node_modules', pkg.name)
    mkdirSync(out, { recursive: true })
    writeFileSync(join(out, 'package.json'), sources[`${dir}/package.json`])
    for (const entry of packageEntries(pkg)) {
      const src = join(tree, dir, entry.src)
      if (!existsSync(src)) continue // a types-only export (lib/types/X.js of a declaration file)
      await esbuild.build({
        entryPoints: [src],
        outfile: join(out, entry.out),
        bundle: true,
        packages: 'external',
        platform: 'node',
        format: entry.format,
        target: 'es2024',
        logLevel: 'error',
        tsconfigRaw: { compilerOptions: { target: 'es2024', useDefineForClassFields: true, verbatimModuleSyntax: false } },
      })
    }
    built.push(`${pkg.name}@${pkg.version}`)
  }
  rmSync(tree, { recursive: true, force: true })
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name: 'upstream-source-build', private: true, type: 'module' }, null, 2)}\n`)
  writeFileSync(join(staging, 'BUILD.json'), `${JSON.stringify(stamp, null, 2)}\n`)
  rmSync(BUILD, { recursive: true, force: true })
  renameSync(staging, BUILD)
  process.stdout.write(`built ${relative(process.cwd(), BUILD)} from upstream ${manifest.commit} with esbuild ${esbuild.version}: ${built.join(', ')}\n`)
}

const args = parseArgs(process.argv.slice(2))
if (args.writeManifest) {
  if (args.gitDir === undefined) fail('--write-manifest needs --git-dir DIR', 2)
  const previous = existsSync(MANIFEST) ? JSON.parse(readFileSync(MANIFEST, 'utf8')).commit : '2f74ac98ba'
  writeManifest(args.gitDir, previous)
} else {
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'))
  await build(manifest, readSource(manifest, args))
}
