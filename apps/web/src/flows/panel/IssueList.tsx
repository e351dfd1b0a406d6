import type { PanelIssue } from './NodePanel';

/** The problems of a node that no one field owns, each with its path when it has one. */
export function IssueList({ issues }: { issues: readonly PanelIssue[] }) {
  if (!issues.length) return null;
  return (
    <ul className="field-error" role="alert">
      {issues.map((i, k) => (
        <li key={k}>
          {i.path ? <code>{i.path}</code> : null} {i.message}
        </li>
      ))}
    </ul>
  );
}
