import type { PluginManifest, SandboxPosture } from '@switchyard/contracts';

/**
 * Whether (and how) a plugin's tools see the file grants of the runs calling them: only when its
 * manifest asks (`permissions.files`) and an admin granted it (`filesGranted`), and the plugin is
 * enabled. Sandboxed, grants appear at `/run/switchyard/files/<name>`; unsandboxed (the documented
 * fallback), at their host paths. The catalog puts this on each of the plugin's tool descriptors as
 * `fileAccess`; the executor binds `@file:` placeholders from it.
 */
export function pluginFileAccess(
  plugin: {
    readonly manifest: Pick<PluginManifest, 'permissions'>;
    readonly filesGranted: boolean;
    readonly enabled: boolean;
  },
  posture: SandboxPosture,
): 'sandbox' | 'host' | undefined {
  if (!plugin.enabled || !plugin.filesGranted || !plugin.manifest.permissions.files) return undefined;
  return posture === 'sandboxed' ? 'sandbox' : 'host';
}
