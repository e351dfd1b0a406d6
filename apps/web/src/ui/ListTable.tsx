import type { ReactNode } from 'react';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, Loading } from './bits';

/**
 * A list as every page shows one: loading, the error, the empty state (what to do next), or the
 * table with its column headers (and an unlabelled actions column) around the rows given.
 */
export function ListTable({
  label,
  query,
  count,
  empty,
  columns,
  actions = false,
  children,
}: {
  label: string;
  query: { readonly isPending: boolean; readonly isSuccess: boolean; readonly error: unknown };
  count: number;
  empty: ReactNode;
  columns: readonly ReactNode[];
  /** Add a last, visually hidden "Actions" header for a column of buttons. */
  actions?: boolean;
  children: ReactNode;
}) {
  const { t } = useI18n();
  return (
    <>
      {query.isPending ? <Loading /> : null}
      <ErrorNote error={query.error} />
      {query.isSuccess && !count ? empty : null}
      {count ? (
        <div className="table-wrap">
          <table className="list" aria-label={label}>
            <thead>
              <tr>
                {columns.map((c, i) => (
                  <th scope="col" key={i}>
                    {c}
                  </th>
                ))}
                {actions ? (
                  <th scope="col">
                    <span className="visually-hidden">{t('common.actions')}</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>{children}</tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
