import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GatewayConfig } from '../config';
import { openApiDocument, webhooksDocument, type OpenApiDocument } from './openapi';
import { apiRoutes } from '../http/routes';

/** The partner API's OpenAPI document as the gateway serves it, for review diffs and the typed client. */
export function partnerApiDocument(): OpenApiDocument {
  const config = GatewayConfig.parse({});
  return openApiDocument(apiRoutes({ standard: config.RATE_LIMIT_STANDARD, withDateFilters: config.RATE_LIMIT_DATE_FILTERED }));
}

/** A document serialized exactly as the committed files are. */
export function documentText(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

if (require.main === module) {
  const targets: Array<[string, OpenApiDocument]> = [
    [process.argv[2] ?? 'libs/contracts/openapi.json', partnerApiDocument()],
    [process.argv[3] ?? 'libs/contracts/openapi-webhooks.json', webhooksDocument()],
  ];
  for (const [file, document] of targets) {
    const target = path.resolve(file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, documentText(document));
    console.log(`OpenAPI document written to ${path.relative(process.cwd(), target)}`);
  }
}
