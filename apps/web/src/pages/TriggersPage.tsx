import { Navigate, Route, Routes } from 'react-router';
import { useI18n } from '../i18n/i18n';
import { PageHeader } from '../ui/bits';
import { SubNav } from '../ui/SubNav';
import { Schedules } from '../triggers/Schedules';
import { Webhooks } from '../triggers/Webhooks';
import { NotFoundPage } from './NotFoundPage';

/** Triggers: schedules (/triggers/schedules) and webhooks (/triggers/webhooks), each with its URL. */
export default function TriggersPage() {
  const { t } = useI18n();
  return (
    <section>
      <PageHeader title={t('triggers.title')} />
      <SubNav
        label={t('triggers.title')}
        items={[
          { to: '/triggers/schedules', label: t('triggers.schedules') },
          { to: '/triggers/webhooks', label: t('triggers.webhooks') },
        ]}
      />
      <Routes>
        <Route index element={<Navigate to="schedules" replace />} />
        <Route path="schedules" element={<Schedules />} />
        <Route path="webhooks" element={<Webhooks />} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </section>
  );
}
