// The turns both fixture writers append through the package's own SessionStore (one place for both).
export const CWD = '/work/project'
export const text = (t) => [{ type: 'text', text: t }]
export const model = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' }

/** One closed chat turn with a streamed answer, a tool call and its result. */
export function chatTurn(s, turn) {
  s.append('turn/start', { turn })
  s.append('user/message', { id: `u${turn}`, role: 'user', source: { kind: 'user' }, content: text('Fix the failing test') }, { surfaceOp: 'append' })
  s.append('step/start', { turn, step: 1 })
  const chunks = []
  for (const piece of ['Let ', 'me ', 'look ', 'first.']) {
    chunks.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: piece } }).seq)
  }
  const call = { type: 'tool-call', id: `call_${turn}`, name: 'read', arguments: '{"path":"a.py"}' }
  s.append('assistant/message', { turn, step: 1, message: { id: `a${turn}`, role: 'assistant', source: model, content: [...text('Let me look first.'), call] }, usage: { inputTokens: 812, outputTokens: 64 } },
    { surfaceOp: 'append', sourceEventSeqs: chunks })
  const callSeq = s.append('tool/call', { turn, step: 1, callId: call.id, name: 'read', arguments: call.arguments }).seq
  s.append('tool/result', { turn, step: 1, message: { id: `r${turn}`, role: 'user', source: { kind: 'tool', callId: call.id },
    content: [{ type: 'tool-result', toolCallId: call.id, content: text("print('hi')"), isError: false }] } },
    { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
  s.append('step/end', { turn, step: 1 })
  s.append('turn/end', { turn, reason: { kind: 'completed' } })
}

/** A turn left open after a requested tool call that has no result (a crash: repair must close it). */
export function crashedTurn(s, turn) {
  s.append('turn/start', { turn })
  s.append('user/message', { id: `u${turn}`, role: 'user', source: { kind: 'user' }, content: text('Now run the tests') }, { surfaceOp: 'append' })
  s.append('step/start', { turn, step: 1 })
  const call = { type: 'tool-call', id: 'call_run', name: 'bash', arguments: '{"cmd":"pytest"}' }
  s.append('assistant/message', { turn, step: 1, message: { id: `a${turn}`, role: 'assistant', source: model, content: [call] } }, { surfaceOp: 'append' })
  s.append('tool/call', { turn, step: 1, callId: call.id, name: 'bash', arguments: call.arguments })
}
