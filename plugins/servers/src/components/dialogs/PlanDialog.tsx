import { useEffect, useState } from 'react';
import Button from '@mui/material/Button';
import Dialog from '@mui/material/Dialog';
import DialogActions from '@mui/material/DialogActions';
import DialogContent from '@mui/material/DialogContent';
import DialogContentText from '@mui/material/DialogContentText';
import DialogTitle from '@mui/material/DialogTitle';
import type {
  PlanIntent,
  PlanRequestBody,
} from '@rackside/plugin-servers-common';
import { useCreatePlan } from '../hooks/useCreatePlan';
import { usePlanPreflight } from '../hooks/usePlanPreflight';
import { FOCUSABLE_PAPER, useFocusOnOpen } from './dialogFocus';
import { hazardNamesTyped, hazardNodesOf } from './HazardStepNames';
import {
  PlanCeremony,
  PlanDrainOptions,
  PlanShapeFields,
  TYPED_COUNT_VERB,
  type PlanDrainFlags,
} from './PlanFields';
import {
  FirmwareComponentsField,
  InstallTargetField,
  useUpgradeSources,
} from './InstallTargetField';
import {
  EMPTY_INSTALL_DRAFT,
  installTargetOf,
  isInstallAction,
  sourcesOf,
  withAllowedSource,
  withFirmwareChoices,
  type FirmwareComponentChoice,
  type InstallDraft,
  type InstallTarget,
} from './installTarget';
import { usePlanIntents } from './usePlanIntents';
import {
  PlanCreated,
  PlanErrorAlert,
  PlanPreflightStatus,
} from './PlanDialogParts';
import { PlanPreflightView } from './PlanPreflightView';
import {
  alertGateOf,
  EMPTY_ALERT_DRAFT,
  healthyForSecondsError,
  healthyReturnOf,
  PlanAlertFields,
  type PlanAlertDraft,
} from './PlanAlertFields';

/** The plan body's part of what an upgrade or a firmware plan installs. */
function installBodyOf(
  intent: PlanIntent,
  target: InstallTarget,
): Pick<PlanRequestBody, 'upgrade' | 'firmware'> {
  if (!target.ok) return {};
  const { image, imageURI, applyTime, version, checksum, targets } =
    target.body;
  if (intent === 'upgrade' && image) return { upgrade: { image } };
  if (intent === 'firmware' && imageURI) {
    return {
      firmware: {
        imageURI,
        ...(applyTime ? { applyTime } : {}),
        ...(version ? { version } : {}),
        ...(checksum ? { checksum } : {}),
        ...(targets?.length ? { targets } : {}),
      },
    };
  }
  return {};
}

/** What the submit button says, by intent. */
const START: Record<PlanIntent, string> = {
  drain: 'Start rolling drain',
  reboot: 'Start rolling reboot',
  upgrade: 'Start rolling upgrade',
  firmware: 'Start rolling firmware update',
};

/**
 * "Plan a rolling drain / reboot" of the selected servers: the plan pre-flight (per
 * node, per step, the estimate) and the ceremony (reason, acknowledgement, and for
 * reboots, upgrades and firmware updates the number of servers typed). An upgrade or a
 * firmware update (offered where the user holds its permission) first asks what to
 * install with the single server's picker (InstallTargetField); its pre-flight lists the
 * servers already at the target, which the plan skips. On success it links to the plan's
 * page.
 */
