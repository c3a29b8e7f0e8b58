import { NotFoundError } from '@backstage/errors';
import { ResourceClient, type CoreClient } from '@rackside/plugin-servers-node';
import type { KubeConfig } from '@kubernetes/client-node';

/** What to read: one key of a Secret (the default) or a ConfigMap. */
export interface SecretKeyRef {
  kind?: 'Secret' | 'ConfigMap';
  /** Default: the operator's namespace. */
  namespace?: string;
  name: string;
  key: string;
}

/** Reads one key of a Secret or ConfigMap; throws a sentence naming it when absent. */
export interface SecretReader {
  read(ref: SecretKeyRef): Promise<string>;
}

/**
 * The one reader of Secrets (and ConfigMaps) the controllers share: the PowerProvider's
 * talosconfig and BMC credentials, a TalosCluster's talosconfig and join config. The
 * value is never logged; a missing object or key is an error that names it, not its data.
 */
export function createSecretReader(options: {
  kubeConfig: KubeConfig;
  core: CoreClient;
  /** The operator's namespace: where a ref without one is read. */
  namespace: string;
}): SecretReader {
  const configMaps = new ResourceClient<any>(
    options.kubeConfig,
    {
      group: '',
      version: 'v1',
      plural: 'configmaps',
      kind: 'ConfigMap',
      namespaced: true,
    },
    {},
  );
  return {
    async read(ref) {
      const kind = ref.kind ?? 'Secret';
      const namespace = ref.namespace ?? options.namespace;
      const what = `${kind} ${namespace}/${ref.name}`;
      let obj;
      try {
        obj =
          kind === 'ConfigMap'
            ? await configMaps.get(ref.name, { namespace })
            : await options.core.secrets.get(ref.name, { namespace });
      } catch (error) {
        if (error instanceof NotFoundError)
          throw new Error(`${what} not found`);
        throw error;
      }
      const data = obj.data?.[ref.key];
      const raw =
        kind === 'ConfigMap' || !data
          ? data
          : Buffer.from(data, 'base64').toString('utf8');
      if (!raw) throw new Error(`${what} has no key ${ref.key}`);
      return raw as string;
    },
  };
}
