// Which webhook URLs are acceptable: https, no credentials, and no address the one address policy refuses
// (isPrivateAddress). The sender asks the same function again for every address it connects to (guarded-agent.ts):
// an address gets one verdict at both times, and a name is judged by what it resolves to when connecting.
import { BlockList, isIP } from 'node:net';

const refusedV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.31.196.0', 24],
  ['192.52.193.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['192.175.48.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refusedV4.addSubnet(network, prefix, 'ipv4');

/**
 * Special-purpose blocks inside global unicast (2000::/3; everything outside it is refused): IETF protocol
 * assignments (Teredo, inside it, is judged by the addresses it carries), documentation, AS112.
 */
const refusedV6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2620:4f:8000::', 48],
  ['3fff::', 20],
] as const)
  refusedV6.addSubnet(network, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address that isIP accepts (a zone, `%eth0`, dropped; a dotted IPv4 tail read). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, '');
  const bytes = new Uint8Array(16);
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) text = `${text.slice(0, dotted.index)}0:0`;
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[i * 2] = value >> 8;
    bytes[i * 2 + 1] = value & 0xff;
  });
  if (dotted) for (let i = 0; i < 4; i++) bytes[12 + i] = Number(dotted[i + 1]);
  return bytes;
}

const v4 = (bytes: Uint8Array, at: number, mask = 0) =>
  Array.from(bytes.subarray(at, at + 4), (b) => b ^ mask).join('.');
const zero = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);

/**
 * The IPv4 addresses an IPv6 address leads to, for the forms that carry one: IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96, `::` and `::1` included), IPv4-translated (::ffff:0:0:0/96), NAT64's well-known prefix
 * (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32: its server, and its client, stored inverted). Null for
 * the others. NAT64's local-use prefix (64:ff9b:1::/48) places the address by the operator's prefix length, so it is
 * not read: it lies outside global unicast and is refused whole.
 */
function embeddedV4(bytes: Uint8Array): string[] | null {
  if (zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return [v4(bytes, 12)];
  if (zero(bytes, 0, 12)) return [v4(bytes, 12)];
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12)) return [v4(bytes, 12)];
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(bytes, 4, 12))
    return [v4(bytes, 12)];
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return [v4(bytes, 2)];
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0)
    return [v4(bytes, 4), v4(bytes, 12, 0xff)];
  return null;
}

/**
 * The one address policy: true when events must not be sent to this IP address. IPv4: loopback, private, CGNAT,
 * link-local (cloud metadata), multicast, documentation, benchmarking, reserved and other special-purpose blocks.
 * IPv6: an address that carries an IPv4 address (embeddedV4) gets that address's verdict; any other is allowed only
 * in global unicast (2000::/3) outside its special-purpose blocks, so loopback, unique-local, link-local, multicast,
 * discard and NAT64 local-use addresses are refused. Not an IP address (a name): false, its addresses are checked
 * when it is resolved.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refusedV4.check(address, 'ipv4');
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  const carried = embeddedV4(bytes);
  if (carried) return carried.some((a) => refusedV4.check(a, 'ipv4'));
  if ((bytes[0]! & 0xe0) !== 0x20) return true;
  return refusedV6.check(address.replace(/%.*$/, ''), 'ipv6');
}

export const LOCAL_NAMES = /^(localhost|.*\.localhost|.*\.local|.*\.internal|metadata\.google\.internal)$/i;

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
