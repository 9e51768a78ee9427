// The configuration the service runs with: parsed, validated, defaults merged. The control loop,
// the executor and prevention read these types; nothing downstream sees the YAML.
import type { CloudConfig, EndpointInterface } from '../cloud/auth/config.js';
import type { ProfileSettings } from '../cloud/profiles/settings.js';
import type { AggregateDeclarations, SiteDeclarations } from '../cloud/site.js';
import type { StoragePolicy } from '../cloud/storage.js';
import type { Policy } from '../policy/types.js';
import type { ValidationSettings } from '../validation/settings.js';
import type { WeeklyWindow } from './windows.js';

export const AGGREGATE_MODES = ['observe', 'assisted', 'active'] as const;
export type AggregateMode = (typeof AGGREGATE_MODES)[number];

/** Where a credential comes from. Secrets stay where the operator keeps them. */
export type CredentialRef =
  /** OS_CLOUD, else the OS_* variables, like the other commands. */
  | { kind: 'environment' }
  | { kind: 'clouds-yaml'; cloud: string }
  /** An application credential: its id in the file, its secret where the operator keeps it. */
  | {
      kind: 'application-credential';
      authUrl: string;
      id: string;
      secret: SecretSource;
      regionName: string | null;
      interface: EndpointInterface | null;
      cacert: string | null;
      /** Where it was declared, for messages ("aicerine.yaml credentials.actuator"). */
      origin: string;
    }
  /** Written in the configuration file (allowInlineSecrets). */
  | { kind: 'inline'; config: CloudConfig };

export type SecretSource =
  | { kind: 'file'; path: string }
  | { kind: 'env'; variable: string }
  | { kind: 'inline'; value: string };

export type StoreConfig =
  | { kind: 'sqlite'; path: string; synchronous?: 'full' | 'normal' }
  | {
      kind: 'mysql';
      /** host or socketPath is set. */
      host: string | null;
      port: number | null;
      socketPath: string | null;
      user: string;
      database: string;
      password: SecretSource | null;
    };

export type CoordinationConfig =
  | { kind: 'local' }
  | {
      kind: 'etcd';
      replicaId: string;
      endpoints: string[];
      prefix: string;
      username: string | null;
      password: SecretSource | null;
      tls: { caFile: string; certFile: string | null; keyFile: string | null } | null;
      leaseTtlMs: number;
      rebalanceIntervalMs: number;
    };

export interface RetentionConfig {
  plansMs: number;
  executionsMs: number;
  auditMs: number;
  costSamplesMs: number;
  ratioChangesMs: number;
  dataHealthMs: number;
}

export interface HotLimit {
  /** Used fraction of the physical capacity. */
  above: number;
  /** How long it must stay above. */
  forMs: number;
}

export interface AggregateBudgets {
  perCycle: number;
  perWindow: number;
  perDay: number;
  emergency: { perCycle: number; perDay: number };
}

export interface VcpuRatioConfig {
  target: number;
  floor: number;
  step: number;
  lowerAbove: number;
  restoreBelow: number;
}

export interface AggregateConfig {
  /** The Nova aggregate name, or "*" for the defaults every unlisted aggregate gets. */
  name: string;
  mode: AggregateMode;
  paused: boolean;
  onPause: 'finish' | 'abort';
  windows: WeeklyWindow[];
  emergencies: {
    /** null: disabled hosts are never evacuated by Aicerine. */
    evacuateDisabledReasonPrefix: string | null;
    memory: HotLimit | null;
    cpu: HotLimit | null;
  };
  budgets: AggregateBudgets;
  policy: Policy;
  /** "built-in", "inline" or the policy file path. */
  policySource: string;
  /** null: prevention off. */
  vcpuRatio: VcpuRatioConfig | null;
  concurrency: {
    perSourceHost: number;
    perSourceHostOverrides: Record<string, number>;
    perDestinationHost: number;
    perAggregate: number;
  };
  approvalExpiryMs: number;
  cooldowns: {
    serverMs: number;
    aggregateMs: number;
    afterAbortMs: number;
    /** What happens to the servers of moves an aborted execution did not complete. */
    onAbort: 'cooldown' | 'quarantine';
  };
  retry: { attempts: number; backoffBaseMs: number; backoffMaxMs: number };
  migrationTimeout: { margin: number; floorMs: number; ceilingMs: number; abortGiveUpMs: number };
  dataHealth: { maxSnapshotAgeMs: number; maxMetricAgeMs: number; maxMissingFraction: number };
  /** What `check` reads: windows, ratio bounds, nova.conf ratio pinning. */
  site: AggregateDeclarations;
}

/** Operator tasks (docs/tasks.md). */
export interface TasksConfig {
  doneRetentionMs: number;
  evacuate: {
    /** Ignore maintenance windows (an operator task counts as an emergency). */
    emergency: boolean;
    /** Server metadata key whose value "true" lets an evacuation stop the server to cold-migrate it. */
    mayStopMetadataKey: string;
  };
}

/** Rolling maintenance (docs/maintenance.md): the defaults of a campaign. */
export interface MaintenanceConfig {
  parallel: number;
  validate: boolean;
  returnWhen: 'done' | 'service-restart';
  webhook: string | null;
  command: string[] | null;
  pollIntervalMs: number;
}

/** Failed logins allowed per user name and per client address within `windowMs`. */
export interface LoginThrottleConfig {
  perName: number;
  perAddress: number;
  windowMs: number;
}

export interface ServiceConfig {
  /** The file it was read from, for messages. */
  file: string | undefined;
  /** Who reads, who acts, who runs canaries (docs/credentials.md). */
  credentials: { reader: CredentialRef; actuator: CredentialRef | null; tasks: CredentialRef | null };
  prometheus: {
    url: string;
    metricsPolicyFile: string | null;
    /** Load profiles from history; null: not recorded. */
    profiles: ProfileSettings | null;
  } | null;
  store: StoreConfig;
  retention: RetentionConfig;
  /** One process (local locks) or replicas on etcd. */
  coordination: CoordinationConfig;
  /** null: no RabbitMQ, periodic reconcile only. */
  notifications: { url: string; password: SecretSource | null } | null;
  /** The REST API serve starts next to the loop. */
  api: {
    enabled: boolean;
    host: string;
    port: number;
    policyFile: string | null;
    /** Host header names accepted besides the listen addresses (lower case). */
    allowedHosts: string[];
    loginThrottle: LoginThrottleConfig;
  };
  /** Absolute folder for files besides the store (recorded snapshots under snapshots/). */
  stateDir: string;
  cycleIntervalMs: number;
  paused: boolean;
  concurrency: { global: number };
  /** Global budgets; null limits do not constrain. */
  budgets: { perCycle: number | null; perDay: number | null };
  storage: StoragePolicy | null;
  tasks: TasksConfig;
  maintenance: MaintenanceConfig;
  /** validate-compute settings (`tasks.validation`); null: validation is not configured. */
  validation: ValidationSettings | null;
  /** What an aggregate not listed gets. */
  defaults: AggregateConfig;
  /** The aggregates listed, each merged over the defaults. */
  aggregates: Record<string, AggregateConfig>;
  /** The same declarations in the form `check` reads. */
  site: SiteDeclarations;
}
