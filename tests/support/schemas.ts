// Validates response bodies against the component schemas of openapi.yaml (the contract compiles only requests).
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { deref } from '../../src/http/contract';
import { openapiDocument } from './app';

let ajv: Ajv2020 | undefined;

function compiler(): Ajv2020 {
  if (ajv) return ajv;
  const document = openapiDocument() as { components: { schemas: object } };
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

type Media = { schema?: object };
type Response = { $ref?: string; content?: Record<string, Media> };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { responses: Record<string, Response> };
};

/**
 * The problems of one answer against openapi.yaml: its status must be documented for the operation and
 * its JSON body must match the documented schema. Returns '' when it conforms.
 */
export function responseProblems(method: string, path: string, status: number, body: unknown): string {
  const validate = responseValidator(method, path, status);
  if (validate === undefined) return `${method.toUpperCase()} ${path}: status ${status} is not documented`;
  if (validate === null || validate(body)) return '';
  return `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(validate.errors?.slice(0, 2))} ${String(JSON.stringify(body)).slice(0, 300)}`;
}

/** Whether the contract documents `status` (or its range, such as `4XX`) for the operation. */
export const isDocumented = (method: string, path: string, status: number) =>
  responseValidator(method, path, status) !== undefined;

const validators = new Map<string, ValidateFunction | null | undefined>();

/**
 * The compiled schema of a documented answer (its status, else its range such as `4XX`): null when it has no JSON
 * body, undefined when the status is not documented. Compiled once per operation and status (the fuzzer asks often).
 */
function responseValidator(method: string, path: string, status: number) {
  const id = `${method} ${path} ${status}`;
  if (validators.has(id)) return validators.get(id);
  const doc = openapiDocument() as unknown as Doc;
  const item = doc.paths[path];
  const responses = item && deref<Doc['paths'][string]>(doc, item)[method]?.responses;
  const documented = responses?.[String(status)] ?? responses?.[`${String(status)[0]}XX`];
  // A shared response may itself refer to a generic one (InvalidKey -> BadRequest, with its own description).
  const response = documented && deref<Response>(doc, documented);
  const schema = response?.content?.['application/json']?.schema;
  let validate: ValidateFunction | null | undefined = response ? null : undefined;
  if (schema) {
    const refs = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components.json#/$defs/'),
    );
    validate = compiler().compile(refs);
  }
  validators.set(id, validate);
  return validate;
}
