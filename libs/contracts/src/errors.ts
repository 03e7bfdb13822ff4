import { z } from 'zod';

/**
 * The closed set of error codes that travel between services and reach the gateway.
 * The gateway maps each code to exactly one HTTP status (`STATUS_BY_CODE` in its error envelope).
 */
export const ERROR_CODES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_FAILED',
  'BUSINESS_RULE',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
  'TIMEOUT',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Why a request was refused, for programs: one stable value per cause, beside the HTTP status
 * (`code`) and the message for people. Closed: a partner may switch on it, so a value is never
 * renamed or reused for another cause, and each is documented in the OpenAPI document with the
 * meaning written here.
 */
export const REASONS = {
  parametro_desconocido: 'Un parámetro de consulta que la operación no admite (400); `details` lo nombra.',
  parametro_invalido: 'Un parámetro de ruta o de consulta con un valor inválido, repetido o una combinación no admitida (400).',
  json_invalido: 'El cuerpo no es JSON válido, está vacío o anida demasiados niveles (400).',
  campo_desconocido:
    'El cuerpo lleva un campo que la operación no admite (422; 400 en `POST /packages/import` y, fuera de las ventas, en `POST /sales/batch`, donde el de una venta es el 422 de su resultado); `details` lo nombra por su ruta, p. ej. `detalles.0.cantida`.',
  cuerpo_invalido: 'Un campo del cuerpo falta o tiene un valor inválido (422; 400 en `POST /packages/import`); `details` lo nombra.',
  clave_ausente: 'No se envió el encabezado `Authorization` (401).',
  clave_malformada: 'El encabezado `Authorization` no es `Bearer <API key>` (401).',
  clave_invalida:
    'El API key no se acepta: no existe, fue revocado, su suma de verificación no cuadra o su empresa está inactiva (401); no se dice cuál.',
  clave_expirada: 'El API key expiró (401): su `expira_el`, o el fin de la gracia tras rotarlo, ya pasó.',
  alcance_insuficiente:
    'El API key no tiene el alcance que la operación necesita, o pide para otra clave alcances que él no tiene (403); `details.alcance` (y en el primer caso el encabezado `X-Accepted-Scopes`) lo nombra.',
  token_invalido: 'El token de la URL de un webhook de plataforma no corresponde a ninguna integración activa (401).',
  firma_invalida: 'La firma del webhook de plataforma falta o no corresponde al cuerpo (401).',
  venta_no_encontrada: 'La venta no existe en la empresa del API key (404).',
  devolucion_no_encontrada: 'La devolución no existe en la empresa del API key (404).',
  producto_no_encontrado:
    'El producto no existe en la empresa del API key (404), o una línea nombra un producto que no existe o está inactivo (422).',
  suscripcion_no_encontrada: 'La suscripción no existe en la empresa del API key (404).',
  recurso_no_encontrado: 'Lo que nombra la solicitud no existe en la empresa del API key (404).',
  ruta_desconocida: 'Ninguna operación tiene esa ruta (404).',
  metodo_no_admitido: 'La ruta existe pero no con ese método (405); `Allow` lista los admitidos.',
  dato_relacionado_invalido:
    'La sucursal, bodega, tipo de documento, canal o cliente que nombra el cuerpo no existe, está inactivo o no corresponde (422); `details` lo nombra.',
  stock_insuficiente: 'La empresa no vende sin stock y la bodega no tiene lo que piden las líneas (422); nada se movió.',
  limite_credito: 'La venta Pendiente haría superar al cliente su límite de crédito (422); el mensaje da los montos.',
  estado_no_modificable:
    'La venta no puede cambiar: su estado no lo permite, ya tiene documento fiscal emitido o devoluciones activas (422).',
  importe_invalido: 'Un importe que no puede ser: un descuento mayor que la línea, o un total por encima del máximo (422).',
  sin_usuario_activo: 'La empresa no tiene un usuario activo que registre la operación (422).',
  limite_suscripciones: 'La empresa ya tiene el máximo de suscripciones de eventos (422).',
  solicitud_en_curso: 'La primera solicitud con ese `Idempotency-Key` aún está en curso (409, con `Retry-After`).',
  exportacion_no_encontrada: 'La exportación no existe en la empresa del API key, o su archivo ya no existe (404).',
  exportacion_no_descargable: 'La exportación aún no está completada (o fue cancelada o falló): no hay archivo que descargar (409).',
  exportaciones_en_curso: 'La empresa ya tiene el máximo de exportaciones en curso (409); `details` lo dice.',
  rango_invalido: 'El encabezado `Range` no se puede servir: mal formado (400) o fuera del archivo (416).',
  suscripcion_deshabilitada: 'La suscripción está deshabilitada: se habilita con PATCH `enable: 1` antes de probarla (422).',
  regla_de_negocio: 'Otra regla del negocio impide la operación (422); el mensaje y `details` dicen cuál.',
  referencia_en_conflicto:
    'La `referencia_externa` o el `Idempotency-Key` ya se usaron con otro cuerpo (409); `details` nombra lo existente.',
  registro_existente: 'Ya existe un registro con ese valor único (409).',
  cuerpo_demasiado_grande: 'El cuerpo supera el máximo admitido (413).',
  url_demasiado_larga: 'La URL supera el máximo admitido (414).',
  tipo_de_contenido_no_admitido: 'El cuerpo no se envió como `application/json` (415).',
  solicitud_malformada: 'La solicitud HTTP está mal formada (400).',
  encabezados_demasiado_grandes: 'Los encabezados superan el máximo admitido (431).',
  cuota_excedida: 'Se agotó la cuota horaria del API key (429); `Retry-After` dice cuándo se renueva.',
  demasiados_intentos:
    'La dirección del cliente acumuló demasiados intentos de autenticación fallidos (429); reintente tras `Retry-After`.',
  error_interno: 'Error inesperado del servidor (500); `X-Error-Id` lo identifica en los registros.',
  servicio_no_disponible: 'El servicio que atiende la solicitud no está disponible (503): no se procesó; reintente tras `Retry-After`.',
  servidor_saturado: 'El gateway atiende su máximo de solicitudes simultáneas (503): no se procesó; reintente tras `Retry-After`.',
  tiempo_agotado: 'El servicio no respondió a tiempo (504): la operación puede haberse aplicado o no.',
} as const satisfies Record<string, string>;

