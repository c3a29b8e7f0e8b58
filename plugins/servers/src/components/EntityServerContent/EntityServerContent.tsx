import { useEntity } from '@backstage/plugin-catalog-react';
import Alert from '@mui/material/Alert';
import Button from '@mui/material/Button';
import LinearProgress from '@mui/material/LinearProgress';
import Stack from '@mui/material/Stack';
import { useMemo } from 'react';
import { ActionsCard } from './ActionsCard';
import { HardwareCard } from './HardwareCard';
import { MaintenanceCard } from './MaintenanceCard';
import { StateCard } from './StateCard';
import { serverTargetOf } from './annotations';
import { useEntityServer } from './useEntityServer';

/**
 * The Server tab of a catalog entity annotated `rackside.dev/node` (and
 * `rackside.dev/cluster`): the server's state, its maintenance, what its BMC
 * says of the hardware, and the actions the signed-in user may request. Requests are made on the Servers
 * page, where their ceremony lives.
 */
export function EntityServerContent(props: {
  /** Where the Servers page is mounted; default `/servers`. */
  serversPath?: string;
}) {
  const { entity } = useEntity();
  const target = useMemo(() => serverTargetOf(entity), [entity]);
  const { value, error, loading, reload } = useEntityServer(target);
  return (
    <Stack gap={2} data-testid="entity-server-content">
      {loading && !value && <LinearProgress aria-label="loading the server" />}
      {error !== undefined && (
        <Alert
          severity="error"
          action={
            <Button color="inherit" size="small" onClick={reload}>
              Retry
            </Button>
          }
        >
          {error instanceof Error ? error.message : String(error)}
        </Alert>
      )}
      {value && (
        <>
          <StateCard {...value} />
          <MaintenanceCard server={value.server} />
          <HardwareCard server={value.server} reload={reload} />
          <ActionsCard
            server={value.server}
            serversPath={props.serversPath ?? '/servers'}
          />
        </>
      )}
    </Stack>
  );
}
