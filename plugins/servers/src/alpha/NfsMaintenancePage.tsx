import { useRouteRefParams } from '@backstage/frontend-plugin-api';
import { maintenanceRouteRef } from '../routes';
import { MaintenancePage } from '../components/MaintenancePage';
import { NfsPageFrame } from './NfsPageFrame';

/** A maintenance's page in the new frontend system (see NfsServersPage). */
export function NfsMaintenancePage() {
  const { cluster, name } = useRouteRefParams(maintenanceRouteRef);
  return (
    <NfsPageFrame>
      <MaintenancePage cluster={cluster} name={name} />
    </NfsPageFrame>
  );
}
