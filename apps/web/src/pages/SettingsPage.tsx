import { useI18n } from '../i18n/i18n';
import { PageHeader } from '../ui/bits';

// Placeholder while the page is being built on another branch (replaced before this issue closes).
export default function SettingsPage() {
  const { t } = useI18n();
  return <PageHeader title={t('nav.settings')} />;
}
