/*
 * src/schema/openapi.yaml and the code it describes, kept in step: every route the
 * routers register is in the document and every operation of the document has a
 * route; every request body of the document is the zod schema of servers-common that
 * parses it (its fields, which are required, whether others are refused, and their
 * bounds), and the generated body types are the zod input types.
 */
import { mockServices } from '@backstage/backend-test-utils';
import {
  actionRequestBodySchema,
  addDiscoveryAddressBodySchema,
  approvalDecisionBodySchema,
  confirmReclaimBodySchema,
  createReclaimBodySchema,
  joinMachineBodySchema,
  planControlBodySchema,
  planRenewBodySchema,
  planRequestBodySchema,
} from '@rackside/plugin-servers-common';
import type express from 'express';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import type { ApprovalsEdgeService } from '../approvals/ApprovalsService';
import { createApprovalsRouter } from '../approvals/router';
import { createMachinesRouter } from '../machines/router';
import type { PlansEdgeService } from '../plans/PlansService';
import { createPlansRouter } from '../plans/router';
import type { ServersEdgeService } from '../servers/ServersService';
import { createRouter } from '../servers/router';
import type { MachinesEdgeService } from '../machines/MachinesService';
import type * as generated from './openapi/generated/models';
import { spec as generatedSpec } from './openapi/generated';

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  [keyword: string]: unknown;
};

interface Operation {
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
}

const spec: {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
} = YAML.parse(fs.readFileSync(path.join(__dirname, 'openapi.yaml'), 'utf8'));

/** Each body of the document and the zod schema the route parses it with. */
const BODY_SCHEMAS: Record<string, z.ZodType> = {
  ActionRequestBody: actionRequestBodySchema,
  AddDiscoveryAddressRequestBody: addDiscoveryAddressBodySchema,
  JoinMachineRequestBody: joinMachineBodySchema,
  CreateReclaimRequestBody: createReclaimBodySchema,
  ConfirmReclaimRequestBody: confirmReclaimBodySchema,
  PlanRequestBody: planRequestBodySchema,
  PlanControlBody: planControlBodySchema,
  PlanRenewBody: planRenewBodySchema,
  ApprovalDecisionBody: approvalDecisionBodySchema,
};

/** `method path` of every route an express router answers, nested routers included. */
function routesOf(router: express.Router): string[] {
  type Layer = {
    route?: { path: string; methods: Record<string, boolean> };
    handle: { stack?: Layer[] };
  };
  const walk = (stack: Layer[]): string[] =>
    stack.flatMap(layer => {
      if (layer.route) {
        const { path: routePath, methods } = layer.route;
        return Object.keys(methods).map(
          method => `${method} ${routePath.replace(/:(\w+)/g, '{$1}')}`,
        );
      }
      return layer.handle.stack ? walk(layer.handle.stack) : [];
    });
  return walk((router as unknown as { stack: Layer[] }).stack);
}

/** The routes of the plugin's routers, built as plugin.ts builds them. */
async function registeredRoutes(): Promise<string[]> {
  const httpAuth = mockServices.httpAuth();
  const servers = await createRouter({
    service: {} as ServersEdgeService,
    httpAuth,
  });
  const plans = await createPlansRouter({
    plans: {} as PlansEdgeService,
    httpAuth,
  });
  const machines = await createMachinesRouter({
    machines: {} as MachinesEdgeService,
    httpAuth,
  });
  const approvals = await createApprovalsRouter({
    approvals: {} as ApprovalsEdgeService,
    httpAuth,
  });
  // `/openapi.json` is the document itself, which every generated router serves.
  return [
    ...routesOf(servers),
    ...routesOf(plans),
    ...routesOf(machines),
    ...routesOf(approvals),
  ].filter(route => route !== 'get /openapi.json');
}

/** The keywords compared: what a field is and its bounds (descriptions aside). */
const KEYWORDS = [
  'type',
  'enum',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
];

/** zod's bounds of a whole number that say nothing but "a safe integer". */
const isSafeIntegerBound = (keyword: string, value: unknown) =>
  (keyword === 'minimum' && value === Number.MIN_SAFE_INTEGER) ||
  (keyword === 'maximum' && value === Number.MAX_SAFE_INTEGER);

/**
 * Where `documented` (the OpenAPI schema) and `parsed` (zod's, as JSON schema) differ,
 * one line each. An object the document leaves without properties (a label selector)
 * is compared by its type only: the document summarises it.
 */
