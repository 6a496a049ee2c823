// The sessions of the package-written corpus: each scenario appends through the package's own
// Session (`s.append`, the store's real append path). Payload shapes are the ones the release's
// first-party plugins append (upstream b150a551b8: the plugin named beside each type); messages are
// built by dsh-llm's own constructors (`createUserMessage`), as the plugins build them.
import { CWD, chatTurn, crashedTurn, model, text } from './chat-turn.mjs'

/** Settings a slash command or a delegation writes (permission, sandbox, approval, plan plugins). */
function settings(s, delegated = false) {
  s.append('permission/preset', { preset: 'read-only' })
  s.append('sandbox/mode', delegated ? { mode: 'read-only', source: 'delegation' } : { mode: 'workspace-write' })
  s.append('approval/policy', delegated ? { policy: 'never', source: 'delegation' } : { policy: 'ask' })
  s.append('plan/mode', { active: true })
}

/** One turn that writes every turn-scoped type the release's plugins append. */
function everyTypeTurn(s, llm, turn) {
  s.append('turn/start', { turn })
  const prompt = llm.createUserMessage({ content: text('Refactor the parser and report'), source: { kind: 'user' } })
  s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, inserted: [prompt] })
  s.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 1, inserted: [] })
  const userSeq = s.append('user/message', prompt, { surfaceOp: 'append' }).seq
  settings(s)
  s.append('request/context', { provider: 'deepseek', model: 'deepseek-chat', contextWindow: 128000 })
  s.append('request/header', { header: { config: { provider: 'deepseek', model: 'deepseek-chat' }, system: 'You are a coding agent.', tools: [{ name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }] }, reason: 'change' })
  // step 1: a failed attempt retried (dsh-llm retry policy), streamed reasoning + text + a tool call
  s.append('step/start', { turn, step: 1 })
  s.append('llm/retry', { retryId: 'retry-1', turn, step: 1, provider: 'deepseek', mode: 'normal', policyKey: '["normal",2,["SERVER"],1,1,0]', retry: 1, maxRetries: 2, delayMs: 1, failure: { message: 'upstream 503', code: 'SERVER' } })
  s.append('llm/retry-started', { retryId: 'retry-1', turn, step: 1, retry: 1 })
  const chunks = []
  for (const piece of ['Think', 'ing.']) chunks.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'reasoning-delta', index: 0, text: piece } }).seq)
  for (const piece of ['On ', 'it.']) chunks.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 1, text: piece } }).seq)
  chunks.push(s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } }).seq)
  const call = { type: 'tool-call', id: `call_read_${turn}`, name: 'read', arguments: '{"path":"parser.py"}' }
  s.append('assistant/message', { turn, step: 1, message: { id: `a${turn}-1`, role: 'assistant', source: model, content: [{ type: 'reasoning', text: 'Thinking.' }, ...text('On it.'), call] }, usage: { inputTokens: 900, outputTokens: 30, reasoningTokens: 4 } },
    { surfaceOp: 'append', sourceEventSeqs: chunks })
  const callSeq = s.append('tool/call', { turn, step: 1, callId: call.id, name: 'read', arguments: call.arguments }).seq
  s.append('hook/invoked', { turn, point: 'PreToolUse', dialect: 'codex', handlerId: 'codex:PreToolUse:1', matcher: 'read' })
  s.append('hook/result', { turn, point: 'PreToolUse', handlerId: 'codex:PreToolUse:1', decision: 'pass', exitCode: 0, durationMs: 3.5 })
  s.append('approval/asked', { id: `appr-${turn}`, toolName: 'read', callId: call.id, reason: 'read requires manual approval in this session' })
  s.append('approval/decided', { id: `appr-${turn}`, outcome: 'allowed-once' })
  const resultSeq = s.append('tool/result', { turn, step: 1, message: { id: `r${turn}-1`, role: 'user', source: { kind: 'tool', callId: call.id }, content: [{ type: 'tool-result', toolCallId: call.id, content: text('def parse(): ...\n'.repeat(4)), isError: false }] } },
    { surfaceOp: 'append', sourceEventSeqs: [callSeq] }).seq
  s.append('step/end', { turn, step: 1 })
  // step 2: code mode (dsh-code-runtime) dispatching a sub-call, a todo list (dsh-todo), a workflow run
  s.append('step/start', { turn, step: 2 })
  const code = { type: 'tool-call', id: `call_code_${turn}`, name: 'run_code', arguments: '{"code":"double(21)"}' }
  s.append('assistant/message', { turn, step: 2, message: { id: `a${turn}-2`, role: 'assistant', source: model, content: [code] } }, { surfaceOp: 'append' })
  const codeSeq = s.append('tool/call', { turn, step: 2, callId: code.id, name: 'run_code', arguments: code.arguments }).seq
  s.append('tool/code-dispatch-start', { rootCallId: code.id, parentCallId: code.id, subCallId: `${code.id}:code:1`, name: 'double', arguments: { value: 21 } })
  s.append('tool/code-dispatch', { rootCallId: code.id, parentCallId: code.id, subCallId: `${code.id}:code:1`, name: 'double', arguments: { value: 21 }, isError: false, content: text('42') })
  s.append('todo/write', { todos: [{ content: 'refactor parser', status: 'in_progress' }, { content: 'report', status: 'pending' }] })
  s.append('tool-workflow/run-start', { runId: `wf-${turn}`, name: 'review' })
  s.append('tool-workflow/agent-start', { runId: `wf-${turn}`, seq: 1, label: 'reviewer', phase: 'Delegate', childId: 'npm-child-1' })
  s.append('tool-workflow/agent-end', { runId: `wf-${turn}`, seq: 1, outcome: 'completed' })
  s.append('tool-workflow/run-end', { runId: `wf-${turn}`, stopReason: 'completed' })
  s.append('tool/result', { turn, step: 2, message: { id: `r${turn}-2`, role: 'user', source: { kind: 'tool', callId: code.id }, content: [{ type: 'tool-result', toolCallId: code.id, content: text('42'), isError: false }] } },
    { surfaceOp: 'append', sourceEventSeqs: [codeSeq] })
  s.append('step/end', { turn, step: 2 })
  // step 3: the answer; the tool-result pruner (dsh-compaction-tool-result-pruner) shadows the first result
  s.append('step/start', { turn, step: 3 })
  s.append('assistant/message', { turn, step: 3, message: { id: `a${turn}-3`, role: 'assistant', source: model, content: text('Done: parse() now takes a stream.') }, usage: { inputTokens: 1000, outputTokens: 12 } }, { surfaceOp: 'append' })
  s.append('step/end', { turn, step: 3 })
  s.append('compaction/prune', { shadowedRange: { start: resultSeq, end: resultSeq }, shadowedSeqs: [resultSeq], shadowedTokenCount: 40 })
  s.append('tool/result', { turn, step: 1, message: { id: `r${turn}-1`, role: 'user', source: { kind: 'tool', callId: call.id }, content: [{ type: 'tool-result', toolCallId: call.id, content: text('[pruned]'), isError: false }] } },
    { surfaceOp: { op: 'replace', start: resultSeq, end: resultSeq }, sourceEventSeqs: [resultSeq] })
  s.append('turn/end', { turn, reason: { kind: 'completed' } })
  return userSeq
}

