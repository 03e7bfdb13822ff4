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
} from './client';
export type { components, operations, paths } from './openapi';
export { DeliveryVerificationError, verifyDelivery, type PartnerEvent } from './webhooks';
