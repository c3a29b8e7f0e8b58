import type { Dispatch, SetStateAction } from 'react';
import Box from '@mui/material/Box';
import Checkbox from '@mui/material/Checkbox';
import FormControl from '@mui/material/FormControl';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormHelperText from '@mui/material/FormHelperText';
import FormLabel from '@mui/material/FormLabel';
import Radio from '@mui/material/Radio';
import RadioGroup from '@mui/material/RadioGroup';
import TextField from '@mui/material/TextField';
import Typography from '@mui/material/Typography';
import type { PlanIntent } from '@rackside/plugin-servers-common';
import { ACKNOWLEDGEMENT, DRAIN_OPTIONS } from './ceremonyText';
import { HazardStepNames } from './HazardStepNames';
import { LIVE_HELPER_TEXT, ReasonField } from './ReasonField';

/** The drain options a plan applies to every step. */
export interface PlanDrainFlags {
  deleteEmptyDirData: boolean;
  force: boolean;
  allowNodeLocalData: boolean;
}

/** How each intent is offered in the plan dialog. */
export const PLAN_INTENT_LABELS: Record<PlanIntent, string> = {
  drain: 'Drain',
  reboot: 'Reboot',
  upgrade: 'Upgrade Talos',
  firmware: 'Update firmware',
};

/** What the requester types the count of, by intent (null: no typed count). */
export const TYPED_COUNT_VERB: Partial<Record<PlanIntent, string>> = {
  reboot: 'reboot',
  upgrade: 'upgrade',
  firmware: 'update',
};

/** The hint under the typed count: what typing it confirms. */
const COUNT_HINT: Partial<Record<PlanIntent, string>> = {
  reboot: 'Rebooting',
  upgrade: 'Upgrading',
  firmware: 'Updating the firmware of',
};

/** The plan's shape: what each server goes through, and how many at a time. */
export function PlanShapeFields(props: {
  intent: PlanIntent;
  /** The intents offered, in order (those the user may ask). */
  intents: readonly PlanIntent[];
  onIntent(intent: PlanIntent): void;
  maxParallel: number;
  onMaxParallel(n: number): void;
}) {
  const { intent, maxParallel } = props;
  return (
    <>
      <FormControl sx={{ mb: 2 }}>
        <FormLabel id="rackside-plan-intent">
          What each server goes through
        </FormLabel>
        <RadioGroup
          row
          aria-labelledby="rackside-plan-intent"
          value={intent}
          onChange={e => props.onIntent(e.target.value as PlanIntent)}
        >
          {props.intents.map(i => (
            <FormControlLabel
              key={i}
              value={i}
              control={<Radio />}
              label={PLAN_INTENT_LABELS[i]}
            />
          ))}
        </RadioGroup>
      </FormControl>
      <TextField
        label="At most this many at a time"
        type="number"
        value={maxParallel}
        onChange={e => {
          const n = Math.floor(Number(e.target.value));
          if (n >= 1 && n <= 100) props.onMaxParallel(n);
        }}
        inputProps={{
          min: 1,
          max: 100,
          'data-testid': 'plan-max-parallel',
        }}
        sx={{ mb: 2, display: 'block' }}
      />
    </>
  );
}

/** The drain options, for every step of the plan (as the single drain words them). */
export function PlanDrainOptions(props: {
  drain: PlanDrainFlags;
  setDrain: Dispatch<SetStateAction<PlanDrainFlags>>;
}) {
  const { drain, setDrain } = props;
  return (
    <Box mb={2} data-testid="plan-drain-options">
      <Typography variant="subtitle2" component="h3">
        Drain options of every step
      </Typography>
      {DRAIN_OPTIONS.map(o => (
        <Box key={o.option}>
          <FormControlLabel
            control={
              <Checkbox
                checked={drain[o.option]}
                onChange={e =>
                  setDrain(d => ({
                    ...d,
                    [o.option]: e.target.checked,
                  }))
                }
                inputProps={{
                  'aria-describedby': `rackside-plan-option-${o.option}`,
                }}
              />
            }
            label={o.label.replace('this node', 'its server')}
          />
          <FormHelperText
            id={`rackside-plan-option-${o.option}`}
            sx={{ mt: -1, ml: 4 }}
            error
          >
            {o.warning.replace('this node', 'the server')}
          </FormHelperText>
        </Box>
      ))}
    </Box>
  );
}

/**
 * The ceremony before a plan starts: a reason, the acknowledgement, for reboots,
 * upgrades and firmware updates the number of servers typed (those the plan acts on, as
 * the pre-flight counts them), and the name of each hazardous step's server.
 */
export function PlanCeremony(props: {
  intent: PlanIntent;
  /** The number to type (the pre-flight's typedCount); null: none. */
  expectedCount: number | null;
  reason: string;
  setReason(reason: string): void;
  reasonError?: string;
  acknowledged: boolean;
  setAcknowledged(acknowledged: boolean): void;
  typedCount: string;
  setTypedCount(typed: string): void;
  countOk: boolean;
  hazard: string[];
  typedNames: Record<string, string>;
  setTypedNames(typed: Record<string, string>): void;
}) {
  const {
    intent,
    expectedCount,
    reason,
    setReason,
    acknowledged,
    setAcknowledged,
    typedCount,
    setTypedCount,
    countOk,
    hazard,
    typedNames,
    setTypedNames,
  } = props;
  const countId = 'rackside-plan-typed-count';
  return (
    <>
      <ReasonField
        value={reason}
        onChange={setReason}
        error={props.reasonError}
        testId="plan-reason"
      />
      <FormControlLabel
        control={
          <Checkbox
            checked={acknowledged}
            onChange={e => setAcknowledged(e.target.checked)}
            inputProps={
              {
                'data-testid': 'plan-acknowledge',
              } as React.InputHTMLAttributes<HTMLInputElement>
            }
          />
        }
        label={ACKNOWLEDGEMENT}
      />
      {expectedCount !== null && (
        <TextField
          id={countId}
          label={`Type the number of servers to ${
            TYPED_COUNT_VERB[intent] ?? intent
          } (${expectedCount})`}
          value={typedCount}
          onChange={e => setTypedCount(e.target.value)}
          required
          fullWidth
          error={typedCount !== '' && !countOk}
          helperText={
            typedCount !== '' && !countOk
              ? `That is not ${expectedCount}.`
              : `${
                  COUNT_HINT[intent] ?? 'Acting on'
                } many servers is confirmed by typing how many.`
          }
          FormHelperTextProps={LIVE_HELPER_TEXT}
          inputProps={{
            inputMode: 'numeric',
            'data-testid': 'plan-typed-count',
          }}
          sx={{ mt: 2 }}
        />
      )}
      <HazardStepNames
        hazard={hazard}
        typed={typedNames}
        onChange={setTypedNames}
      />
    </>
  );
}
