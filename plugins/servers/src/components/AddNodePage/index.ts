export { AddNodePage } from './AddNodePage';
