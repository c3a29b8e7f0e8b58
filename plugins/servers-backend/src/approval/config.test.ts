import { ConfigReader } from '@backstage/config';
import { readApprovalRules } from './config';

const rules = (value: any) =>
  readApprovalRules(
    new ConfigReader({ servers: { approvals: { rules: value } } }),
  );

describe('servers.approvals.rules', () => {
  it('is empty without rules: nothing is held', () => {
    expect(readApprovalRules(new ConfigReader({}))).toEqual([]);
    expect(readApprovalRules(new ConfigReader({ servers: {} }))).toEqual([]);
  });

  it('reads rules in order, with their selectors, refs in full and the default expiry', () => {
    expect(
      rules([
        {
          name: 'last-margin',
          select: { rungAtLeast: 'hazard' },
          approvers: ['group:platform-oncall'],
        },
        {
          name: 'storage',
          select: {
            actions: ['reboot', 'shutdown'],
            intents: ['reboot'],
            nodeLabels: { 'rackside.dev/storage': 'true' },
            roles: ['worker'],
          },
          approvers: ['User:default/Alice', 'group:ops/storage'],
          expiresAfterMinutes: 60,
        },
        {
          name: 'big-plans',
          select: { actions: ['plan'], planSizeAtLeast: 40 },
          approvers: ['group:default/platform-oncall'],
        },
      ]),
    ).toEqual([
      {
        name: 'last-margin',
        select: { rungAtLeast: 'hazard' },
        approvers: ['group:default/platform-oncall'],
        expiresAfterMinutes: 240,
      },
      {
        name: 'storage',
        select: {
          actions: ['reboot', 'shutdown'],
          intents: ['reboot'],
          nodeLabels: { 'rackside.dev/storage': 'true' },
          roles: ['worker'],
        },
        approvers: ['user:default/alice', 'group:ops/storage'],
        expiresAfterMinutes: 60,
      },
      {
        name: 'big-plans',
        select: { actions: ['plan'], planSizeAtLeast: 40 },
        approvers: ['group:default/platform-oncall'],
        expiresAfterMinutes: 240,
      },
    ]);
  });

  it('takes a rule without select as one that holds every request', () => {
    expect(rules([{ name: 'all', approvers: ['user:default/alice'] }])).toEqual(
      [
        {
          name: 'all',
          select: {},
          approvers: ['user:default/alice'],
          expiresAfterMinutes: 240,
        },
      ],
    );
  });

  it.each([
    [
      [{ name: 'Bad Name', approvers: ['user:default/a'] }],
      /servers\.approvals\.rules\[0\] \(Bad Name\)\.name must be lowercase/,
    ],
    [
      [{ approvers: ['user:default/a'] }],
      /servers\.approvals\.rules\[0\]\.name must be/,
    ],
    [
      [
        { name: 'a', approvers: ['user:default/a'] },
        { name: 'a', approvers: ['user:default/b'] },
      ],
      /rules\[1\] \(a\)\.name is used by another rule/,
    ],
    [[{ name: 'a', approvers: [] }], /\(a\)\.approvers must name 1 to 50/],
    [
      [{ name: 'a', approvers: ['alice'] }],
      /\(a\)\.approvers: "alice" is not a catalog ref/,
    ],
    [
      [{ name: 'a', approvers: ['component:default/x'] }],
      /\(a\)\.approvers: "component:default\/x" is not a catalog ref/,
    ],
    [
      [
        {
          name: 'a',
          approvers: Array.from({ length: 51 }, (_, i) => `user:default/u${i}`),
        },
      ],
      /\(a\)\.approvers must name 1 to 50 users or groups; got 51/,
    ],
    [
      [{ name: 'a', approvers: ['user:default/a'], expiresAfterMinutes: 0 }],
      /\(a\)\.expiresAfterMinutes must be a whole number from 1 to 10080; got 0/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { actions: ['reboot', 'explode'] },
        },
      ],
      /\(a\)\.select\.actions must each be one of .*; got "explode"/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { intents: ['plan'] },
        },
      ],
      /\(a\)\.select\.intents must each be one of/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { rungAtLeast: 'refused' },
        },
      ],
      /\(a\)\.select\.rungAtLeast must be one of reason, preflight, typed-name, hazard; got "refused"/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { roles: ['master'] },
        },
      ],
      /\(a\)\.select\.roles must each be one of control-plane, worker/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { planSizeAtLeast: 2.5 },
        },
      ],
      /\(a\)\.select\.planSizeAtLeast must be a whole number of at least 1; got 2.5/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { nodeLabel: { a: 'b' } },
        },
      ],
      /\(a\)\.select\.nodeLabel is not a selector/,
    ],
    [
      [
        {
          name: 'a',
          approvers: ['user:default/a'],
          select: { nodeLabels: { zone: 3 } },
        },
      ],
      /\(a\)\.select\.nodeLabels must map label names to text values/,
    ],
  ])(
    'refuses %j at start-up, naming the rule and the field',
    (value, message) => {
      expect(() => rules(value)).toThrow(message);
    },
  );
});
