// node:zlib as it is, plus the four zstd functions that
// @deepseek-ai/dsh-session-persistence-jsonl imports by name. On a Node without
// zstd they throw when called: the adapter runs that backend with
// `compression: 'none'` only, so a call would be a finding, never a silent fallback.
import zlib from 'node:zlib'

export * from 'node:zlib'
export default zlib

function absent(name) {
  return function zstdAbsent() {
    throw new Error(`node:zlib has no ${name} on Node ${process.version} (zstd needs Node >= 22.15)`)
  }
}

export const zstdCompress = absent('zstdCompress')
export const zstdDecompress = absent('zstdDecompress')
export const zstdDecompressSync = absent('zstdDecompressSync')
export const createZstdDecompress = absent('createZstdDecompress')
