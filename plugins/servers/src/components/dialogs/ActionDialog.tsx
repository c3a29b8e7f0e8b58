import { useState } from 'react';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import LinearProgress from '@mui/material/LinearProgress';
import type {
  ActionOffer,
  HeldApprovalResponse,
  PowerVerb,
  QuorumSummaryResponse,
  ServerAction,
} from '@rackside/plugin-servers-common';
import { FOCUSABLE_PAPER, useFocusOnOpen } from './dialogFocus';
import { ACTION_DESCRIPTIONS, ACTION_LABELS } from '../ui/labels';
import { REASON_HINT, ReasonField } from './ReasonField';
import { useActionCeremony } from '../hooks/useActionCeremony';
import { useRequestAction } from '../hooks/useRequestAction';
import { PreflightStep } from './ActionPreflightStep';
import {
  ActionDialogTitle,
  ActionErrorAlert,
  HazardAlert,
  RefusalAlert,
  refusalOf,
  TypedNameField,
} from './ActionDialogParts';
import { shutdownReturnText, TYPED_REASON_HINT } from './ceremonyText';
import {
  HealthyReturnField,
  healthyReturnRequest,
  MAINTENANCE_ACTIONS,
  type HealthyReturnDraft,
} from './HealthyReturnField';
import {
  CurrentVersions,
  InstallTargetField,
  useUpgradeSources,
} from './InstallTargetField';
import {
  alreadyAtTarget,
  EMPTY_INSTALL_DRAFT,
  firmwareChoicesOf,
  installTargetOf,
  isInstallAction,
  sourcesOf,
  withAllowedSource,
  type InstallDraft,
} from './installTarget';

export interface ActionDialogProps {
  cluster: string;
  node: string;
  action: ServerAction;
  offer: ActionOffer;
  /** The power verbs the channel offers for this node (how a shutdown comes back). */
  powerVerbs?: readonly PowerVerb[];
  /** The cluster's quorum, to explain a refusal. */
  quorum?: QuorumSummaryResponse;
  /** The Talos version the row shows (an upgrade's "runs now" until the pre-flight says). */
  talosVersion?: string;
  onClose(): void;
  /**
   * Called with the NodeMaintenance the backend created or changed, and the approval
   * it waits for when a rule held it (docs/approvals.md).
   */
  onDone(maintenance: string, approval?: HeldApprovalResponse): void;
}

/**
 * The dialog of one action on one server: the reason, and whatever else the
 * ceremony from the server response requires. An upgrade or a firmware update also
 * asks what to install (from the deployment's allowed sources) and shows what the
 * server runs now.
 */
