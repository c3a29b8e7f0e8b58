/*
 * The admission decision for MachineReclaims (decision 0002): creating a request, and
 * confirming one (setting spec.confirmUUID), need the custom verb `reclaim` on
 * `machinereclaims` for the requesting user, asked of the apiserver with a
 * SubjectAccessReview as that user. RBAC alone decides; there is no switch. A confirm is
 * also checked against what the operator read: the request awaits confirmation, has not
 * expired, and the typed UUID is the machine's, so a mistyped UUID is rejected and can be
 * typed again (confirmUUID can be set only once).
 */
import {
  MACHINE_RECLAIM_VERB,
  machineReclaimResource,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';

/** `userInfo` of an AdmissionReview request. */
export interface AdmissionUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The fields of an admission.k8s.io/v1 AdmissionRequest this webhook reads. */
export interface AdmissionRequest {
  uid: string;
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: AdmissionUser;
  namespace?: string;
  name?: string;
  object?: unknown;
  oldObject?: unknown;
}

export type AdmissionVerdict =
  | { allowed: true }
  | { allowed: false; code: number; reason: string; message: string };

/** Asks the apiserver whether the user may use the verb (SubjectAccessReview). */
export interface AccessReviewPort {
  canReclaim(
    user: AdmissionUser,
    target: { namespace?: string; name?: string },
  ): Promise<{ allowed: boolean; reason?: string }>;
}

const ALLOW: AdmissionVerdict = { allowed: true };

function deny(code: number, reason: string, message: string): AdmissionVerdict {
  return { allowed: false, code, reason, message };
}

async function authorize(
  request: AdmissionRequest,
  access: AccessReviewPort,
  action: string,
): Promise<AdmissionVerdict | undefined> {
  const user = request.userInfo ?? {};
  if (!user.username) {
    return deny(403, 'Forbidden', `${action} needs an authenticated user`);
  }
  let review: { allowed: boolean; reason?: string };
  try {
    review = await access.canReclaim(user, {
      namespace: request.namespace,
      name: request.operation === 'CREATE' ? undefined : request.name,
    });
  } catch (error) {
    // Fail closed: without an answer nobody resets a machine.
    return deny(
      500,
      'InternalError',
      `${action}: the permission check failed: ${(error as Error).message}`,
    );
  }
  if (review.allowed) return undefined;
  return deny(
    403,
    'Forbidden',
    `${
      user.username
    } may not ${action}: it needs the "${MACHINE_RECLAIM_VERB}" verb on ${
      machineReclaimResource.plural
    }.${machineReclaimResource.group}${
      request.namespace ? ` in namespace ${request.namespace}` : ''
    }${review.reason ? ` (${review.reason})` : ''}`,
  );
}

/** Decides one AdmissionRequest for a MachineReclaim. */
export async function reviewMachineReclaim(
  request: AdmissionRequest,
  access: AccessReviewPort,
  now: () => number = Date.now,
): Promise<AdmissionVerdict> {
  const resource = request.resource;
  if (
    resource &&
    (resource.group !== machineReclaimResource.group ||
      resource.resource !== machineReclaimResource.plural)
  ) {
    return ALLOW;
  }
  // Status is the operator's to write; only the object itself is guarded.
  if (request.subResource) return ALLOW;
  const object = request.object as MachineReclaim | undefined;
  const old = request.oldObject as MachineReclaim | undefined;

  if (request.operation === 'CREATE') {
    const denied = await authorize(
      request,
      access,
      'create a MachineReclaim (Reset and add)',
    );
    if (denied) return denied;
    if (object?.spec?.confirmUUID) {
      return deny(
        422,
        'Invalid',
        "spec.confirmUUID is set only to confirm a request, after the operator has read the machine's UUID",
      );
    }
    return ALLOW;
  }

  if (request.operation !== 'UPDATE') return ALLOW;
  const confirming = !old?.spec?.confirmUUID && !!object?.spec?.confirmUUID;
  if (!confirming) return ALLOW;
  const denied = await authorize(
    request,
    access,
    'confirm a MachineReclaim (Reset and add)',
  );
  if (denied) return denied;
  const name = request.name ?? object?.metadata?.name;
  const phase = old?.status?.phase;
  if (phase !== 'AwaitingConfirmation') {
    return deny(
      409,
      'Conflict',
      `MachineReclaim ${name} is not awaiting confirmation (phase ${
        phase ?? 'not yet admitted'
      }): ${
        phase === 'Pending' || phase === undefined
          ? "the operator has not read the machine's UUID yet"
          : 'it can no longer be confirmed'
      }`,
    );
  }
  const expiresAt = Date.parse(old?.status?.expiresAt ?? '');
  if (Number.isFinite(expiresAt) && now() >= expiresAt) {
    return deny(
      409,
      'Conflict',
      `MachineReclaim ${name} expired at ${old?.status?.expiresAt}: create a new request`,
    );
  }
  const typed = object!.spec.confirmUUID!.toLowerCase();
  const expected = old?.status?.machineUUID?.toLowerCase();
  if (typed !== expected) {
    return deny(
      422,
      'Invalid',
      `the typed UUID ${typed} does not match the UUID the operator read from ${old?.spec?.address}: nothing was reset; check the UUID and type it again`,
    );
  }
  return ALLOW;
}
