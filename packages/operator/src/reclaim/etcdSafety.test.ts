import type { TalosEtcdMember } from '@rackside/plugin-servers-node';
import type { TalosAccess } from '../talos/talosAccess';
import {
  judgeReset,
  readEtcdView,
  type EtcdReachAnswer,
  type EtcdView,
} from './etcdSafety';

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
  down?: Array<{ member: TalosEtcdMember; reason: string }>,
): EtcdView => ({
  known: true,
  targetAnswered,
  members,
  source: 'x',
  ...(down ? { down } : {}),
});

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

  it('counts only the members that are up: a reset that was safe with all up is refused with one down', () => {
    const three = [member('10.0.0.1'), member('10.0.0.2'), member('10.0.0.3')];
    expect(judgeReset('10.0.0.2', view(three, true))).toMatchObject({
      verdict: 'allow',
    });
    const oneDown = view(three, true, [
      { member: three[2], reason: 'connection refused' },
    ]);
    expect(judgeReset('10.0.0.2', oneDown)).toMatchObject({
      verdict: 'refuse',
      members: 3,
      quorum: 2,
      reason: expect.stringMatching(
        /3 voting members need 2, 2 are up \(cp-10\.0\.0\.3 at 10\.0\.0\.3 does not answer\), and 1 would remain/,
      ),
    });
    // Five members, one down: resetting one leaves 3 of a quorum of 3.
    const five = [...three, member('10.0.0.4'), member('10.0.0.5')];
    const verdict = judgeReset(
      '10.0.0.2',
      view(five, true, [{ member: five[4], reason: 'timeout' }]),
    );
    expect(verdict).toMatchObject({ verdict: 'allow' });
    expect((verdict as { summary: string }).summary).toMatch(
      /5 voting etcd members, quorum 3, 3 remain after the reset \(cp-10\.0\.0\.5 at 10\.0\.0\.5 does not answer\)/,
    );
  });

  it('does not count a target that is itself down as a vote its reset takes away', () => {
    const three = [member('10.0.0.1'), member('10.0.0.2'), member('10.0.0.3')];
    // Another control plane answered; the target's etcd does not.
    expect(
      judgeReset('10.0.0.3', {
        known: true,
        targetAnswered: false,
        members: three,
        source: '10.0.0.1',
        down: [{ member: three[2], reason: 'etcd not running' }],
      }),
    ).toMatchObject({ verdict: 'allow' });
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
  const everyAddress = async (endpoint: string): Promise<EtcdReachAnswer> => ({
    allowed: true,
    dial: endpoint,
  });
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
      everyAddress,
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
      everyAddress,
    );
    expect(got).toMatchObject({
      known: true,
      targetAnswered: false,
      source: '10.0.0.2',
    });
    expect(calls).toEqual(['10.0.0.9', '10.0.0.1:50000', '10.0.0.2']);
  });

  it('asks every other voting member whether it is up when the machine is a voter, on its Talos port', async () => {
    const three = [
      member('10.0.0.1'),
      member('10.0.0.2'),
      member('10.0.0.3'),
      member('10.0.0.4', { isLearner: true }),
    ];
    const { access, calls } = talos({
      '10.0.0.1:50001': three,
      '10.0.0.2:50001': three,
      '10.0.0.3:50001': new Error('connection refused'),
    });
    const got = await readEtcdView(
      access,
      '10.0.0.1:50001',
      { endpoints: [], identity },
      1000,
      everyAddress,
    );
    expect(got).toMatchObject({
      known: true,
      targetAnswered: true,
      down: [{ member: three[2], reason: 'connection refused' }],
    });
    // The learner is not asked: it does not vote.
    expect(calls.sort()).toEqual(
      ['10.0.0.1:50001', '10.0.0.2:50001', '10.0.0.3:50001'].sort(),
    );
    expect(judgeReset('10.0.0.1:50001', got)).toMatchObject({
      verdict: 'refuse',
      reason:
        "resetting 10.0.0.1:50001 would break the foreign cluster's etcd quorum: 3 voting members need 2, 2 are up (cp-10.0.0.3 at 10.0.0.3 does not answer), and 1 would remain",
    });
  });

  it('asks nobody else when the machine is a worker (its reset takes no vote away)', async () => {
    const { access, calls } = talos({
      '10.0.0.9': new Error('etcd is not running on this node (worker)'),
      '10.0.0.1': [member('10.0.0.1'), member('10.0.0.2')],
    });
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      { endpoints: ['10.0.0.1'], identity },
      1000,
      everyAddress,
    );
    expect(got).not.toHaveProperty('down');
    expect(calls).toEqual(['10.0.0.9', '10.0.0.1']);
  });

  it('never dials a talosconfig endpoint or a member outside the allowed networks (a hostile talosconfig or member list)', async () => {
    const three = [
      member('10.0.0.1'),
      member('169.254.169.254'),
      member('10.0.0.3'),
    ];
    const { access, calls } = talos({
      '127.0.0.1:6443': three,
      '10.0.0.1': three,
      '10.0.0.3': three,
    });
    const inside = async (endpoint: string): Promise<EtcdReachAnswer> =>
      endpoint.startsWith('10.0.0.')
        ? { allowed: true, dial: endpoint }
        : {
            allowed: false,
            message: `${endpoint} is outside the allowed networks 10.0.0.0/24`,
          };
    // The machine is a worker: the member list comes from the talosconfig's endpoints.
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      {
        endpoints: ['127.0.0.1:6443', '169.254.169.254', '10.0.0.3'],
        identity,
      },
      1000,
      inside,
    );
    expect(calls).toEqual(['10.0.0.9', '10.0.0.3']);
    expect(got).toMatchObject({ known: true, source: '10.0.0.3' });

    // The machine is a voter: the member outside is not asked and counts as down.
    calls.length = 0;
    const voter = await readEtcdView(
      access,
      '10.0.0.3',
      { endpoints: [], identity },
      1000,
      inside,
    );
    expect(calls.sort()).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(voter).toMatchObject({
      known: true,
      down: [
        {
          member: three[1],
          reason:
            'not asked: 169.254.169.254 is outside the allowed networks 10.0.0.0/24',
        },
      ],
    });
    expect(judgeReset('10.0.0.3', voter)).toMatchObject({ verdict: 'refuse' });
  });

  it('a member list longer than any etcd cluster (20,000 members from a hostile machine) is not judged, and none of them is dialled', async () => {
    const many = Array.from({ length: 20_000 }, (_, i) =>
      member(`10.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`),
    );
    // Every member would answer with the same list: asking each of them was
    // 20,000 connections at once, each decoding 20,000 members.
    const answers: Record<string, TalosEtcdMember[]> = {
      '10.0.0.9': [member('10.0.0.9'), ...many],
    };
    for (const m of many) answers[m.id] = answers['10.0.0.9'];
    const { access, calls } = talos(answers);
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      { endpoints: [], identity },
      1000,
      everyAddress,
    );
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
    expect(calls).toEqual(['10.0.0.9']);
    expect(got).toEqual({
      known: false,
      reason:
        '10.0.0.9 lists 20001 etcd members, more than an etcd cluster has (at most 64): none of them was asked',
    });
    expect(judgeReset('10.0.0.9', got)).toMatchObject({ verdict: 'unknown' });
  });

  it('reports every failure when nobody answers', async () => {
    const { access } = talos({});
    const got = await readEtcdView(
      access,
      '10.0.0.9',
      { endpoints: ['10.0.0.1'], identity },
      1000,
      everyAddress,
    );
    expect(got).toEqual({
      known: false,
      reason: '10.0.0.9: unreachable; 10.0.0.1: unreachable',
    });
  });
});
