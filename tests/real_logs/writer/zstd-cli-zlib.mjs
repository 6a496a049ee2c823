// node:zlib as the JSONL persistence package sees it on Node 20: everything of the
// real module, plus the zstd entry points (absent before Node 22.15) done by the
// `zstd` command-line tool. Frames are standard Zstandard frames with a checksum,
// which is what the package asks node:zlib for (ZSTD_c_checksumFlag = 1).
import zlib from 'node:zlib'
import { execFile, execFileSync } from 'node:child_process'
import { Transform } from 'node:stream'

export * from 'node:zlib'
export default zlib
export const constants = { ZSTD_c_checksumFlag: 201, ZSTD_e_flush: 1, ...zlib.constants }

function run(args, input, callback) {
  const child = execFile('zstd', args, { encoding: 'buffer', maxBuffer: 1 << 30 }, (error, stdout) => callback(error, stdout))
  child.stdin.end(input)
}
function withCallback(args) {
  return (input, options, callback) => run(args, input, typeof options === 'function' ? options : callback)
}
export const zstdCompress = withCallback(['-q', '-c', '--check'])
export const zstdDecompress = withCallback(['-q', '-d', '-c'])
export function zstdDecompressSync(input) {
  return execFileSync('zstd', ['-q', '-d', '-c'], { input, maxBuffer: 1 << 30 })
}
export function createZstdDecompress() {
  const parts = []
  return new Transform({
    transform(chunk, _encoding, done) { parts.push(chunk); done() },
    flush(done) {
      try { this.push(zstdDecompressSync(Buffer.concat(parts))); done() } catch (error) { done(error) }
    },
  })
}
