import { AddressPolicy, isBlockedAddress } from './address-policy';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2001:db8::1',
    'not-an-ip',
  ])('blocks %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('allows %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('AddressPolicy', () => {
  const names: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'intranet.example': ['10.0.0.5'],
    'mixed.example': ['93.184.216.34', '192.168.0.10'],
    'rebind.example': ['127.0.0.1'],
  };
  const policy = (extra: Partial<ConstructorParameters<typeof AddressPolicy>[0]> = {}) =>
    new AddressPolicy({
      allowPrivate: false,
      privateHosts: [],
      resolve: async (host) => {
        const found = names[host];
        if (!found) throw new Error('ENOTFOUND');
        return found;
      },
      ...extra,
    });

  it.each([
    ['loopback by IP', 'http://127.0.0.1/'],
    ['loopback in decimal', 'http://2130706433/'],
    ['loopback in octal', 'http://0177.0.0.1/'],
    ['loopback in hex', 'http://0x7f.0.0.1/'],
    ['loopback shortened', 'http://127.1/'],
    ['IPv6 loopback', 'http://[::1]:8080/'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/'],
    ['the unspecified address', 'http://0.0.0.0:3000/'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['a name resolving to a private address', 'https://intranet.example/'],
    ['a name with any private address', 'https://mixed.example/'],
    ['a name resolving to loopback', 'http://rebind.example/'],
    ['localhost', 'http://localhost/'],
  ])('refuses %s', async (_, url) => {
    const p = policy({ resolve: async (h) => (h === 'localhost' ? ['127.0.0.1', '::1'] : (names[h] ?? [])) });
    await expect(p.vet(url)).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('private, loopback or link-local'),
    });
  });

  it.each([
    ['file URLs', 'file:///etc/passwd'],
    ['ftp', 'ftp://public.example/'],
    ['javascript', 'javascript:alert(1)'],
    ['data URLs', 'data:text/plain,hi'],
    ['credentials in the URL', 'http://user:pass@public.example/'],
  ])('refuses %s', async (_, url) => {
    await expect(policy().vet(url)).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('rejects what is not a URL', async () => {
    await expect(policy().vet('not a url')).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('allows public names and pins the checked address', async () => {
    await expect(policy().vet('https://public.example/x')).resolves.toMatchObject({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('allows private addresses when configured, for all or per host', async () => {
    await expect(policy({ allowPrivate: true }).vet('https://intranet.example/')).resolves.toMatchObject({
      address: '10.0.0.5',
    });
    await expect(
      policy({ privateHosts: ['intranet.example'] }).vet('https://intranet.example/'),
    ).resolves.toBeDefined();
    await expect(
      policy({ privateHosts: ['127.0.0.1:9999'] }).vet('http://127.0.0.1:9999/'),
    ).resolves.toBeDefined();
    await expect(
      policy({ privateHosts: ['127.0.0.1:9999'] }).vet('http://127.0.0.1:9998/'),
    ).rejects.toMatchObject({ code: 'forbidden' });
  });
});
