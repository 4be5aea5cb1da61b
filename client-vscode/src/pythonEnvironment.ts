// The interpreter the Python extension has selected for each folder, followed as the user changes it.
// Only types come from `vscode` here, so node:test can drive this with a fake of the extension's API.
import type { Disposable, Uri, WorkspaceFolder } from 'vscode';

type Resource = Uri | WorkspaceFolder;

interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}

/** The part of `@vscode/python-extension`'s `PythonExtension.environments` that fixloop uses. */
export interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: Resource): EnvironmentPath;
  resolveEnvironment(environment: EnvironmentPath | string): Promise<{ executable: { uri: Uri | undefined } } | undefined>;
  readonly onDidChangeActiveEnvironmentPath: (
    listener: (event: EnvironmentPath & { readonly resource: Resource | undefined }) => unknown,
  ) => Disposable;
}

/** Loads the API, or gives undefined when the Python extension is not installed (or fails to activate). */
export type PythonApiLoader = () => Promise<PythonEnvironmentsApi | undefined>;

export class SelectedInterpreters implements Disposable {
  private api: Promise<PythonEnvironmentsApi | undefined> | undefined;
  private readonly listeners = new Set<(resource: Resource | undefined) => void>();
  private subscription: Disposable | undefined;

  constructor(
    private readonly load: PythonApiLoader,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  private environments(): Promise<PythonEnvironmentsApi | undefined> {
    this.api ??= this.load().then(
      (api) => {
        if (api) {
          this.subscription = api.onDidChangeActiveEnvironmentPath((event) => {
            this.log(`the Python extension's interpreter changed to ${event.path}`);
            for (const listener of this.listeners) {
              listener(event.resource);
            }
          });
        }
        return api;
      },
      (error: unknown) => {
        this.log(`the Python extension's API is not available: ${String(error)}`);
        return undefined;
      },
    );
    return this.api;
  }

  /** The selected interpreter's executable for `resource`'s folder; undefined without the Python extension. */
  async interpreterFor(resource: Resource | undefined): Promise<string | undefined> {
    const api = await this.environments();
    if (!api) {
      return undefined;
    }
    try {
      const active = api.getActiveEnvironmentPath(resource);
      const resolved = await api.resolveEnvironment(active);
      return resolved?.executable.uri?.fsPath ?? (active.path || undefined);
    } catch (error) {
      this.log(`asking the Python extension for the interpreter failed: ${String(error)}`);
      return undefined;
    }
  }

  /** Calls `listener` with the folder (or file) whose selected interpreter changed. */
  onDidChange(listener: (resource: Resource | undefined) => void): Disposable {
    this.listeners.add(listener);
    void this.environments();
    return { dispose: () => void this.listeners.delete(listener) };
  }

  dispose(): void {
    this.listeners.clear();
    this.subscription?.dispose();
  }
}