/** The title plugin (dsh-session-title-llm): the exact request, then the title it produced. */
function title(s, llm, userSeq) {
  s.append('session/title', { title: 'Refactor the parser and report', messageSeqs: [userSeq], source: { kind: 'fallback' } })
  const messages = [llm.createUserMessage({
    content: text(`Generate the session title from this JSON array of human messages:\n[{"seq":${userSeq},"text":"Refactor the parser and report"}]`),
    source: { kind: 'plugin', plugin: 'dsh-session-title-llm' },
  })]
  s.append('session/title-llm-request', { titleProvider: 'session-title-first-prompt-llm', messageSeqs: [userSeq], route: { provider: 'deepseek', model: 'deepseek-chat' }, system: 'Create a concise title for an AI coding-assistant session.', messages, maxTokens: 32 })
  s.append('session/title', { title: 'Refactor the parser', messageSeqs: [userSeq], source: { kind: 'provider', provider: 'session-title-first-prompt-llm', model: { provider: 'deepseek', model: 'deepseek-chat' } } })
}

/** Between-turn records of the session-level plugins (commands, compaction, goal, schedule, team, web, feedback). */
function sessionLevel(s, llm) {
  s.append('command/run', { commandId: 'cmd-1', name: 'compact', args: '', source: { kind: 'user' } })
  s.append('compaction/start', { compactionId: 'cmp-1', sourceCommandId: 'cmd-1', turn: null })
  s.append('compaction/summary', { compactionId: 'cmp-1', summary: text('The parser was refactored.'), rawOutput: text('The parser was refactored.'), llmStreamCall: true, shadowedRange: { start: 3, end: 3 }, shadowedSeqs: [3], shadowedTokenCount: 12, provider: 'deepseek', model: 'deepseek-chat', maxTokens: 256, usage: { inputTokens: 50, outputTokens: 6 } })
  s.append('compaction/end', { compactionId: 'cmp-1', sourceCommandId: 'cmd-1', turn: null })
  s.append('command/done', { commandId: 'cmd-1', kind: 'success', text: 'Compacted.' })
  s.append('feedback/record', { text: 'the plan step was wrong' })
  s.append('agent-preset/selected', { agentPreset: 'reviewer' })
  s.append('goal/change', { kind: 'goal/change', version: 1, operation: 'create', goal: { id: 'goal-1', revision: 1, objective: 'Ship the parser refactor', phase: 'active', maxGoalRounds: 2 }, roundsStarted: 0, createdAt: 0, updatedAt: 0 })
  s.append('schedule/change', { version: 1, operation: 'create', schedule: { id: 'sch-1', kind: 'after', prompt: 'check the build', afterSeconds: 600, scheduledAt: '2026-01-01T00:10:00.000Z' } })
  s.append('subagent/descriptor', { version: 2, mode: 'continuable', provider: 'spawn', label: 'Review the parser', agentProvider: 'deepseek', agentModel: 'deepseek-chat' })
  const member = { id: 'npm-child-1', name: 'reviewer', description: 'reviews diffs', provider: 'spawn', context: 'fresh', phase: 'active' }
  s.append('team/member', { version: 1, teamId: 'team-1', member })
  s.append('team/task', { version: 1, teamId: 'team-1', task: { id: 'task-1', revision: 1, subject: 'review', description: 'review parser.py', status: 'pending', blockedBy: [], writeScopes: ['parser.py'] } })
  s.append('team/message/queued', { version: 1, teamId: 'team-1', message: { id: 'msg-1', senderId: 'npm-all-types', senderName: 'lead', targetId: 'npm-child-1', delivery: 'wakeup', content: text('please review') } })
  s.append('team/message/delivered', { version: 1, teamId: 'team-1', messageId: 'msg-1', targetId: 'npm-child-1' })
  s.append('web/deepseek-search-llm-request', { endpoint: 'https://api.deepseek.com/anthropic/v1/messages', apiVersion: '2023-06-01', body: { model: 'deepseek-chat', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'latest zstd release' }] }], tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] } })
}

