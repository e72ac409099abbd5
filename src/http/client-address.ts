// A client's address as the service counts it: an IPv4 address, or the network of an IPv6 one (SVC_IPV6_PREFIX_LENGTH).
import { isIPv6 } from 'node:net';
import type { Request, Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { principalOf } from './auth/access';

/** Networks remembered, at most (the cache is dropped whole when full). */
const CACHE_MAX = 10_000;

/**
 * `address -> the client it counts as`: an IPv4 address (an IPv4-mapped IPv6 one included) as it is; an IPv6 one as
 * its /`prefixLength` network ('2001:db8:1:2::/64'): one host picks among 2^64 addresses of its /64, so counting
 * each address alone would let it open as many connections and spend as many rate budgets. Parsing an IPv6 address
 * costs about 5 µs: each is parsed once.
 */
export function clientNetworks(prefixLength: number): (address: string) => string {
  const networks = new Map<string, string>();
  return (address) => {
    if (!isIPv6(address)) return address;
    let network = networks.get(address);
    if (network === undefined) {
      if (networks.size >= CACHE_MAX) networks.clear();
      network = prefixLength >= 128 ? ipKeyGenerator(address, false) : ipKeyGenerator(address, prefixLength);
      networks.set(address, network);
    }
    return network;
  };
}

/**
 * Who a request counts as for per-client shares (waiting pops, feed subscribers): its credential
 * (`api_key:ci`, `jwt:alice`, `basic:bob`), or without one (protected or open mode) its address or IPv6 network.
 */
export function clientIdentity(prefixLength: number): (req: Request, res: Response) => string {
  const network = clientNetworks(prefixLength);
  return (req, res) => {
    const principal = principalOf(res);
    return principal && principal.scheme !== 'none'
      ? `${principal.scheme}:${principal.id}`
      : `address:${network(req.ip ?? '')}`;
  };
}
