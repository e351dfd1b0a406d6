import { useState, type FormEvent } from 'react';
import { useAuth } from '../api/auth';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote } from '../ui/bits';

export function SignInPage() {
  const { t } = useI18n();
  const { signIn, ended } = useAuth();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const rejected = error instanceof ApiError && error.status === 401;
  return (
    <main className="signin" id="main">
      <form onSubmit={submit} className="card signin-card" aria-labelledby="signin-title">
        <h1 id="signin-title">
          <img src="/favicon.svg" alt="" width={28} height={28} /> {t('signIn.title')}
        </h1>
        {ended === 'rejected' && !error ? (
          <p className="notice" role="alert">
            {t('signIn.signedOut')}
          </p>
        ) : null}
        <label htmlFor="token">{t('signIn.token')}</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          autoFocus
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-invalid={rejected}
        />
        <p className="hint">{t('signIn.hint')}</p>
        {rejected ? (
          <p className="field-error" role="alert">
            {t('signIn.rejected')}
          </p>
        ) : (
          <ErrorNote error={error} />
        )}
        <button type="submit" className="primary" disabled={busy || !token.trim()}>
          {t('signIn.submit')}
        </button>
      </form>
    </main>
  );
}
