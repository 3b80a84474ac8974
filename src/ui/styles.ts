// Styles shared by the cell elements.
import { css } from "lit";

export const cellStyles = css`
  :host {
    display: block;
  }
  button {
    font: inherit;
    padding: 6px 14px;
    border-radius: 6px;
    border: 1px solid var(--rl-accent);
    background: var(--rl-accent);
    color: var(--rl-accent-text);
    cursor: pointer;
  }
  button[disabled] {
    opacity: 0.5;
    cursor: progress;
  }
  button.secondary {
    background: transparent;
    color: var(--rl-accent);
  }
  table {
    border-collapse: collapse;
    font-size: 14px;
  }
  th,
  td {
    text-align: left;
    padding: 3px 12px 3px 0;
    border-bottom: 1px solid var(--rl-border);
  }
  th {
    color: var(--rl-muted);
    font-weight: 500;
  }
  code {
    font-family: var(--rl-mono);
    background: var(--rl-code-bg);
    padding: 1px 4px;
    border-radius: 4px;
  }
  .muted {
    color: var(--rl-muted);
  }
  .good {
    color: var(--rl-good);
  }
  .bad {
    color: var(--rl-bad);
  }
  .error {
    border-left: 4px solid var(--rl-bad);
    background: color-mix(in srgb, var(--rl-bad) 8%, transparent);
    padding: 8px 12px;
    border-radius: 4px;
  }
  progress {
    width: 220px;
    vertical-align: middle;
  }
`;

/** The declarations of a code block (SQL, a prompt, a completion), for a rule's body. */
export const codeBlock = css`
  margin: 0;
  white-space: pre-wrap;
  word-break: break-word;
  font-family: var(--rl-mono);
  font-size: 12px;
  background: var(--rl-code-bg);
  padding: 6px;
  border-radius: 4px;
`;

/** Generated SQL as a block (`<pre class="sql">` around highlightSql's output). */
export const sqlStyles = css`
  pre.sql {
    ${codeBlock};
  }
`;