export function ActionDialog(props: ActionDialogProps) {
  const { cluster, node, action, offer, powerVerbs, quorum, onClose, onDone } =
    props;
  const install = isInstallAction(action) ? action : undefined;
  const sources = useUpgradeSources(install !== undefined);
  const allowed = install ? sourcesOf(install, sources.value) : [];
  const [draftChosen, setDraft] = useState<InstallDraft>(EMPTY_INSTALL_DRAFT);
  const draft = withAllowedSource(draftChosen, allowed);
  const {
    pre,
    needsPreflight,
    preflightReady,
    ceremony,
    hazard,
    refused,
    needsTypedName,
    typedReason,
  } = useActionCeremony(cluster, node, action, offer);

  const [reason, setReason] = useState('');
  const [typedName, setTypedName] = useState('');
  const [healthy, setHealthy] = useState<HealthyReturnDraft>({
    asked: false,
    seconds: '60',
  });
  const healthyReturn = healthyReturnRequest(healthy);
  // What the node runs now: the pre-flight's reading, else the row's version.
  const versions = {
    talos: pre.preflight?.versions?.talos ?? props.talosVersion,
    firmware: pre.preflight?.versions?.firmware,
  };
  // The Components choice: the components of the BMC's last reading; only ids it lists
  // are ever sent as targets.
  const components =
    install === 'firmware' ? firmwareChoicesOf([versions.firmware]) : [];
  const target = install
    ? installTargetOf(install, draft, allowed, sources.value, components)
    : ({ ok: false } as const);
  // The backend refuses an upgrade to the version the node runs, and a firmware update to
  // the version its BMC's last reading reports ("already at").
  const alreadyThere =
    !!install && alreadyAtTarget(install, target, versions) !== undefined;
  const { submitting, error, send } = useRequestAction(
    cluster,
    node,
    action,
    pre,
    onDone,
  );

  // The reason policy's 400 belongs under the reason; other 400s (ceremony) go below.
  const reasonError =
    error?.status === 400 && /^reason\b/i.test(error.message)
      ? error.message
      : undefined;
  const canSubmit =
    !submitting &&
    !refused &&
    preflightReady &&
    reason.trim().length > 0 &&
    (!needsTypedName || typedName === node) &&
    healthyReturn !== 'invalid' &&
    (!install || (target.ok && !alreadyThere));

  const submit = () =>
    send({
      reason,
      ...(needsTypedName ? { typedName } : {}),
      ...(needsPreflight ? { preflight: pre.preflight } : {}),
      ...(healthyReturn && healthyReturn !== 'invalid'
        ? { healthyReturn }
        : {}),
      ...(install && target.ok ? { install: target.body } : {}),
    });

  const label = ACTION_LABELS[action];
  const refusal = refused
    ? refusalOf(cluster, pre.preflight, quorum)
    : undefined;
  const titleId = `rackside-action-title-${action}`;
  const focusOnOpen = useFocusOnOpen();
  return (
    <Dialog
      open
      onClose={submitting ? undefined : onClose}
      aria-labelledby={titleId}
      fullWidth
      maxWidth={needsPreflight ? 'md' : 'sm'}
      PaperProps={{
        ...FOCUSABLE_PAPER,
        ref: focusOnOpen,
        sx: hazard ? { borderTop: 6, borderColor: 'error.main' } : undefined,
      }}
    >
      <ActionDialogTitle
        id={titleId}
        hazardTitle={hazard ? ceremony.hint?.title ?? 'Hazard' : undefined}
        text={`${label}: ${node}`}
      />
      <DialogContent data-ceremony={ceremony.level}>
        <DialogContentText sx={{ mb: 2 }}>
          {ACTION_DESCRIPTIONS[action]} Cluster <strong>{cluster}</strong>.
        </DialogContentText>
        {hazard && <HazardAlert />}
        {ceremony.why && !refused && (
          // Why the dialog asks more than the action's own rung (e.g. the BMC's reading).
          <Alert severity="warning" sx={{ mb: 2 }} data-testid="ceremony-why">
            Type the node name to confirm: {ceremony.why}.
          </Alert>
        )}
        {refusal && <RefusalAlert refusal={refusal} />}
        {refused && pre.loading && (
          <LinearProgress aria-label="taking the pre-flight" sx={{ mb: 1 }} />
        )}
        {action === 'shutdown' && !refused && (
          <Alert severity="info" sx={{ mb: 2 }} data-testid="shutdown-return">
            {shutdownReturnText(node, powerVerbs)}
          </Alert>
        )}
        {install && !refused && (
          <>
            <InstallTargetField
              action={install}
              sources={sources}
              draft={draft}
              onChange={setDraft}
              target={target}
              disabled={submitting}
            />
            <CurrentVersions
              action={install}
              node={node}
              versions={versions}
              target={target}
              components={
                install === 'firmware'
                  ? {
                      choices: components,
                      checked: draft.targets,
                      onChange: targets => setDraft({ ...draft, targets }),
                      disabled: submitting,
                    }
                  : undefined
              }
            />
          </>
        )}
        {needsPreflight && !refused && (
          <PreflightStep
            state={pre}
            hiddenOptions={install === 'upgrade' ? ['force'] : undefined}
          />
        )}
        {!refused && (
          <>
            <ReasonField
              value={reason}
              onChange={setReason}
              error={reasonError}
              hint={typedReason ? TYPED_REASON_HINT : REASON_HINT}
              // The hazard tier's reason is written, never picked: no autofill either.
              autoComplete={typedReason ? 'off' : undefined}
              testId="action-reason"
            />
            {needsTypedName && (
              <TypedNameField
                node={node}
                value={typedName}
                onChange={setTypedName}
              />
            )}
            {MAINTENANCE_ACTIONS.includes(action) && (
              <HealthyReturnField value={healthy} onChange={setHealthy} />
            )}
          </>
        )}
        {error && !reasonError && <ActionErrorAlert error={error} />}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={submitting}>
          Cancel
        </Button>
        {!refused && (
          <Button
            onClick={submit}
            disabled={!canSubmit}
            variant="contained"
            color={hazard ? 'error' : 'primary'}
          >
            {label}
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}
