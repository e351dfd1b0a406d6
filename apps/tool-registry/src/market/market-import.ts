import {
  AppError,
  type FieldIssue,
  type LocalServerConfig,
  type MarketImportBody,
  type RemoteServerConfig,
  type ServerArgument,
  type ServerJson,
  type ServerPackage,
} from '@switchyard/contracts';
import { IMPORTABLE_PACKAGES } from './market-source';

/** What an entry becomes: a record's type and connection settings. */
export type ImportPlan =
  | { readonly kind: 'LOCAL'; readonly config: LocalServerConfig }
  | { readonly kind: 'REMOTE'; readonly config: RemoteServerConfig };

function argsOf(list: readonly ServerArgument[] | undefined, at: string, missing: FieldIssue[]): string[] {
  const out: string[] = [];
  (list ?? []).forEach((a, i) => {
    const value = a.value ?? a.default;
    if (a.type === 'named') {
      if (!a.name)
        return missing.push({ path: `${at}[${i}].name`, message: 'a named argument needs a name' });
      if (value !== undefined) out.push(a.name, value);
      else if (a.isRequired) out.push(a.name);
      return;
    }
    if (value !== undefined) out.push(value);
    else if (a.isRequired)
      missing.push({
        path: `${at}[${i}]`,
        message: `a required argument${a.valueHint ? ` (${a.valueHint})` : ''} has no value or default; it cannot be imported as is`,
      });
  });
  return out;
}

/** The command line of a package: npx, uvx or docker (or the runtime the entry names). */
function localOf(pkg: ServerPackage, at: string, given: MarketImportBody['as']): LocalServerConfig {
  const problems: FieldIssue[] = [];
  const runtimeArgs = argsOf(pkg.runtimeArguments, `${at}.runtimeArguments`, problems);
  const packageArgs = argsOf(pkg.packageArguments, `${at}.packageArguments`, problems);
  const env: Record<string, string> = {};
  const declared = new Set((pkg.environmentVariables ?? []).map((v) => v.name));
  for (const name of Object.keys(given.env ?? {}))
    if (!declared.has(name))
      problems.push({ path: `as.env.${name}`, message: 'the package does not declare this variable' });
  (pkg.environmentVariables ?? []).forEach((v, i) => {
    const value = given.env?.[v.name] ?? v.value ?? v.default;
    if (value !== undefined) env[v.name] = value;
    else if (v.isRequired)
      problems.push({
        path: `${at}.environmentVariables[${i}]`,
        message: `${v.name} is required: give it in as.env`,
      });
  });
  if (problems.length)
    throw new AppError('validation_failed', 'the entry cannot be imported as it is', { issues: problems });
  // runtimeHint is not followed: the argument shapes below are those of npx, uvx and docker.
  let command: string;
  let args: string[];
  switch (pkg.registryType) {
    case 'npm':
      command = 'npx';
      args = [
        '-y',
        ...runtimeArgs,
        pkg.version ? `${pkg.identifier}@${pkg.version}` : pkg.identifier,
        ...packageArgs,
      ];
      break;
    case 'pypi':
      command = 'uvx';
      args = [
        ...runtimeArgs,
        pkg.version ? `${pkg.identifier}==${pkg.version}` : pkg.identifier,
        ...packageArgs,
      ];
      break;
    default: // oci
      command = 'docker';
      args = [
        'run',
        '-i',
        '--rm',
        ...Object.keys(env).flatMap((k) => ['-e', k]),
        ...runtimeArgs,
        pkg.version && !pkg.identifier.includes(':') ? `${pkg.identifier}:${pkg.version}` : pkg.identifier,
        ...packageArgs,
      ];
  }
  return { command, args, ...(Object.keys(env).length ? { env } : {}) };
}

/**
 * How an entry is imported: LOCAL from its first stdio package of a kind Switchyard runs (npm, pypi,
 * oci), REMOTE from its first streamable-http remote; `as.kind` picks when it has both. Required
 * arguments, variables and headers without a value are reported by path.
 */
export function importPlan(server: ServerJson, given: MarketImportBody['as']): ImportPlan {
  const pkgIndex = server.packages.findIndex(
    (p) => IMPORTABLE_PACKAGES.has(p.registryType) && p.transport.type === 'stdio',
  );
  const remoteIndex = server.remotes.findIndex((r) => r.type === 'streamable-http');
  const kind = given.kind ?? (pkgIndex >= 0 || remoteIndex < 0 ? 'LOCAL' : 'REMOTE');
  if (kind === 'LOCAL') {
    if (pkgIndex < 0)
      throw new AppError(
        'validation_failed',
        `${server.name} has no package Switchyard can run locally (npm, pypi or oci over stdio)` +
          (server.packages.length
            ? `; it has ${server.packages.map((p) => `${p.registryType}/${p.transport.type}`).join(', ')}`
            : ''),
        { issues: [{ path: 'packages', message: 'no importable package' }] },
      );
    return {
      kind,
      config: localOf(server.packages[pkgIndex] as ServerPackage, `packages[${pkgIndex}]`, given),
    };
  }
  if (remoteIndex < 0)
    throw new AppError(
      'validation_failed',
      `${server.name} has no streamable-http remote` +
        (server.remotes.length ? `; it has ${server.remotes.map((r) => r.type).join(', ')}` : ''),
      { issues: [{ path: 'remotes', message: 'no streamable-http remote' }] },
    );
  const remote = server.remotes[remoteIndex] as ServerJson['remotes'][number];
  const problems: FieldIssue[] = [];
  const headers: Record<string, string> = {};
  const declared = new Set((remote.headers ?? []).map((h) => h.name.toLowerCase()));
  for (const name of Object.keys(given.headers ?? {}))
    if (!declared.has(name.toLowerCase()))
      problems.push({ path: `as.headers.${name}`, message: 'the remote does not declare this header' });
  (remote.headers ?? []).forEach((h, i) => {
    const value = given.headers?.[h.name] ?? h.value ?? h.default;
    if (value !== undefined) headers[h.name] = value;
    else if (h.isRequired)
      problems.push({
        path: `remotes[${remoteIndex}].headers[${i}]`,
        message: `${h.name} is required: give it in as.headers`,
      });
  });
  if (/[{}]/.test(remote.url))
    problems.push({
      path: `remotes[${remoteIndex}].url`,
      message: 'URL templates ({variable}) are not supported',
    });
  if (problems.length)
    throw new AppError('validation_failed', 'the entry cannot be imported as it is', { issues: problems });
  return { kind, config: { baseUrl: remote.url, ...(Object.keys(headers).length ? { headers } : {}) } };
}

/** The settings as the import answer shows them: every variable and header value masked. */
export function maskedConfig(plan: ImportPlan): Record<string, unknown> {
  const mask = (r: Record<string, string> | undefined) =>
    r ? Object.fromEntries(Object.keys(r).map((k) => [k, '***'])) : undefined;
  if (plan.kind === 'LOCAL') {
    const env = mask(plan.config.env);
    return { command: plan.config.command, args: plan.config.args, ...(env ? { env } : {}) };
  }
  const headers = mask(plan.config.headers);
  return { baseUrl: plan.config.baseUrl, ...(headers ? { headers } : {}) };
}

/** `io.github.user/weather` → `weather`. */
export function recordNameOf(entryName: string): string {
  return entryName.slice(entryName.lastIndexOf('/') + 1);
}
