/*
 * The reasons of the Kubernetes Events (and of the MachineReclaim audit entries, which
 * carry the same names) the lifecycles emit, named once: dashboards, alerts and
 * `kubectl get events --field-selector reason=...` depend on them, so a row never spells
 * one out by hand. A NodeMaintenance transition without a reason of its own emits the
 * name of the phase it enters (Requested, Cordoned, ...).
 */

/** Event reasons of a NodeMaintenance besides the phase names. */
export const MaintenanceReason = {
  Refused: 'Refused',
  DrainFailed: 'DrainFailed',
  Abandoned: 'Abandoned',
  AbandonPending: 'AbandonPending',
  PowerVerbNotSent: 'PowerVerbNotSent',
  PowerVerbUnanswered: 'PowerVerbUnanswered',
  PowerVerbFailed: 'PowerVerbFailed',
  PowerVerbUnconfirmed: 'PowerVerbUnconfirmed',
  RebootTimedOut: 'RebootTimedOut',
  /** Back on another version than the upgrade's (a rollback), or not back by its deadline. */
  UpgradeFailed: 'UpgradeFailed',
  FirmwareFailed: 'FirmwareFailed',
  PowerOnTimedOut: 'PowerOnTimedOut',
  PowerOffConfirmed: 'PowerOffConfirmed',
  PowerOffUnconfirmed: 'PowerOffUnconfirmed',
  HealthyReturnFailed: 'HealthyReturnFailed',
  /** A verb for the node this replica runs on: it hands the Lease over instead of recording it. */
  LeaderHandover: 'LeaderHandover',
} as const;

/** Event reasons of a TalosMachine being added. */
export const JoinReason = {
  ConfigApplied: 'ConfigApplied',
  ConfigUnanswered: 'ConfigUnanswered',
  Joined: 'Joined',
  JoinFailed: 'JoinFailed',
} as const;

/** Audit events (and Event reasons) of a MachineReclaim. */
export const ReclaimReason = {
  Created: 'Created',
  UUIDRead: 'UUIDRead',
  Confirmed: 'Confirmed',
  ResetRecorded: 'ResetRecorded',
  ResetSent: 'ResetSent',
  ResetUnanswered: 'ResetUnanswered',
  CredentialDeleted: 'CredentialDeleted',
  CredentialDeletionFailed: 'CredentialDeletionFailed',
  CredentialNotBound: 'CredentialNotBound',
  Done: 'Done',
  Refused: 'Refused',
  ReclaimFailed: 'ReclaimFailed',
  Expired: 'Expired',
} as const;

/** Event reasons of a MaintenancePlan (plan/table.ts). */
export const PlanReason = {
  Resolved: 'Resolved',
  StepStarted: 'StepStarted',
  StepEnded: 'StepEnded',
  StepsAbandoned: 'StepsAbandoned',
  Paused: 'Paused',
  AuthorizationExpired: 'AuthorizationExpired',
  AwaitingApproval: 'AwaitingApproval',
  Approved: 'Approved',
  Stopping: 'Stopping',
  Complete: 'Complete',
  Failed: 'PlanFailed',
  Cancelled: 'Cancelled',
  StatusWriteFailed: 'StatusWriteFailed',
} as const;

/** The Event left on an object retention deleted (runtime/retention.ts). */
export const RetentionReason = {
  RetentionExpired: 'RetentionExpired',
} as const;
