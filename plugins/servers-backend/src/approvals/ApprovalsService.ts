/*
 * What the approval routes ask of the approvals feature (docs/approvals.md): the requests
 * awaiting the caller's approval, one request's approval beside a fresh pre-flight, and a
 * decision. Three layers implement it, each wrapping the next (createApprovalsService.ts),
 * as the servers, the plans and the machines do:
 *
 * - AuditedApprovalsService: every call is an auditor event, whatever ends it (reads
 *   `server-read`, a decision `server-approval`);
 * - AuthorizedApprovalsService: an unknown cluster's 404 first, `servers:read`, then
 *   `servers:approve` on every node of the request (a decision: 403 naming the nodes),
 *   and hands what it decided to the next layer with the call (`call.grant`);
 * - DefaultApprovalsService: every other check and the write (commands/), within the
 *   grant. It never asks the permission framework, and answers nothing without a grant.
 *
 * The router parses a request once, into the typed command the layers pass down
 * (parseApprovalRef, parseDecideApprovalCommand, parseApprovalListQuery).
 */
import type { UserInfoService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import {
  approvalDecisionBodySchema,
  type ApprovalDecidedResponse,
  type ApprovalListResponse,
  type ApprovalRequestKind,
  type ApprovalView,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { z } from 'zod';
import type { ServerReadScope } from '../access/serverGrant';
import type { ApprovalNotifier } from '../approval/notices';
import type { PlanPreflightPort } from '../approval/planPreflightPort';
import type { ClusterState } from '../cluster/types';
import type { RefusedRequests } from '../lib/audited';
import type { CallVia } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import { parseRequestBody } from '../lib/requestBody';
import type { PreflightTokens } from '../preflight/tokens';

/** One request an approval holds, as a route names it. */
export interface ApprovalRef {
  cluster: string;
  kind: ApprovalRequestKind;
  /** The NodeMaintenance's or MaintenancePlan's name. */
  name: string;
}

/** `POST .../approval`, parsed: the request and the body that passed its schema. */
export interface DecideApprovalCommand extends ApprovalRef {
  body: z.output<typeof approvalDecisionBodySchema>;
}

/** A decision as the route names it (unchecked), for the record of a refused one. */
export interface ApprovalTarget {
  cluster: string;
  kind: ApprovalRequestKind;
  name: string;
  body: unknown;
}

/** `GET /approvals?for=me`: the only list there is. */
export interface ApprovalListQuery {
  for: 'me';
}

/** A decision's path and body, parsed once at the edge (400 naming the field). */
export function parseDecideApprovalCommand(
  ref: ApprovalRef,
  body: unknown,
): DecideApprovalCommand {
  return { ...ref, body: parseRequestBody(approvalDecisionBodySchema, body) };
}

/** `?for=me`, the one list; anything else is a 400. */
export function parseApprovalListQuery(
  query: Record<string, unknown>,
): ApprovalListQuery {
  if (query.for !== 'me') {
    throw new InputError(
      'for must be me: the list is of the approvals you may give',
    );
  }
  return { for: 'me' };
}

/**
 * What AuthorizedApprovalsService decided for a call on one cluster: the cluster, what
 * the caller may read, and whether `servers:approve` allows the caller on nodes (the
 * conditions of its decision already applied).
 */
export interface ApprovalGrant {
  cluster: ClusterState;
  scope: ServerReadScope;
  /** The nodes of `names` on which `servers:approve` is refused to the caller. */
  approveRefusedOn(names: readonly string[]): string[];
}

/** How a call came in, and what the permission decorator granted it. */
export interface ApprovalCallContext {
  via?: CallVia;
  request?: Request;
  /** Facts the call learns (the decision's state), kept by the audit record. */
  learnt?: Record<string, unknown>;
  /** One grant per cluster the call covers (a decision or a view: one). */
  grants?: ApprovalGrant[];
}

/** What the approval commands need besides the call (no permissions: decided above). */
export interface ApprovalCommandContext {
  preflightTokens: PreflightTokens;
  /** The plan pre-flight the plans feature computes (plugin.ts hands it over). */
  planPreflights: PlanPreflightPort;
  /** Who the approver is in the catalog: their ownership refs (their groups). */
  userInfo: Pick<UserInfoService, 'getUserInfo'>;
  notifier: ApprovalNotifier;
  /** The clock (tests); now if unset. */
  now?: () => Date;
}

export interface ApprovalsService {
  /** `GET /approvals?for=me`: the requests awaiting an approval the caller may give. */
  listForMe(
    credentials: UserCredentials,
    query: ApprovalListQuery,
    call?: ApprovalCallContext,
  ): Promise<ApprovalListResponse>;

  /** `GET /clusters/:cluster/{maintenances,plans}/:name/approval`. */
  getApproval(
    credentials: UserCredentials,
    ref: ApprovalRef,
    call?: ApprovalCallContext,
  ): Promise<ApprovalView>;

  /** `POST /clusters/:cluster/{maintenances,plans}/:name/approval`: approve or reject. */
  decide(
    credentials: UserCredentials,
    command: DecideApprovalCommand,
    call?: ApprovalCallContext,
  ): Promise<ApprovalDecidedResponse>;
}

/**
 * What the approval router holds: the service, and the record of a decision refused
 * before it (no user, a body that does not parse).
 */
export type ApprovalsEdgeService = ApprovalsService &
  RefusedRequests<ApprovalTarget>;
