import { z } from 'zod';
import {
  conditionsSchema,
  localSecretRefSchema,
  observedGenerationSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import { kube, uniqueList } from './kube';
import { DEFAULT_TALOS_PORT, parseCidr } from '../rules/discoveryNetworks';

/** Where TalosCluster lives in the API. */
export const talosClusterResource = resourceDescriptor({
  kind: 'TalosCluster',
  plural: 'talosclusters',
  shortNames: ['tc'],
  namespaced: true,
});

/**
 * Annotation on a TalosCluster: the discovery addresses a reclaim appended
 * (comma-separated), so they can be taken back out (decision 0002, item 8). An address the
 * user listed is never recorded here.
 */
export const RECLAIM_ADDED_ADDRESSES_ANNOTATION =
  'rackside.dev/reclaim-added-addresses';

/**
 * What a probe of a discovery address found (docs/architecture.md, "Adding machines"), as a category: the error
 * text of a failed probe stays in the operator's log.
 * - Maintenance: a machine in maintenance mode (its UUID read);
 * - Member: configured, with a server certificate of this cluster's CA;
 * - AlreadyConfigured: configured by another Talos cluster;
 * - Unreachable: no connection (refused, timed out, a name that does not resolve);
 * - NotTalos: something answered, but not as a Talos machine API;
 * - NotAllowed: outside the allowed networks or not the Talos port: never probed.
 */
export const TALOS_ADDRESS_STATES = [
  'Maintenance',
  'AlreadyConfigured',
  'Member',
  'Unreachable',
  'NotTalos',
  'NotAllowed',
] as const;
/** A discovery address state. */
export type TalosAddressState = (typeof TALOS_ADDRESS_STATES)[number];

/** What a person is told of each category (the operator's status messages start so). */
export const TALOS_ADDRESS_STATE_TEXT: Record<TalosAddressState, string> = {
  Maintenance: 'maintenance mode',
  Member: 'a member of this cluster',
  AlreadyConfigured:
    "configured by another Talos cluster: its server certificate is not issued by this cluster's CA",
  Unreachable: 'no answer at this address',
  NotTalos: 'something answered, but not as a Talos machine API',
  NotAllowed: 'outside the allowed networks',
};

/** A Talos endpoint: IP address or host name, optionally with a port. */
export const talosAddressSchema = z
  .string()
  .min(1)
  .max(261)
  .regex(/^[A-Za-z0-9.:[\]-]+$/)
  .describe('IP address or host name of a Talos machine, optionally :port.');

/** A network of `spec.discovery.allowedNetworks`: a canonical IPv4 or IPv6 CIDR. */
export const allowedNetworkSchema = kube(
  z
    .string()
    .min(3)
    .max(49)
    .refine(value => parseCidr(value) !== undefined, {
      message:
        'must be a CIDR with no bits set after the prefix, e.g. 10.0.5.0/24 or fd00:5::/64',
    }),
  {
    validations: [
      {
        rule: 'isCIDR(self) && cidr(self) == cidr(self).masked()',
        message:
          'must be a CIDR with no bits set after the prefix, e.g. 10.0.5.0/24 or fd00:5::/64',
      },
    ],
  },
).describe('A network (CIDR) discovery may reach, e.g. 10.0.5.0/24.');

/** `spec` of a TalosCluster. */
export const talosClusterSpecSchema = z
  .object({
    discovery: z
      .object({
        allowedNetworks: uniqueList(z.array(allowedNetworkSchema).max(64))
          .default([])
          .describe(
            'The networks the machines live in (CIDRs), written by the deployer. Discovery probes, reads UUIDs from and joins only addresses inside them (a name: every address it resolves to); none listed: nothing is probed.',
          ),
        talosPort: z
          .number()
          .int()
          .min(1)
          .max(65535)
          .default(DEFAULT_TALOS_PORT)
          .describe(
            "The port of the machines' Talos API; an address naming another port is refused.",
          ),
        addresses: uniqueList(z.array(talosAddressSchema).max(1024))
          .default([])
          .describe('Addresses probed for machines (set: no duplicates).'),
        intervalSeconds: z
          .number()
          .int()
          .min(10)
          .max(86400)
          .default(300)
          .describe('Seconds between discovery passes.'),
      })
      .prefault({})
      .describe('Where to look for machines, and how often.'),
    joinConfigSecretRef: localSecretRefSchema(
      'config.yaml',
      'the machine config applied to a new machine',
    ),
    talosconfigSecretRef: localSecretRefSchema(
      'talosconfig',
      "this cluster's talosconfig",
    ),
  })
  .describe('A Talos cluster machines can be added to.');

/** `status` of a TalosCluster. */
export const talosClusterStatusSchema = z
  .object({
    addresses: uniqueList(
      z
        .array(
          z.object({
            address: talosAddressSchema,
            state: z.enum(TALOS_ADDRESS_STATES),
            uuid: z
              .string()
              .max(64)
              .optional()
              .describe('SMBIOS UUID of the machine, where known.'),
            lastProbeTime: timestampSchema.optional(),
            message: z.string().max(4096).optional(),
          }),
        )
        .max(1024),
      ['address'],
    )
      .optional()
      .describe('One entry per discovery address: what the last probe found.'),
    lastDiscoveryTime: timestampSchema.optional(),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
  })
  .describe('What discovery found.');

/** A TalosCluster, as read from the apiserver. */
export const talosClusterSchema = racksideObjectSchema(
  'TalosCluster',
  talosClusterSpecSchema,
  talosClusterStatusSchema,
).describe(
  'A Talos cluster machines can be added to, normally the one the operator runs in.',
);

/** A TalosCluster (defaults applied). */
export type TalosCluster = RacksideObject<
  'TalosCluster',
  TalosClusterSpec,
  TalosClusterStatus
>;
/** A TalosCluster as written. */
export type TalosClusterInput = z.input<typeof talosClusterSchema>;
export type TalosClusterSpec = z.infer<typeof talosClusterSpecSchema>;
export type TalosClusterStatus = z.infer<typeof talosClusterStatusSchema>;
export type TalosAddressStatus = NonNullable<
  TalosClusterStatus['addresses']
>[number];

/** The addresses recorded in {@link RECLAIM_ADDED_ADDRESSES_ANNOTATION}. */
export function reclaimAddedAddresses(cluster: {
  metadata: { annotations?: Record<string, string> };
}): string[] {
  const value =
    cluster.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION] ?? '';
  return value
    .split(',')
    .map(address => address.trim())
    .filter(Boolean);
}

export const talosClusterCrd: CrdDefinition = {
  resource: talosClusterResource,
  schema: talosClusterSchema,
  printerColumns: [
    {
      name: 'Interval',
      type: 'integer',
      jsonPath: '.spec.discovery.intervalSeconds',
      description: 'Seconds between discovery passes',
    },
    {
      name: 'Last-Discovery',
      type: 'date',
      jsonPath: '.status.lastDiscoveryTime',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    {
      name: 'Networks',
      type: 'string',
      jsonPath: '.spec.discovery.allowedNetworks',
      priority: 1,
    },
    {
      name: 'Addresses',
      type: 'string',
      jsonPath: '.spec.discovery.addresses',
      priority: 1,
    },
  ],
};
