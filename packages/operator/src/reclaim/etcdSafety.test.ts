import type { TalosEtcdMember } from '@rackside/plugin-servers-node';
import type { TalosAccess } from '../talos/talosAccess';
import { judgeReset, readEtcdView, type EtcdView } from './etcdSafety';

const member = (
  ip: string,
  extra: Partial<TalosEtcdMember> = {},
): TalosEtcdMember => ({
  id: ip,
  hostname: `cp-${ip}`,
  peerUrls: [`https://${ip}:2380`],
  clientUrls: [`https://${ip}:2379`],
  isLearner: false,
  ...extra,
});

const view = (
  members: TalosEtcdMember[],
  targetAnswered = false,
): EtcdView => ({ known: true, targetAnswered, members, source: 'x' });

describe('judgeReset', () => {
  it('allows the reset of a worker (not an etcd member)', () => {
    const verdict = judgeReset('10.0.0.9', view([member('10.0.0.1')]));
    expect(verdict).toMatchObject({ verdict: 'allow' });
    expect((verdict as { summary: string }).summary).toMatch(
      /not an etcd member/,
    );
  });

  it('refuses the reset of the last control plane', () => {
    expect(
      judgeReset('10.0.0.1:50000', view([member('10.0.0.1')], true)),
    ).toMatchObject({
      verdict: 'refuse',
      members: 1,
      reason: expect.stringMatching(/last control plane/),
    });
  });

  it('counts a machine that answered the list as a control plane even if its URLs differ', () => {
    expect(judgeReset('10.0.0.7', view([], true))).toMatchObject({
      verdict: 'refuse',
      reason: expect.stringMatching(/last control plane/),
    });
  });

  it('refuses a reset that leaves fewer voting members than the quorum', () => {
    expect(
      judgeReset('10.0.0.1', view([member('10.0.0.1'), member('10.0.0.2')])),
    ).toMatchObject({
      verdict: 'refuse',
      members: 2,
      quorum: 2,
      reason: expect.stringMatching(
        /quorum: 2 voting members need 2, and 1 would remain/,
      ),
    });
  });

  it('allows one of three control planes, with the numbers', () => {
    const verdict = judgeReset(
      '10.0.0.2',
      view([member('10.0.0.1'), member('10.0.0.2'), member('10.0.0.3')]),
    );
    expect(verdict).toMatchObject({ verdict: 'allow' });
    expect((verdict as { summary: string }).summary).toMatch(
      /3 voting etcd members, quorum 2, 2 remain/,
    );
  });

  it('allows an etcd learner, and does not count learners as voters', () => {
    expect(
      judgeReset(
        '10.0.0.2',
        view([member('10.0.0.1'), member('10.0.0.2', { isLearner: true })]),
      ),
    ).toMatchObject({ verdict: 'allow' });
    // Two voters and a learner: resetting a voter leaves 1 of 2.
    expect(
      judgeReset(
        '10.0.0.1',
        view([
          member('10.0.0.1'),
          member('10.0.0.2'),
          member('10.0.0.3', { isLearner: true }),
        ]),
      ),
    ).toMatchObject({ verdict: 'refuse', members: 2, quorum: 2 });
  });

  it('matches IPv6 members', () => {
    expect(
      judgeReset(
        '[fd00::1]:50000',
        view([
          member('x', { peerUrls: ['https://[fd00::1]:2380'], clientUrls: [] }),
        ]),
      ),
    ).toMatchObject({ verdict: 'refuse' });
  });

  it('cannot judge without the member list', () => {
    expect(
      judgeReset('10.0.0.1', { known: false, reason: 'timeout' }),
    ).toMatchObject({
      verdict: 'unknown',
      reason: expect.stringMatching(/could not be read: timeout/),
    });
  });
});

describe('readEtcdView', () => {
  const identity = { ca: 'ca', crt: 'crt', key: 'key' };
  function talos(answers: Record<string, TalosEtcdMember[] | Error>) {
    const calls: string[] = [];
    const access = {
      etcdMembers: jest.fn(async (address: string) => {
        calls.push(address);
        const answer = answers[address];
        if (!answer || answer instanceof Error)
          throw answer ?? new Error('unreachable');
        return answer;
      }),
    } as unknown as TalosAccess;
    return { access, calls };
  }

  it('asks the machine first: a control plane answers', async () => {
    const { access, calls } = talos({ '10.0.0.1': [member('10.0.0.1')] });
    const got = await readEtcdView(
      access,
      '10.0.0.1',
      { endpoints: ['10.0.0.1'], identity },
      1000,
    );
    expect(got).toMatchObject({ known: true, targetAnswered: true });
    expect(calls).toEqual(['10.0.0.1']);
  });

  it("then the talosconfig's endpoints other than the machine", async () => {
    const { access, calls } = talos({
      '10.0.0.9': new Error('etcd is not running on this node (worker)'),
      '10.0.0.1:50000': new Error('down'),
      '10.0.0.2': [member('10.0.0.2')],
    });
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      { endpoints: ['10.0.0.9', '10.0.0.1:50000', '10.0.0.2'], identity },
      1000,
    );
    expect(got).toMatchObject({
      known: true,
      targetAnswered: false,
      source: '10.0.0.2',
    });
    expect(calls).toEqual(['10.0.0.9', '10.0.0.1:50000', '10.0.0.2']);
  });

  it('reports every failure when nobody answers', async () => {
    const { access } = talos({});
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      { endpoints: ['10.0.0.1'], identity },
      1000,
    );
    expect(got).toEqual({
      known: false,
      reason: '10.0.0.9: unreachable; 10.0.0.1: unreachable',
    });
  });
});
