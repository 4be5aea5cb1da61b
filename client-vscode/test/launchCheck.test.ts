// Why an interpreter cannot run fixloop, said in one actionable line with its status word and buttons,
// all from one mapping; never "pip install fixloop".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkLaunch, describeLaunch, installCommand, LaunchCheck, launchProblem, LaunchProblem } from '../src/launchCheck';

const problemMessage = (check: LaunchCheck, source: string): string => launchProblem(check, source).message;

const base: LaunchCheck = { ok: false, python: '/usr/bin/python3', version: '3.9.2', strategy: 'useBundled', bundled: false };

test('an old Python is named with its version and the way to choose another', () => {
  const message = problemMessage({ ...base, problem: 'too_old' }, 'fixloop.serverPython');
  assert.match(message, /needs Python 3\.11 or newer/);
  assert.match(message, /\/usr\/bin\/python3 \(Python 3\.9\.2\), from fixloop\.serverPython/);
  assert.match(message, /Select Interpreter/);
});

test('fromEnvironment without fixloop offers the bundled fixloop and an install command that exists', () => {
  const message = problemMessage({ ...base, version: '3.11.2', strategy: 'fromEnvironment', problem: 'not_installed' }, 'the default python3');
  assert.match(message, /fixloop is not installed for \/usr\/bin\/python3/);
  assert.match(message, /useBundled/);
  assert.doesNotMatch(message, /pip install fixloop/);
  assert.equal(installCommand('/usr/bin/python3'), '/usr/bin/python3 -m pip install <path to the fixloop checkout or its wheel>');
  assert.equal(installCommand('/my env/python'), '"/my env/python" -m pip install <path to the fixloop checkout or its wheel>');
});

test('a CPython the bundle has no compiled parts for lists the versions it has', () => {
  const message = problemMessage(
    { ...base, version: '3.15.0', problem: 'no_native', abis: ['cp311', 'cp312', 'cp313', 'cp314'], platform: 'linux-x64' },
    'the Python extension',
  );
  assert.match(message, /runs on CPython 3\.11, 3\.12, 3\.13, 3\.14 on linux-x64/);
  assert.match(message, /fromEnvironment/);
});

test('every message is one line', () => {
  for (const problem of ['too_old', 'not_installed', 'no_native', 'import_failed', 'not_found', 'check_failed'] as const) {
    const message = problemMessage({ ...base, problem, detail: 'Traceback\n  line\nImportError: x' }, 'x');
    assert.ok(!message.includes('\n'), `${problem}: ${message}`);
  }
});

test('each problem maps to its status word and the buttons that act on it', () => {
  const view = (problem: LaunchProblem, strategy: LaunchCheck['strategy'] = 'useBundled') => {
    const { status, remedies } = launchProblem({ ...base, problem, strategy }, 'x');
    return [status, remedies.join(' ')];
  };
  assert.deepEqual(view('too_old'), ['Python too old', 'selectInterpreter showLogs']);
  assert.deepEqual(view('not_found'), ['cannot start', 'selectInterpreter showLogs']);
  assert.deepEqual(view('no_native'), ['cannot start', 'selectInterpreter copyInstallCommand']);
  assert.deepEqual(view('not_installed'), ['not installed', 'selectInterpreter copyInstallCommand']);
  assert.deepEqual(view('not_installed', 'fromEnvironment'), ['not installed', 'useBundled copyInstallCommand']);
  assert.deepEqual(view('import_failed'), ['cannot start', 'showLogs']);
  assert.deepEqual(view('check_failed'), ['cannot start', 'showLogs']);
});

test('an interpreter that does not exist is reported, not thrown', async () => {
  const check = await checkLaunch('/no/such/python', '/no/launcher.py', 'useBundled', undefined);
  assert.equal(check.ok, false);
  assert.equal(check.problem, 'not_found');
});

test('the running server is described with its fixloop and interpreter', () => {
  const check: LaunchCheck = { ...base, ok: true, version: '3.11.2', bundled: true, fixloopVersion: '0.1.0' };
  assert.equal(describeLaunch(check), 'bundled fixloop 0.1.0 on Python 3.11.2 (/usr/bin/python3)');
});
