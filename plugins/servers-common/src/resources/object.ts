/*
 * The Kubernetes object every Rackside kind is: apiVersion, kind and metadata around
 * the kind's own spec and status. Each kind's file defines its spec and status schemas
 * and wraps them here, once, so the wrapper (and the metadata Rackside reads) cannot
 * differ between kinds.
 */
import { z } from 'zod';
import {
  objectMetaSchema,
  RACKSIDE_API_VERSION,
  type ObjectMeta,
} from './common';

/**
 * A Rackside custom resource as read from the apiserver: the kind's spec and, once its
 * controller wrote one, its status.
 */
export interface RacksideObject<Kind extends string, Spec, Status> {
  apiVersion: typeof RACKSIDE_API_VERSION;
  kind: Kind;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** The zod schema of a {@link RacksideObject}: what a kind's file wraps its spec and status in. */
export type RacksideObjectSchema<
  Kind extends string,
  Spec extends z.ZodType,
  Status extends z.ZodType,
> = z.ZodObject<{
  apiVersion: z.ZodLiteral<typeof RACKSIDE_API_VERSION>;
  kind: z.ZodLiteral<Kind>;
  metadata: typeof objectMetaSchema;
  spec: Spec;
  status: z.ZodOptional<Status>;
}>;

/** Wraps a kind's spec and status schemas into the schema of its object. */
export function racksideObjectSchema<
  Kind extends string,
  Spec extends z.ZodType,
  Status extends z.ZodType,
>(
  kind: Kind,
  spec: Spec,
  status: Status,
): RacksideObjectSchema<Kind, Spec, Status> {
  return z.object({
    apiVersion: z.literal(RACKSIDE_API_VERSION),
    kind: z.literal(kind),
    metadata: objectMetaSchema,
    spec,
    status: status.optional(),
  });
}
