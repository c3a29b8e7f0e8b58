import { AddNodePage } from '../components/AddNodePage';
import { NfsPageFrame } from './NfsPageFrame';

/** The Add node page in the new frontend system (see NfsServersPage). */
export function NfsAddNodePage() {
  return (
    <NfsPageFrame>
      <AddNodePage />
    </NfsPageFrame>
  );
}
