// Renders a run's JSONL transcript (one engine event per line) as readable Markdown.
import { readFile } from 'node:fs/promises';

type Json = Record<string, unknown>;

function text(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  return JSON.stringify(value, null, 2);
}

function fence(body: string, language = ''): string {
  const ticks = body.includes('```') ? '````' : '```';
  return `${ticks}${language}\n${body.replace(/\n$/, '')}\n${ticks}`;
}

function count(value: unknown): string {
  return typeof value === 'number' ? value.toLocaleString('en-US') : '?';
}

// One model request in one line: what it cost, not the per-message breakdown (benchmarks/prompt_breakdown.py).
function requestLine(event: Json): string {
  const cached = typeof event.prompt_cached === 'number' ? `, ${count(event.prompt_cached)} cached` : '';
  const processed = typeof event.prompt_processed === 'number' ? `, ${count(event.prompt_processed)} read anew` : '';
  const seconds = typeof event.seconds === 'number' ? `, ${event.seconds.toFixed(1)} s` : '';
  return (
    `*Model request ${text(event.number ?? '?')}: ${count(event.prompt_tokens)} prompt tokens${processed}${cached}, ` +
    `${count(event.completion_tokens)} completion tokens${seconds}*`
  );
}

function renderEvent(event: Json): string | undefined {
  const kind = String(event.event ?? event.type ?? event.kind ?? '');
  const step = event.step !== undefined ? ` (step ${text(event.step)})` : '';
  switch (kind) {
    case 'thought_delta':
      return undefined; // the whole thought follows as a `thought` event
    case 'thought':
      return `### Thought${step}\n\n${text(event.text)}`;
    case 'calling':
      return undefined; // the model began a call; its action follows
    case 'reply': {
      // the turn's whole text; only what the loop did not use (after the call it stopped at) is news
      const unused = typeof event.unused === 'string' ? event.unused.trim() : '';
      return unused ? `**Unused reply text${step}** (the stream stopped at the ${text(event.cut ?? 'end')}):\n\n${fence(unused)}` : undefined;
    }
    case 'action':
      return `**Action${step}:** \`${text(event.tool)}\`\n\n${fence(text(event.arguments ?? {}), 'json')}`;
    case 'observation':
      return `**Observation${event.is_error ? ' (error)' : ''}:** \`${text(event.tool)}\`\n\n${fence(text(event.text ?? ''))}`;
    case 'verdict': {
      const reasons = Array.isArray(event.reasons) ? event.reasons.map((r) => `- ${text(r)}`).join('\n') : '';
      return `**Verdict${step}:** ${event.accepted ? 'accepted' : 'rejected'}${reasons ? '\n\n' + reasons : ''}`;
    }
    case 'usage':
      return undefined;
    case 'request':
      return requestLine(event);
    case 'notice':
      return `> ${text(event.text)}`;
    case 'meta': {
      const tests = Array.isArray(event.test_ids) ? event.test_ids.map(text).join(', ') : '';
      const lines = [
        tests && `- **tests:** ${tests}`,
        event.model !== undefined && `- **model:** ${text(event.model) || '(default)'}${event.base_url ? ` at ${text(event.base_url)}` : ''}`,
        event.root !== undefined && `- **project:** ${text(event.root)}`,
        event.started !== undefined && `- **started:** ${text(event.started)}`,
      ].filter(Boolean);
      return lines.join('\n');
    }
    case 'result': {
      const files = Array.isArray(event.files) && event.files.length ? `\n\nfiles: ${event.files.map(text).join(', ')}` : '';
      const diff = typeof event.diff === 'string' && event.diff ? `\n\n${fence(event.diff, 'diff')}` : '';
      return `## Result: ${text(event.status)} in ${text(event.steps ?? '?')} steps\n\n${text(event.summary ?? '')}${files}${diff}`;
    }
    case 'done':
      return `## Done: ${text(event.status)}\n\n${text(event.summary ?? '')}`;
    default:
      return fence(JSON.stringify(event, null, 2), 'json');
  }
}

export function renderTranscript(jsonl: string, title: string): string {
  const parts = [`# fixloop transcript: ${title}`];
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) {
      continue;
    }
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      parts.push(fence(line));
      continue;
    }
    if (typeof event === 'object' && event !== null) {
      const rendered = renderEvent(event as Json);
      if (rendered) {
        parts.push(rendered);
      }
    }
  }
  return parts.join('\n\n') + '\n';
}

export async function loadTranscript(path: string, title: string): Promise<string> {
  return renderTranscript(await readFile(path, 'utf8'), title);
}
