// Module resolution hook (node:module `register`), installed by adapter.mjs only where
// node:zlib has no zstd (Node < 22.15). It gives the published JSONL backend package
// `zlib-without-zstd.mjs` in place of node:zlib, so that the package's static zstd
// imports resolve and its plaintext (`compression: 'none'`) code can run unchanged.
// Nothing else is redirected.

const SHIM = new URL('./zlib-without-zstd.mjs', import.meta.url).href
const BACKEND = '/@deepseek-ai/dsh-session-persistence-jsonl/'

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'node:zlib' || specifier === 'zlib') && context.parentURL?.includes(BACKEND)) {
    return { url: SHIM, shortCircuit: true }
  }
  return nextResolve(specifier, context)
}
