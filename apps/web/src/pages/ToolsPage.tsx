import { Navigate, Route, Routes } from 'react-router';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import { PageHeader } from '../ui/bits';
import { SubNav } from '../ui/SubNav';
import { Catalog } from '../tools/Catalog';
import { Records } from '../tools/Records';
import { NotFoundPage } from './NotFoundPage';

/**
 * Tools: the MCP server records (/tools, admins only: a user sees no management at all) and the
 * catalog of every tool (/tools/catalog).
 */
export default function ToolsPage() {
  const { t } = useI18n();
  const { can } = useAuth();
  const admin = can('mcp:tool:add');
  return (
    <section>
      <PageHeader title={t('tools.title')} />
      {admin ? (
        <SubNav
          label={t('tools.title')}
          items={[
            { to: '/tools', label: t('tools.records'), end: true },
            { to: '/tools/catalog', label: t('tools.catalog') },
          ]}
        />
      ) : null}
      <Routes>
        <Route index element={admin ? <Records /> : <Navigate to="catalog" replace />} />
        <Route path="catalog" element={<Catalog />} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </section>
  );
}
