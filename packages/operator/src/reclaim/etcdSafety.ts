/*
 * Whether resetting a machine of a foreign Talos cluster would break that cluster's etcd
 * (decision 0002): a reset that removes its last control plane, or leaves fewer voting members
 * alive than its quorum, is refused. The judgement is pure; the read of the member list
 * (from the machine itself, else from the control planes its talosconfig names) is the
 * edge in front of it.
 *
 * Alive means up now, not listed: etcd keeps a member that lost power in its list, so
 * when the machine to reset is a voting member, every other voting member is asked for
 * the member list itself (over its Talos API, with the same identity); one that does not
 * answer counts as down. The reclaim reads this again right before it records the Reset,
 * so a member that went down after the UUID was read refuses the reset (issue 15).
 */
import { quorumSize } from '@rackside/plugin-servers-common';
import {
  parseTalosEndpoint,
  TALOS_API_PORT,
  type TalosClientIdentity,
  type TalosEtcdMember,
} from '@rackside/plugin-servers-node';
import type { TalosAccess } from '../talos/talosAccess';

/**
 * Whether an address named by the foreign talosconfig or its etcd member list may be
 * dialled (the target cluster's allowed networks, docs/architecture.md, "Adding machines"), and where to connect. Those
 * addresses come from the request's credential, not from the deployer, so each is checked
 * before it is contacted.
 */
export type EtcdReach = (endpoint: string) => Promise<EtcdReachAnswer>;

/** Where to connect, or why not. */
export type EtcdReachAnswer =
  | { allowed: true; dial: string }
  | { allowed: false; message: string };

/** What the foreign cluster's etcd looks like, as far as the operator could read it. */
export type EtcdView =
  | {
      known: true;
      /** The machine to reset answered the member list itself: it runs etcd. */
      targetAnswered: boolean;
      members: TalosEtcdMember[];
      /** Which address answered. */
      source: string;
      /**
       * Voting members that count as down: they did not answer when asked, or another
       * request's Reset of them is on record (`resetBy`). Absent: none was asked.
       */
      down?: DownMember[];
    }
  | { known: false; reason: string };

export interface DownMember {
  member: TalosEtcdMember;
  reason: string;
  /** The MachineReclaim whose Reset of this member is on record. */
  resetBy?: string;
}

/**
 * Counts as down every voting member at the address of another request's Reset on
 * record (Resetting, WaitingForMaintenance): it may still answer for a moment, but it
 * is going away.
 */
export function withResetsInFlight(
  view: EtcdView,
  inFlight: Array<{ name: string; address: string }>,
): EtcdView {
  if (!view.known || inFlight.length === 0) return view;
  const down = [...(view.down ?? [])];
  for (const other of inFlight) {
    let host: string;
    try {
      host = parseTalosEndpoint(other.address).host;
    } catch {
      continue;
    }
    for (const member of view.members) {
      if (member.isLearner || !memberIsAt(member, host)) continue;
      const known = down.findIndex(d => d.member.id === member.id);
      const entry: DownMember = {
        member,
        reason: `being reset by MachineReclaim ${other.name}`,
        resetBy: other.name,
      };
      if (known >= 0) down[known] = entry;
      else down.push(entry);
    }
  }
  return { ...view, down };
}

export type ResetVerdict =
  | { verdict: 'allow'; summary: string }
  | {
      verdict: 'refuse';
      reason: string;
      members: number;
      quorum?: number;
    }
  | { verdict: 'unknown'; reason: string };

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

function hostsOf(member: TalosEtcdMember): string {
  const hosts = [
    ...new Set(
      [...member.peerUrls, ...member.clientUrls]
        .map(hostOf)
        .filter((h): h is string => !!h),
    ),
  ];
  return hosts.join(', ') || 'no address';
}

/** Whether an etcd member is the machine at `host` (by its peer or client URLs). */
export function memberIsAt(member: TalosEtcdMember, host: string): boolean {
  return [...member.peerUrls, ...member.clientUrls].some(
    url => hostOf(url) === host,
  );
}

/** The judgement: refuse what would remove the last control plane or lose quorum. */
export function judgeReset(address: string, view: EtcdView): ResetVerdict {
  if (!view.known) {
    return {
      verdict: 'unknown',
      reason: `the etcd members of the foreign cluster could not be read: ${view.reason}`,
    };
  }
  const host = parseTalosEndpoint(address).host;
  const own = view.members.find(m => memberIsAt(m, host));
  const isMember = view.targetAnswered || own !== undefined;
  if (!isMember) {
    return {
      verdict: 'allow',
      summary: `${address} is not an etcd member of the foreign cluster (a worker; ${view.members.length} control plane(s) stay)`,
    };
  }
  // A machine that answered the list runs etcd even if its URLs name another address.
  const controlPlanes = Math.max(view.members.length, own ? 0 : 1);
  if (controlPlanes <= 1) {
    return {
      verdict: 'refuse',
      reason: `resetting ${address} would remove the last control plane of the foreign cluster (its only etcd member)`,
      members: controlPlanes,
    };
  }
  if (own?.isLearner) {
    return {
      verdict: 'allow',
      summary: `${address} is an etcd learner of the foreign cluster: its reset does not change the quorum`,
    };
  }
  const voting = view.members.filter(m => !m.isLearner);
  // A machine that answered the list is one of the listed voters even if its URLs differ.
  const voters = voting.length;
  const downIds = new Set((view.down ?? []).map(d => d.member.id));
  const up = voters - voting.filter(m => downIds.has(m.id)).length;
  const targetUp = view.targetAnswered || !own || !downIds.has(own.id);
  const quorum = quorumSize(voters);
  const remaining = up - (targetUp ? 1 : 0);
  const downText = (view.down ?? [])
    .map(
      d =>
        `${d.member.hostname || d.member.id} at ${hostsOf(d.member)} ${
          d.resetBy
            ? `is being reset by MachineReclaim ${d.resetBy}`
            : 'does not answer'
        }`,
    )
    .join('; ');
  if (remaining < quorum) {
    return {
      verdict: 'refuse',
      reason: `resetting ${address} would break the foreign cluster's etcd quorum: ${voters} voting members need ${quorum}, ${
        downText ? `${up} are up (${downText}), ` : ''
      }and ${remaining} would remain`,
      members: voters,
      quorum,
    };
  }
  return {
    verdict: 'allow',
    summary: `${address} is a control plane of the foreign cluster: ${voters} voting etcd members, quorum ${quorum}, ${remaining} remain after the reset${
      downText ? ` (${downText})` : ''
    }`,
  };
}

