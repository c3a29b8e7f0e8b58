import { createContext, useContext, type ReactNode } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import MuiLink from '@mui/material/Link';

/**
 * Where the plugin's own pages are, as the app mounted them. The legacy and the
 * new frontend system resolve route refs with different hooks, so each
 * system's page wrapper resolves them and hands the results down here; the
 * shared components only ask this context.
 */
export interface ServersLinks {
  /** The Servers page. */
  servers?: () => string;
  /** The detail page of one maintenance. */
  maintenance?: (cluster: string, name: string) => string;
  /** The page of one maintenance plan. */
  plan?: (cluster: string, name: string) => string;
  /** The Add node page. */
  addNode?: () => string;
  /** The Approvals for me page. */
  approvals?: () => string;
}

const ServersLinksContext = createContext<ServersLinks>({});

/** Provides the plugin's links to the components below. */
export function ServersLinksProvider(props: {
  links: ServersLinks;
  children: ReactNode;
}) {
  return (
    <ServersLinksContext.Provider value={props.links}>
      {props.children}
    </ServersLinksContext.Provider>
  );
}

/** The plugin's links; a link the app did not mount is absent. */
export function useServersLinks(): ServersLinks {
  return useContext(ServersLinksContext);
}

/**
 * An in-app link: MUI's look, the router's navigation (no page reload). Always
 * underlined: links sit in running text, where colour alone does not set them
 * apart (axe link-in-text-block).
 */
export function AppLink(props: {
  to: string;
  children: ReactNode;
  'aria-label'?: string;
}) {
  const { to, children, ...rest } = props;
  return (
    <MuiLink component={RouterLink} to={to} underline="always" {...rest}>
      {children}
    </MuiLink>
  );
}
