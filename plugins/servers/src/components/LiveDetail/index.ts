export { LiveDetail, type LiveDetailProps } from './LiveDetail';