/**
 * Reads the member list: from the machine to reset first (a control plane answers), then
 * from each control-plane endpoint of the foreign talosconfig.
 */
export async function readEtcdView(
  talos: TalosAccess,
  address: string,
  talosconfig: { endpoints: string[]; identity: TalosClientIdentity },
  timeoutMs: number,
  reach: EtcdReach,
): Promise<EtcdView> {
  const view = await readMembers(talos, address, talosconfig, timeoutMs, reach);
  if (!view.known) return view;
  const target = parseTalosEndpoint(address);
  const own = view.members.find(m => memberIsAt(m, target.host));
  if (!(view.targetAnswered || (own && !own.isLearner))) return view;
  // The reset takes a voter away: which of the other voters are up now?
  const sourceHost = parseTalosEndpoint(view.source).host;
  const answered = (m: TalosEtcdMember) => memberIsAt(m, sourceHost);
  const asked = view.members.filter(m => !m.isLearner && !answered(m));
  const down: DownMember[] = (
    await Promise.all(
      asked.map(async member => {
        const host = [...member.clientUrls, ...member.peerUrls]
          .map(hostOf)
          .find((h): h is string => !!h);
        if (!host) {
          return [{ member, reason: 'the member list gives it no address' }];
        }
        const endpoint =
          target.port === TALOS_API_PORT
            ? host
            : parseTalosEndpoint(
                host.includes(':')
                  ? `[${host}]:${target.port}`
                  : `${host}:${target.port}`,
              ).authority;
        const allowed = await reach(endpoint);
        if (!allowed.allowed) {
          // Not asked is not known to be up: it counts as down.
          return [{ member, reason: `not asked: ${allowed.message}` }];
        }
        try {
          await talos.etcdMembers(
            allowed.dial,
            talosconfig.identity,
            timeoutMs,
          );
          return [];
        } catch (error) {
          return [{ member, reason: (error as Error).message }];
        }
      }),
    )
  ).flat();
  return { ...view, down };
}

/**
 * More etcd members than any cluster runs (etcd's own guidance is at most 7). The list
 * comes from the foreign machine, and every voting member of it is dialled to ask
 * whether it is up: a hostile list of 20,000 members was 20,000 connections at once,
 * each answering (and decoding) a list as long.
 */
export const MAX_ETCD_MEMBERS = 64;

/** The member list as read from `source`, or unknown when it is longer than any etcd cluster's. */
function memberView(
  members: TalosEtcdMember[],
  source: string,
  targetAnswered: boolean,
): EtcdView {
  if (members.length > MAX_ETCD_MEMBERS) {
    return {
      known: false,
      reason: `${source} lists ${members.length} etcd members, more than an etcd cluster has (at most ${MAX_ETCD_MEMBERS}): none of them was asked`,
    };
  }
  return { known: true, targetAnswered, members, source };
}

async function readMembers(
  talos: TalosAccess,
  address: string,
  talosconfig: { endpoints: string[]; identity: TalosClientIdentity },
  timeoutMs: number,
  reach: EtcdReach,
): Promise<EtcdView> {
  const failures: string[] = [];
  try {
    const members = await talos.etcdMembers(
      address,
      talosconfig.identity,
      timeoutMs,
    );
    return memberView(members, address, true);
  } catch (error) {
    failures.push(`${address}: ${(error as Error).message}`);
  }
  const targetHost = parseTalosEndpoint(address).host;
  for (const endpoint of talosconfig.endpoints) {
    let host: string;
    try {
      host = parseTalosEndpoint(endpoint).host;
    } catch {
      continue;
    }
    if (host === targetHost) continue;
    const allowed = await reach(endpoint);
    if (!allowed.allowed) {
      failures.push(`${endpoint}: not contacted: ${allowed.message}`);
      continue;
    }
    try {
      const members = await talos.etcdMembers(
        allowed.dial,
        talosconfig.identity,
        timeoutMs,
      );
      return memberView(members, allowed.dial, false);
    } catch (error) {
      failures.push(`${endpoint}: ${(error as Error).message}`);
    }
  }
  return {
    known: false,
    reason:
      failures.length > 0
        ? failures.join('; ')
        : 'the talosconfig names no control-plane endpoint',
  };
}
