import { useEffect, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import type {
  PlanAlertGateInput,
  PlanIntent,
  PlanPreflightResponse,
} from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import type { PlanDrainFlags } from '../dialogs/PlanFields';

/** What a plan would be: the pre-flight is taken again whenever one of these changes. */
export interface PlanShape {
  intent: PlanIntent;
  nodes: string[];
  maxParallel: number;
  drain: PlanDrainFlags;
  /** The alert gate the plan carries: the pre-flight says which alerts hold it now. */
  alertGate?: PlanAlertGateInput;
  /**
   * What an upgrade (`image`) or a firmware plan (`imageURI`, and its `version`,
   * `checksum` and `targets` when given) installs; `false` while an installing intent has
   * no allowed target yet (no pre-flight is taken until it has).
   */
  install?:
    | {
        image?: string;
        imageURI?: string;
        version?: string;
        checksum?: string;
        targets?: string[];
      }
    | false;
}

export interface PlanPreflightState {
  /** The plan pre-flight on screen; what the acknowledgement and token bind. */
  preflight?: PlanPreflightResponse;
  /** Taking the pre-flight failed: the sentence to show. */
  loadError?: string;
  /** An upgrade or firmware plan without a target yet: no pre-flight is taken. */
  waitingForTarget: boolean;
  acknowledged: boolean;
  setAcknowledged(value: boolean): void;
  /** The backend said the impact changed and sent this one instead. */
  changed: boolean;
  /** Shows the backend's new plan pre-flight and asks for a fresh acknowledgement. */
  replace(preflight: PlanPreflightResponse): void;
}

/**
 * The plan pre-flight (per node, per step, the estimate) of the plan the dialog shapes,
 * taken when it opens and again whenever the shape changes. Every new pre-flight clears
 * the acknowledgement: what the user ticked was the impact they saw, not the one now on
 * screen. The plan's sibling of usePreflight (one action on one node).
 */
export function usePlanPreflight(
  cluster: string,
  shape: PlanShape,
): PlanPreflightState {
  const { intent, nodes, maxParallel, drain, alertGate, install } = shape;
  const alertGateKey = alertGate ? JSON.stringify(alertGate) : '';
  const waitingForTarget = install === false;
  const image = install ? install.image : undefined;
  const imageURI = install ? install.imageURI : undefined;
  const version = install ? install.version : undefined;
  const checksum = install ? install.checksum : undefined;
  // By value: the dialog builds a new list on every render.
  const targetsKey =
    install && install.targets?.length ? JSON.stringify(install.targets) : '';
  const api = useApi(serversApiRef);
  const [preflight, setPreflight] = useState<PlanPreflightResponse>();
  const [loadError, setLoadError] = useState<string>();
  const [changed, setChanged] = useState(false);
  const [acknowledged, setAcknowledged] = useState(false);
  const nodesKey = nodes.join(',');

  useEffect(() => {
    let cancelled = false;
    setPreflight(undefined);
    setLoadError(undefined);
    setAcknowledged(false);
    setChanged(false);
    if (waitingForTarget) return undefined;
    api
      .planPreflight(cluster, {
        intent,
        nodes: nodesKey.split(','),
        maxParallel,
        // Only the options that are on, as the single pre-flight asks.
        ...Object.fromEntries(Object.entries(drain).filter(([, on]) => on)),
        ...(alertGateKey ? { alertGate: JSON.parse(alertGateKey) } : {}),
        ...(image !== undefined ? { image } : {}),
        ...(imageURI !== undefined ? { imageURI } : {}),
        ...(version !== undefined ? { version } : {}),
        ...(checksum !== undefined ? { checksum } : {}),
        ...(targetsKey ? { targets: JSON.parse(targetsKey) } : {}),
      })
      .then(
        p => !cancelled && setPreflight(p),
        e => !cancelled && setLoadError(describeError(e).message),
      );
    return () => {
      cancelled = true;
    };
  }, [
    api,
    cluster,
    intent,
    maxParallel,
    nodesKey,
    drain,
    alertGateKey,
    waitingForTarget,
    image,
    imageURI,
    version,
    checksum,
    targetsKey,
  ]);

  const replace = (next: PlanPreflightResponse) => {
    setPreflight(next);
    setChanged(true);
    setAcknowledged(false);
  };

  return {
    preflight,
    loadError,
    waitingForTarget,
    acknowledged,
    setAcknowledged,
    changed,
    replace,
  };
}
