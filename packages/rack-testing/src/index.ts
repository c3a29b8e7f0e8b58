/**
 * Test helper: a simulated rack (real kube-apiserver, kwok, Talos emulator,
 * Redfish BMCs) per Jest test file.
 *
 * @packageDocumentation
 */
export { startTestRack, REPO_ROOT } from './rack';
export type { RackInfo, StartTestRackOptions, TestRack } from './rack';
export { claimNet } from './net';
export { eventually } from './eventually';
export { awaitAdmissionPolicies } from './admission';
export { startTrap, talosEmulator } from './talosEmulator';
export type {
  PowerCounts,
  RackMachine,
  RackRedfish,
  RackTalos,
  TalosEmulator,
  Trap,
} from './talosEmulator';
export { bmcHealthControl } from './redfishHealth';
export type { BmcHealthControl, RackBmcPart } from './redfishHealth';
