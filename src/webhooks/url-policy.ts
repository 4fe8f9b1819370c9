// Which webhook URLs are acceptable: https, no credentials, and no address inside private networks.
// The same address rules are applied again at connect time by the delivery agent (DNS rebinding).
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** Loopback, private, link-local (cloud metadata), unique-local, CGNAT, multicast, documentation, reserved. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOCAL_NAMES = /^(localhost|.*\.localhost|.*\.local|.*\.internal|metadata\.google\.internal)$/i;

/** How local development gets past the rules, in each refusal: the operator's command and the server must agree. */
const LOCAL_DEVELOPMENT =
  'for local development, WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows plain http and private addresses (set it for the server too, or it will not deliver there)';

/**
 * Returns null when acceptable, else the reason, for a person: the operator (callctl) is told how local development
 * gets past the rules; a tenant (the dashboard) only what is wrong with the address.
 */
export function webhookUrlProblem(
  value: string,
  allowPrivate: boolean,
  audience: 'operator' | 'tenant' = 'operator',
): string | null {
  const tenant = audience === 'tenant';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"${value}" is not a valid URL`;
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return tenant
      ? 'This address is not allowed: webhook URLs must use https.'
      : `Webhook URLs must use https; ${LOCAL_DEVELOPMENT}`;
  }
  if (url.username || url.password) return 'Webhook URLs must not contain credentials';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (isPrivateAddress(host) || LOCAL_NAMES.test(host)) {
    if (tenant)
      return `This address is not allowed: ${url.hostname} is a private, loopback or link-local address, which events are never sent to. Use an address reachable on the internet.`;
    return `Webhook URL host ${url.hostname} is a private, loopback or link-local address; ${LOCAL_DEVELOPMENT}`;
  }
  return null;
}
