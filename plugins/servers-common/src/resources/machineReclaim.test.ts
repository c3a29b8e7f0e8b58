import { examples } from './fixtures';
import {
  CREDENTIAL_OF_LABEL,
  credentialNotBound,
  credentialSecretName,
  machineReclaimSchema,
} from './machineReclaim';

describe('the credential binding', () => {
  const reclaim = { name: 'reclaim-x7k2p', uid: 'uid-1' };
  const owner = {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    name: 'reclaim-x7k2p',
    uid: 'uid-1',
  };
  const label = { [CREDENTIAL_OF_LABEL]: 'reclaim-x7k2p' };

  it('binds a Secret owned by the request (same uid) and labelled with its name', () => {
    expect(
      credentialNotBound({ labels: label, ownerReferences: [owner] }, reclaim),
    ).toEqual([]);
  });

  it.each([
    ['no owner', { labels: label }, ['ownerReference']],
    [
      'another uid (a request of the same name, deleted and made again)',
      { labels: label, ownerReferences: [{ ...owner, uid: 'uid-2' }] },
      ['ownerReference'],
    ],
    [
      'another kind',
      { labels: label, ownerReferences: [{ ...owner, kind: 'TalosCluster' }] },
      ['ownerReference'],
    ],
    [
      'another apiVersion',
      {
        labels: label,
        ownerReferences: [{ ...owner, apiVersion: 'rackside.dev/v1' }],
      },
      ['ownerReference'],
    ],
    ['no label', { ownerReferences: [owner] }, ['no label']],
    [
      'the label of another request',
      { labels: { [CREDENTIAL_OF_LABEL]: 'other' }, ownerReferences: [owner] },
      ['no label'],
    ],
    ['nothing', {}, ['ownerReference', 'no label']],
  ])('does not bind a Secret with %s', (_what, secret, expected) => {
    const problems = credentialNotBound(secret, reclaim);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((part, i) => expect(problems[i]).toContain(part));
  });

  it('binds nothing to a request whose uid is unknown', () => {
    expect(
      credentialNotBound(
        { labels: label, ownerReferences: [{ ...owner, uid: undefined }] },
        { name: 'reclaim-x7k2p' },
      ),
    ).toEqual([
      'it has no ownerReference to MachineReclaim reclaim-x7k2p (uid unknown)',
    ]);
  });

  it('pins credentialSecretRef.name to <name>-talosconfig (the zod twin of the CEL rule)', () => {
    expect(credentialSecretName('reclaim-x7k2p')).toBe(
      'reclaim-x7k2p-talosconfig',
    );
    expect(
      machineReclaimSchema.safeParse(examples.machineReclaim()).success,
    ).toBe(true);
    const other = examples.machineReclaim();
    other.spec.credentialSecretRef = { name: 'plant-a-talosconfig' };
    const parsed = machineReclaimSchema.safeParse(other);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['spec', 'credentialSecretRef', 'name'],
      message: expect.stringContaining(
        'spec.credentialSecretRef.name must be <metadata.name>-talosconfig',
      ),
    });
  });
});
