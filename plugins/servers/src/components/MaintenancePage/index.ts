export { MaintenancePage } from './MaintenancePage';
