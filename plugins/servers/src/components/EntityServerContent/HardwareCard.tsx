import { useApi } from '@backstage/core-plugin-api';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Chip from '@mui/material/Chip';
import Stack from '@mui/material/Stack';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import {
  hardwareReadingState,
  type ServerHealthDetail,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import { useEffect, useRef, useState } from 'react';
import { describeError, serversApiRef } from '../../api';
import { chipLabelSx } from '../ui/chips';
import { healthTone, readingAge } from '../ui/healthText';
import { LogEntriesTable } from '../ui/LogEntriesTable';

/** How often, and how many times, the card reads the server again after a Refresh. */
const ANSWER_CHECK_MS = 5_000;
const ANSWER_CHECKS = 12;

function Reading({ health }: { health: ServerHealthDetail }) {
  // Too old to count (servers-common's rule, the one the typed-name rung applies): say so,
  // and what it asks of a return to service. A failed reading says its error below.
  const known = hardwareReadingState(health, Date.now());
  return (
    <Stack gap={2}>
      {known.state === 'unknown' && !health.error && (
        <Alert severity="warning" data-testid="hardware-unknown">
          {known.reason}: returning this server to service asks for its name
          typed out.
        </Alert>
      )}
      {health.error && (
        <Alert severity="warning">
          The last reading failed: {health.error}
        </Alert>
      )}
      {health.missing.length > 0 && (
        <Typography variant="body2" color="text.secondary">
          This BMC does not offer: {health.missing.join(', ')}.
        </Typography>
      )}
      <Typography variant="subtitle2" component="h3">
        Failed parts
      </Typography>
      {health.parts.length === 0 ? (
        <Typography variant="body2">Every part reads OK.</Typography>
      ) : (
        <Table size="small" aria-label="Failed parts">
          <TableHead>
            <TableRow>
              <TableCell>Part</TableCell>
              <TableCell>Kind</TableCell>
              <TableCell>Health</TableCell>
              <TableCell>State</TableCell>
              <TableCell>Message</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {health.parts.map(part => (
              <TableRow key={`${part.kind}-${part.name}`}>
                <TableCell>{part.name}</TableCell>
                <TableCell>{part.kind}</TableCell>
                <TableCell>{part.health}</TableCell>
                <TableCell>{part.state ?? '—'}</TableCell>
                <TableCell>{part.message ?? ''}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
      <Typography variant="subtitle2" component="h3">
        Event log
      </Typography>
      {health.logEntries.length === 0 ? (
        <Typography variant="body2">No log entries.</Typography>
      ) : (
        <LogEntriesTable entries={health.logEntries} label="Event log" />
      )}
      {health.logEntriesSkipped ? (
        <Typography variant="body2">
          {health.logEntriesSkipped.toLocaleString('en-US')} older{' '}
          {health.logEntriesSkipped === 1 ? 'entry was' : 'entries were'} not
          read: the log is longer than a reading goes through.
        </Typography>
      ) : null}
      <Typography variant="subtitle2" component="h3">
        Firmware
      </Typography>
      {health.firmware.length === 0 ? (
        <Typography variant="body2">No firmware inventory.</Typography>
      ) : (
        <Table size="small" aria-label="Firmware">
          <TableHead>
            <TableRow>
              <TableCell>Component</TableCell>
              <TableCell>Version</TableCell>
              <TableCell>Updateable</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {health.firmware.map(component => (
              <TableRow key={component.name}>
                <TableCell>{component.name}</TableCell>
                <TableCell>{component.version}</TableCell>
                <TableCell>{component.updateable ? 'Yes' : 'No'}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
      {health.firmwareHistory && health.firmwareHistory.length > 0 && (
        <FirmwareHistory entries={health.firmwareHistory} />
      )}
    </Stack>
  );
}

/** A component as a history row names it: the last segment of its link. */
function componentName(id: string): string {
  return id.replace(/\/+$/, '').split('/').pop() || id;
}

/**
 * The firmware updates of this BMC that ended (ServerBMC.status.firmwareHistory), newest
 * first: when, which maintenance, the image, the result, and each component's versions.
 */
function FirmwareHistory({
  entries,
}: {
  entries: NonNullable<ServerHealthDetail['firmwareHistory']>;
}) {
  return (
    <>
      <Typography variant="subtitle2" component="h3">
        Firmware updates
      </Typography>
      <Table size="small" aria-label="Firmware updates">
        <TableHead>
          <TableRow>
            <TableCell>Ended</TableCell>
            <TableCell>Maintenance</TableCell>
            <TableCell>Image</TableCell>
            <TableCell>Result</TableCell>
            <TableCell>Versions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {[...entries].reverse().map(entry => (
            <TableRow key={entry.uid ?? `${entry.maintenance}-${entry.at}`}>
              <TableCell>{new Date(entry.at).toLocaleString()}</TableCell>
              <TableCell>{entry.maintenance}</TableCell>
              <TableCell sx={{ wordBreak: 'break-all' }}>
                {entry.imageURI}
              </TableCell>
              <TableCell>{entry.result}</TableCell>
              <TableCell>
                {entry.components.length === 0
                  ? '—'
                  : entry.components
                      .map(
                        c =>
                          `${componentName(c.id)} ${c.before ?? '?'} → ${
                            c.after ?? '?'
                          }`,
                      )
                      .join(', ')}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </>
  );
}

/**
 * What the server's BMC last said (ServerBMC.status.health, read by the operator): the
 * rollup and its age, the failed parts, the event log and the firmware, and Refresh,
 * which asks the operator for a reading now (at most once a minute a server; the
 * backend's 429 says when again). After a Refresh the card reads the server again a
 * few times until the operator's answer is there; nothing else polls.
 */
export function HardwareCard(props: {
  server: ServerResponse;
  /** Reads the server again (the answer to a Refresh). */
  reload(): void;
  /** How long after a Refresh (and after each read that did not answer it) to read again. */
  answerCheckMs?: number;
}) {
  const { server, reload, answerCheckMs = ANSWER_CHECK_MS } = props;
  const api = useApi(serversApiRef);
  const health = server.health;
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<
    { severity: 'info' | 'warning' | 'error'; text: string } | undefined
  >();
  const [waitingFor, setWaitingFor] = useState<string | undefined>();
  const checks = useRef(0);

  // After a Refresh: read again until the reading answers the request (bounded).
  const answered =
    waitingFor !== undefined && health?.answeredRequestAt === waitingFor;
  useEffect(() => {
    if (waitingFor === undefined || answered) return undefined;
    if (checks.current >= ANSWER_CHECKS) return undefined;
    const timer = setTimeout(() => {
      checks.current++;
      reload();
    }, answerCheckMs);
    return () => clearTimeout(timer);
  }, [waitingFor, answered, reload, server, answerCheckMs]);

  const refresh = async () => {
    setBusy(true);
    setNotice(undefined);
    try {
      const { requestedAt } = await api.requestHealthRefresh(
        server.cluster,
        server.name,
      );
      checks.current = 0;
      setWaitingFor(requestedAt);
      setNotice({
        severity: 'info',
        text: `Reading requested at ${new Date(
          requestedAt,
        ).toLocaleTimeString()}; the operator reads the BMC and this card shows its answer.`,
      });
    } catch (error) {
      const described = describeError(error);
      setNotice({
        severity: described.status === 429 ? 'warning' : 'error',
        text: described.message,
      });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card variant="outlined" data-testid="entity-server-hardware">
      <CardContent>
        <Stack direction="row" alignItems="center" gap={1} mb={1}>
          <Typography variant="h6" component="h2" flexGrow={1}>
            Hardware
          </Typography>
          <Button
            size="small"
            variant="outlined"
            onClick={refresh}
            disabled={busy}
          >
            Refresh
          </Button>
        </Stack>
        {notice && (
          <Alert severity={notice.severity} sx={{ mb: 2 }}>
            {notice.text}
          </Alert>
        )}
        {!health ? (
          <Typography variant="body2" color="text.secondary">
            No reading from this server&apos;s BMC yet.
          </Typography>
        ) : (
          <Stack gap={2}>
            <Stack direction="row" alignItems="center" gap={1}>
              <Chip
                size="small"
                data-testid="hardware-rollup"
                label={health.rollup}
                color={healthTone(health.rollup)}
                sx={chipLabelSx(healthTone(health.rollup))}
              />
              <Typography variant="body2">
                {health.readAt
                  ? `read ${readingAge(health.readAt, Date.now())} (${new Date(
                      health.readAt,
                    ).toLocaleString()})`
                  : 'not read yet'}
                {health.state ? ` · ${health.state}` : ''}
              </Typography>
            </Stack>
            {answered && (
              <Typography variant="body2" color="text.secondary">
                This reading answers the refresh you requested.
              </Typography>
            )}
            <Reading health={health} />
          </Stack>
        )}
      </CardContent>
    </Card>
  );
}
