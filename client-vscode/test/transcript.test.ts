import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderTranscript } from '../src/transcript';

const jsonl = [
  { t: 0, type: 'meta', run_id: 'r1', test_ids: ['tests/t.py::test_a'], model: 'scripted', base_url: 'http://x/v1' },
  { t: 0.1, type: 'notice', text: 'baseline: 1 failing', step: 0, kind: 'baseline' },
  { t: 1, type: 'thought_delta', text: 'The', step: 1 },
  { t: 1, type: 'thought', text: 'The bug is in add().', step: 1 },
  { t: 1, type: 'calling', tool: 'edit_file', target: 'calc.py', step: 1 },
  { t: 1, type: 'reply', text: 'The bug is in add(). CALL', unused: '', cut: 'call', step: 1 },
  { t: 1, type: 'action', call_id: 'c1', tool: 'edit_file', arguments: { path: 'calc.py' }, step: 1 },
  { t: 1, type: 'observation', call_id: 'c1', tool: 'edit_file', text: 'edited calc.py', is_error: false, step: 1 },
  { t: 1.2, type: 'request', number: 1, replies: 1, prompt_tokens: 1234, prompt_processed: 200, prompt_cached: 1034,
    completion_tokens: 40, seconds: 3.25, by_origin: { system: 100 }, messages: [['system', 'system', 100]] },
  { t: 1.5, type: 'reply', text: 'x', unused: 'I will also refactor', cut: 'call', step: 2 },
  { t: 2, type: 'verdict', accepted: false, reasons: ['a test file changed'], attempt: 1, step: 2 },
  { t: 3, type: 'result', status: 'fixed', steps: 3, summary: 'add() used -', files: ['calc.py'], diff: '-a\n+b\n' },
]
  .map((e) => JSON.stringify(e))
  .join('\n');

test('a transcript reads as Markdown, deltas folded into the thought', () => {
  const md = renderTranscript(jsonl + '\nnot json\n', 'tests/t.py::test_a');
  assert.match(md, /^# fixloop transcript: tests\/t.py::test_a/);
  assert.match(md, /\*\*tests:\*\* tests\/t.py::test_a/);
  assert.match(md, /\*\*model:\*\* scripted at http:\/\/x\/v1/);
  assert.match(md, /> baseline: 1 failing/);
  assert.match(md, /### Thought \(step 1\)\n\nThe bug is in add\(\)\./);
  assert.doesNotMatch(md, /\nThe\n/);
  assert.match(md, /\*\*Action \(step 1\):\*\* `edit_file`/);
  assert.match(md, /\*\*Observation:\*\* `edit_file`\n\n```\nedited calc.py\n```/);
  assert.doesNotMatch(md, /calling|"reply"/); // a call's start and a fully used reply add nothing
  assert.match(md, /\*\*Unused reply text \(step 2\)\*\* \(the stream stopped at the call\):\n\n```\nI will also refactor\n```/);
  assert.match(md, /\*\*Verdict \(step 2\):\*\* rejected\n\n- a test file changed/);
  assert.match(md, /## Result: fixed in 3 steps/);
  assert.match(md, /```diff\n-a\n\+b\n```/);
  assert.match(md, /```\nnot json\n```/);
  // a model request is one line, not its per-message breakdown
  assert.match(md, /\*Model request 1: 1,234 prompt tokens, 200 read anew, 1,034 cached, 40 completion tokens, 3\.3 s\*/);
  assert.doesNotMatch(md, /by_origin|"messages"/);
});
