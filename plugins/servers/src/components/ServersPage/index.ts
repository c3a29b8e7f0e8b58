export { ServersPage } from './ServersPage';
