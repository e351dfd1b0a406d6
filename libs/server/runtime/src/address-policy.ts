import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '@switchyard/contracts';

/** Ranges a tool must not reach by default: private, loopback, link-local, and special-purpose. */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
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
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** IPv4 carried inside IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96) is judged as IPv4. */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:(?:0:)?|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:(?:0:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1] as string, 16);
    const lo = parseInt(hex[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

export function isBlockedAddress(ip: string): boolean {
  const v4 = isIP(ip) === 4 ? ip : embeddedIpv4(ip);
  if (v4) return BLOCKED.check(v4, 'ipv4');
  if (isIP(ip) === 6) return BLOCKED.check(ip, 'ipv6');
  return true; // not an address at all: never reachable
}

export interface AddressPolicyOptions {
  readonly allowPrivate: boolean;
  readonly privateHosts: readonly string[];
  /** Injected in tests; defaults to the system resolver. */
  readonly resolve?: (host: string) => Promise<string[]>;
}

export interface VettedTarget {
  readonly url: URL;
  /** The address to connect to: the one that was checked (no second DNS answer can swap it). */
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Decides whether a URL may be fetched, once per hop (redirects included): http(s) only, no
 * credentials in the URL, and every address the name resolves to must be public unless the
 * configuration allows private ones (all, or this host). The connection then goes to the vetted
 * address, so DNS rebinding between check and connect does not work.
 */
export class AddressPolicy {
  private readonly resolveHost: (host: string) => Promise<string[]>;

  constructor(private readonly opts: AddressPolicyOptions) {
    this.resolveHost =
      opts.resolve ??
      (async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address));
  }

  async vet(raw: string | URL): Promise<VettedTarget> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new AppError('validation_failed', `not a valid URL: ${String(raw).slice(0, 200)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new AppError('forbidden', `only http and https URLs can be fetched, not ${url.protocol}`);
    }
    if (url.username || url.password)
      throw new AppError(
        'forbidden',
        'URLs with credentials are refused; send an Authorization header instead',
      );
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const exception =
      this.opts.privateHosts.includes(url.host.toLowerCase()) ||
      this.opts.privateHosts.includes(host.toLowerCase());
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = await this.resolveHost(host);
      } catch (err) {
        throw new AppError('tool_failed', `cannot resolve ${host}: ${(err as Error).message}`);
      }
    }
    if (!addresses.length) throw new AppError('tool_failed', `${host} has no addresses`);
    const blocked = addresses.filter(isBlockedAddress);
    if (blocked.length && !this.opts.allowPrivate && !exception) {
      throw new AppError(
        'forbidden',
        `${url.host} is refused: it resolves to a private, loopback or link-local address (${blocked.join(', ')}); ` +
          'an administrator can allow it with WEB_FETCH_PRIVATE_HOSTS or WEB_FETCH_ALLOW_PRIVATE',
        { details: { host: url.host, addresses: blocked } },
      );
    }
    const address = addresses[0] as string;
    return { url, address, family: isIP(address) === 6 ? 6 : 4 };
  }
}
