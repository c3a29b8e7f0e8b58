import type { MachineReclaim } from '@rackside/plugin-servers-common';
import { kubeCredentialPort } from './credential';
import { reclaimObject } from '../testing/reclaimFixtures';

const OWNER = {
  apiVersion: 'rackside.dev/v1alpha1',
  kind: 'MachineReclaim',
  name: 'reclaim-1',
  uid: 'uid-1',
};

function secrets(secret?: Record<string, any>) {
  const deletes: Array<{ name: string; options: unknown }> = [];
  const client = {
    find: jest.fn(async () => secret as any),
    delete: jest.fn(async (name: string, options: unknown) => {
      deletes.push({ name, options });
    }),
  };
  return { client, deletes };
}

const bound = (data: Record<string, string> = { talosconfig: 'dGFsb3M=' }) => ({
  metadata: {
    name: 'reclaim-1-talosconfig',
    uid: 'secret-uid',
    resourceVersion: '42',
    labels: { 'rackside.dev/credential-of': 'reclaim-1' },
    ownerReferences: [OWNER],
  },
  data,
});

describe('kubeCredentialPort', () => {
  const mr: MachineReclaim = reclaimObject();

  it('decodes and deletes a bound Secret, the delete conditional on the uid and version it judged', async () => {
    const { client, deletes } = secrets(bound());
    const port = kubeCredentialPort(client, 'rackside-system');
    expect(await port.read(mr)).toEqual({
      kind: 'bound',
      talosconfig: 'talos',
    });
    expect(await port.delete(mr)).toEqual({ outcome: 'deleted' });
    expect(deletes).toEqual([
      {
        name: 'reclaim-1-talosconfig',
        options: {
          namespace: 'rackside-system',
          ignoreNotFound: true,
          preconditions: { uid: 'secret-uid', resourceVersion: '42' },
        },
      },
    ]);
  });

  it('neither decodes nor deletes a Secret owned by another uid', async () => {
    const other = bound();
    other.metadata.ownerReferences = [{ ...OWNER, uid: 'uid-2' }];
    const { client, deletes } = secrets(other);
    const port = kubeCredentialPort(client, 'rackside-system');
    expect(await port.read(mr)).toEqual({
      kind: 'notBound',
      problems: [
        'it has no ownerReference to MachineReclaim reclaim-1 (uid uid-1)',
      ],
    });
    expect(await port.delete(mr)).toMatchObject({ outcome: 'notBound' });
    expect(deletes).toEqual([]);
  });

  it('neither decodes nor deletes an unlabelled Secret', async () => {
    const other = bound();
    other.metadata.labels = {} as any;
    const { client, deletes } = secrets(other);
    const port = kubeCredentialPort(client, 'rackside-system');
    expect(await port.read(mr)).toMatchObject({ kind: 'notBound' });
    expect(await port.delete(mr)).toMatchObject({ outcome: 'notBound' });
    expect(deletes).toEqual([]);
  });

  it('tells a missing Secret and a missing key apart', async () => {
    const none = secrets(undefined);
    const port = kubeCredentialPort(none.client, 'rackside-system');
    expect(await port.read(mr)).toEqual({ kind: 'absent' });
    expect(await port.delete(mr)).toEqual({ outcome: 'absent' });
    expect(none.deletes).toEqual([]);
    const noKey = secrets(bound({ other: 'eA==' }));
    expect(
      await kubeCredentialPort(noKey.client, 'rackside-system').read(mr),
    ).toEqual({ kind: 'bound', talosconfig: undefined });
  });
});
