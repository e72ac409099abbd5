// client.batch(family, operations): one family's batch endpoint, its items and results typed from the contract.
import type { paths } from './schema.js';
import { type Api, type CallOptions, unwrap } from './transport.js';

type BatchPath = `/store/${'string' | 'hash' | 'set' | 'list' | 'zset'}/batch`;
type Family = BatchPath extends `/store/${infer F}/batch` ? F : never;
type Body<F extends Family> =
  paths[`/store/${F}/batch`]['post']['requestBody']['content']['application/json'];
type Result<F extends Family> =
  paths[`/store/${F}/batch`]['post']['responses'][200]['content']['application/json'];

/** The operations of a family's batch (`{type: 'set', key, value}`, ...). */
export type BatchOperation<F extends Family> = Body<F>['operations'][number];

export function batch(api: Api) {
  /**
   * Runs the operations in one atomic step (per hash slot on Cluster). Each result says `success`; with
   * `atomic: 'all'`, no item applies unless every item's `if_match` holds (else a 412 GatewayError).
   */
  return async <F extends Family>(
    family: F,
    operations: BatchOperation<F>[],
    options: CallOptions & { atomic?: 'all' } = {},
  ): Promise<Result<F>> => {
    const body = { operations, ...(options.atomic ? { atomic: options.atomic } : {}) };
    const path = `/store/${family}/batch` as '/store/string/batch';
    const call = api.POST(path, { body: body as Body<'string'>, signal: options.signal });
    return (await unwrap(call)).data as Result<F>;
  };
}
