import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type {
  MaintenanceFirmware,
  MaintenancePhase,
  MaintenanceResponse,
  MaintenanceUpgrade,
} from '@rackside/plugin-servers-common';
import { formatTime } from '../ui/maintenanceText';
import { firmwareChanges } from '../ui/versionsText';
import { Section } from './MaintenanceSection';

/** One step of an upgrade as the page lists it. */
export interface InstallStep {
  label: string;
  state: 'done' | 'now' | 'waiting' | 'failed';
  /** When it happened, or what it waits for. */
  detail?: string;
}

/** The phases before the node is drained. */
const BEFORE_DRAINED: readonly MaintenancePhase[] = [
  'AwaitingApproval',
  'Requested',
  'Cordoned',
  'Draining',
];

/**
 * How far a Talos upgrade went (docs/upgrades.md, "What each state means"): drained, the
 * upgrade recorded (the versions written before anything is sent), Talos's answer, the
 * node back on a version, and returned to service.
 */
export function upgradeSteps(
  phase: MaintenancePhase,
  upgrade: MaintenanceUpgrade,
): InstallStep[] {
  const status = upgrade.status;
  const failed = phase === 'Failed' || phase === 'Refused';
  const drained = !BEFORE_DRAINED.includes(phase) && phase !== 'Refused';
  const step = (
    label: string,
    done: boolean,
    detail?: string,
  ): InstallStep => ({ label, state: done ? 'done' : 'waiting', detail });
  const steps: InstallStep[] = [
    step('Drained', drained || !!status),
    step('Upgrade recorded (sent at most once)', !!status),
    step(
      'Accepted by Talos',
      !!status?.sentAt,
      status?.sentAt && `at ${formatTime(status.sentAt)}`,
    ),
    step(
      'Back with a new boot',
      !!status?.cameBackOn,
      status?.cameBackOn && `on ${status.cameBackOn}`,
    ),
    step('Returned to service', phase === 'Complete'),
  ];
  // The first step not done is where it is now, or where it stopped.
  const current = steps.find(s => s.state === 'waiting');
  if (current) current.state = failed ? 'failed' : 'now';
  return steps;
}

const STATE_WORDS: Record<InstallStep['state'], string> = {
  done: 'done',
  now: 'in progress',
  waiting: 'not yet',
  failed: 'stopped here',
};

function Steps(props: { steps: InstallStep[]; label: string }) {
  return (
    <List dense disablePadding aria-label={props.label}>
      {props.steps.map(s => (
        <ListItem
          key={s.label}
          disableGutters
          data-testid="install-step"
          data-state={s.state}
        >
          <ListItemText
            primary={`${s.label}: ${STATE_WORDS[s.state]}`}
            secondary={s.detail}
            primaryTypographyProps={{
              fontWeight: s.state === 'now' ? 'bold' : undefined,
              color: s.state === 'failed' ? 'error' : undefined,
            }}
          />
        </ListItem>
      ))}
    </List>
  );
}

function UpgradeProgress(props: {
  phase: MaintenancePhase;
  upgrade: MaintenanceUpgrade;
}) {
  const { phase, upgrade } = props;
  const status = upgrade.status;
  // A node that came back on another version than the target: Talos rolled back.
  const rolledBack =
    !!status?.cameBackOn && status.cameBackOn !== status.toVersion;
  return (
    <Section title="Talos upgrade" testId="maintenance-upgrade">
      <Typography
        variant="body2"
        sx={{ wordBreak: 'break-all' }}
        data-testid="maintenance-upgrade-image"
      >
        Image: <code>{upgrade.request.image}</code>
        {upgrade.request.stage ? ' (staged)' : ''}
        {upgrade.request.force ? " (forced: Talos's etcd check skipped)" : ''}
      </Typography>
      <Typography variant="body1" data-testid="maintenance-upgrade-versions">
        {status
          ? `Before: ${status.fromVersion ?? 'no version reported'} · Target: ${
              status.toVersion
            } · After: ${status.cameBackOn ?? 'not back yet'}`
          : 'Nothing recorded yet: the versions are written once the node is drained, right before the upgrade is sent.'}
      </Typography>
      {rolledBack && (
        <Typography
          variant="body2"
          color="error"
          data-testid="maintenance-upgrade-rollback"
        >
          {`Came back on ${status!.cameBackOn}, not ${
            status!.toVersion
          }: Talos rolled the upgrade back.`}
        </Typography>
      )}
      <Steps
        steps={upgradeSteps(phase, upgrade)}
        label="Progress of the upgrade"
      />
    </Section>
  );
}

function FirmwareProgress(props: { firmware: MaintenanceFirmware }) {
  const { request, status } = props.firmware;
  const rows = status ? firmwareChanges(status.before, status.after) : [];
  return (
    <Section title="Firmware update" testId="maintenance-firmware">
      <Typography
        variant="body2"
        sx={{ wordBreak: 'break-all' }}
        data-testid="maintenance-firmware-image"
      >
        Image URI: <code>{request.imageURI}</code>
        {` · applied ${
          request.applyTime === 'OnReset'
            ? 'at the reset Rackside sends once the task completes'
            : 'when the task completes'
        }`}
        {request.targets?.length
          ? ` · components: ${request.targets.join(', ')}`
          : ''}
      </Typography>
      {!status ? (
        <Typography variant="body2" color="text.secondary">
          Nothing recorded yet: the firmware is read once the node is drained,
          right before the update is sent.
        </Typography>
      ) : (
        <>
          <Box my={1} data-testid="maintenance-firmware-task">
            <Typography variant="body2">
              {status.taskState
                ? `The BMC's task: ${status.taskState}${
                    status.percent !== undefined ? `, ${status.percent} %` : ''
                  }${
                    status.checkedAt
                      ? ` (read ${formatTime(status.checkedAt)})`
                      : ''
                  }`
                : 'The BMC has not started a task yet.'}
            </Typography>
            {status.percent !== undefined && (
              <LinearProgress
                variant="determinate"
                value={status.percent}
                aria-label="The BMC's task"
                sx={{ mt: 0.5, maxWidth: 360 }}
              />
            )}
            {status.messages?.map((message, i) => (
              <Typography key={i} variant="body2" color="text.secondary">
                {message}
              </Typography>
            ))}
          </Box>
          <Table size="small" aria-label="Firmware before and after">
            <TableHead>
              <TableRow>
                <TableCell>Component</TableCell>
                <TableCell>Before</TableCell>
                <TableCell>After</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {rows.map(row => (
                <TableRow key={row.name} data-changed={row.changed}>
                  <TableCell>{row.name}</TableCell>
                  <TableCell>{row.before ?? '—'}</TableCell>
                  <TableCell>
                    {row.after ?? 'not read yet'}
                    {row.changed ? ' (changed)' : ''}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      )}
    </Section>
  );
}

/**
 * What an upgrade or a firmware update did (status.upgrade, status.firmware): the target,
 * the versions before and after, and how far it went. Absent on other maintenances.
 */
export function InstallSection(props: { maintenance: MaintenanceResponse }) {
  const m = props.maintenance;
  return (
    <>
      {m.upgrade && <UpgradeProgress phase={m.phase} upgrade={m.upgrade} />}
      {m.firmware && <FirmwareProgress firmware={m.firmware} />}
    </>
  );
}
