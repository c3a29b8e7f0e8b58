import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { eventually } from './eventually';

const PROBE = 'rackside-tests-admission-probe';

/**
 * Waits until the ValidatingAdmissionPolicies and bindings already written to the rack
 * are enforced. The apiserver loads them from its informers a moment after they are
 * stored (about a second, longer under load); a test that writes right after applying
 * them may be admitted by a policy that is not yet in force.
 *
 * It writes one more policy, refusing a ConfigMap named after it, and waits until a
 * dry-run create of that ConfigMap is refused. The apiserver rebuilds its policy set from
 * both listers at once, and each lister receives its objects in the order they were
 * stored, so once this last policy is enforced every earlier one is too.
 */
export async function awaitAdmissionPolicies(admin: KubeConfig): Promise<void> {
  const admission = admin.makeApiClient(AdmissionregistrationV1Api);
  const core = admin.makeApiClient(CoreV1Api);
  const message = `${PROBE}: the admission policies are in force`;
  await ignoreConflict(() =>
    admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: PROBE },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE'],
                resources: ['configmaps'],
              },
            ],
          },
          validations: [
            { expression: `object.metadata.name != '${PROBE}'`, message },
          ],
        },
      },
    }),
  );
  await ignoreConflict(() =>
    admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name: PROBE },
        spec: { policyName: PROBE, validationActions: ['Deny'] },
      },
    }),
  );
  await eventually(
    'the admission policies in force',
    async () => {
      try {
        await core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: PROBE } },
          dryRun: 'All',
        });
        return false;
      } catch (error) {
        if (String((error as Error).message).includes(message)) return true;
        throw error;
      }
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

async function ignoreConflict(create: () => Promise<unknown>) {
  try {
    await create();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}
