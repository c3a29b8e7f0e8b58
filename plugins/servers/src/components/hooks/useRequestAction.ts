import { useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import type {
  ActionRequestBody,
  HeldApprovalResponse,
  PreflightResponse,
  ServerAction,
} from '@rackside/plugin-servers-common';
import {
  describeError,
  PreflightChangedError,
  serversApiRef,
  type DescribedError,
} from '../../api';
import type { PreflightState } from './usePreflight';

/** What the dialog's ceremony gathered for the request. */
export interface ActionRequestFields {
  reason: string;
  /** Sent when the ceremony asks for the node's name typed. */
  typedName?: string;
  /** The acknowledged pre-flight, when the ceremony needs one. */
  preflight?: PreflightResponse;
  /** Opt-in: Complete only after a healthy return (docs/alerts.md). */
  healthyReturn?: { healthyForSeconds: number };
  /** An upgrade's image, or a firmware update's image URI, apply time, version and checksum. */
  install?: Pick<
    ActionRequestBody,
    'image' | 'imageURI' | 'applyTime' | 'version' | 'checksum'
  >;
}

export interface ActionRequestState {
  submitting: boolean;
  error?: DescribedError;
  send(fields: ActionRequestFields): Promise<void>;
}

/**
 * Sends one action on one server. On success the dialog hands on the NodeMaintenance the
 * backend created or changed; a 409 whose impact changed carries the new pre-flight,
 * which replaces the one on screen (and asks for a fresh acknowledgement).
 */
export function useRequestAction(
  cluster: string,
  node: string,
  action: ServerAction,
  pre: PreflightState,
  onDone: (maintenance: string, approval?: HeldApprovalResponse) => void,
): ActionRequestState {
  const api = useApi(serversApiRef);
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<DescribedError | undefined>();

  const send = async ({
    reason,
    typedName,
    preflight,
    healthyReturn,
    install,
  }: ActionRequestFields) => {
    setSubmitting(true);
    setError(undefined);
    try {
      const result = await api.requestAction(cluster, node, action, {
        reason,
        ...(typedName !== undefined ? { typedName } : {}),
        ...(healthyReturn ? { healthyReturn } : {}),
        ...(install ?? {}),
        ...(preflight
          ? {
              preflightToken: preflight.token,
              // The options the acknowledged impact was computed with. An upgrade's
              // `force` is Talos's own (it skips etcd's check), never a drain option:
              // the dialog does not offer it.
              deleteEmptyDirData: preflight.options.deleteEmptyDirData,
              ...(action === 'upgrade'
                ? {}
                : { force: preflight.options.force }),
              // Only when ticked on purpose; recorded on the maintenance.
              ...(preflight.options.allowNodeLocalData
                ? { allowNodeLocalData: true }
                : {}),
            }
          : {}),
      });
      // The approval only when a rule held the request: otherwise as before.
      if (result.approval) onDone(result.name, result.approval);
      else onDone(result.name);
    } catch (e) {
      if (PreflightChangedError.is(e)) {
        pre.replace(e.preflight);
      } else {
        setError(describeError(e));
      }
      setSubmitting(false);
    }
  };

  return { submitting, error, send };
}
