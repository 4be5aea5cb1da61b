// What the progress notification shows for each $/progress message of a fix.

/**
 * The notification's line: the latest thought, followed by what the loop is doing about it.
 * Actions and observations ("→ tool(…)", "← tool: …", "✓/✗ …") arrive milliseconds after the thought
 * that led to them; showing them alone would replace the thought before anyone could read it.
 */
export class ProgressLine {
  private thought = '';

  update(line: string): string {
    if (!line) {
      return '';
    }
    if (/^[→←✓✗]/.test(line)) {
      return this.thought ? `${this.thought} — ${line}` : line;
    }
    this.thought = line;
    return line;
  }
}

export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? line.slice(0, 199) + '…' : line;
}
