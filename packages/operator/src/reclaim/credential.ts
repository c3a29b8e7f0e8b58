/*
 * The edge between the reclaim table and a request's credential Secret (docs/architecture.md, "Adding machines", issue
 * 15). The Secret is judged by its metadata first (credentialNotBound in servers-common:
 * ownerReference to this MachineReclaim with its uid, label rackside.dev/credential-of
 * with its name); only a bound Secret has its data decoded, and only a bound Secret is
 * deleted, with the uid and resourceVersion it was judged at as preconditions (a Secret
 * swapped in between is not deleted: the apiserver answers 409 and the next pass judges
 * the new one).
 */
import {
  credentialNotBound,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import type { CoreClient } from '@rackside/plugin-servers-node';
import type {
  CredentialDeletion,
  CredentialPort,
  CredentialRead,
} from './table';

type Secrets = Pick<CoreClient['secrets'], 'find' | 'delete'>;

export function kubeCredentialPort(
  secrets: Secrets,
  defaultNamespace: string,
): CredentialPort {
  const lookup = async (mr: MachineReclaim) => {
    const namespace = mr.metadata.namespace ?? defaultNamespace;
    const name = mr.spec.credentialSecretRef.name;
    const secret = await secrets.find(name, { namespace });
    if (!secret) return { namespace, name, secret: undefined, problems: [] };
    const problems = credentialNotBound(secret.metadata ?? {}, {
      name: mr.metadata.name,
      uid: mr.metadata.uid,
    });
    return { namespace, name, secret, problems };
  };

  return {
    async read(mr): Promise<CredentialRead> {
      const { secret, problems } = await lookup(mr);
      if (!secret) return { kind: 'absent' };
      if (problems.length > 0) return { kind: 'notBound', problems };
      const value =
        secret.data?.[mr.spec.credentialSecretRef.key ?? 'talosconfig'];
      return {
        kind: 'bound',
        talosconfig: value
          ? Buffer.from(value, 'base64').toString('utf8')
          : undefined,
      };
    },
    async delete(mr): Promise<CredentialDeletion> {
      const { namespace, name, secret, problems } = await lookup(mr);
      if (!secret) return { outcome: 'absent' };
      if (problems.length > 0) return { outcome: 'notBound', problems };
      await secrets.delete(name, {
        namespace,
        ignoreNotFound: true,
        preconditions: {
          uid: secret.metadata?.uid,
          resourceVersion: secret.metadata?.resourceVersion,
        },
      });
      return { outcome: 'deleted' };
    },
  };
}
