import type { ReactNode } from 'react';
import { ReactRouterV6PageRouter } from '@backstage/frontend-adapter-react-router-v6';
import { ServersLinksProvider } from '../components/ui/links';
import { useNfsLinks } from './useNfsLinks';

/**
 * What every page of the new frontend system wraps its shared component in:
 * the links from the system's own route refs, and React Router v6's adapter,
 * which the shared components link with.
 */
export function NfsPageFrame(props: { children: ReactNode }) {
  return (
    <ReactRouterV6PageRouter>
      <ServersLinksProvider links={useNfsLinks()}>
        {props.children}
      </ServersLinksProvider>
    </ReactRouterV6PageRouter>
  );
}
