export {
  ApiError,
  PartnerApiClient,
  type ApiResponse,
  type ClientOptions,
  type ErrorBody,
  type ExportRequest,
  type Exportacion,
  type ListItem,
  type ListPath,
  type PathsFor,
  type SuccessBody,
  type WaitOptions,
} from './client.js';
export type { components, operations, paths } from './openapi.js';
export { DeliveryVerificationError, verifyDelivery, type DeliveredEvent, type PartnerEvent } from './webhooks.js';
