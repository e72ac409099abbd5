// Validates response bodies against the component schemas of openapi.yaml (the contract compiles only requests).
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { contract } from './app';

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  if (ajv) return ajv;
  const document = contract().document as { components: { schemas: object } };
  const schemas = JSON.parse(
    JSON.stringify(document.components.schemas).replaceAll(
      '"#/components/schemas/',
      '"components.json#/$defs/',
    ),
  );
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(s));
  ajv.addSchema({ $id: 'components.json', $defs: schemas });
  return ajv;
}

/** Throws with every problem when `body` does not match the component schema `name`. */
export function expectSchema(name: string, body: unknown): void {
  const validate = compiler().getSchema(`components.json#/$defs/${name}`) as ValidateFunction;
  if (!validate) throw new Error(`schema ${name} is not in openapi.yaml`);
  if (!validate(body)) {
    throw new Error(`${name} does not match: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
  }
}
