// A Test Explorer item becomes the pytest node id fixloop fixes, relative to its workspace folder.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nodeIdOf, relativeFile, TestItemLike } from '../src/testItemIds';

const file = { fsPath: '/ws/proj/tests/test_calc.py', toString: () => 'file:///ws/proj/tests/test_calc.py' };
const range = { start: 0 };

test('an id that is a node id (absolute, as the Python extension makes them) keeps its test part', () => {
  const item: TestItemLike = { id: '/ws/proj/tests/test_calc.py::TestAdd::test_add[1-2]', label: 'test_add[1-2]', uri: file, range };
  assert.equal(nodeIdOf(item, '/ws/proj'), 'tests/test_calc.py::TestAdd::test_add[1-2]');
});

test('an opaque id is rebuilt from the labels of the item and its classes', () => {
  const fileItem: TestItemLike = { id: 'f1', label: 'test_calc.py', uri: file };
  const cls: TestItemLike = { id: 'c1', label: 'TestAdd', uri: file, range, parent: fileItem };
  const item: TestItemLike = { id: 't1', label: 'test_add', uri: file, range, parent: cls };
  assert.equal(nodeIdOf(item, '/ws/proj'), 'tests/test_calc.py::TestAdd::test_add');
});

test('a file item, an item without a file and an item outside the folder have no node id', () => {
  assert.equal(nodeIdOf({ id: 'f1', label: 'test_calc.py', uri: file }, '/ws/proj'), undefined);
  assert.equal(nodeIdOf({ id: 'x::y', label: 'y', range }, '/ws/proj'), undefined);
  assert.equal(nodeIdOf({ id: 'x::y', label: 'y', uri: file, range }, '/ws/other'), undefined);
});

test('relative paths use forward slashes and stay inside the folder', () => {
  assert.equal(relativeFile('/ws/proj', '/ws/proj/a/b.py'), 'a/b.py');
  assert.equal(relativeFile('/ws/proj', '/ws/projx/b.py'), undefined);
  assert.equal(relativeFile('/ws/proj', '/ws/proj'), undefined);
});
