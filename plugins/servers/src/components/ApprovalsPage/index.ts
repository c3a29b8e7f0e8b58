export { ApprovalsPage } from './ApprovalsPage';
