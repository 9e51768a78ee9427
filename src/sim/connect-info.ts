import type { CloudConfig } from '../cloud/auth/config.js';

// What a user needs to point clients at a running simulator: a clouds.yaml entry and OS_*
// variables, for the admin user and project.
/** Password of the simulator's users admin and demo, for `sim` and `demo` alike. */
export const SIM_DEFAULT_PASSWORD = 'secret';

export interface ConnectInfo {
  authUrl: string;
  password: string;
  cloudName: string;
  prometheusUrl: string;
  controlUrl: string;
}

export function cloudsYaml(c: ConnectInfo): string {
  return [
    'clouds:',
    `  ${c.cloudName}:`,
    '    auth:',
    `      auth_url: ${c.authUrl}`,
    '      username: admin',
    `      password: ${c.password}`,
    '      project_name: admin',
    '      user_domain_name: Default',
    '      project_domain_name: Default',
    '    region_name: RegionOne',
    '    interface: public',
    '    identity_api_version: 3',
    '',
  ].join('\n');
}

export function envExports(c: ConnectInfo): string {
  return [
    `export OS_AUTH_URL=${c.authUrl}`,
    'export OS_USERNAME=admin',
    `export OS_PASSWORD=${c.password}`,
    'export OS_PROJECT_NAME=admin',
    'export OS_USER_DOMAIN_NAME=Default',
    'export OS_PROJECT_DOMAIN_NAME=Default',
    'export OS_REGION_NAME=RegionOne',
    'export OS_INTERFACE=public',
    'export OS_IDENTITY_API_VERSION=3',
    'export OS_AUTH_TYPE=password',
    '',
  ].join('\n');
}

/** The admin client configuration for a running simulator: what `aicerine demo`, the contract tests and the bench connect with. */
export function simAdminConfig(authUrl: string, password: string, origin: string): CloudConfig {
  return {
    name: 'aicerine-sim',
    method: 'password',
    auth: {
      authUrl,
      username: 'admin',
      password,
      userDomainName: 'Default',
      projectName: 'admin',
      projectDomainName: 'Default',
    },
    regionName: 'RegionOne',
    interface: 'public',
    insecure: false,
    origin,
  };
}
