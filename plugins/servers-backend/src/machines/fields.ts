import {
  parseDiscoveryEndpoint,
  talosAddressSchema,
} from '@rackside/plugin-servers-common';
import { z } from 'zod';

/*
 * Fields of the machine routes' request bodies. Their messages say what is wrong,
 * never what was sent: a body may carry a credential.
 */

/**
 * The message of a field's own type check: `missing` when the field is absent,
 * `wrongType` when it is there but not of its type.
 */
export function missingOr(missing: string, wrongType: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? missing : wrongType;
}

/** Shown when an address is not one. */
export const ADDRESS_HINT =
  'must be an IP address or host name, optionally with :port (1-65535)';

/**
 * An address: trimmed, checked as the CRDs check it and read as host[:port] (an IP
 * literal or a DNS name, a port 1-65535). Whether discovery may reach it is the route's
 * check, against the TalosCluster's allowed networks.
 */
export const addressField = z
  .string({
    error: missingOr('address is required', 'address must be a string'),
  })
  .trim()
  .refine(
    value =>
      talosAddressSchema.safeParse(value).success &&
      parseDiscoveryEndpoint(value) !== undefined,
    { message: ADDRESS_HINT },
  );

/** A reason (the deployment's reason policy is checked after parsing). */
export const reasonField = z.string({
  error: missingOr('reason is required', 'reason must be a string'),
});

/** The TalosCluster, needed only when a cluster has several. */
export const talosClusterField = z
  .string({ error: 'talosCluster must be a string' })
  .min(1, 'talosCluster must not be empty')
  .optional();

/** An SMBIOS UUID as a person types it (any case). */
export const uuidField = z
  .string({ error: missingOr('uuid is required', 'uuid must be a string') })
  .trim()
  .regex(
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
    'uuid must be a UUID such as 6963c843-f9c9-456d-acfd-4d79eebc1214',
  );
