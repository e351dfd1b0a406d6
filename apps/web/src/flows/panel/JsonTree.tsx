import { useState } from 'react';
import { useI18n } from '../../i18n/i18n';

/** Objects and lists with more entries than this start collapsed; so does everything below level 2. */
const OPEN_UP_TO = 8;
const LONG_TEXT = 200;
const MAX_ITEMS = 100;

function Text({ value }: { value: string }) {
  const { t } = useI18n();
  const [all, setAll] = useState(false);
  const long = value.length > LONG_TEXT;
  return (
    <>
      <span className="json-string">
        {JSON.stringify(long && !all ? `${value.slice(0, LONG_TEXT)}…` : value)}
      </span>
      {long ? (
        <button type="button" className="link" onClick={() => setAll(!all)}>
          {all ? t('run.fold') : t('run.folded', { n: value.length })}
        </button>
      ) : null}
    </>
  );
}

function Node({ name, value, depth }: { name?: string; value: unknown; depth: number }) {
  const { t } = useI18n();
  const key = name !== undefined ? <span className="json-key">{name}: </span> : null;
  if (value === null || typeof value !== 'object') {
    return (
      <li>
        {key}
        {typeof value === 'string' ? (
          <Text value={value} />
        ) : (
          <span className={`json-${value === null ? 'null' : typeof value}`}>
            {JSON.stringify(value) ?? 'undefined'}
          </span>
        )}
      </li>
    );
  }
  const list = Array.isArray(value);
  const entries: [string, unknown][] = list
    ? value.slice(0, MAX_ITEMS).map((v, i) => [String(i), v])
    : Object.entries(value).slice(0, MAX_ITEMS);
  const size = list ? value.length : Object.keys(value).length;
  const summary = list ? t('flow.json.items', { n: size }) : t('flow.json.keys', { n: size });
  return (
    <li>
      <details open={depth < 2 && size <= OPEN_UP_TO}>
        <summary>
          {key}
          <span className="hint">{list ? `[ ${summary} ]` : `{ ${summary} }`}</span>
        </summary>
        <ul>
          {entries.map(([k, v]) => (
            <Node key={k} name={list ? `[${k}]` : k} value={v} depth={depth + 1} />
          ))}
          {size > MAX_ITEMS ? <li className="hint">{t('flow.json.more', { n: size - MAX_ITEMS })}</li> : null}
        </ul>
      </details>
    </li>
  );
}

/** A JSON value as a tree: large objects and lists, and deep levels, start collapsed; long text folds. */
export function JsonTree({ value, label }: { value: unknown; label?: string }) {
  return (
    <ul className="json-tree" aria-label={label}>
      <Node value={value} depth={0} />
    </ul>
  );
}
