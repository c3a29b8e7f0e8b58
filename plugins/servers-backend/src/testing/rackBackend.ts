/*
 * Set-up shared by the backend's rack tests (*.integration.test.ts): the CRDs, the
 * Backstage identity of e2e/rack/demo/backstage-access.yaml and the chart's admission
 * policies (policy-access.yaml) installed on a simulated rack, and the servers plugin started against the rack as that identity. The test
 * starts and stops the rack itself, so a failed set-up still stops it in afterAll.
 */
import { createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  awaitAdmissionPolicies,
  eventually,
  REPO_ROOT,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { serversPlugin } from '../plugin';

type Obj = Record<string, any>;

/** The namespace and ServiceAccount backstage-access.yaml gives the backend. */
const BACKSTAGE_NAMESPACE = 'rackside-system';
const BACKSTAGE_SERVICE_ACCOUNT = 'rackside-backstage';

function docsOf(file: string): Obj[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map(doc => doc.toJS() as Obj)
    .filter(Boolean);
}

function collectionPath(obj: Obj): string {
  const [group, version] = obj.apiVersion.includes('/')
    ? obj.apiVersion.split('/')
    : ['', obj.apiVersion];
  const root = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const ns = obj.metadata.namespace
    ? `/namespaces/${obj.metadata.namespace}`
    : '';
  const kind = obj.kind.toLowerCase();
  // ValidatingAdmissionPolicy -> validatingadmissionpolicies
  const plural = kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  return `${root}${ns}/${plural}`;
}

/** The rack as the admin, with the Rackside CRDs and the backend's identity in place. */
export interface RacksideOnRack {
  /** Admin (system:masters) access. */
  admin: KubeHttp;
  /** Server-side apply as the admin (creates or replaces the object). */
  apply(obj: Obj): Promise<void>;
  /** A token of the backend's ServiceAccount (one hour). */
  backstageToken: string;
}

/**
 * Installs every CRD under crds/ (and waits until each is Established) and the
 * objects of e2e/rack/demo/backstage-access.yaml and policy-access.yaml, then mints a
 * token of the backend's ServiceAccount.
 */
export async function installRackside(rack: TestRack): Promise<RacksideOnRack> {
  const admin = new KubeHttp(rack.adminKubeConfig());
  const apply = async (obj: Obj) => {
    await admin.request({
      method: 'PATCH',
      path: `${collectionPath(obj)}/${obj.metadata.name}`,
      query: { fieldManager: 'rackside-backend-test', force: true },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  };

  const crdDir = path.join(REPO_ROOT, 'crds');
  const crds = fs
    .readdirSync(crdDir)
    .filter(f => f.endsWith('.yaml'))
    .flatMap(f => docsOf(path.join(crdDir, f)));
  for (const crd of crds) await apply(crd);
  await Promise.all(
    crds.map(crd =>
      eventually(
        `CRD ${crd.metadata.name} established`,
        async () => {
          const got: Obj = await admin.request({
            method: 'GET',
            path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
          });
          return got.status?.conditions?.some(
            (c: Obj) => c.type === 'Established' && c.status === 'True',
          )
            ? true
            : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      ),
    ),
  );
  for (const file of ['backstage-access.yaml', 'policy-access.yaml']) {
    for (const obj of docsOf(path.join(REPO_ROOT, 'e2e/rack/demo', file))) {
      await apply(obj);
    }
  }
  await awaitAdmissionPolicies(rack.adminKubeConfig());

  // A TokenRequest of our own: `rack.serviceAccountToken` uses a dynamic import
  // that Jest refuses without --experimental-vm-modules.
  const minted: Obj = await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${BACKSTAGE_NAMESPACE}/serviceaccounts/${BACKSTAGE_SERVICE_ACCOUNT}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    },
  });
  return { admin, apply, backstageToken: minted.status.token };
}

/**
 * The servers plugin in a test backend, reading cluster `plant-a` of the rack with
 * `token`: every permission allowed, signals dropped. `cluster` adds to the
 * cluster's `servers.clusters[]` entry.
 */
export async function startServersBackendOnRack(options: {
  rack: TestRack;
  token: string;
  cluster?: Obj;
}) {
  const { rack, token } = options;
  return startTestBackend({
    features: [
      serversPlugin,
      mockServices.permissions.factory({ result: AuthorizeResult.ALLOW }),
      createServiceFactory({
        service: signalsServiceRef,
        deps: {},
        factory: () => ({ publish: async () => {} }),
      }),
      mockServices.rootConfig.factory({
        data: {
          servers: {
            clusters: [
              {
                name: 'plant-a',
                url: rack.info.server,
                caFile: rack.info.caFile,
                serviceAccountToken: token,
                ...options.cluster,
              },
            ],
          },
        },
      }),
    ],
  });
}

/** What the operator writes for a Talos channel that is Ready: reboot is offered. */
export async function advertiseTalosChannel(kube: KubeHttp): Promise<void> {
  const providers = '/apis/rackside.dev/v1alpha1/powerproviders';
  const created: Obj = await kube.request({
    method: 'POST',
    path: providers,
    body: {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'PowerProvider',
      metadata: { name: 'default' },
      spec: { type: 'talos', talos: { secretRef: { name: 'talosconfig' } } },
    },
  });
  await kube.request({
    method: 'PUT',
    path: `${providers}/default/status`,
    body: {
      ...created,
      status: {
        reboot: true,
        shutdown: true,
        observedGeneration: created.metadata.generation,
      },
    },
  });
}

/**
 * The drain option a rack test's draining request asks for (a drain, reboot, shutdown,
 * upgrade or firmware update), with its pre-flight query: which worker the rack schedules
 * the fixture's emptyDir pods on varies from run to run, and without it their data
 * refuses the drain of that worker.
 */
export const RACK_DRAIN_OPTIONS = { deleteEmptyDirData: true };
export const RACK_DRAIN_QUERY = '&deleteEmptyDirData=true';
