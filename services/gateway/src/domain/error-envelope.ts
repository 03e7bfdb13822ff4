import type { AppError, ErrorCode, ErrorDetails, ErrorEnvelope, Reason } from '@erp/contracts';

/** The one table from error codes to HTTP statuses. */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  BUSINESS_RULE: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
};

export const MESSAGES = {
  unauthorized: 'API key inválido o empresa inactiva',
  insufficientScope: (scope: string) => `El API key no tiene el alcance ${scope}`,
  insufficientScopeDetail: (scope: string) =>
    `Esta operación necesita ${scope}${scope.endsWith(':read') ? ` (o ${scope.replace(':read', ':write')})` : ''}: use un API key que lo tenga`,
  missingKeyDetail: 'Falta el encabezado: envíe Authorization: Bearer <API key>',
  malformedKeyDetail: 'Debe ser «Bearer» seguido del API key',
  rateLimited: 'Rate limit excedido. Máximo 1000 requests por hora (2000 con filtros de fecha).',
  tooManyAuthFailures: 'Demasiados intentos de autenticación fallidos desde esta dirección; reintente después de Retry-After',
  internal: 'Error interno del servidor',
  routeNotFound: 'Ruta no encontrada',
  methodNotAllowed: 'Método no permitido',
  invalidParams: 'Parámetros inválidos',
  invalidBody: 'Datos inválidos',
  malformedJson: 'El cuerpo de la solicitud no es JSON válido',
  malformedJsonDetail: 'No se pudo interpretar el cuerpo como JSON: revise su sintaxis',
  malformedPathDetail: 'La ruta contiene una secuencia de escape (%) inválida',
  jsonTooDeep: 'El cuerpo de la solicitud anida demasiados niveles',
  jsonTooDeepDetail: 'El JSON anida más de 64 niveles de objetos o listas',
  nulCharacter: 'No puede contener el carácter nulo (U+0000)',
  loneSurrogate: 'Contiene un sustituto UTF-16 sin pareja (U+D800 a U+DFFF): no es texto Unicode válido',
  repeatedParam: 'Se envió más de una vez: debe enviarse una sola vez',
  bracketedParam: 'Los nombres de parámetro no llevan corchetes: envíe nombre=valor',
  uriTooLong: 'La URL supera el máximo de 8 KB',
  headersTooLarge: 'Los encabezados de la solicitud superan el máximo de 16 KB',
  malformedHttp: 'La solicitud HTTP está mal formada',
  bodyTooLarge: 'El cuerpo de la solicitud supera el máximo de 1 MB',
  unsupportedMediaType: 'El contenido debe enviarse como application/json',
  overloaded: 'El servidor está atendiendo demasiadas solicitudes; reintente después de Retry-After',
  malformedRange: 'Debe ser bytes=<inicio>-[<fin>], por ejemplo bytes=1048576- para seguir una descarga',
  rangeNotSatisfiable: (size: number) => `El rango pedido no está dentro del archivo de ${size} bytes`,
  rangeNotSatisfiableDetail: 'Pida un solo rango bytes=<inicio>-[<fin>] con el inicio antes del final del archivo',
  invalidIdempotencyKey: 'Encabezado Idempotency-Key inválido',
  idempotencyKeyReused: 'El Idempotency-Key ya se usó con otra solicitud',
  idempotencyKeyReusedDetail:
    'Se usó en las últimas 24 horas con otro método, ruta o cuerpo; la primera solicitud no se repite: envíe otra clave para otra solicitud',
  idempotencyKeyRunning: 'La primera solicitud con este Idempotency-Key aún está en curso; reintente después de Retry-After',
} as const;

/** Seconds a client should wait before retrying a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;
/** Seconds a client should wait before retrying a request refused because the gateway was full. */
export const OVERLOADED_RETRY_AFTER_SECONDS = 1;

/** The envelope of a refusal: `code` always equals the HTTP status, `reason` says the cause for programs. */
export function errorEnvelope(status: number, reason: Reason, message: string, details?: ErrorDetails): ErrorEnvelope {
  return { success: false, error: message, code: status, reason, ...(details ? { details } : {}) };
}

/** The status and envelope of an error a service (or the gateway's own code) threw; a 500 says nothing of its cause. */
export function appErrorAnswer(err: AppError): { status: number; body: ErrorEnvelope } {
  const status = STATUS_BY_CODE[err.code];
  return status === 500
    ? { status, body: errorEnvelope(status, 'error_interno', MESSAGES.internal) }
    : { status, body: errorEnvelope(status, err.reason, err.message, err.details) };
}