/** An aborted turn (cancelled mid-stream: the delivered prefix marked interrupted) and an errored one. */
function abortedAndErrored(s, turn) {
  s.append('turn/start', { turn })
  s.append('user/message', { id: `u${turn}`, role: 'user', source: { kind: 'user' }, content: text('Write the docs') }, { surfaceOp: 'append' })
  s.append('step/start', { turn, step: 1 })
  const chunks = [s.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: 'Sta' } }).seq]
  s.append('assistant/message', { turn, step: 1, message: { id: `a${turn}`, role: 'assistant', source: model, content: text('Sta') }, interrupted: true }, { surfaceOp: 'append', sourceEventSeqs: chunks })
  s.append('step/end', { turn, step: 1 })
  s.append('turn/end', { turn, reason: { kind: 'aborted', reason: { kind: 'user' } } })
  s.append('turn/start', { turn: turn + 1 })
  s.append('user/message', { id: `u${turn + 1}`, role: 'user', source: { kind: 'user' }, content: text('Try again') }, { surfaceOp: 'append' })
  s.append('step/start', { turn: turn + 1, step: 1 })
  s.append('step/end', { turn: turn + 1, step: 1 })
  s.append('turn/end', { turn: turn + 1, reason: { kind: 'error', error: { message: 'model returned a completed response with no content', code: 'EMPTY_RESPONSE' } } })
}

