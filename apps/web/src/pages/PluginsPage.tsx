import { Route, Routes } from 'react-router';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import { PageHeader } from '../ui/bits';
import { SubNav } from '../ui/SubNav';
import { Market } from '../plugins/Market';
import { Plugins } from '../plugins/Plugins';
import { NotFoundPage } from './NotFoundPage';

/**
 * Plugins (admins): the installed bundles (/plugins) and the MCP market (/plugins/market). Anyone
 * else sees the not-found page: a user's tools come from the catalog, not from here.
 */
export default function PluginsPage() {
  const { t } = useI18n();
  const { can } = useAuth();
  const manage = can('plugin:plugin:manage');
  const market = can('mcp:market:browse');
  if (!manage && !market) return <NotFoundPage />;
  return (
    <section>
      <PageHeader title={t('plugins.title')} />
      <SubNav
        label={t('plugins.title')}
        items={[
          ...(manage ? [{ to: '/plugins', label: t('plugins.installedTab'), end: true }] : []),
          ...(market ? [{ to: '/plugins/market', label: t('plugins.marketTab') }] : []),
        ]}
      />
      <Routes>
        {manage ? <Route index element={<Plugins />} /> : null}
        {market ? <Route path="market" element={<Market />} /> : null}
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </section>
  );
}
