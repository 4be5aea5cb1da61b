// One fix request to the server (fixFailingTest or tryAnotherFix) with our own progress token: the server's
// work-done progress streams into the cancellable notification, and Cancel reaches the server both ways.
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LSPErrorCodes,
  ResponseError,
  WorkDoneProgress,
  WorkDoneProgressBegin,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { oneLine, ProgressLine } from './progressLine';
import { FixResult, FixTarget, isFixResult, TryAnotherArgs } from './protocol';

/** What one request sends and how it is labelled in the notification and the log. */
export interface FixRequest {
  command: string;
  argument: FixTarget | TryAnotherArgs;
  token: string;
  label: string;
  /** The answer when the request is cancelled (the server then answers with RequestCancelled). */
  cancelled: () => FixResult;
}

/** Sends `request` and streams its progress into `progress`; Cancel sends both cancel messages. */
export async function sendFixRequest(
  client: LanguageClient,
  request: FixRequest,
  progress: vscode.Progress<{ message?: string; increment?: number }>,
  cancel: vscode.CancellationToken,
  log: vscode.LogOutputChannel,
): Promise<FixResult | undefined> {
  const { command, argument, token, label } = request;
  progress.report({ message: `fixing ${label}…` });
  const onProgress = client.onProgress(WorkDoneProgress.type, token, progressReporter(progress, (line) => log.info(`[${label}] ${line}`)));
  const onCancel = cancel.onCancellationRequested(() => {
    log.info(`[${label}] cancel requested`);
    void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  });
  try {
    const answer: unknown = await client.sendRequest(
      ExecuteCommandRequest.type,
      { command, arguments: [argument], workDoneToken: token },
      cancel,
    );
    return isFixResult(answer) ? answer : undefined;
  } catch (error) {
    if (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled) {
      return request.cancelled();
    }
    throw error;
  } finally {
    onProgress.dispose();
    onCancel.dispose();
  }
}

/** The server's begin/report values as notification lines (thoughts one line each) and a rising percentage. */
function progressReporter(
  progress: vscode.Progress<{ message?: string; increment?: number }>,
  log: (line: string) => void,
): (value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) => void {
  let reported = 0;
  const view = new ProgressLine();
  return (value) => {
    if (value.kind === 'end') {
      return;
    }
    const line = oneLine(value.kind === 'begin' ? value.message ?? value.title : value.message ?? '');
    const message = view.update(line);
    let increment: number | undefined;
    if (typeof value.percentage === 'number' && value.percentage > reported) {
      increment = value.percentage - reported;
      reported = value.percentage;
    }
    if (message || increment) {
      progress.report({ message: message || undefined, increment });
    }
    if (line) {
      log(line);
    }
  };
}
