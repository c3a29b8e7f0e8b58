import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { ServersLinksProvider } from '../links';
import type { PageStart } from '../pageStart';
import { ServersPage } from '../ServersPage';
import { useNfsLinks } from './useNfsLinks';

/*
 * The page wrappers of the new frontend system, a module each (its own chunk):
 * each resolves the plugin's route refs with the system's hook and hands the
 * links to the shared components through ServersLinksProvider. The shared
 * components link with React Router v6, so the pages declare its adapter.
 */

/**
 * The Servers page in the new frontend system; `start` holds the requests its
 * loader made (alpha.tsx).
 */
export function NfsServersPage(props: { start?: PageStart }) {
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        <ServersPage start={props.start} />
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}
