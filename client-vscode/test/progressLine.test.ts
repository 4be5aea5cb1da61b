import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oneLine, ProgressLine } from '../src/progressLine';

test('an action is shown after the thought that led to it', () => {
  const line = new ProgressLine();
  assert.equal(line.update('The bug is in add(); fixing it.'), 'The bug is in add(); fixing it.');
  assert.equal(line.update('→ edit_file(path=calc.py)'), 'The bug is in add(); fixing it. — → edit_file(path=calc.py)');
  assert.equal(line.update('← edit_file: edited calc.py'), 'The bug is in add(); fixing it. — ← edit_file: edited calc.py');
  assert.equal(line.update('Now the tests.'), 'Now the tests.');
});

test('actions before any thought are shown alone, empty lines change nothing', () => {
  const line = new ProgressLine();
  assert.equal(line.update('✓ verified'), '✓ verified');
  assert.equal(line.update(''), '');
});

test('oneLine flattens whitespace and caps the length', () => {
  assert.equal(oneLine('a\n  b\tc '), 'a b c');
  assert.equal(oneLine('x'.repeat(500)).length, 200);
});
