/*
 * Reconciles a ServerBMC: checks what can be checked without calling the BMC (its Node
 * exists, a credentials override is readable) and reports it in a Ready condition. The
 * BMC itself is only called when a verb is sent or read back: a BMC sits on the
 * management network and is not polled.
 */
import type { ServerBMC } from '@rackside/plugin-servers-common';
import { setCondition } from '../runtime/lifecycle/conditions';
import type { NodeView } from '../runtime/nodeView';
import type { SecretReader } from '../runtime/kube/secrets';

export interface ServerBmcPorts {
  node(name: string): NodeView | undefined;
  secrets: SecretReader;
  writeStatus(status: NonNullable<ServerBMC['status']>): Promise<void>;
}

function describe(bmc: ServerBMC): string {
  if (bmc.spec.systemPath) {
    return `BMC ${bmc.spec.address}, system ${bmc.spec.systemPath}`;
  }
  return `BMC ${bmc.spec.address}; the system is found by the node's system UUID when first used`;
}

export async function reconcileServerBmc(
  bmc: ServerBMC,
  ports: ServerBmcPorts,
): Promise<void> {
  const generation = bmc.metadata.generation;
  if (bmc.status?.observedGeneration === generation && generation) return;
  const problems: string[] = [];
  if (!ports.node(bmc.metadata.name)) {
    problems.push(`no Node named ${bmc.metadata.name}`);
  }
  const override = bmc.spec.credentialsSecretRef;
  if (override) {
    try {
      await ports.secrets.read({ ...override, key: override.usernameKey });
      await ports.secrets.read({ ...override, key: override.passwordKey });
    } catch (error) {
      problems.push(`credentials: ${(error as Error).message}`);
    }
  }
  const ready = problems.length === 0;
  await ports.writeStatus({
    systemPath: bmc.spec.systemPath,
    message: ready ? describe(bmc) : problems.join('; '),
    conditions: setCondition(
      bmc.status?.conditions?.filter(c => c.type === 'Ready'),
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        reason: ready ? 'Configured' : 'Misconfigured',
        message: ready ? 'The BMC is configured.' : problems.join('; '),
        observedGeneration: generation,
      },
      new Date().toISOString(),
    ),
    observedGeneration: generation,
  });
}
