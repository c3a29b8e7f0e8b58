/*
 * The one way the plugin records a call with the auditor (docs/architecture.md, "The backend"): the event is
 * opened with what is known before any check, then closed as a success (with what the
 * call learnt on the way and its outcome) or a failure (with the outcome of the error).
 */
import type {
  AuditorService,
  AuditorServiceCreateEventOptions,
  BackstageCredentials,
} from '@backstage/backend-plugin-api';
import type { Request } from 'express';
import { READ_SEVERITY, type CallVia } from './auditSeverity';

/**
 * An error class may name the outcome its audit record gets (a guard refusal is
 * `refused`, not the `conflict` of its ConflictError base): a getter under this key.
 */
export const AUDIT_OUTCOME = Symbol('auditOutcome');

const OUTCOMES: Record<string, string> = {
  NotAllowedError: 'denied',
  InputError: 'invalid',
  NotFoundError: 'not-found',
  ConflictError: 'conflict',
  ServiceUnavailableError: 'unavailable',
};

/** The audit outcome of an error. */
export function outcomeOf(error: unknown): string {
  const own = (error as { [AUDIT_OUTCOME]?: string } | undefined)?.[
    AUDIT_OUTCOME
  ];
  return own ?? OUTCOMES[(error as Error)?.name] ?? 'failed';
}

/** What a call adds to its record on the way (never a credential: the auditor logs it). */
export interface AuditRecord {
  /** Facts learnt while running (e.g. the reclaim's name); on success and failure. */
  extra: Record<string, unknown>;
  /** The outcome of a success (e.g. `created`); unset: the success carries no meta. */
  outcome?: string;
}

/** How one call is recorded. */
export interface AuditedOptions {
  auditor: AuditorService;
  eventId: string;
  severityLevel: NonNullable<AuditorServiceCreateEventOptions['severityLevel']>;
  request?: Request;
  /** What is known before any check. */
  meta: Record<string, unknown>;
}

/** Runs `run` with its auditor event, and answers what it answers (or throws what it throws). */
export async function audited<T>(
  options: AuditedOptions,
  run: (record: AuditRecord) => Promise<T>,
): Promise<T> {
  const { auditor, eventId, severityLevel, request, meta } = options;
  const event = await auditor.createEvent({
    eventId,
    severityLevel,
    request,
    meta: meta as AuditorServiceCreateEventOptions['meta'],
  });
  const record: AuditRecord = { extra: {} };
  let result: T;
  try {
    result = await run(record);
  } catch (error) {
    await event.fail({
      meta: { ...meta, ...record.extra, outcome: outcomeOf(error) },
      error: error as Error,
    });
    throw error;
  }
  if (record.outcome === undefined && Object.keys(record.extra).length === 0) {
    await event.success();
  } else {
    await event.success({
      meta: {
        ...meta,
        ...record.extra,
        ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
      },
    });
  }
  return result;
}

/**
 * Records an attempt that had no user (a request route's 401): opened and failed at
 * once, with no actor and the outcome `unauthenticated`.
 */
export async function auditUnauthenticated(
  options: AuditedOptions,
  error: Error,
): Promise<void> {
  const { auditor, eventId, severityLevel, request } = options;
  const meta = { ...options.meta, actor: null, outcome: 'unauthenticated' };
  const event = await auditor.createEvent({
    eventId,
    severityLevel,
    request,
    meta: meta as AuditorServiceCreateEventOptions['meta'],
  });
  await event.fail({ meta, error });
}

/** Who a call is audited as: the user, or the service's subject. */
export function actorOf(credentials: BackstageCredentials): string {
  const principal = credentials.principal as {
    type?: string;
    userEntityRef?: string;
    subject?: string;
  };
  return principal.userEntityRef ?? principal.subject ?? principal.type ?? '';
}

/** How a read came in: the actions registry or a route (with its request, for the audit). */
export interface ReadCall {
  via?: CallVia;
  request?: Request;
}

/**
 * Runs a read with its auditor event (`server-read`, severity low): who, what, via
 * which door, and how it ended (a denied or unknown target fails the event).
 */
export function auditedRead<T>(
  auditor: AuditorService,
  actor: string,
  call: ReadCall | undefined,
  target: Record<string, string | undefined>,
  read: () => Promise<T>,
): Promise<T> {
  return audited(
    {
      auditor,
      eventId: 'server-read',
      severityLevel: READ_SEVERITY,
      request: call?.request,
      meta: { actor, ...target, via: call?.via ?? 'http' },
    },
    read,
  );
}

/** Who and how, for a request an edge refused before its feature's service saw it. */
export interface Refusal {
  /** The caller; `null` when there was no user (a 401), audited as `unauthenticated`. */
  actor: string | null;
  /** The HTTP request, for the audit event. */
  request?: Request;
}

/**
 * Where an edge (a router, an MCP action) records a request it refused before the
 * feature's service saw it: no user, or a request that does not parse into the
 * feature's typed command. Implemented by the feature's `Audited…Service`, with the
 * event the service would have made, so a refused request leaves the same record.
 */
export interface RefusedRequests<Target> {
  auditRefused(target: Target, error: Error, refusal: Refusal): Promise<void>;
}

/**
 * Records a request refused at the edge: opened and failed at once, with the error's
 * outcome (`unauthenticated` when there was no user).
 */
export async function auditRefused(
  options: AuditedOptions,
  error: Error,
): Promise<void> {
  if (options.meta.actor === null) {
    await auditUnauthenticated(options, error);
    return;
  }
  const { auditor, eventId, severityLevel, request } = options;
  const meta = { ...options.meta, outcome: outcomeOf(error) };
  const event = await auditor.createEvent({
    eventId,
    severityLevel,
    request,
    meta: meta as AuditorServiceCreateEventOptions['meta'],
  });
  await event.fail({ meta, error });
}

/**
 * One step of an edge before the service (reading the user, parsing the request): what
 * it refuses is recorded through `audit` before it is thrown on.
 */
export async function refusedAudited<T, Target>(
  audit: RefusedRequests<Target>,
  target: Target,
  refusal: Refusal,
  step: () => T | Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    await audit.auditRefused(target, error as Error, refusal);
    throw error;
  }
}
