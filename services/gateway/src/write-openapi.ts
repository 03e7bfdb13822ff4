import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayConfig } from './config';
import { openApiDocument, type OpenApiDocument } from './http/openapi';
import { apiRoutes } from './http/routes';

/** The partner API's OpenAPI document as the gateway serves it, for review diffs and the typed client. */
export function partnerApiDocument(): OpenApiDocument {
  const config = GatewayConfig.parse({});
  return openApiDocument(apiRoutes({ standard: config.RATE_LIMIT_STANDARD, withDateFilters: config.RATE_LIMIT_DATE_FILTERED }));
}

/** The document serialized exactly as the committed file is. */
export function partnerApiDocumentText(): string {
  return `${JSON.stringify(partnerApiDocument(), null, 2)}\n`;
}

if (require.main === module) {
  const target = path.resolve(process.argv[2] ?? 'libs/contracts/openapi.json');
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, partnerApiDocumentText());
  console.log(`OpenAPI document written to ${path.relative(process.cwd(), target)}`);
}
