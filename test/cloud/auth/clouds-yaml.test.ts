import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { cloudFromEnv, cloudFromYamlEntry, loadCloudConfig } from '../../../src/cloud/auth/clouds-yaml.js';

const OPENRC = {
  OS_AUTH_URL: 'http://keystone:5000/v3',
  OS_USERNAME: 'admin',
  OS_PASSWORD: 'secret',
  OS_PROJECT_NAME: 'admin',
  OS_USER_DOMAIN_NAME: 'Default',
  OS_PROJECT_DOMAIN_NAME: 'Default',
  OS_REGION_NAME: 'RegionOne',
  OS_INTERFACE: 'internal',
};

describe('OS_* variables', () => {
  it('read a password openrc', () => {
    const c = cloudFromEnv(OPENRC);
    expect(c).toMatchObject({
      name: 'env',
      method: 'password',
      regionName: 'RegionOne',
      interface: 'internal',
      insecure: false,
    });
    expect(c.auth).toMatchObject({
      authUrl: 'http://keystone:5000/v3',
      username: 'admin',
      projectName: 'admin',
      userDomainName: 'Default',
    });
  });

  it('recognise application credentials and tokens, CA bundle and insecure', () => {
    const app = cloudFromEnv({
      OS_AUTH_URL: 'https://k/v3',
      OS_APPLICATION_CREDENTIAL_ID: 'id1',
      OS_APPLICATION_CREDENTIAL_SECRET: 's',
      OS_CACERT: '/etc/ca.pem',
      OS_INSECURE: 'true',
    });
    expect(app.method).toBe('application-credential');
    expect(app.cacert).toBe('/etc/ca.pem');
    expect(app.insecure).toBe(true);
    expect(cloudFromEnv({ OS_AUTH_URL: 'https://k/v3', OS_TOKEN: 'gAAA', OS_PROJECT_ID: 'p' }).method).toBe(
      'token',
    );
    expect(cloudFromEnv({ ...OPENRC, OS_INTERFACE: 'publicURL' }).interface).toBe('public');
  });

  it('say what is missing and which variable sets it', () => {
    expect(() => cloudFromEnv({})).toThrow(
      /no cloud configured: OS_AUTH_URL is not set and no cloud name was given\. Source an openrc/,
    );
    expect(() => cloudFromEnv({ ...OPENRC, OS_PASSWORD: '' })).toThrow(
      'OS_* environment variables: password auth without a password. Set OS_PASSWORD',
    );
    expect(() => cloudFromEnv({ OS_AUTH_URL: 'x', OS_APPLICATION_CREDENTIAL_ID: 'i' })).toThrow(
      /Set OS_APPLICATION_CREDENTIAL_SECRET/,
    );
    expect(() => cloudFromEnv({ ...OPENRC, OS_INTERFACE: 'private' })).toThrow(
      /interface "private" is not one of public, internal, admin/,
    );
    expect(() => cloudFromEnv({ ...OPENRC, OS_AUTH_TYPE: 'v3oidcpassword' })).toThrow(
      /auth_type "v3oidcpassword" is not supported/,
    );
  });
});

describe('clouds.yaml', () => {
  let root: string;
  let cwd: string;
  let home: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'aicerine-clouds-'));
    cwd = join(root, 'work');
    home = join(root, 'home');
    await mkdir(cwd, { recursive: true });
    await mkdir(join(home, '.config', 'openstack'), { recursive: true });
  });

  const yaml = (name: string, url: string, extra = '') => `clouds:
  ${name}:
    auth:
      auth_url: ${url}
      username: u
      project_name: p
      user_domain_name: Default
      project_domain_name: Default
    region_name: R1
${extra}`;

  it('finds the cloud in ./clouds.yaml before ~/.config/openstack, and merges secure.yaml', async () => {
    await writeFile(join(cwd, 'clouds.yaml'), yaml('mycloud', 'http://here/v3'));
    await writeFile(
      join(cwd, 'secure.yaml'),
      'clouds:\n  mycloud:\n    auth:\n      password: from-secure\n',
    );
    await writeFile(join(home, '.config', 'openstack', 'clouds.yaml'), yaml('mycloud', 'http://home/v3'));
    const c = await loadCloudConfig({ cloud: 'mycloud', env: {}, cwd, home });
    expect(c.auth.authUrl).toBe('http://here/v3');
    expect(c.auth.password).toBe('from-secure');
    expect(c.name).toBe('mycloud');
    expect(c.origin).toBe(`${join(cwd, 'clouds.yaml')} (cloud mycloud)`);
  });

  it('uses OS_CLOUD and OS_CLIENT_CONFIG_FILE like the openstack client', async () => {
    const file = join(root, 'elsewhere.yaml');
    await writeFile(
      file,
      `clouds:
  lab:
    auth_type: v3applicationcredential
    auth:
      auth_url: http://lab/v3
      application_credential_id: abc
      application_credential_secret: xyz
    interface: admin
    verify: false
`,
    );
    const c = await loadCloudConfig({ env: { OS_CLOUD: 'lab', OS_CLIENT_CONFIG_FILE: file }, cwd, home });
    expect(c).toMatchObject({ method: 'application-credential', interface: 'admin', insecure: true });
    expect(c.auth.applicationCredentialId).toBe('abc');
  });

  it('names the file and the known clouds when the cloud is not there', async () => {
    await writeFile(
      join(home, '.config', 'openstack', 'clouds.yaml'),
      yaml('a', 'http://a/v3') + yaml('b', 'http://b/v3').replace('clouds:\n', ''),
    );
    await expect(loadCloudConfig({ cloud: 'zz', env: {}, cwd, home })).rejects.toThrow(
      /clouds\.yaml: no cloud named "zz"\. Known clouds: a, b/,
    );
  });

  it('says where it looked when there is no clouds.yaml', async () => {
    await expect(
      loadCloudConfig({ cloud: 'x', env: {}, cwd, home, searchPaths: [join(root, 'none.yaml')] }),
    ).rejects.toThrow(
      `cloud "x" was asked for but no clouds.yaml was found. Create one of ${join(root, 'none.yaml')}`,
    );
  });

  it('refuses broken YAML with the file name', async () => {
    await writeFile(join(cwd, 'clouds.yaml'), 'clouds: [unclosed');
    await expect(loadCloudConfig({ cloud: 'x', env: {}, cwd, home })).rejects.toThrow(
      `${join(cwd, 'clouds.yaml')}: not valid YAML`,
    );
  });

  it('falls back to the OS_* variables without a cloud name', async () => {
    expect((await loadCloudConfig({ env: OPENRC, cwd, home })).name).toBe('env');
  });

  it('reads a token entry', () => {
    const c = cloudFromYamlEntry(
      't',
      { auth_type: 'token', auth: { auth_url: 'http://k/v3', token: 'gAAA', project_id: 'p1' } },
      'test',
    );
    expect(c.method).toBe('token');
    expect(c.auth.projectId).toBe('p1');
  });
});
