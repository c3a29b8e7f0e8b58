import type { z } from 'zod';
import {
  RACKSIDE_CATEGORY,
  RACKSIDE_GROUP,
  RACKSIDE_VERSION,
  type RacksideResourceDescriptor,
} from './common';
import { toOpenAPISchema, type JSONSchemaProps } from './openapi';

/** One `additionalPrinterColumns` entry. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

/** Everything a CRD is rendered from: the zod schema (with its CEL rules), names, columns. */
export interface CrdDefinition {
  resource: RacksideResourceDescriptor;
  schema: z.ZodTypeAny;
  printerColumns: PrinterColumn[];
}

/** The parts of `apiextensions.k8s.io/v1` CustomResourceDefinition Rackside writes. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Cluster' | 'Namespaced';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }>;
  };
}

/**
 * Renders one CRD. The root's `apiVersion`, `kind` and `metadata` are written the way
 * the apiserver expects them (plain string / object): it validates them itself.
 */
export function renderCrd(definition: CrdDefinition): CustomResourceDefinition {
  const { resource } = definition;
  const root = toOpenAPISchema(definition.schema, resource.kind);
  const properties = { ...root.properties };
  properties.apiVersion = {
    description:
      'APIVersion defines the versioned schema of this representation of an object.',
    type: 'string',
  };
  properties.kind = {
    description: 'Kind is a string value representing the REST resource.',
    type: 'string',
  };
  properties.metadata = { type: 'object' };
  const openAPIV3Schema: JSONSchemaProps = {
    ...root,
    properties,
    required: (root.required ?? []).filter(
      key => !['apiVersion', 'kind', 'metadata'].includes(key),
    ),
  };
  if (!openAPIV3Schema.required?.length) delete openAPIV3Schema.required;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${resource.plural}.${RACKSIDE_GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'rackside' },
    },
    spec: {
      group: RACKSIDE_GROUP,
      names: {
        kind: resource.kind,
        listKind: resource.listKind,
        plural: resource.plural,
        singular: resource.singular,
        shortNames: [...resource.shortNames],
        categories: [RACKSIDE_CATEGORY],
      },
      scope: resource.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: RACKSIDE_VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema },
          subresources: { status: {} },
          additionalPrinterColumns: definition.printerColumns,
        },
      ],
    },
  };
}
