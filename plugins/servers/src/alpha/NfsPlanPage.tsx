import { useRouteRefParams } from '@backstage/frontend-plugin-api';
import { planRouteRef } from '../routes';
import { PlanPage } from '../components/PlanPage';
import { NfsPageFrame } from './NfsPageFrame';

/** A maintenance plan's page in the new frontend system (see NfsServersPage). */
export function NfsPlanPage() {
  const { cluster, name } = useRouteRefParams(planRouteRef);
  return (
    <NfsPageFrame>
      <PlanPage cluster={cluster} name={name} />
    </NfsPageFrame>
  );
}
