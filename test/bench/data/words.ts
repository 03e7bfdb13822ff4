/** Vocabulary of the generated companies: enough variety that name filters match a realistic share of rows. */

/** Product kinds, each with the category it belongs to. */
export const PRODUCT_KINDS: ReadonlyArray<readonly [kind: string, categoria: string]> = [
  ['Tornillo', 'Ferretería'], ['Tuerca', 'Ferretería'], ['Clavo', 'Ferretería'], ['Martillo', 'Herramientas'],
  ['Destornillador', 'Herramientas'], ['Alicate', 'Herramientas'], ['Llave', 'Herramientas'], ['Sierra', 'Herramientas'],
  ['Taladro', 'Herramientas eléctricas'], ['Pulidora', 'Herramientas eléctricas'], ['Cable', 'Electricidad'], ['Bombillo', 'Iluminación'],
  ['Lámpara', 'Iluminación'], ['Interruptor', 'Electricidad'], ['Tomacorriente', 'Electricidad'], ['Breaker', 'Electricidad'],
  ['Tubo', 'Plomería'], ['Codo', 'Plomería'], ['Válvula', 'Plomería'], ['Grifo', 'Plomería'], ['Pintura', 'Pinturas'],
  ['Brocha', 'Pinturas'], ['Rodillo', 'Pinturas'], ['Sellador', 'Pinturas'], ['Cemento', 'Construcción'], ['Bloque', 'Construcción'],
  ['Varilla', 'Construcción'], ['Lámina', 'Construcción'], ['Arroz', 'Abarrotes'], ['Frijol', 'Abarrotes'], ['Azúcar', 'Abarrotes'],
  ['Café', 'Abarrotes'], ['Aceite', 'Abarrotes'], ['Harina', 'Abarrotes'], ['Pasta', 'Abarrotes'], ['Leche', 'Lácteos'],
  ['Queso', 'Lácteos'], ['Yogur', 'Lácteos'], ['Jugo', 'Bebidas'], ['Gaseosa', 'Bebidas'], ['Agua', 'Bebidas'],
  ['Detergente', 'Limpieza'], ['Jabón', 'Limpieza'], ['Cloro', 'Limpieza'], ['Escoba', 'Limpieza'], ['Trapeador', 'Limpieza'],
  ['Cuaderno', 'Papelería'], ['Lápiz', 'Papelería'], ['Bolígrafo', 'Papelería'], ['Folder', 'Papelería'], ['Champú', 'Cuidado personal'],
  ['Desodorante', 'Cuidado personal'], ['Pasta dental', 'Cuidado personal'], ['Toalla', 'Hogar'], ['Sartén', 'Hogar'], ['Olla', 'Hogar'],
  ['Vaso', 'Hogar'], ['Plato', 'Hogar'], ['Cargador', 'Tecnología'], ['Audífonos', 'Tecnología'], ['Memoria USB', 'Tecnología'],
  ['Mouse', 'Tecnología'], ['Teclado', 'Tecnología'], ['Llanta', 'Automotriz'], ['Filtro', 'Automotriz'], ['Lubricante', 'Automotriz'],
];

export const VARIANTS = ['Clásico', 'Premium', 'Industrial', 'Económico', 'Reforzado', 'Profesional', 'Compacto', 'Plus', 'Ultra', 'Básico', 'Deluxe', 'Eco'];

export const BRANDS = [
  'Arcadia', 'Boreal', 'Centauro', 'Delta Sur', 'Estrella', 'Fénix', 'Galaxia', 'Halcón', 'Istmo', 'Jaguar', 'Kairos', 'Lempa',
  'Maya', 'Nativa', 'Orión', 'Pacífico', 'Quetzal', 'Río Grande', 'Sol de Oro', 'Tikal', 'Ulúa', 'Volcán', 'Xibalbá', 'Zafiro',
  'Alianza', 'Bambú', 'Cumbre', 'Diamante', 'Ébano', 'Faro', 'Girasol', 'Horizonte', 'Izalco', 'Jade', 'Kinich', 'Laguna',
];

export const SIZES = ['250 g', '500 g', '1 kg', '2 kg', '1 L', '2 L', '1/4"', '3/8"', '1/2"', '3/4"', '10 m', '20 m', '100 m', 'Talla M', 'Talla L', '12 V', '110 V', 'Pack 6', 'Pack 12', 'Unidad'];

export const SERVICES = ['Instalación', 'Mantenimiento', 'Garantía extendida', 'Entrega a domicilio', 'Corte a medida', 'Mezcla de pintura'];

export const FIRST_NAMES = [
  'María', 'José', 'Ana', 'Carlos', 'Lucía', 'Jorge', 'Sofía', 'Luis', 'Carmen', 'Miguel', 'Elena', 'Roberto', 'Daniela', 'Fernando',
  'Gabriela', 'Ricardo', 'Patricia', 'Mario', 'Rosa', 'Andrés', 'Claudia', 'Javier', 'Verónica', 'Óscar', 'Beatriz', 'Raúl',
];

export const LAST_NAMES = [
  'García', 'Martínez', 'López', 'Hernández', 'González', 'Pérez', 'Rodríguez', 'Sánchez', 'Ramírez', 'Flores', 'Rivera', 'Gómez',
  'Díaz', 'Cruz', 'Morales', 'Reyes', 'Gutiérrez', 'Ortiz', 'Castillo', 'Mejía', 'Aguilar', 'Vásquez', 'Romero', 'Alvarado',
];

export const BRANCH_NAMES = ['Central', 'Norte', 'Sur', 'Oriente', 'Poniente', 'Aeropuerto', 'Puerto', 'Metrocentro'];

export const PACKAGINGS = ['Caja', 'Sobre', 'Bolsa', 'Pallet', 'Tubo', 'Bulto'];

export const CARRIERS = ['Aéreo Express', 'Carga Marítima', 'Courier Rápido', 'Transportes del Istmo'];
