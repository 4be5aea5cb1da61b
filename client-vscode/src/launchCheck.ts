// Asks an interpreter, through bundled/tool/launch_server.py --check, whether it can run fixloop (Python
// >= 3.11; the bundled or its own fixloop importable), and maps each refusal, in one place, to a status word,
// one actionable line and the buttons that act on it. No runtime `vscode` import, so node:test covers it.
import { execFile } from 'node:child_process';

export type ImportStrategy = 'useBundled' | 'fromEnvironment';

export type LaunchProblem = 'too_old' | 'not_installed' | 'no_native' | 'import_failed' | 'not_found' | 'check_failed';

/** What `launch_server.py --check` printed (or what went wrong running it). */
export interface LaunchCheck {
  ok: boolean;
  python: string;
  version?: string;
  strategy: ImportStrategy;
  /** True when the extension's bundled fixloop is the one that runs. */
  bundled: boolean;
  problem?: LaunchProblem | null;
  detail?: string;
  fixloop?: string | null;
  fixloopVersion?: string | null;
  abis?: string[];
  platform?: string;
}

export const MIN_PYTHON = '3.11';

export function strategyEnv(strategy: ImportStrategy): NodeJS.ProcessEnv {
  return { FIXLOOP_IMPORT_STRATEGY: strategy };
}

/** Runs `python launcher --check` once: a missing install or an old Python never crash-loops the client. */
export function checkLaunch(
  python: string,
  launcher: string,
  strategy: ImportStrategy,
  cwd: string | undefined,
): Promise<LaunchCheck> {
  return new Promise((resolve) => {
    const env = { ...process.env, ...strategyEnv(strategy) };
    execFile(python, [launcher, '--check'], { cwd, env, timeout: 30_000 }, (error, stdout, stderr) => {
      const failed = (problem: LaunchProblem, detail: string): void =>
        resolve({ ok: false, python, strategy, bundled: false, problem, detail: lastLines(detail) });
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        failed('not_found', `${python}: no such file`);
        return;
      }
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        const facts = JSON.parse(line) as LaunchCheck;
        resolve({ ...facts, python: facts.python || python, strategy });
      } catch {
        failed('check_failed', stderr || error?.message || stdout || 'no answer');
      }
    });
  });
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join('\n');
}

/** `python` quoted for a shell when it needs it. */
function shellWord(python: string): string {
  return /[\s"'$]/.test(python) ? `"${python}"` : python;
}

/** How to put fixloop into `python` itself (for importStrategy fromEnvironment); see the README's Install section. */
export function installCommand(python: string): string {
  return `${shellWord(python)} -m pip install <path to the fixloop checkout or its wheel>`;
}

/** What the user can do about a launch problem: each is a button on the error message. */
export type Remedy = 'useBundled' | 'copyInstallCommand' | 'selectInterpreter' | 'showLogs';

export const REMEDY_LABELS: Record<Remedy, string> = {
  useBundled: 'Use bundled fixloop',
  copyInstallCommand: 'Copy install command',
  selectInterpreter: 'Select interpreter',
  showLogs: 'Show logs',
};

/** A launch problem as the user sees it: the status item's word, one actionable line, the buttons. */
export interface LaunchProblemView {
  status: string;
  message: string;
  remedies: Remedy[];
}

/** The one place a launch problem is mapped; `source` says where the interpreter came from. */
export function launchProblem(check: LaunchCheck, source: string): LaunchProblemView {
  const who = `${check.python}${check.version ? ` (Python ${check.version})` : ''}, from ${source}`;
  const install = installCommand(check.python);
  switch (check.problem) {
    case 'too_old':
      return {
        status: 'Python too old',
        message: `fixloop needs Python ${MIN_PYTHON} or newer, but the interpreter is ${who}. Select a Python ${MIN_PYTHON}+ interpreter (Python: Select Interpreter) or set fixloop.serverPython.`,
        remedies: ['selectInterpreter', 'showLogs'],
      };
    case 'not_found':
      return {
        status: 'cannot start',
        message: `fixloop cannot run ${check.python} (from ${source}): no such interpreter. Set fixloop.serverPython to a Python ${MIN_PYTHON}+ interpreter.`,
        remedies: ['selectInterpreter', 'showLogs'],
      };
    case 'no_native': {
      const abis = (check.abis ?? []).map((abi) => abi.replace(/^cp3/, '3.')).join(', ');
      return {
        status: 'cannot start',
        message: `the fixloop bundled in this extension runs on CPython ${abis || '(none)'} on ${check.platform || 'its build platform'}, not on ${who}. Select one of those interpreters, or install fixloop there (${install}) and set fixloop.importStrategy to fromEnvironment.`,
        remedies: ['selectInterpreter', 'copyInstallCommand'],
      };
    }
    case 'not_installed':
      return check.strategy === 'fromEnvironment'
        ? {
            status: 'not installed',
            message: `fixloop is not installed for ${who}, and fixloop.importStrategy is fromEnvironment. Set it to useBundled to use the fixloop inside the extension, or install fixloop there: ${install} (see the README's Install section).`,
            remedies: ['useBundled', 'copyInstallCommand'],
          }
        : {
            status: 'not installed',
            message: `this build of the extension has no bundled fixloop (build it with "npm run package"), and fixloop is not installed for ${who}. Install it there: ${install} (see the README's Install section).`,
            remedies: ['selectInterpreter', 'copyInstallCommand'],
          };
    case 'import_failed':
      return {
        status: 'cannot start',
        message: `fixloop cannot be imported with ${who}: ${oneLine(check.detail)}. ${check.strategy === 'fromEnvironment' ? 'Reinstall fixloop there or set fixloop.importStrategy to useBundled.' : 'Reinstall the extension.'}`,
        remedies: ['showLogs'],
      };
    default:
      return {
        status: 'cannot start',
        message: `fixloop could not check ${who}: ${oneLine(check.detail)}. See "fixloop: Show logs".`,
        remedies: ['showLogs'],
      };
  }
}

function oneLine(text: string | undefined): string {
  return (text ?? 'no details').replace(/\s+/g, ' ').trim();
}

/** "bundled fixloop 0.1.0 on Python 3.11.2 (/usr/bin/python3)", for the status item and the log. */
export function describeLaunch(check: LaunchCheck): string {
  const which = check.bundled ? 'bundled fixloop' : 'fixloop';
  const version = check.fixloopVersion ? ` ${check.fixloopVersion}` : '';
  return `${which}${version} on Python ${check.version ?? '?'} (${check.python})`;
}
