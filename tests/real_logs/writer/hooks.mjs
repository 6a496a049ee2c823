const SHIM = new URL('./zstd-cli-zlib.mjs', import.meta.url).href
export async function resolve(specifier, context, next) {
  if ((specifier === 'node:zlib' || specifier === 'zlib') && context.parentURL?.includes('/dsh-session-persistence-jsonl/')) {
    return { url: SHIM, shortCircuit: true }
  }
  return next(specifier, context)
}