export function PlanDialog(props: {
  cluster: string;
  nodes: string[];
  onClose(created?: string): void;
}) {
  const { cluster, nodes, onClose } = props;
  const focusRef = useFocusOnOpen();
  const [intent, setIntent] = useState<PlanIntent>('drain');
  const [maxParallel, setMaxParallel] = useState(1);
  const [drain, setDrain] = useState<PlanDrainFlags>({
    deleteEmptyDirData: false,
    force: false,
    allowNodeLocalData: false,
  });
  const [alertDraft, setAlertDraft] =
    useState<PlanAlertDraft>(EMPTY_ALERT_DRAFT);
  const alertGate = alertGateOf(alertDraft);
  const intents = usePlanIntents();
  // What an upgrade or a firmware plan installs: the single server's picker and rule.
  const install = isInstallAction(intent) ? intent : undefined;
  const sources = useUpgradeSources(intents.some(isInstallAction));
  const allowed = install ? sourcesOf(install, sources.value) : [];
  const [draftChosen, setDraft] = useState<InstallDraft>(EMPTY_INSTALL_DRAFT);
  const draft = withAllowedSource(draftChosen, allowed);
  // A firmware plan's Components choice: every component the selected servers' BMC
  // readings listed in this dialog's pre-flights (planned and skipped servers alike).
  const [components, setComponents] = useState<FirmwareComponentChoice[]>([]);
  const target: InstallTarget = install
    ? installTargetOf(install, draft, allowed, sources.value, components)
    : { ok: false };
  const installBody = installBodyOf(intent, target);
  const planPreflight = usePlanPreflight(cluster, {
    intent,
    nodes,
    maxParallel,
    drain,
    alertGate,
    ...(install
      ? {
          install: target.ok
            ? {
                ...(installBody.upgrade
                  ? { image: installBody.upgrade.image }
                  : {}),
                // A firmware plan's version (the servers already there are skipped) and
                // checksum (a source may refuse the pre-flight without one).
                ...(installBody.firmware
                  ? {
                      imageURI: installBody.firmware.imageURI,
                      version: installBody.firmware.version,
                      checksum: installBody.firmware.checksum,
                      targets: installBody.firmware.targets,
                    }
                  : {}),
              }
            : false,
        }
      : {}),
  });
  const { preflight, acknowledged, setAcknowledged } = planPreflight;
  useEffect(() => {
    if (intent !== 'firmware' || !preflight) return;
    setComponents(seen =>
      withFirmwareChoices(seen, [
        ...preflight.nodes.map(n => n.versions?.firmware),
        ...(preflight.skipped ?? []).map(n => n.firmware),
      ]),
    );
  }, [intent, preflight]);
  const [reason, setReason] = useState('');
  const [typedCount, setTypedCount] = useState('');
  const [typedNames, setTypedNames] = useState<Record<string, string>>({});
  const { busy, error, created, create } = useCreatePlan(
    cluster,
    planPreflight,
  );

  const anyOption = Object.values(drain).some(Boolean);
  const showOptions =
    anyOption || !!preflight?.nodes.some(n => n.refused.length > 0);

  // The servers the plan acts on, as the pre-flight counts them (those already at an
  // upgrade's target left out), for the intents that take machines down.
  const expectedCount =
    TYPED_COUNT_VERB[intent] !== undefined
      ? preflight?.typedCount ?? nodes.length
      : null;
  const countOk =
    expectedCount === null ||
    (typedCount.trim() !== '' && Number(typedCount) === expectedCount);
  const hazard = hazardNodesOf(preflight);
  const canSubmit =
    !!preflight &&
    preflight.canProceed &&
    acknowledged &&
    reason.trim().length > 0 &&
    countOk &&
    hazardNamesTyped(hazard, typedNames) &&
    !healthyForSecondsError(alertDraft) &&
    !busy;

  const submit = () => {
    if (!preflight) return;
    const healthyReturn = healthyReturnOf(alertDraft);
    const alertFields: Partial<PlanRequestBody> = {
      ...(alertGate ? { gates: { alerts: alertGate } } : {}),
      ...(healthyReturn ? { healthyReturn } : {}),
    };
    create({
      intent,
      nodes,
      maxParallel,
      ...installBody,
      ...alertFields,
      ...(anyOption ? { drain } : {}),
      reason,
      preflightToken: preflight.token,
      ...(expectedCount !== null ? { typedCount: Number(typedCount) } : {}),
      ...(hazard.length > 0
        ? { typedNames: hazard.map(n => typedNames[n]?.trim() ?? '') }
        : {}),
    });
  };

  const titleId = 'rackside-plan-dialog-title';
  return (
    <Dialog
      open
      onClose={() => onClose(created)}
      aria-labelledby={titleId}
      PaperProps={{ ...FOCUSABLE_PAPER, ref: focusRef }}
      fullWidth
      maxWidth="md"
      data-testid="plan-dialog"
    >
      <DialogTitle id={titleId}>
        {`Plan a rolling drain / reboot of ${nodes.length} server${
          nodes.length === 1 ? '' : 's'
        }`}
      </DialogTitle>
      <DialogContent>
        {created ? (
          <PlanCreated cluster={cluster} created={created} />
        ) : (
          <>
            <DialogContentText sx={{ mb: 2 }}>
              {`One server after another (${nodes.join(
                ', ',
              )}): workers first, at most the number below at a time, then control-plane members one at a time while the quorum allows. Before each next step the previous servers must be Ready and every disruption budget healthy.`}
            </DialogContentText>
            <PlanShapeFields
              intent={intent}
              intents={intents}
              onIntent={setIntent}
              maxParallel={maxParallel}
              onMaxParallel={setMaxParallel}
            />
            {install && (
              <InstallTargetField
                action={install}
                sources={sources}
                draft={draft}
                onChange={setDraft}
                target={target}
              />
            )}
            {install === 'firmware' && components.length > 0 && (
              <FirmwareComponentsField
                choices={components}
                checked={draft.targets}
                onChange={targets => setDraft({ ...draft, targets })}
              />
            )}
            <PlanPreflightStatus state={planPreflight} />
            <PlanAlertFields
              draft={alertDraft}
              onApply={setAlertDraft}
              alerts={preflight?.alerts}
            />
            {preflight && <PlanPreflightView preflight={preflight} />}
            {showOptions && (
              <PlanDrainOptions drain={drain} setDrain={setDrain} />
            )}
            {preflight?.canProceed && (
              <PlanCeremony
                intent={intent}
                expectedCount={expectedCount}
                reason={reason}
                setReason={setReason}
                reasonError={
                  error && error.status === 400 ? error.message : undefined
                }
                acknowledged={acknowledged}
                setAcknowledged={setAcknowledged}
                typedCount={typedCount}
                setTypedCount={setTypedCount}
                countOk={countOk}
                hazard={hazard}
                typedNames={typedNames}
                setTypedNames={setTypedNames}
              />
            )}
            {error && error.status !== 400 && <PlanErrorAlert error={error} />}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={() => onClose(created)}>Close</Button>
        {!created && (
          <Button
            variant="contained"
            color={intent === 'drain' ? 'primary' : 'warning'}
            disabled={!canSubmit}
            onClick={submit}
            data-testid="plan-submit"
          >
            {START[intent]}
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}
