import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { AddNodePage } from '../AddNodePage';
import { ServersLinksProvider } from '../links';
import { useNfsLinks } from './useNfsLinks';

/** The Add node page in the new frontend system (see NfsServersPage). */
export function NfsAddNodePage() {
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <AddNodePage />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}
