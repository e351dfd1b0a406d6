import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ToolEffect, type McpToolRecord } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { invalidAt } from '../ui/forms';
import { Modal } from '../ui/Modal';
import { configJsonOf, emptyRecordForm, touchesConfig, type RecordForm } from './record-form';

/**
 * Add or edit a LOCAL (command, args, env) or REMOTE (URL, headers) MCP server record. Connection
 * settings are write-only: they are never shown back; on an edit, leaving them all empty keeps the
 * stored ones, and typing any replaces them whole (the API stores them as one sealed value).
 */
export function RecordDialog({
  record,
  onClose,
  onSaved,
}: {
  record?: McpToolRecord;
  onClose: () => void;
  onSaved: (r: McpToolRecord) => void;
}) {
  const { t } = useI18n();
  const [f, setF] = useState<RecordForm>(() => emptyRecordForm(record));
  const set = <K extends keyof RecordForm>(k: K, v: RecordForm[K]) => setF((old) => ({ ...old, [k]: v }));
  const editing = record !== undefined;
  const keep = editing && !touchesConfig(f, record);
  const config = configJsonOf(f);
  const save = useMutation({
    mutationFn: () => {
      const shared = {
        name: f.name,
        description: f.description,
        type: f.type,
        effect: f.effect === '' ? null : f.effect,
        idempotent: f.idempotent === '' ? null : f.idempotent === 'yes',
      };
      const configJson = keep || !config.ok ? undefined : config.json;
      return editing
        ? call(Routes.mcpToolUpdate, {
            body: { id: record.id, ...shared, ...(configJson ? { configJson } : {}) },
          })
        : call(Routes.mcpToolCreate, { body: { ...shared, configJson: configJson ?? '' } });
    },
    onSuccess: onSaved,
  });
  const err = save.error;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (config.ok || keep) save.mutate();
  };
  const localError = !config.ok && !keep ? t('tools.form.badLine', { line: config.line }) : null;

  return (
    <Modal title={editing ? t('tools.edit', { name: record.name }) : t('tools.add')} onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="stack">
        <div className="row">
          <div className="grow">
            <label htmlFor="rec-name">{t('tools.form.name')}</label>
            <input
              id="rec-name"
              value={f.name}
              onChange={(e) => set('name', e.target.value)}
              aria-invalid={invalidAt(err, 'name')}
            />
            <FieldErrors error={err} path="name" />
          </div>
          <div>
            <span className="label" id="rec-type-label">
              {t('tools.form.type')}
            </span>
            <div role="radiogroup" aria-labelledby="rec-type-label" className="tabs">
              {(['LOCAL', 'REMOTE'] as const).map((type) => (
                <label key={type} className="check">
                  <input
                    type="radio"
                    name="rec-type"
                    checked={f.type === type}
                    onChange={() => set('type', type)}
                  />
                  {type}
                </label>
              ))}
            </div>
            <FieldErrors error={err} path="type" />
          </div>
        </div>
        <label htmlFor="rec-desc">{t('tools.form.description')}</label>
        <textarea
          id="rec-desc"
          rows={2}
          value={f.description}
          onChange={(e) => set('description', e.target.value)}
        />
        <FieldErrors error={err} path="description" />

        <fieldset>
          <legend>{t('tools.form.connection')}</legend>
          <p className="hint">
            {editing
              ? record.hasConfig
                ? t('tools.form.keepHint')
                : t('tools.form.noConfigHint')
              : t('tools.form.writeOnlyHint')}
          </p>
          {f.type === 'LOCAL' ? (
            <>
              <label htmlFor="rec-command">{t('tools.form.command')}</label>
              <input
                id="rec-command"
                value={f.command}
                placeholder="npx"
                autoComplete="off"
                onChange={(e) => set('command', e.target.value)}
                aria-invalid={invalidAt(err, 'configJson.command')}
              />
              <FieldErrors error={err} path="configJson.command" />
              <label htmlFor="rec-args">{t('tools.form.args')}</label>
              <textarea
                id="rec-args"
                rows={3}
                value={f.args}
                placeholder={'-y\n@modelcontextprotocol/server-everything'}
                onChange={(e) => set('args', e.target.value)}
              />
              <FieldErrors error={err} path="configJson.args" />
              <label htmlFor="rec-env">{t('tools.form.env')}</label>
              <textarea
                id="rec-env"
                rows={3}
                value={f.env}
                placeholder="API_KEY=…"
                autoComplete="off"
                spellCheck={false}
                onChange={(e) => set('env', e.target.value)}
                aria-invalid={!config.ok && config.field === 'env'}
              />
              {localError && !config.ok && config.field === 'env' ? (
                <div className="field-error">{localError}</div>
              ) : null}
              <FieldErrors error={err} path="configJson.env" />
            </>
          ) : (
            <>
              <label htmlFor="rec-url">{t('tools.form.url')}</label>
              <input
                id="rec-url"
                type="url"
                value={f.baseUrl}
                placeholder="https://mcp.example.com/mcp"
                onChange={(e) => set('baseUrl', e.target.value)}
                aria-invalid={invalidAt(err, 'configJson.baseUrl')}
              />
              <FieldErrors error={err} path="configJson.baseUrl" />
              <label htmlFor="rec-headers">{t('tools.form.headers')}</label>
              <textarea
                id="rec-headers"
                rows={3}
                value={f.headers}
                placeholder="Authorization: Bearer …"
                autoComplete="off"
                spellCheck={false}
                onChange={(e) => set('headers', e.target.value)}
                aria-invalid={!config.ok && config.field === 'headers'}
              />
              {localError && !config.ok && config.field === 'headers' ? (
                <div className="field-error">{localError}</div>
              ) : null}
              <FieldErrors error={err} path="configJson.headers" />
              <label className="check">
                <input type="checkbox" checked={f.oauth} onChange={(e) => set('oauth', e.target.checked)} />
                {t('tools.form.oauth')}
              </label>
              <p className="hint">{t('tools.form.oauthHint')}</p>
              {f.oauth ? (
                <div className="oauth-fields">
                  <div className="row">
                    <div className="grow">
                      <label htmlFor="rec-grant">{t('tools.form.grant')}</label>
                      <select
                        id="rec-grant"
                        value={f.grant}
                        onChange={(e) => set('grant', e.target.value as RecordForm['grant'])}
                      >
                        <option value="authorization_code">{t('tools.form.grant.authorization_code')}</option>
                        <option value="client_credentials">{t('tools.form.grant.client_credentials')}</option>
                      </select>
                    </div>
                    <div className="grow">
                      <label htmlFor="rec-auth-method">{t('tools.form.authMethod')}</label>
                      <select
                        id="rec-auth-method"
                        value={f.authMethod}
                        onChange={(e) => set('authMethod', e.target.value as RecordForm['authMethod'])}
                      >
                        <option value="">{t('tools.form.authMethodAuto')}</option>
                        <option value="client_secret_basic">client_secret_basic</option>
                        <option value="client_secret_post">client_secret_post</option>
                        <option value="none">none</option>
                      </select>
                    </div>
                  </div>
                  <div className="row">
                    <div className="grow">
                      <label htmlFor="rec-client-id">{t('tools.form.clientId')}</label>
                      <input
                        id="rec-client-id"
                        value={f.clientId}
                        autoComplete="off"
                        onChange={(e) => set('clientId', e.target.value)}
                        aria-invalid={invalidAt(err, 'configJson.oauth.clientId')}
                      />
                      <FieldErrors error={err} path="configJson.oauth.clientId" />
                    </div>
                    <div className="grow">
                      <label htmlFor="rec-client-secret">{t('tools.form.clientSecret')}</label>
                      <input
                        id="rec-client-secret"
                        type="password"
                        value={f.clientSecret}
                        autoComplete="new-password"
                        onChange={(e) => set('clientSecret', e.target.value)}
                        aria-invalid={invalidAt(err, 'configJson.oauth.clientSecret')}
                      />
                      <FieldErrors error={err} path="configJson.oauth.clientSecret" />
                    </div>
                  </div>
                  <label htmlFor="rec-scope">{t('tools.form.scope')}</label>
                  <input
                    id="rec-scope"
                    value={f.scope}
                    placeholder="read write"
                    onChange={(e) => set('scope', e.target.value)}
                    aria-invalid={invalidAt(err, 'configJson.oauth.scope')}
                  />
                  <FieldErrors error={err} path="configJson.oauth.scope" />
                  <FieldErrors error={err} path="configJson.oauth.grant" />
                </div>
              ) : null}
            </>
          )}
          {err instanceof ApiError
            ? err.errors
                .filter((e) => e.path === 'configJson')
                .map((e, i) => (
                  <div key={i} className="field-error" role="alert">
                    {e.message}
                  </div>
                ))
            : null}
        </fieldset>

        <div className="row">
          <div>
            <label htmlFor="rec-effect">{t('tools.form.effect')}</label>
            <select
              id="rec-effect"
              value={f.effect}
              onChange={(e) => set('effect', e.target.value as RecordForm['effect'])}
            >
              <option value="">{t('tools.form.effectAuto')}</option>
              {ToolEffect.options.map((x) => (
                <option key={x} value={x}>
                  {x}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="rec-idem">{t('tools.form.idempotent')}</label>
            <select
              id="rec-idem"
              value={f.idempotent}
              onChange={(e) => set('idempotent', e.target.value as RecordForm['idempotent'])}
            >
              <option value="">{t('tools.form.effectAuto')}</option>
              <option value="yes">{t('common.yes')}</option>
              <option value="no">{t('common.no')}</option>
            </select>
          </div>
        </div>
        <ErrorNote error={err} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={save.isPending || (!config.ok && !keep)}>
            {t('common.save')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
