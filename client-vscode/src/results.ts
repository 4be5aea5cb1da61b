// A fix's outcome as the user sees it: the result toast with Undo and Show transcript, the applied edit
// remembered so Undo works after focus moved, and the transcript as a read-only document.
import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditResult,
  CancellationToken,
  ResponseError,
} from 'vscode-languageclient/node';
import { FixResult, shortTestName } from './protocol';
import { loadTranscript } from './transcript';

const TRANSCRIPT_SCHEME = 'fixloop-transcript';

/** What one applied fix changed, so "Undo" can put the files back. */
interface AppliedEdit {
  before: Map<string, string | undefined>;
  after: Map<string, string>;
}

const TRY_ANOTHER = 'Try another fix';

export class ResultsView implements vscode.Disposable {
  /** "Try another fix" chosen for a fix the user discarded or undid (the fix flow runs it). */
  onTryAnother: (result: FixResult) => void = () => undefined;
  private lastResult: FixResult | undefined;
  private lastEdit: AppliedEdit | undefined;
  private readonly transcripts = new Map<string, string>(); // fixloop-transcript: uri -> Markdown
  private readonly transcriptChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(
      this.transcriptChanged,
      vscode.workspace.registerTextDocumentContentProvider(TRANSCRIPT_SCHEME, {
        onDidChange: this.transcriptChanged.event,
        provideTextDocumentContent: (uri) => this.transcripts.get(uri.toString()) ?? '',
      }),
    );
  }

  /** The last fix that was proposed (applied or not), for "Try another fix". */
  lastFix(): FixResult | undefined {
    return this.lastResult?.status === 'fixed' ? this.lastResult : undefined;
  }

  /** A new run starts: an Undo must never revert an older fix. */
  forgetEdit(): void {
    this.lastEdit = undefined;
  }

  /** Shows `result` as a toast (the server leaves that to us: serverMessages.ts declares it). */
  show(result: FixResult): void {
    this.lastResult = result;
    const names = result.testIds.map(shortTestName).join(', ') || 'the test';
    const undo = 'Undo';
    const transcript = 'Show transcript';
    const buttons = result.transcript ? [transcript] : [];
    this.log.info(`result: ${JSON.stringify({ ...result, diff: undefined })}`);
    let shown: Thenable<string | undefined>;
    if (result.status === 'fixed' && result.applied) {
      shown = vscode.window.showInformationMessage(
        `fixloop: fixed ${names} in ${result.steps} step${result.steps === 1 ? '' : 's'}, ${this.changedFiles(result)}`,
        undo,
        ...buttons,
      );
    } else if (result.status === 'fixed') {
      // the user discarded it (the Refactor Preview cancelled, say): offer another
      const why = result.failureReason ?? 'discarded or rejected by the editor';
      shown = vscode.window.showWarningMessage(
        `fixloop: found a fix for ${names}, but it was not applied: ${why}`,
        TRY_ANOTHER,
        ...buttons,
      );
    } else if (result.status === 'cancelled') {
      shown = vscode.window.showInformationMessage('fixloop: run cancelled; no file was changed.', ...buttons);
    } else if (result.status === 'not_fixed') {
      shown = vscode.window.showWarningMessage(`fixloop: could not fix ${names}: ${result.summary}`, ...buttons);
    } else if (result.error?.kind === 'NothingToFix') {
      shown = vscode.window.showInformationMessage(`fixloop: ${result.summary}`, ...buttons);
    } else {
      shown = vscode.window.showErrorMessage(`fixloop: ${result.summary || 'the run failed'}`, ...buttons);
    }
    void Promise.resolve(shown).then(async (choice) => {
      if (choice === undo) {
        await this.undoLastFix(result);
      } else if (choice === TRY_ANOTHER) {
        this.onTryAnother(result);
      } else if (choice === transcript) {
        await this.showTranscript();
      }
    });
  }

  /** "2 files changed", or how many of them the user kept in the refactor preview. */
  private changedFiles(result: FixResult): string {
    const last = this.lastEdit;
    const changed = last ? [...last.after].filter(([uri, text]) => last.before.get(uri) !== text).length : result.files.length;
    const plural = (n: number): string => `${n} file${n === 1 ? '' : 's'}`;
    return changed < result.files.length
      ? `${plural(changed)} of ${result.files.length} changed (the rest was left out in the preview)`
      : `${plural(result.files.length)} changed`;
  }

  /** Middleware for workspace/applyEdit: remembers each applied edit's before/after texts. */
  async applyEdit(
    params: ApplyWorkspaceEditParams,
    next: (params: ApplyWorkspaceEditParams, token: CancellationToken) => unknown,
  ): Promise<ApplyWorkspaceEditResult> {
    const uris = editedUris(params);
    const before = new Map<string, string | undefined>();
    for (const uri of uris) {
      before.set(uri, await documentText(uri));
    }
    const answer = await Promise.resolve(next(params, CancellationToken.None));
    if (answer instanceof ResponseError) {
      throw answer;
    }
    const result = answer as ApplyWorkspaceEditResult;
    this.log.info(`applyEdit "${params.label ?? ''}": applied=${result.applied}${result.failureReason ? ` (${result.failureReason})` : ''}`);
    if (result.applied) {
      const after = new Map<string, string>();
      for (const uri of uris) {
        after.set(uri, (await documentText(uri)) ?? '');
      }
      this.lastEdit = { before, after };
    }
    return result;
  }

  private async undoLastFix(result: FixResult): Promise<void> {
    const last = this.lastEdit;
    if (!last) {
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    for (const [uriText, afterText] of last.after) {
      const uri = vscode.Uri.parse(uriText);
      const document = await vscode.workspace.openTextDocument(uri);
      if (document.getText() !== afterText) {
        void vscode.window.showWarningMessage(
          `fixloop: ${vscode.workspace.asRelativePath(uri)} changed since the fix; use Edit > Undo instead.`,
        );
        return;
      }
      const original = last.before.get(uriText);
      if (original === undefined) {
        edit.deleteFile(uri);
      } else {
        edit.replace(uri, new vscode.Range(0, 0, document.lineCount, 0), original);
      }
    }
    if (await vscode.workspace.applyEdit(edit)) {
      this.lastEdit = undefined;
      const choice = await vscode.window.showInformationMessage('fixloop: fix undone (files are unsaved).', TRY_ANOTHER);
      if (choice === TRY_ANOTHER) {
        this.onTryAnother(result);
      }
    }
  }

  /** "fixloop: Show transcript of the last run". */
  async showTranscript(): Promise<void> {
    const result = this.lastResult;
    if (!result?.transcript) {
      void vscode.window.showInformationMessage('fixloop: no transcript yet; run "fixloop: Fix failing test" first.');
      return;
    }
    try {
      const content = await loadTranscript(result.transcript, result.testIds.join(', ') || result.runId);
      // a read-only document (never "unsaved"), named after the run
      const uri = vscode.Uri.from({ scheme: TRANSCRIPT_SCHEME, path: `/transcript-${result.runId || 'last'}.md` });
      this.transcripts.set(uri.toString(), content);
      this.transcriptChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document, { preview: false });
    } catch (error) {
      void vscode.window.showErrorMessage(`fixloop: cannot read the transcript ${result.transcript}: ${errorMessage(error)}`);
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

function editedUris(params: ApplyWorkspaceEditParams): string[] {
  const uris = new Set<string>(Object.keys(params.edit.changes ?? {}));
  for (const change of params.edit.documentChanges ?? []) {
    if ('textDocument' in change) {
      uris.add(change.textDocument.uri);
    } else if (change.kind === 'create' || change.kind === 'delete') {
      uris.add(change.uri);
    }
  }
  return [...uris];
}

async function documentText(uri: string): Promise<string | undefined> {
  try {
    return (await vscode.workspace.openTextDocument(vscode.Uri.parse(uri))).getText();
  } catch {
    return undefined;
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
