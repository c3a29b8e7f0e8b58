import { z } from 'zod';
import {
  conditionsSchema,
  localSecretRefSchema,
  objectMetaSchema,
  observedGenerationSchema,
  RACKSIDE_API_VERSION,
  resourceDescriptor,
  timestampSchema,
} from './common';
import type { CrdDefinition } from './crd';
import { uniqueList } from './kube';

/** Where TalosCluster lives in the API. */
export const talosClusterResource = resourceDescriptor({
  kind: 'TalosCluster',
  plural: 'talosclusters',
  shortNames: ['tc'],
  namespaced: true,
});

/**
 * Annotation on a TalosCluster: the discovery addresses a reclaim appended
 * (comma-separated), so they can be taken back out (ADR 0107 amendment). An address the
 * user listed is never recorded here.
 */
export const RECLAIM_ADDED_ADDRESSES_ANNOTATION =
  'rackside.dev/reclaim-added-addresses';

/** What a probe of a discovery address found (DESIGN section 5b). */
export const TALOS_ADDRESS_STATES = [
  'Maintenance',
  'AlreadyConfigured',
  'Member',
  'Unreachable',
] as const;
/** A discovery address state. */
export type TalosAddressState = (typeof TALOS_ADDRESS_STATES)[number];

/** A Talos endpoint: IP address or host name, optionally with a port. */
export const talosAddressSchema = z
  .string()
  .min(1)
  .max(261)
  .regex(/^[A-Za-z0-9.:[\]-]+$/)
  .describe('IP address or host name of a Talos machine, optionally :port.');

/** `spec` of a TalosCluster. */
export const talosClusterSpecSchema = z
  .object({
    discovery: z
      .object({
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
      .default({})
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
export const talosClusterSchema = z
  .object({
    apiVersion: z.literal(RACKSIDE_API_VERSION),
    kind: z.literal('TalosCluster'),
    metadata: objectMetaSchema,
    spec: talosClusterSpecSchema,
    status: talosClusterStatusSchema.optional(),
  })
  .describe(
    'A Talos cluster machines can be added to, normally the one the operator runs in.',
  );

/** A TalosCluster (defaults applied). */
export type TalosCluster = z.infer<typeof talosClusterSchema>;
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
      name: 'Addresses',
      type: 'string',
      jsonPath: '.spec.discovery.addresses',
      priority: 1,
    },
  ],
};
