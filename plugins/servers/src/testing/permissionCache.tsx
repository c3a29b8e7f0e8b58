import type { ReactNode } from 'react';
import { SWRConfig } from 'swr';

/**
 * A fresh cache for `usePermission` (`@backstage/plugin-permission-react`),
 * which keeps its answers in SWR's global cache: around a test's element, the
 * test sees its own permission API's answers, never those of the test before.
 */
export function FreshPermissionAnswers(props: { children: ReactNode }) {
  return (
    <SWRConfig value={{ provider: () => new Map() }}>
      {props.children}
    </SWRConfig>
  );
}