export type Reason = keyof typeof REASONS;
export const REASON_VALUES = Object.keys(REASONS) as [Reason, ...Reason[]];

/** The reason of an error whose thrower named none: the broadest cause its code can have. */
export const DEFAULT_REASON: Record<ErrorCode, Reason> = {
  BAD_REQUEST: 'parametro_invalido',
  UNAUTHORIZED: 'clave_invalida',
  FORBIDDEN: 'alcance_insuficiente',
  NOT_FOUND: 'recurso_no_encontrado',
  METHOD_NOT_ALLOWED: 'metodo_no_admitido',
  CONFLICT: 'registro_existente',
  PAYLOAD_TOO_LARGE: 'cuerpo_demasiado_grande',
  UNSUPPORTED_MEDIA_TYPE: 'tipo_de_contenido_no_admitido',
  VALIDATION_FAILED: 'cuerpo_invalido',
  BUSINESS_RULE: 'regla_de_negocio',
  RATE_LIMITED: 'cuota_excedida',
  INTERNAL: 'error_interno',
  UNAVAILABLE: 'servicio_no_disponible',
  TIMEOUT: 'tiempo_agotado',
};

export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && Object.hasOwn(REASONS, value);
}

/** Field path (`detalles.3.cantidad`) → messages. */
export type ErrorDetails = Record<string, string[]>;

/**
 * The one error type of the domain: a code from the closed union (the HTTP status), a reason from
 * `REASONS` (the cause, for programs), a message for people, details per field.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly reason: Reason;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    options?: { cause?: unknown; reason?: Reason },
  ) {
    super(message, options);
    this.reason = options?.reason ?? DEFAULT_REASON[code];
  }

  static notFound(reason: Reason, message: string): AppError {
    return new AppError('NOT_FOUND', message, undefined, { reason });
  }

  static validation(message: string, details?: ErrorDetails, reason: Reason = 'cuerpo_invalido'): AppError {
    return new AppError('VALIDATION_FAILED', message, details, { reason });
  }

  static rule(reason: Reason, message: string, details?: ErrorDetails): AppError {
    return new AppError('BUSINESS_RULE', message, details, { reason });
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** An item's error as it travels between services (the reply of a failed request carries the same). */
export const ItemError = z.object({
  code: z.enum(ERROR_CODES),
  reason: z.enum(REASON_VALUES).optional(),
  message: z.string(),
  details: z.record(z.string(), z.array(z.string())).optional(),
});
