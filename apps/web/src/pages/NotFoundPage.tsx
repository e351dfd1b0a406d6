import { Link } from 'react-router';
import { useI18n } from '../i18n/i18n';

export function NotFoundPage() {
  const { t } = useI18n();
  return (
    <section className="not-found">
      <h1>{t('notFound.title')}</h1>
      <p>{t('notFound.body')}</p>
      <Link to="/runs" className="button primary">
        {t('notFound.home')}
      </Link>
    </section>
  );
}
