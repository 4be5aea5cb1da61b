// The model endpoint's API key in VS Code's secret storage (never in settings), handed to the server's environment.
import * as vscode from 'vscode';

const SECRET_KEY = 'fixloop.apiKey';

export class ApiKeys {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** The variables the server process gets: FIXLOOP_API_KEY, and the one `fixloop.apiKeyEnv` names. */
  async serverEnv(): Promise<NodeJS.ProcessEnv> {
    const key = await this.secrets.get(SECRET_KEY);
    if (!key) {
      return {};
    }
    const env: NodeJS.ProcessEnv = { FIXLOOP_API_KEY: key };
    const keyEnv = vscode.workspace.getConfiguration('fixloop').get<string>('apiKeyEnv', '');
    if (keyEnv) {
      env[keyEnv] = key;
    }
    return env;
  }

  /** "fixloop: Set API key": asks for the key; `restart` makes the server pick it up. */
  async askAndStore(restart: () => Promise<void>): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'fixloop: API key for the model endpoint',
      prompt: "Stored in VS Code's secret storage and passed to the server as FIXLOOP_API_KEY. Empty removes it.",
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) {
      return;
    }
    if (key) {
      await this.secrets.store(SECRET_KEY, key);
    } else {
      await this.secrets.delete(SECRET_KEY);
    }
    await restart();
    void vscode.window.showInformationMessage(key ? 'fixloop: API key stored; server restarted.' : 'fixloop: API key removed.');
  }
}
