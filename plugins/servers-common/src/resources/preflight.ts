/*
 * The pre-flight snapshot a request was acknowledged at, and the rungs it can be
 * acknowledged at. Apart from nodeMaintenance.ts because both a NodeMaintenance and the
 * approval of any request (approval.ts, which nodeMaintenance.ts imports) carry one.
 */
import { z } from 'zod';
import type { CeremonyLevel } from '../rules/types';
import {
  namespaceNameSchema,
  objectNameSchema,
  timestampSchema,
} from './common';

/**
 * The ceremony level a pre-flight snapshot was acknowledged at: the rungs of the ladder a
 * request can pass (a refused request is never written).
 */
export const PREFLIGHT_CEREMONY_LEVELS = [
  'reason',
  'preflight',
  'typed-name',
  'hazard',
] as const satisfies readonly CeremonyLevel[];
/** A rung a request can be acknowledged at. */
export type PreflightCeremonyLevel = (typeof PREFLIGHT_CEREMONY_LEVELS)[number];

const podRefSchema = z.object({
  namespace: namespaceNameSchema,
  name: objectNameSchema,
});

/** The snapshot the requester was shown and acknowledged (docs/architecture.md, "The rules and who calls them"). */
export const preflightSchema = z
  .object({
    takenAt: timestampSchema.describe('When the snapshot was taken.'),
    token: z
      .string()
      .max(1024)
      .optional()
      .describe('The acknowledgement token that binds this snapshot.'),
    ceremony: z
      .enum(PREFLIGHT_CEREMONY_LEVELS)
      .describe('The ceremony the request passed.'),
    pods: z
      .array(podRefSchema)
      .max(2000)
      .optional()
      .describe('Pods the drain was going to evict.'),
    blockingPDBs: z
      .array(
        z.object({
          namespace: namespaceNameSchema,
          name: objectNameSchema,
        }),
      )
      .max(500)
      .optional()
      .describe('PodDisruptionBudgets that were going to block an eviction.'),
    quorum: z
      .object({
        members: z.number().int().min(0),
        quorum: z.number().int().min(0),
        ready: z.number().int().min(0),
        margin: z.number().int(),
      })
      .optional()
      .describe(
        'Control-plane quorum numbers at the time (absent when none could be derived).',
      ),
    alerts: z
      .array(
        z.object({
          alertname: z.string().max(253),
          severity: z.string().max(63).optional(),
        }),
      )
      .max(100)
      .optional()
      .describe(
        "The node's firing Alertmanager alerts at the time (absent when the cluster has no Alertmanager configured).",
      ),
    nodeLocalData: z
      .array(podRefSchema)
      .max(500)
      .optional()
      .describe(
        'Pods to evict whose data is on the node (evicted because the request allowed node-local data).',
      ),
  })
  .describe(
    'The pre-flight snapshot the requester acknowledged, kept so what they were shown is recoverable.',
  );
