/*
 * The ServerBMC controller, declared for the builder (runtime/controller): the checks of
 * reconciler.ts on every ServerBMC (woken when one is added or changed), over its ports
 * (ports.ts), and the health sweep of health.ts, which runs while the controller does.
 */
import type { ServerBMC } from '@rackside/plugin-servers-common';
import {
  buildController,
  type Controller,
  type ControllerPorts,
} from '../runtime/controller/buildController';
import {
  kubeServerBmcPorts,
  type BmcChannel,
  type HealthSettings,
  type ServerBmcControllerOptions,
} from './ports';
import { reconcileServerBmc } from './reconciler';

export type { BmcChannel, HealthSettings, ServerBmcControllerOptions };

export function createServerBmcController(
  options: ServerBmcControllerOptions,
  ports: ControllerPorts,
): Controller {
  const { bmcs } = options.caches;
  const { checks, health } = kubeServerBmcPorts(
    options,
    ports.log ?? (() => {}),
  );

  return buildController(
    {
      kind: 'ServerBMC',
      async reconcile(name) {
        const bmc = bmcs.get(name);
        if (!bmc) return;
        await reconcileServerBmc(bmc, checks(name));
      },
      watches: wake =>
        (['add', 'update'] as const).map(event =>
          bmcs.on(event, (bmc: ServerBMC) => wake.enqueue(bmc.metadata.name)),
        ),
      keys: () => bmcs.list().map(bmc => bmc.metadata.name),
      // Maintenances start after the first pass over every BMC; the sweep after it.
      awaitFirstPass: true,
      onStarted: () => health.start(),
      onPaused: () => health.pause(),
    },
    { ...ports, workers: 1 },
  );
}
