// The `fixloop` settings the server sees, per workspace folder: the extension's own keys left out, and
// `python` (the project's interpreter) filled in from the Python extension when the user set none.
// No runtime `vscode` import: node:test checks the answers against a fake of the Python extension.

/** Settings that only the extension reads (the server's interpreter, how to import fixloop, tracing). */
export const CLIENT_ONLY_KEYS: readonly string[] = ['serverPython', 'importStrategy', 'trace'];

/** The settings the server reads, for initializationOptions (CONTRACT.md adds `python`). */
export const SERVER_KEYS: readonly string[] = [
  'model',
  'baseUrl',
  'apiKeyEnv',
  'protocol',
  'maxSteps',
  'attempts',
  'testCommand',
  'testTimeout',
  'allowTestEdits',
  'runTestsOnSave',
  'python',
];

/** One `fixloop` section as VS Code gives it, made into what the server should see for that folder. */
export function serverSection(raw: unknown, selectedPython: string | undefined): Record<string, unknown> {
  const section: Record<string, unknown> = {};
  if (typeof raw === 'object' && raw !== null) {
    for (const [key, value] of Object.entries(raw)) {
      if (!CLIENT_ONLY_KEYS.includes(key) && value !== undefined && value !== null) {
        section[key] = value;
      }
    }
  }
  const configured = typeof section.python === 'string' ? section.python.trim() : '';
  if (configured) {
    section.python = configured;
  } else if (selectedPython) {
    section.python = selectedPython;
  } else {
    delete section.python; // empty means "find it": the server's default
  }
  return section;
}

export interface ConfigurationItem {
  scopeUri?: string | null;
  section?: string | null;
}

/**
 * The answer to a `workspace/configuration` request: VS Code's own answers (`answers`, one per item),
 * with every `fixloop` section passed through `serverSection` for the item's folder.
 */
export async function answerConfiguration(
  items: readonly ConfigurationItem[],
  answers: readonly unknown[],
  interpreterFor: (scopeUri: string | undefined) => Promise<string | undefined>,
): Promise<unknown[]> {
  return Promise.all(
    items.map(async (item, index) => {
      const answer = answers[index];
      if (item.section !== 'fixloop') {
        return answer;
      }
      return serverSection(answer, await interpreterFor(item.scopeUri ?? undefined));
    }),
  );
}
