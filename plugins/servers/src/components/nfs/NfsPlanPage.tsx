import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { useRouteRefParams } from '@backstage/frontend-plugin-api';
import { planRouteRef } from '../../routes';
import { ServersLinksProvider } from '../links';
import { PlanPage } from '../plans/PlanPage';
import { useNfsLinks } from './useNfsLinks';

/** A maintenance plan's page in the new frontend system (see NfsServersPage). */
export function NfsPlanPage() {
  const { cluster, name } = useRouteRefParams(planRouteRef);
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <PlanPage cluster={cluster} name={name} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}