function differences(
  documented: JsonSchema,
  parsed: JsonSchema,
  at: string,
): string[] {
  const found: string[] = [];
  for (const keyword of KEYWORDS) {
    const expected = isSafeIntegerBound(keyword, parsed[keyword])
      ? undefined
      : parsed[keyword];
    if (JSON.stringify(documented[keyword]) !== JSON.stringify(expected)) {
      found.push(
        `${at}: ${keyword} is ${JSON.stringify(
          documented[keyword],
        )} in the document, ${JSON.stringify(expected)} in zod`,
      );
    }
  }
  if (documented.type === 'object' && documented.properties) {
    const names = (schema: JsonSchema) =>
      Object.keys(schema.properties ?? {}).sort();
    if (names(documented).join() !== names(parsed).join()) {
      found.push(
        `${at}: fields ${names(documented).join()} in the document, ${names(
          parsed,
        ).join()} in zod`,
      );
    }
    const required = (schema: JsonSchema) =>
      [...(schema.required ?? [])].sort().join();
    if (required(documented) !== required(parsed)) {
      found.push(
        `${at}: required ${required(documented)} in the document, ${required(
          parsed,
        )} in zod`,
      );
    }
    const refusesOthers = (schema: JsonSchema) =>
      schema.additionalProperties === false;
    if (refusesOthers(documented) !== refusesOthers(parsed)) {
      found.push(
        `${at}: other fields ${
          refusesOthers(documented) ? 'refused' : 'accepted'
        } in the document, ${
          refusesOthers(parsed) ? 'refused' : 'accepted'
        } in zod`,
      );
    }
    for (const name of names(documented)) {
      const inZod = parsed.properties?.[name];
      if (inZod) {
        found.push(
          ...differences(documented.properties![name], inZod, `${at}.${name}`),
        );
      }
    }
  }
  if (documented.items && parsed.items) {
    found.push(...differences(documented.items, parsed.items, `${at}[]`));
  }
  return found;
}

/** True when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('src/schema/openapi.yaml', () => {
  it('describes every route the routers register, and no other', async () => {
    const documented = Object.entries(spec.paths)
      .flatMap(([route, item]) =>
        Object.keys(item).map(method => `${method} ${route}`),
      )
      .sort();
    const registered = (await registeredRoutes()).sort();
    expect(registered).toEqual(documented);
    expect(new Set(registered).size).toBe(registered.length);
  });

  it('is what the generated router serves and validates against', () => {
    expect(JSON.parse(JSON.stringify(generatedSpec))).toEqual(spec);
  });

  it('gives each request body the zod schema of servers-common that parses it', () => {
    const bodies = Object.values(spec.paths).flatMap(item =>
      Object.values(item).flatMap(operation => {
        const schema =
          operation.requestBody?.content['application/json'].schema;
        return schema?.$ref ? [schema.$ref.split('/').pop()!] : [];
      }),
    );
    expect([...new Set(bodies)].sort()).toEqual(
      Object.keys(BODY_SCHEMAS).sort(),
    );
  });

  it.each(Object.entries(BODY_SCHEMAS))(
    '%s has the fields, required fields and bounds of its zod schema',
    (name, schema) => {
      const parsed = z.toJSONSchema(schema, {
        io: 'input',
        unrepresentable: 'any',
      }) as JsonSchema;
      expect(differences(spec.components.schemas[name], parsed, name)).toEqual(
        [],
      );
    },
  );

  it('generates the body types that the zod schemas take', () => {
    // Checked by tsc: a `false` here does not compile.
    const same: Record<keyof typeof BODY_SCHEMAS, true> = {
      ActionRequestBody: true satisfies Same<
        generated.ActionRequestBody,
        z.input<typeof actionRequestBodySchema>
      >,
      AddDiscoveryAddressRequestBody: true satisfies Same<
        generated.AddDiscoveryAddressRequestBody,
        z.input<typeof addDiscoveryAddressBodySchema>
      >,
      JoinMachineRequestBody: true satisfies Same<
        generated.JoinMachineRequestBody,
        z.input<typeof joinMachineBodySchema>
      >,
      CreateReclaimRequestBody: true satisfies Same<
        generated.CreateReclaimRequestBody,
        z.input<typeof createReclaimBodySchema>
      >,
      ConfirmReclaimRequestBody: true satisfies Same<
        generated.ConfirmReclaimRequestBody,
        z.input<typeof confirmReclaimBodySchema>
      >,
      PlanRequestBody: true satisfies Same<
        generated.PlanRequestBody,
        z.input<typeof planRequestBodySchema>
      >,
      PlanControlBody: true satisfies Same<
        generated.PlanControlBody,
        z.input<typeof planControlBodySchema>
      >,
      PlanRenewBody: true satisfies Same<
        generated.PlanRenewBody,
        z.input<typeof planRenewBodySchema>
      >,
      ApprovalDecisionBody: true satisfies Same<
        generated.ApprovalDecisionBody,
        z.input<typeof approvalDecisionBodySchema>
      >,
    };
    expect(Object.keys(same).sort()).toEqual(Object.keys(BODY_SCHEMAS).sort());
  });
});
