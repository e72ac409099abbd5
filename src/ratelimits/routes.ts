// /store/ratelimits/{policy}: define, read and delete a policy; check, peek and reset identifiers; overrides.
import type { Response } from 'express';
import type { Context } from '../context';
import { ApiError } from '../errors';
import type { RequestInput } from '../http/contract';
import type { Routes } from '../http/routes';
import { sendJson } from '../http/send';
import { type Decision, Policies, type Policy } from './policies';

/**
 * The IETF headers (draft-ietf-httpapi-ratelimit-headers): the policy (quota `q` per window `w` seconds) and what
 * is left of it for the tightest identifier (`r` remaining, `t` seconds until the quota resets); Retry-After
 * (seconds) when denied. They describe the checked policy, not this service's own limit on the caller
 * (`RateLimit-Limit` / `-Remaining` / `-Reset`).
 */
function sendDecision(res: Response, d: Decision): void {
  const { tightest } = d;
  res.setHeader('RateLimit-Policy', `"${d.policy}";q=${tightest.limit};w=${Math.ceil(d.period_ms / 1000)}`);
  res.setHeader(
    'RateLimit',
    `"${d.policy}";r=${tightest.remaining};t=${Math.ceil(tightest.reset_ms / 1000)}`,
  );
  if (!d.allowed)
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(tightest.retry_after_ms / 1000))));
  const { identifiers, allowed, policy } = d;
  const { limit, remaining, reset_ms, retry_after_ms } = tightest;
  sendJson(res, 200, { allowed, policy, limit, remaining, reset_ms, retry_after_ms, identifiers });
}

interface Identified {
  identifier?: string;
  identifiers?: string[];
  cost?: number;
}
function identifiersOf({ identifier, identifiers }: Identified): string[] {
  const all = [...(identifier === undefined ? [] : [identifier]), ...(identifiers ?? [])];
  if (all.length === 0 || all.length > 100)
    throw new ApiError(
      'invalid_request',
      'Give 1 to 100 identifiers in all (`identifier` and/or `identifiers`)',
    );
  return all;
}

export function rateLimitRoutes(routes: Routes, ctx: Context): void {
  const policies = new Policies(() => ctx.store);
  const named = (res: Response, { params }: RequestInput, permission: 'read' | 'write') => {
    const name = params.policy as string;
    ctx.access.authorize(res, permission, [name]);
    return name;
  };
  const base = '/store/ratelimits/{policy}';
  routes.custom('post', base, async (input, _req, res) => {
    const name = named(res, input, 'write');
    const created = await policies.define(name, input.body as unknown as Policy);
    sendJson(res, created ? 201 : 200, { success: true, created, ...(await policies.read(name)) });
  });
  routes.custom('get', base, async (input, _req, res) => {
    sendJson(res, 200, await policies.read(named(res, input, 'read')));
  });
  routes.custom('delete', base, async (input, _req, res) => {
    sendJson(res, 200, { success: true, deleted: await policies.remove(named(res, input, 'write')) });
  });
  for (const mode of ['check', 'peek'] as const)
    routes.custom('post', `${base}/${mode}`, async (input, _req, res) => {
      const name = named(res, input, mode === 'check' ? 'write' : 'read');
      const body = input.body as Identified;
      const decision = await policies.decide(name, mode, identifiersOf(body), body.cost ?? 1);
      ctx.telemetry.metrics.rateLimitDecision(mode, decision.allowed);
      sendDecision(res, decision);
    });
  routes.custom('post', `${base}/reset`, async (input, _req, res) => {
    const name = named(res, input, 'write');
    sendJson(res, 200, {
      success: true,
      reset: await policies.reset(name, identifiersOf(input.body as Identified)),
    });
  });
  const override = `${base}/overrides/{identifier}`;
  routes.custom('post', override, async (input, _req, res) => {
    const name = named(res, input, 'write');
    const identifier = input.params.identifier as string;
    const { limit, burst } = input.body as { limit: number; burst?: number };
    const created = await policies.override(name, identifier, limit, burst);
    sendJson(res, created ? 201 : 200, { success: true, created, identifier, limit, burst: burst ?? limit });
  });
  routes.custom('delete', override, async (input, _req, res) => {
    const name = named(res, input, 'write');
    sendJson(res, 200, {
      success: true,
      deleted: await policies.dropOverride(name, input.params.identifier as string),
    });
  });
}
