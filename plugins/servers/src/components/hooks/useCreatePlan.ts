import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import type {
  PlanPreflightResponse,
  PlanRequestBody,
} from '@rackside/plugin-servers-common';
import { describeError, PreflightChangedError, serversApiRef } from '../../api';
import type { PlanPreflightState } from './usePlanPreflight';

export interface CreatePlanState {
  /** The request is under way. */
  busy: boolean;
  /** The backend's refusal: its sentence and status (400 is the reason's). */
  error?: { message: string; status?: number };
  /** The name of the plan the backend created. */
  created?: string;
  create(body: PlanRequestBody): Promise<void>;
}

/**
 * Sends the plan the dialog shaped. A 409 whose impact changed carries the new plan
 * pre-flight: it replaces the one on screen, which asks for a fresh acknowledgement.
 */
export function useCreatePlan(
  cluster: string,
  planPreflight: PlanPreflightState,
): CreatePlanState {
  const api = useApi(serversApiRef);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; status?: number }>();
  const [created, setCreated] = useState<string>();

  const create = async (body: PlanRequestBody) => {
    setBusy(true);
    setError(undefined);
    try {
      const res = await api.createPlan(cluster, body);
      setCreated(res.name);
    } catch (e) {
      if (PreflightChangedError.is(e)) {
        // The 409 carries the new plan pre-flight: show it, ask again.
        planPreflight.replace(e.preflight as unknown as PlanPreflightResponse);
      }
      const described = describeError(e);
      setError({ message: described.message, status: described.status });
    } finally {
      setBusy(false);
    }
  };

  return { busy, error, created, create };
}
