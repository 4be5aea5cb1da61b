// The server's command ids and the JSON shapes it returns (DESIGN.md, "Public contract").

export const SERVER_FIX = 'fixloop.server.fixFailingTest';
export const SERVER_RUN_TESTS = 'fixloop.server.runTests';
export const SERVER_CANCEL = 'fixloop.server.cancel';
export const SERVER_TRY_ANOTHER = 'fixloop.server.tryAnotherFix';

export type FixStatus = 'fixed' | 'not_fixed' | 'cancelled' | 'error';

export interface FixResult {
  runId: string;
  status: FixStatus;
  testIds: string[];
  summary: string;
  diff: string;
  files: string[];
  applied: boolean | null;
  steps: number;
  attempts: number;
  usage?: { promptTokens: number; completionTokens: number };
  seconds: number;
  transcript: string | null;
  reasons?: string[];
  /** Why a found fix was not applied (the client rejected it, the user discarded it, a buffer changed). */
  failureReason?: string | null;
  /** Why the run ended in `status: "error"`: the error's kind (e.g. `NothingToFix`) and its message. */
  error?: { kind: string; message: string } | null;
}

/**
 * `{testId}` or `{uri, position?}`: the one argument of fixloop.server.fixFailingTest. `root` is the
 * workspace folder (a `file:` URI) the test belongs to; `testId` is relative to it (CONTRACT.md).
 */
export type FixTarget =
  | { testId: string; root?: string }
  | { uri: string; position?: { line: number; character: number }; root?: string };

/** The one argument of fixloop.server.tryAnotherFix: the run whose fix the user rejected, and why. */
export interface TryAnotherArgs {
  runId: string;
  reason?: string;
}

/** The one argument of fixloop.server.runTests: a file (`uri`) or node ids, in the folder `root`. */
export interface RunTestsArgs {
  uri?: string;
  testIds?: string[];
  root?: string;
}

export function isFixResult(value: unknown): value is FixResult {
  return typeof value === 'object' && value !== null && 'status' in value && 'runId' in value;
}

/** "tests/test_x.py::test_y[1]" -> "test_y[1]". */
export function shortTestName(testId: string): string {
  const parts = testId.split('::');
  return parts[parts.length - 1] || testId;
}
