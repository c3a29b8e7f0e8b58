/*
 * Shared set-up of the operator's rack tests: a fresh simulated rack with the CRDs, the
 * operator's ServiceAccount holding exactly the demo's rules (e2e/rack/demo/
 * operator-access.yaml) under the chart's admission policies (policy-access.yaml), and
 * helpers to create maintenances and wait on them.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import {
  nodeMaintenanceResource,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  coreResources,
  ResourceClient,
  type NodeObject,
  type ResourceDescriptor,
} from '@rackside/plugin-servers-node';
import {
  awaitAdmissionPolicies,
  eventually,
  REPO_ROOT,
  startTestRack,
  type StartTestRackOptions,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { startOperator, type OperatorOptions } from '../operator';

export const OPERATOR_NAMESPACE = 'rackside-system';
const SA = 'rackside-operator';
const BACKSTAGE_SA = 'rackside-backstage';

/**
 * The Kubernetes username of the rack's admin (its certificate's CN). The chart's attribution
 * policy admits a requestedBy or `by` only when it is the writer's own name (or the
 * Backstage backend's ServiceAccount writes it), so what the tests write as the admin
 * names the admin.
 */
export const ADMIN_USER = 'rackside-admin';

/** A request flag as a person sets it with kubectl. */
export const flag = { by: ADMIN_USER, reason: 'done' };

/** Where each kind of e2e/rack/demo/operator-access.yaml lives in the API. */
const ACCESS_KINDS: Record<string, ResourceDescriptor> = {
  Namespace: {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
  },
  ServiceAccount: {
    group: '',
    version: 'v1',
    plural: 'serviceaccounts',
    kind: 'ServiceAccount',
    namespaced: true,
  },
  ClusterRole: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterroles',
    kind: 'ClusterRole',
    namespaced: false,
  },
  ClusterRoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
    namespaced: false,
  },
  Role: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'roles',
    kind: 'Role',
    namespaced: true,
  },
  RoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    plural: 'rolebindings',
    kind: 'RoleBinding',
    namespaced: true,
  },
  ValidatingAdmissionPolicy: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicies',
    kind: 'ValidatingAdmissionPolicy',
    namespaced: false,
  },
  ValidatingAdmissionPolicyBinding: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    plural: 'validatingadmissionpolicybindings',
    kind: 'ValidatingAdmissionPolicyBinding',
    namespaced: false,
  },
};

/** Every object of the demo's access files (e2e/rack/demo), as the demo applies them. */
async function applyAccess(admin: KubeConfig, files: string[]) {
  for (const file of files) {
    const docs = parseAllDocuments(
      fs.readFileSync(path.join(REPO_ROOT, 'e2e/rack/demo', file), 'utf8'),
    )
      .map(d => d.toJSON())
      .filter(Boolean);
    for (const doc of docs) {
      const descriptor = ACCESS_KINDS[doc.kind];
      if (!descriptor) throw new Error(`${file}: unexpected kind ${doc.kind}`);
      await new ResourceClient<any>(admin, descriptor, {
        fieldManager: 'rackside-tests',
      }).apply(doc, { force: true });
    }
  }
}

/**
 * The rack's admin may reclaim machines as docs/install.md says a person is let to: a Role
 * with the `reclaim` verb bound to that user by name. The operator checks the verb again
 * right before a reset with a SubjectAccessReview as the requester's username, which
 * carries none of the requester's groups (the admin's system:masters among them).
 */
async function grantAdminReclaim(admin: KubeConfig) {
  const rbac = (kind: string, plural: string) =>
    new ResourceClient<any>(
      admin,
      {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        plural,
        kind,
        namespaced: true,
      },
      { fieldManager: 'rackside-tests' },
    );
  const metadata = {
    name: 'rack-admin-reclaim',
    namespace: OPERATOR_NAMESPACE,
  };
  await rbac('Role', 'roles').apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata,
      rules: [
        {
          apiGroups: ['rackside.dev'],
          resources: ['machinereclaims'],
          verbs: ['reclaim'],
        },
      ],
    },
    { force: true },
  );
  await rbac('RoleBinding', 'rolebindings').apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'rack-admin-reclaim',
      },
      subjects: [
        {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'User',
          name: ADMIN_USER,
        },
      ],
    },
    { force: true },
  );
}

