// Finds the Python that runs `fixloop serve` and checks that fixloop is installed there.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';

export interface ServerPython {
  /** The interpreter path or command. */
  python: string;
  /** Where it came from, for messages: "fixloop.serverPython", "Python extension" or "default". */
  source: string;
}

export interface InstallCheck {
  ok: boolean;
  /** Arguments after the interpreter that start the server. */
  serverArgs: string[];
  /** Why the check failed (stderr or spawn error), when it did. */
  detail: string;
}

/** `fixloop.serverPython`, else the Python extension's active interpreter, else `python3`. */
export async function resolveServerPython(resource: vscode.Uri | undefined): Promise<ServerPython> {
  const configured = vscode.workspace.getConfiguration('fixloop', resource).get<string>('serverPython', '').trim();
  if (configured) {
    return { python: expandVariables(configured, resource), source: 'fixloop.serverPython' };
  }
  const fromExtension = await pythonExtensionInterpreter(resource);
  if (fromExtension) {
    return { python: fromExtension, source: 'Python extension' };
  }
  return { python: 'python3', source: 'default' };
}

function expandVariables(value: string, resource: vscode.Uri | undefined): string {
  const folder = (resource && vscode.workspace.getWorkspaceFolder(resource)) ?? vscode.workspace.workspaceFolders?.[0];
  return value
    .replace(/\$\{workspaceFolder\}/g, folder?.uri.fsPath ?? '')
    .replace(/^~(?=\/|$)/, process.env.HOME ?? '~');
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    if (api.environments) {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const resolved = await api.environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    const command = api.settings?.getExecutionDetails(resource).execCommand;
    return command?.[0];
  } catch {
    return undefined;
  }
}

// Prints which entry point exists: the `fixloop serve` CLI, or the bare language server module.
const CHECK_SCRIPT = [
  'import importlib.util as u',
  'import fixloop',
  'print("cli" if u.find_spec("fixloop.cli") else "lsp")',
].join('\n');

/** Runs the interpreter once to see whether fixloop is importable (so a missing install never crash-loops). */
export function checkInstall(python: string, cwd: string | undefined): Promise<InstallCheck> {
  return new Promise((resolve) => {
    execFile(python, ['-c', CHECK_SCRIPT], { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) {
        const detail = (stderr || error.message).trim().split('\n').slice(-3).join('\n');
        resolve({ ok: false, serverArgs: [], detail });
        return;
      }
      const entry = stdout.trim().split('\n').pop();
      resolve({ ok: true, serverArgs: entry === 'cli' ? ['-m', 'fixloop', 'serve'] : ['-m', 'fixloop.lsp'], detail: '' });
    });
  });
}

/** The exact command that installs fixloop into `python`. */
export function installCommand(python: string): string {
  const quoted = /[\s"'$]/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install fixloop`;
}
