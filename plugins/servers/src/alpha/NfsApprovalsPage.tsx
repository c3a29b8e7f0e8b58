import { ApprovalsPage } from '../components/ApprovalsPage';
import { NfsPageFrame } from './NfsPageFrame';

/** The Approvals for me page in the new frontend system (see NfsServersPage). */
export function NfsApprovalsPage() {
  return (
    <NfsPageFrame>
      <ApprovalsPage />
    </NfsPageFrame>
  );
}