export interface OperatorRack {
  rack: TestRack;
  admin: KubeConfig;
  /** The operator's own identity (its ServiceAccount token). */
  operatorKc: KubeConfig;
  /**
   * The Backstage backend's identity as the demo grants it (its ServiceAccount token): the
   * one writer the chart's policies let vouch for a plan (spec.acknowledged,
   * spec.authorization).
   */
  backstageKc(): Promise<KubeConfig>;
  core: CoreV1Api;
  nms: ResourceClient<NodeMaintenance>;
  nodes: ResourceClient<NodeObject>;
  /** The operator's log lines, shown when a wait fails. */
  logs: string[];
  start(extra?: Partial<OperatorOptions>): ReturnType<typeof startOperator>;
  /** Starts an operator and waits until it is ready (its caches synced, leading). */
  startReady(
    extra?: Partial<OperatorOptions>,
  ): ReturnType<typeof startOperator>;
  waitFor<T>(
    what: string,
    fn: () => Promise<T | undefined | false>,
    timeoutMs?: number,
  ): Promise<T>;
  create(
    name: string,
    nodeName: string,
    intent?: string,
    spec?: Record<string, unknown>,
  ): Promise<void>;
  phaseIs(
    name: string,
    phase: string,
    timeoutMs?: number,
  ): Promise<NodeMaintenance>;
  unschedulable(node: string): Promise<boolean>;
  /** Whether the node's Ready condition is True. */
  isReady(node: string): Promise<boolean>;
  /** Creates a Secret in the operator's namespace. */
  secret(name: string, data: Record<string, string>): Promise<void>;
  /**
   * The reasons of the Events about `name`. With `awaiting`, first waits until each of
   * those is recorded: the operator posts an Event after the status write it goes with,
   * so a test that has seen the status can read the Events before it is there.
   */
  eventReasons(name: string, awaiting?: string[]): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * The Event reasons `read` returns; with `awaiting`, once each of those is among them
 * (see {@link OperatorRack.eventReasons}).
 */
export async function eventReasonsOf(
  read: () => Promise<string[]>,
  name: string,
  awaiting: string[] | undefined,
  waitFor: OperatorRack['waitFor'],
): Promise<string[]> {
  if (!awaiting?.length) return read();
  return waitFor(`the Events ${awaiting.join(', ')} of ${name}`, async () => {
    const reasons = await read();
    return awaiting.every(reason => reasons.includes(reason)) && reasons;
  });
}

/** Starts a rack for one test file and prepares the operator's identity on it. */
export async function startOperatorRack(
  options: StartTestRackOptions,
): Promise<OperatorRack> {
  const rack = await startTestRack(options);
  const admin = rack.adminKubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const nms = new ResourceClient<NodeMaintenance>(
    admin,
    nodeMaintenanceResource,
  );
  const nodes = new ResourceClient<NodeObject>(admin, coreResources.nodes);
  const logs: string[] = [];

  const waitFor = <T>(
    what: string,
    fn: () => Promise<T | undefined | false>,
    timeoutMs = 30_000,
  ): Promise<T> =>
    eventually(what, fn, {
      timeoutMs,
      intervalMs: 200,
      detail: () => `operator log:\n${logs.slice(-30).join('\n')}`,
    });

  const crds = new ResourceClient<any>(admin, {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  });
  const dir = path.join(REPO_ROOT, 'crds');
  for (const file of fs.readdirSync(dir).filter(f => f.endsWith('.yaml'))) {
    const crd = parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    await crds.apply(crd, { force: true });
    await waitFor(`${crd.metadata.name} Established`, async () => {
      const got = await crds.get(crd.metadata.name);
      return (got.status?.conditions ?? []).some(
        (c: any) => c.type === 'Established' && c.status === 'True',
      );
    });
  }

  const NS = OPERATOR_NAMESPACE;
  await applyAccess(admin, ['operator-access.yaml', 'policy-access.yaml']);
  await awaitAdmissionPolicies(admin);
  await grantAdminReclaim(admin);
  // TokenRequest directly: rack.serviceAccountToken's dynamic import needs ESM in Jest.
  const tokenKubeConfig = async (name: string) => {
    const token = await core.createNamespacedServiceAccountToken({
      namespace: NS,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    return rack.tokenKubeConfig(token.status!.token!);
  };
  const operatorKc = await tokenKubeConfig(SA);
  const backstageKc = async () => {
    await applyAccess(admin, ['backstage-access.yaml']);
    return tokenKubeConfig(BACKSTAGE_SA);
  };

  // The rack's nodes are Ready before the tests rely on it.
  await waitFor(
    'nodes Ready',
    async () => {
      const { items } = await nodes.list();
      return (
        items.length >= 10 &&
        items.every(n =>
          (n.status?.conditions ?? []).some(
            c => c.type === 'Ready' && c.status === 'True',
          ),
        )
      );
    },
    120_000,
  );

  const start = (extra: Partial<OperatorOptions> = {}) =>
    startOperator({
      kubeConfig: operatorKc,
      leaseNamespace: NS,
      leaseDurationSeconds: 10,
      retryPeriodMs: 500,
      log: message => logs.push(`${new Date().toISOString()} ${message}`),
      ...extra,
    });

  return {
    rack,
    admin,
    operatorKc,
    backstageKc,
    core,
    nms,
    nodes,
    logs,
    start,
    async startReady(extra = {}) {
      const operator = await start(extra);
      try {
        await waitFor('operator ready', async () => operator.isReady());
      } catch (error) {
        await operator.stop();
        throw error;
      }
      return operator;
    },
    waitFor,
    async create(name, nodeName, intent = 'cordon', spec = {}) {
      await nms.create({
        apiVersion: nodeMaintenanceResource.apiVersion,
        kind: 'NodeMaintenance',
        metadata: { name },
        // The chart's policies refuse a maintenance without an author: the writer's name.
        spec: {
          nodeName,
          intent,
          reason: 'integration test',
          requestedBy: ADMIN_USER,
          ...spec,
        },
      } as NodeMaintenance);
    },
    phaseIs: (name, phase, timeoutMs) =>
      waitFor(
        `${name} in ${phase}`,
        async () => {
          const nm = await nms.get(name);
          return nm.status?.phase === phase && nm;
        },
        timeoutMs,
      ),
    unschedulable: async node =>
      (await nodes.get(node)).spec?.unschedulable === true,
    isReady: async node =>
      !!(await nodes.get(node)).status?.conditions?.some(
        c => c.type === 'Ready' && c.status === 'True',
      ),
    async secret(name, data) {
      await core.createNamespacedSecret({
        namespace: NS,
        body: { metadata: { name, namespace: NS }, stringData: data },
      });
    },
    eventReasons: (name, awaiting) =>
      eventReasonsOf(
        async () =>
          (
            await core.listNamespacedEvent({
              namespace: 'default',
              fieldSelector: `involvedObject.name=${name}`,
            })
          ).items.map(e => e.reason ?? ''),
        name,
        awaiting,
        waitFor,
      ),
    stop: () => rack.stop(),
  };
}
