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
} from './client';
export type { components, operations, paths } from './openapi';
export { DeliveryVerificationError, verifyDelivery, type PartnerEvent } from './webhooks';
