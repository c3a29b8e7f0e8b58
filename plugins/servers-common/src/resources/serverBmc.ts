import { z } from 'zod';
import {
  conditionsSchema,
  credentialsSecretRefSchema,
  objectMetaSchema,
  observedGenerationSchema,
  RACKSIDE_API_VERSION,
  resourceDescriptor,
} from './common';
import type { CrdDefinition } from './crd';

/** Where ServerBMC lives in the API. */
export const serverBmcResource = resourceDescriptor({
  kind: 'ServerBMC',
  plural: 'serverbmcs',
  shortNames: ['sbmc'],
  namespaced: false,
});

const systemPathSchema = z
  .string()
  .max(1024)
  .regex(/^\/redfish\/v1\/Systems\/[^/]+$/);

/** `spec` of a ServerBMC. */
export const serverBmcSpecSchema = z
  .object({
    address: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/)
      .describe(
        "Base URL of the BMC's Redfish service, e.g. https://10.0.5.21.",
      ),
    systemPath: systemPathSchema
      .optional()
      .describe(
        "The node's ComputerSystem, e.g. /redfish/v1/Systems/1. Absent: discovered, the system whose UUID is the node's system UUID.",
      ),
    credentialsSecretRef: credentialsSecretRefSchema
      .optional()
      .describe(
        "Credentials for this BMC only; default: the PowerProvider's redfish.credentialsSecretRef.",
      ),
  })
  .describe("How to reach the node's BMC.");

/** `status` of a ServerBMC. */
export const serverBmcStatusSchema = z
  .object({
    systemPath: systemPathSchema
      .optional()
      .describe('The ComputerSystem in use (given or discovered).'),
    message: z.string().max(4096).optional(),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
  })
  .describe('What the operator resolved.');

/** A ServerBMC, as read from the apiserver. */
export const serverBmcSchema = z
  .object({
    apiVersion: z.literal(RACKSIDE_API_VERSION),
    kind: z.literal('ServerBMC'),
    metadata: objectMetaSchema,
    spec: serverBmcSpecSchema,
    status: serverBmcStatusSchema.optional(),
  })
  .describe(
    'The BMC of one node (the object is named after the Node). Only the redfish power channel uses it.',
  );

/** A ServerBMC (defaults applied). */
export type ServerBMC = z.infer<typeof serverBmcSchema>;
/** A ServerBMC as written. */
export type ServerBMCInput = z.input<typeof serverBmcSchema>;
export type ServerBMCSpec = z.infer<typeof serverBmcSpecSchema>;
export type ServerBMCStatus = z.infer<typeof serverBmcStatusSchema>;

export const serverBmcCrd: CrdDefinition = {
  resource: serverBmcResource,
  schema: serverBmcSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address' },
    { name: 'System', type: 'string', jsonPath: '.status.systemPath' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
