// How to reach and authenticate to one cloud, resolved from clouds.yaml or OS_* variables.

export type AuthMethod = 'password' | 'application-credential' | 'token';
export type EndpointInterface = 'public' | 'internal' | 'admin';

export interface AuthSettings {
  authUrl: string;
  username?: string;
  userId?: string;
  password?: string;
  userDomainName?: string;
  userDomainId?: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  projectDomainId?: string;
  applicationCredentialId?: string;
  applicationCredentialName?: string;
  applicationCredentialSecret?: string;
  token?: string;
}

export interface CloudConfig {
  /** The clouds.yaml entry name, or "env" when read from OS_* variables. */
  name: string;
  method: AuthMethod;
  auth: AuthSettings;
  regionName?: string;
  interface: EndpointInterface;
  /** PEM CA bundle path for TLS verification. */
  cacert?: string;
  /** Skip TLS verification (never in production). */
  insecure: boolean;
  /** Where the settings came from, for messages ("clouds.yaml ./clouds.yaml cloud mycloud"). */
  origin: string;
}
