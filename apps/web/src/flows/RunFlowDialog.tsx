import { useId, useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { PermissionMode, StoredFile } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, call, uploadFile } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { PermissionModeSelect } from '../runs/PermissionModeSelect';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { invalidAt } from '../ui/forms';
import { Modal } from '../ui/Modal';
import {
  fileGrantsOf,
  initialValues,
  inputFieldsOf,
  readInputs,
  type FormIssue,
  type InputField,
  type RawValues,
} from './run-form';

/**
 * Runs a flow: a form made from its input schema, checked in the browser with the server's own
 * checks; Start stays blocked, naming what is missing, until every required input is given. The
 * server's refusals land under their fields.
 */
export function RunFlowDialog({
  workflow,
  version,
  onStarted,
  onClose,
}: {
  workflow: { id: string; inputSchema: Record<string, unknown>; name?: string };
  /** A published version to run; the draft when absent. */
  version?: number;
  onStarted: (runId: string) => void;
  onClose: () => void;
}) {
  const { t } = useI18n();
  const formId = useId();
  const fields = useMemo(() => inputFieldsOf(workflow.inputSchema), [workflow.inputSchema]);
  const [raw, setRaw] = useState<RawValues>(() => initialValues(workflow.inputSchema, fields));
  const [touched, setTouched] = useState<ReadonlySet<string>>(new Set());
  /** The uploaded file of each upload field (its id is the field's value). */
  const [uploaded, setUploaded] = useState<Record<string, StoredFile>>({});
  const [permissionMode, setPermissionMode] = useState<PermissionMode>('ask');
  // Starting a flow whose every step is on the canvas approves its plan, unless the person asks to see it first.
  const [reviewPlan, setReviewPlan] = useState(false);
  const { inputs, issues } = useMemo(
    () => readInputs(workflow.inputSchema, fields, raw),
    [workflow.inputSchema, fields, raw],
  );
  // By label; a required name the schema does not describe is still named (the server refuses it too).
  const missing = issues
    .filter((i) => i.kind === 'required')
    .map((i) => fields.find((f) => f.name === i.name)?.label ?? i.name);
  const start = useMutation({
    mutationFn: () => {
      const files = fileGrantsOf(fields, raw);
      return call(Routes.workflowRun, {
        params: { id: workflow.id },
        body: {
          inputs,
          ...(files.length ? { files } : {}),
          permissionMode,
          planApproval: reviewPlan,
          ...(version !== undefined ? { version } : {}),
        },
      });
    },
    onSuccess: (r) => onStarted(r.runId),
  });
  const blocked = issues.length > 0;
  const set = (name: string, value: string | boolean) => {
    setRaw((old) => ({ ...old, [name]: value }));
    setTouched((old) => new Set(old).add(name));
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!blocked && !start.isPending) start.mutate();
  };
  const issueText = (issue: FormIssue) =>
    issue.kind === 'required'
      ? t('flows.run.required')
      : issue.kind === 'notNumber'
        ? t('flows.run.notNumber')
        : issue.kind === 'notJson'
          ? t('flows.run.notJson', { reason: issue.message })
          : issue.message;

  return (
    <Modal
      title={workflow.name ? t('flows.run.titleOf', { name: workflow.name }) : t('flows.run.title')}
      onClose={onClose}
      wide
    >
      <form onSubmit={submit} className="form run-flow-form" noValidate>
        <p className="hint">
          {version !== undefined ? t('flows.run.version', { n: version }) : t('flows.run.draft')}
        </p>
        {fields.length ? null : <p className="hint">{t('flows.run.noInputs')}</p>}
        {fields.map((f) => {
          const own = issues.filter((i) => i.name === f.name);
          // "Required" is said once, in the summary, until the person has been at the field.
          const shown = own.filter((i) => i.kind !== 'required' || touched.has(f.name));
          const id = `${formId}-${f.name}`;
          const serverPath = `inputs.${f.name}`;
          return (
            <div key={f.name} className="run-field" data-input={f.name}>
              <InputControl
                field={f}
                id={id}
                workflowId={workflow.id}
                version={version}
                value={raw[f.name]}
                file={uploaded[f.name]}
                invalid={shown.length > 0 || invalidAt(start.error, serverPath)}
                describedBy={f.description ? `${id}-desc` : undefined}
                onChange={(v) => set(f.name, v)}
                onUploaded={(file) => {
                  setUploaded((old) => {
                    const next = { ...old };
                    if (file) next[f.name] = file;
                    else delete next[f.name];
                    return next;
                  });
                  set(f.name, file?.id ?? '');
                }}
              />
              {f.description ? (
                <div className="hint" id={`${id}-desc`}>
                  {f.description}
                </div>
              ) : null}
              {shown.length ? (
                <div className="field-error" role="alert">
                  {shown.map((i, n) => (
                    <div key={n}>{issueText(i)}</div>
                  ))}
                </div>
              ) : null}
              <FieldErrors error={start.error} path={serverPath} />
            </div>
          );
        })}
        <div className="row">
          <PermissionModeSelect value={permissionMode} onChange={setPermissionMode} />
        </div>
        <label className="check">
          <input type="checkbox" checked={reviewPlan} onChange={(e) => setReviewPlan(e.target.checked)} />
          {t('flows.run.reviewPlan')}
        </label>
        {missing.length ? (
          <p className="notice" role="status" id={`${formId}-missing`} data-testid="missing-inputs">
            {t('flows.run.missing', { names: missing.join(', ') })}
          </p>
        ) : null}
        <ErrorNote error={start.error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            className="primary"
            disabled={blocked || start.isPending}
            aria-describedby={missing.length ? `${formId}-missing` : undefined}
          >
            {t('flows.run.start')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

function InputControl({
  field: f,
  id,
  workflowId,
  version,
  value,
  file,
  invalid,
  describedBy,
  onChange,
  onUploaded,
}: {
  field: InputField;
  id: string;
  workflowId: string;
  version: number | undefined;
  value: string | boolean | undefined;
  file: StoredFile | undefined;
  invalid: boolean;
  describedBy: string | undefined;
  onChange: (value: string | boolean) => void;
  onUploaded: (file: StoredFile | undefined) => void;
}) {
  const { t } = useI18n();
  // The mark is drawn by CSS (`label.required::after`): the field's name stays exactly its label.
  const labelClass = f.required ? 'required' : undefined;
  const common = {
    id,
    'aria-invalid': invalid || undefined,
    'aria-required': f.required || undefined,
    'aria-describedby': describedBy,
  };
  if (f.kind === 'boolean')
    return (
      <label className={`check${f.required ? ' required' : ''}`} htmlFor={id}>
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.target.checked)}
        />
        {f.label}
      </label>
    );
  const text = typeof value === 'string' ? value : '';
  if (f.kind === 'directory')
    return (
      <>
        <span className="label">{f.label}</span>
        <p className="hint" data-testid={`auto-${f.name}`}>
          {t('flows.run.sharedDirectory')}
        </p>
      </>
    );
  return (
    <>
      <label htmlFor={id} className={labelClass} title={f.required ? t('flows.run.requiredMark') : undefined}>
        {f.label}
      </label>
      {f.kind === 'upload' ? (
        <FilePicker id={id} common={common} file={file} onUploaded={onUploaded} />
      ) : f.kind === 'choice' ? (
        <ChoiceSelect
          common={common}
          workflowId={workflowId}
          version={version}
          input={f.name}
          value={text}
          onChange={onChange}
        />
      ) : f.kind === 'enum' ? (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          <option value="">{t('flows.run.choose')}</option>
          {(f.options ?? []).map((o, i) => (
            <option key={i} value={String(i)}>
              {typeof o === 'string' ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
      ) : f.kind === 'list' || f.kind === 'object' ? (
        <textarea
          {...common}
          rows={4}
          value={text}
          placeholder={f.placeholder ?? (f.kind === 'list' ? '["…"]' : '{"…": "…"}')}
          spellCheck={false}
          onChange={(e) => onChange(e.target.value)}
        />
      ) : f.multiline ? (
        <textarea
          {...common}
          rows={5}
          value={text}
          placeholder={f.placeholder}
          onChange={(e) => onChange(e.target.value)}
        />
      ) : (
        <input
          {...common}
          type="text"
          inputMode={f.kind === 'number' ? 'decimal' : undefined}
          value={text}
          placeholder={f.placeholder ?? (f.kind === 'file' ? t('flows.run.filePlaceholder') : undefined)}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </>
  );
}

/** Uploads the picked file at once (POST /api/files); the field's value is then the file's id. */
function FilePicker({
  id,
  common,
  file,
  onUploaded,
}: {
  id: string;
  common: Record<string, unknown>;
  file: StoredFile | undefined;
  onUploaded: (file: StoredFile | undefined) => void;
}) {
  const { t } = useI18n();
  const send = useMutation({
    mutationFn: (f: File) => uploadFile(f),
    onSuccess: (stored) => onUploaded(stored),
  });
  return (
    <div className="file-picker">
      <input
        {...common}
        id={id}
        type="file"
        disabled={send.isPending}
        onChange={(e) => {
          const picked = e.target.files?.[0];
          if (picked) send.mutate(picked);
          else onUploaded(undefined);
        }}
      />
      {send.isPending ? (
        <span className="hint" role="status">
          {t('flows.run.uploading')}
        </span>
      ) : file ? (
        <span className="hint" data-testid="uploaded-file">
          {t('flows.run.uploaded', { name: file.name, size: file.size })}
        </span>
      ) : null}
      {send.error ? <ErrorNote error={send.error} /> : null}
    </div>
  );
}

/** A dropdown its list tool fills (GET /api/workflows/{id}/inputs/{input}/options): loading, empty, error. */
function ChoiceSelect({
  common,
  workflowId,
  version,
  input,
  value,
  onChange,
}: {
  common: Record<string, unknown>;
  workflowId: string;
  /** The published version being run: its schema names the list tool (the draft's may differ). */
  version: number | undefined;
  input: string;
  value: string;
  onChange: (value: string) => void;
}) {
  const { t } = useI18n();
  const options = useQuery({
    queryKey: ['workflow-input-options', workflowId, version ?? 'draft', input],
    queryFn: ({ signal }) =>
      call(Routes.workflowInputOptions, {
        params: { id: workflowId, input },
        query: version !== undefined ? { version } : {},
        signal,
      }),
    // A refusal (not a read tool, unknown input) will not change by asking again.
    retry: (n, err) => !(err instanceof ApiError && err.status < 500) && n < 2,
  });
  if (options.isPending)
    return (
      <select {...common} disabled value="">
        <option value="">{t('flows.run.optionsLoading')}</option>
      </select>
    );
  if (options.isError)
    return (
      <div className="choice-error">
        <select {...common} disabled value="">
          <option value="">{t('flows.run.optionsFailed')}</option>
        </select>
        <ErrorNote error={options.error} />
        <button type="button" onClick={() => void options.refetch()}>
          {t('flows.run.optionsRetry')}
        </button>
      </div>
    );
  const items = options.data.items;
  return (
    <select {...common} value={value} onChange={(e) => onChange(e.target.value)} disabled={!items.length}>
      <option value="">{items.length ? t('flows.run.choose') : t('flows.run.optionsEmpty')}</option>
      {items.map((o, i) => (
        <option key={i} value={JSON.stringify(o.value)}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

export default RunFlowDialog;
