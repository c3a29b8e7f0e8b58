export { RedfishClient } from './RedfishClient';
export type {
  RedfishClientOptions,
  RedfishCredentials,
  RedfishReadOptions,
  RedfishResetAction,
  RedfishResetResult,
  RedfishTlsOptions,
} from './RedfishClient';
export { RedfishError } from './errors';
export { BmcRateLimiter } from './rateLimit';
export type { LimiterClock } from './rateLimit';
export {
  chooseResetType,
  readPowerState,
  RESET_TYPE_PREFERENCES,
} from './resetTypes';
export { RedfishPowerChannel } from './RedfishPowerChannel';
export type {
  RedfishBmcTarget,
  RedfishPowerChannelOptions,
} from './RedfishPowerChannel';
export { BmcHealthReader, LOG_PAGE_BUDGET, worstHealth } from './readHealth';
export type {
  BmcHealthReading,
  BmcHealthSummary,
  BmcReadingOptions,
} from './readHealth';
export {
  DEFAULT_FIRMWARE_READ_DEADLINE_MS,
  multipartUpdateBody,
  offerOf,
  readTask,
  RedfishFirmwareUpdater,
} from './firmwareUpdate';
export type {
  FirmwareImage,
  FirmwareUpdateAccepted,
  RedfishFirmwareOffer,
} from './firmwareUpdate';
export { RedfishRawBody } from './RedfishClient';
export type { RedfishActionAnswer } from './RedfishClient';
export {
  fetchFirmwareImage,
  firmwareImageChecksum,
  MAX_FIRMWARE_IMAGE_BYTES,
  sha256Of,
} from './firmwareImage';
export type {
  FirmwareImageFetchOptions,
  FirmwareSourceCredentials,
} from './firmwareImage';