/** The other shapes the release's writers give the same types: every turn-end reason and cancel cause, a
 *  cancelled tool call's result with its error, a tool result with plugin meta, a cancelled splice, every
 *  approval outcome, a blocking hook. */
function variants(s) {
  const ends = [{ kind: 'aborted', reason: { kind: 'parent' } }, { kind: 'aborted', reason: { kind: 'hook', reason: 'Stop hook asked to stop' } },
    { kind: 'aborted', reason: { kind: 'disposed' } }, { kind: 'blocked' }, { kind: 'max-tokens' }]
  for (const [index, reason] of ends.entries()) {
    const turn = index + 1
    s.append('turn/start', { turn })
    s.append('user/message', { id: `u${turn}`, role: 'user', source: { kind: 'user' }, content: text(`task ${turn}`) }, { surfaceOp: 'append' })
    s.append('step/start', { turn, step: 1 })
    const call = { type: 'tool-call', id: `call_${turn}`, name: 'bash', arguments: '{"cmd":"sleep 9"}' }
    s.append('assistant/message', { turn, step: 1, message: { id: `a${turn}`, role: 'assistant', source: model, content: [call] } }, { surfaceOp: 'append' })
    const callSeq = s.append('tool/call', { turn, step: 1, callId: call.id, name: 'bash', arguments: call.arguments }).seq
    s.append('approval/asked', { id: `appr-${turn}`, toolName: 'bash', callId: call.id, reason: 'bash requires manual approval in this session' })
    s.append('approval/decided', { id: `appr-${turn}`, outcome: ['allowed-once', 'rejected', 'cancelled', 'unavailable', 'allowed-once'][index] })
    s.append('hook/invoked', { turn, point: 'PostToolUse', dialect: 'claude-code', handlerId: `claude-code:PostToolUse:${turn}`, matcher: 'bash' })
    s.append('hook/result', { turn, point: 'PostToolUse', handlerId: `claude-code:PostToolUse:${turn}`, decision: 'block', exitCode: 2, stderrSummary: 'not allowed here', durationMs: 7.5 })
    const result = index % 2 === 0
      ? { error: { name: 'AbortError', code: 'ABORTED' }, content: text('Error: tool call aborted'), isError: true }
      : { meta: { pluginId: 'snap-1', packageId: 'pkg-1', pluginRunId: `run-${turn}` }, content: text('done'), isError: false }
    const { content, isError, ...extra } = result
    s.append('tool/result', { turn, step: 1, message: { id: `r${turn}`, role: 'user', source: { kind: 'tool', callId: call.id }, content: [{ type: 'tool-result', toolCallId: call.id, content, isError }] }, ...extra },
      { surfaceOp: 'append', sourceEventSeqs: [callSeq] })
    s.append('agent/inbox/spliced', { target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' })
    s.append('step/end', { turn, step: 1 })
    s.append('turn/end', { turn, reason })
  }
}

/** name -> { meta, write(s, llm) }: every session is written once per storage form. */
export const SCENARIOS = {
  'all-types': {
    meta: { cwd: CWD },
    write(s, llm) {
      const userSeq = everyTypeTurn(s, llm, 1)
      title(s, llm, userSeq)
      sessionLevel(s, llm)
      chatTurn(s, 2)
      abortedAndErrored(s, 3)
      s.append('session/title', { title: 'Parser refactor', messageSeqs: [], source: { kind: 'user' } })
    },
  },
  variants: {
    meta: { cwd: CWD },
    write(s) {
      variants(s)
    },
  },
  'settings-first': {
    meta: { cwd: CWD },
    write(s) {
      settings(s)
      chatTurn(s, 1)
    },
  },
  subagent: {
    meta: { cwd: CWD, parentSession: 'npm-all-types', origin: 'subagent', delegationDepth: 1, agentPreset: 'reviewer' },
    write(s) {
      s.append('subagent/descriptor', { version: 2, mode: 'one-shot', provider: 'spawn', label: 'review' })
      settings(s, true)
      chatTurn(s, 1)
    },
  },
  'crashed-turn': {
    meta: { cwd: CWD },
    write(s) {
      chatTurn(s, 1)
      crashedTurn(s, 2)
    },
  },
}
