import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { useRouteRefParams } from '@backstage/frontend-plugin-api';
import { maintenanceRouteRef } from '../../routes';
import { ServersLinksProvider } from '../links';
import { MaintenancePage } from '../MaintenancePage';
import { useNfsLinks } from './useNfsLinks';

/** A maintenance's page in the new frontend system (see NfsServersPage). */
export function NfsMaintenancePage() {
  const { cluster, name } = useRouteRefParams(maintenanceRouteRef);
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <MaintenancePage cluster={cluster} name={name} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}
