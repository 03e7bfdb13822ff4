export {
  ApiError,
  PartnerApiClient,
  type ApiResponse,
  type ClientOptions,
  type ErrorBody,
  type ListItem,
  type ListPath,
  type PathsFor,
  type SuccessBody,
} from './client.js';
export type { components, operations, paths } from './openapi.js';
export { DeliveryVerificationError, verifyDelivery, type PartnerEvent } from './webhooks.js';
