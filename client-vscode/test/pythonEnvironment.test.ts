// The Python extension's selected interpreter reaches the server as `python`, per folder, and follows
// changes: checked against a fake of @vscode/python-extension's environments API.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Uri } from 'vscode';
import { answerConfiguration, serverSection } from '../src/configuration';
import { PythonEnvironmentsApi, SelectedInterpreters } from '../src/pythonEnvironment';

function uri(fsPath: string): Uri {
  return { fsPath, toString: () => `file://${fsPath}` } as unknown as Uri;
}

type Listener = (event: { id: string; path: string; resource: Uri | undefined }) => unknown;

/** A Python extension with one selected interpreter per folder; `select` changes one, as the user would. */
class FakePythonExtension implements PythonEnvironmentsApi {
  readonly listeners = new Set<Listener>();
  resolveCalls = 0;

  constructor(readonly selected: Map<string, string>) {}

  getActiveEnvironmentPath(resource?: Uri | { uri: Uri }): { id: string; path: string } {
    const key = resource ? ('uri' in resource ? resource.uri : resource).fsPath : '';
    const folder = [...this.selected.keys()].find((f) => key.startsWith(f)) ?? '';
    const path = this.selected.get(folder) ?? '/usr/bin/python3';
    return { id: path, path };
  }

  async resolveEnvironment(environment: { id: string; path: string } | string) {
    this.resolveCalls++;
    const path = typeof environment === 'string' ? environment : environment.path;
    return { executable: { uri: uri(path) } };
  }

  readonly onDidChangeActiveEnvironmentPath = (listener: Listener) => {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  };

  select(folder: string, python: string): void {
    this.selected.set(folder, python);
    for (const listener of this.listeners) {
      listener({ id: python, path: python, resource: uri(folder) });
    }
  }
}

test('each folder gets the interpreter the Python extension selected for it', async () => {
  const fake = new FakePythonExtension(new Map([['/ws/a', '/ws/a/.venv/bin/python'], ['/ws/b', '/opt/py312/bin/python']]));
  const interpreters = new SelectedInterpreters(async () => fake);
  const answers = await answerConfiguration(
    [{ section: 'fixloop', scopeUri: 'file:///ws/a' }, { section: 'fixloop', scopeUri: 'file:///ws/b' }],
    [{ model: 'm', python: '' }, { model: 'm' }],
    (scope) => interpreters.interpreterFor(scope ? uri(scope.replace('file://', '')) : undefined),
  );
  assert.deepEqual(answers, [
    { model: 'm', python: '/ws/a/.venv/bin/python' },
    { model: 'm', python: '/opt/py312/bin/python' },
  ]);
});

test('a fixloop.python the user set wins over the selected interpreter', () => {
  assert.deepEqual(serverSection({ python: ' /mine/python ' }, '/selected/python'), { python: '/mine/python' });
});

test('the extension-only settings never reach the server, and an empty python is left out', () => {
  const raw = { serverPython: '/usr/bin/python3', importStrategy: 'useBundled', trace: { server: 'off' }, python: '', maxSteps: 5 };
  assert.deepEqual(serverSection(raw, undefined), { maxSteps: 5 });
});

test('other sections pass through untouched', async () => {
  const answers = await answerConfiguration([{ section: 'python' }], [{ x: 1 }], async () => '/never');
  assert.deepEqual(answers, [{ x: 1 }]);
});

test('without the Python extension there is no selected interpreter and no change event', async () => {
  const interpreters = new SelectedInterpreters(async () => undefined);
  assert.equal(await interpreters.interpreterFor(uri('/ws/a')), undefined);
  let fired = 0;
  interpreters.onDidChange(() => fired++);
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(fired, 0);
});

test('a change of the selected interpreter is reported and the next answer follows it, without a restart', async () => {
  const fake = new FakePythonExtension(new Map([['/ws/a', '/ws/a/.venv/bin/python']]));
  const interpreters = new SelectedInterpreters(async () => fake);
  const changed: string[] = [];
  interpreters.onDidChange((resource) => changed.push(resource && 'fsPath' in resource ? resource.fsPath : '?'));
  assert.equal(await interpreters.interpreterFor(uri('/ws/a/tests/test_x.py')), '/ws/a/.venv/bin/python');
  fake.select('/ws/a', '/ws/a/.venv312/bin/python');
  assert.deepEqual(changed, ['/ws/a']);
  assert.equal(await interpreters.interpreterFor(uri('/ws/a/tests/test_x.py')), '/ws/a/.venv312/bin/python');
  interpreters.dispose();
  assert.equal(fake.listeners.size, 0);
});

test('a Python extension that fails to load counts as absent (logged once)', async () => {
  const logged: string[] = [];
  const interpreters = new SelectedInterpreters(async () => {
    throw new Error('activation failed');
  }, (message) => logged.push(message));
  assert.equal(await interpreters.interpreterFor(undefined), undefined);
  assert.equal(await interpreters.interpreterFor(undefined), undefined);
  assert.equal(logged.length, 1);
  assert.match(logged[0]!, /activation failed/);
});
